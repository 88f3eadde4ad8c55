/* dependents — `optloop dependents`: who else runs the kernel files the
 * candidate changed (the FLA registry's other ops, the test files whose
 * imports reach them), and --run: their gates, recorded for promote
 * --check. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static void gate_done(void *ctx, const char *file, int exit_status, double secs)
{
	json_t *arr = ctx;
	if (arr) {
		json_t *j = json_object();
		json_object_set_new(j, "file", json_string(file));
		json_object_set_new(j, "exit", json_integer(exit_status));
		json_object_set_new(j, "seconds", json_real(secs));
		json_array_append_new(arr, j);
	}
	struct sb v = SB_INIT;
	fprintf(arr ? stderr : stdout, "gate: %s %s (exit %d, %.1f s)\n", cli_vis(file, &v),
		exit_status == 0 ? "passed" : "FAILED", exit_status, secs);
	sb_release(&v);
}

/* Dependent i's gate on the compared kernel: "passed", "failed", "not
 * run", or NULL for an op (only test files have gates). */
static const char *gate_state(struct loop *l, const struct loop_dependents *d, size_t i)
{
	int ex;
	if (!d->v[i].test)
		return NULL;
	if (!loop_dependent_gate(l, d->tree, d->v[i].name, &ex))
		return "not run";
	return ex == 0 ? "passed" : "failed";
}

struct dependents_args {
	bool work, run, json;
};

static int dependents_run(struct cmd_ctx *x)
{
	const struct dependents_args *a = x->args;
	struct loop *l = x->l;
	struct loop_dependents d;
	struct err e = {0};
	bool json = a->json, run = a->run, work = a->work;
	struct sb v1 = SB_INIT, v2 = SB_INIT;
	if (loop_dependents(l, work, &d, &e) < 0)
		return cli_fail(&e);
	json_t *gates = json ? json_array() : NULL;
	size_t nt = 0;
	for (size_t i = 0; i < d.n; i++)
		nt += d.v[i].test;
	if (!json) {
		printf("changed since the baseline (%.12s): %zu kernel file%s\n", d.from, d.nchanged,
		       d.nchanged == 1 ? "" : "s");
		/* names from the repository: spelled out, never acted on */
		for (size_t i = 0; i < d.nchanged; i++)
			printf("  %s\n", cli_vis(d.changed[i], &v1));
		printf("run by %zu other op%s and %zu test file%s\n", d.n - nt, d.n - nt == 1 ? "" : "s",
		       nt, nt == 1 ? "" : "s");
		for (size_t i = 0; i < d.n; i++) {
			const char *g = gate_state(l, &d, i);
			printf("  %s%s%s%s\n    %s\n", cli_vis(d.v[i].name, &v1), g ? "  [gate " : "",
			       !g ? "" : !strcmp(g, "failed") ? "FAILED" : g, g ? "]" : "",
			       cli_vis(d.v[i].why, &v2));
		}
	}
	sb_release(&v1);
	sb_release(&v2);
	/* pytest's output as it comes (stderr with --json), stopped by a signal */
	struct loop_pytest_opts po = {.output = cli_to_stream, .ctx = json ? stderr : stdout,
				      .gate = gate_done, .gate_ctx = gates};
	if (run)
		po.stop = cli_stop_on_signals();
	if (run && loop_dependents_run(l, &d, &po, &e) < 0) {
		cli_say_stopped("dependents --run");
		json_decref(gates);
		loop_dependents_release(&d);
		return cli_fail(&e);
	}
	/* the gates as they stand now, once each */
	bool failed = false;
	json_t *dv = json ? json_array() : NULL;
	for (size_t i = 0; i < d.n; i++) {
		const char *g = gate_state(l, &d, i);
		failed |= run && g && !strcmp(g, "failed");
		if (dv)
			json_array_append_new(dv, json_pack("{s:s,s:s,s:s,s:s,s:o}", "name", d.v[i].name,
						    "kind", d.v[i].test ? "test" : "op", "file",
						    d.v[i].file, "why", d.v[i].why, "gate",
						    g ? json_string(g) : json_null()));
	}
	if (json) {
		json_t *j = json_object();
		json_t *ch = json_array();
		for (size_t i = 0; i < d.nchanged; i++)
			json_array_append_new(ch, json_string(d.changed[i]));
		json_object_set_new(j, "baseline", json_string(d.from));
		json_object_set_new(j, "tree", json_string(d.tree));
		json_object_set_new(j, "changed", ch);
		json_object_set_new(j, "dependents", dv);
		json_object_set_new(j, "gates_run", gates ? gates : json_array());
		cli_print_json(j);
	} else {
		if (!run && nt)
			printf("next: optloop dependents --run (their gates; promote --check asks "
			       "for them)\n");
	}
	loop_dependents_release(&d);
	return failed ? 1 : 0;
}

static const struct cli_opt dependents_opts[] = {
	CLI_FLAG("--work", offsetof(struct dependents_args, work),
		 "compare the work tree's kernel with the baseline (default: "
				  "the best's, the candidate for promotion)"),
	{.name = "--run", .kind = CO_FLAG, .off = offsetof(struct dependents_args, run),
	 .opens = OPEN_WRITE,
	 .help = "run each dependent test file's gate (python3 -m pytest FILE -q) and record "
		 "it for promote --check"},
	CLI_FLAG("--json", offsetof(struct dependents_args, json), "print the result as JSON"),
	CLI_END,
};

/* read as any reader may (the writer when free); --run records gates */
const struct command cmd_dependents = {
	.name = "dependents",
	.summary = "who else runs the changed kernel files: other ops, test files; --run: their gates",
	.open = OPEN_TRY,
	.opts = dependents_opts,
	.args_size = sizeof(struct dependents_args),
	.examples = (const char *const[]){"dependents", "dependents --run", NULL},
	.more = "The kernel files changed since the baseline, and who else runs them:\n"
		"the FLA registry's other ops and the test files whose functions run\n"
		"one, followed call by call (the op's own gate test aside).  promote\n"
		"--check asks for each such test file's gate on the best's kernel; --run\n"
		"runs them (python3 -m pytest FILE -q, no shell between; $OPTLOOP_PYTHON\n"
		"names another Python).  SIGINT, SIGTERM or SIGHUP stops the pytest going\n"
		"and all it started, and its gate is not recorded.  exit: 0, 1 when a\n"
		"gate --run ran failed, 4 when stopped.",
	.run = dependents_run,
};
