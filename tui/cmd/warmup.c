/* warmup — `optloop warmup`: run the gate test once outside the loop, so
 * the compile caches (Triton's) are full before the first timed gate: a
 * cold full gate of an FLA op can take longer than the iteration it
 * gates. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stddef.h>
#include <stdio.h>

struct warmup_args {
	long workers;
	bool json;
};

static int warmup_run(struct cmd_ctx *x)
{
	const struct warmup_args *a = x->args;
	struct loop *l = x->l;
	struct err e = {0};
	bool json = a->json;
	long workers = a->workers;
	int code = 0;
	double secs = 0;
	/* pytest's output as it comes; with --json stdout carries only the JSON */
	struct loop_pytest_opts o = {.output = cli_to_stream, .ctx = json ? stderr : stdout,
				     .stop = cli_stop_on_signals()};
	if (loop_warmup(l, (int)workers, &o, &code, &secs, &e) < 0) {
		cli_say_stopped("warmup");
		return cli_fail(&e);
	}
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "exit", json_integer(code));
		json_object_set_new(j, "seconds", json_real(secs));
		json_object_set_new(j, "workers", json_integer(workers));
		cli_print_json(j);
	} else {
		printf("warmup: the gate test %s in %.1f s on %ld worker%s (exit %d)%s\n",
		       code == 0 ? "passed" : "did not pass", secs, workers, workers == 1 ? "" : "s",
		       code, code == 0 ? "" : "; the gate proper is verify's, this only filled caches");
	}
	return code > 255 ? 4 : code;
}

static const struct cli_opt warmup_opts[] = {
	CLI_INT("--workers", offsetof(struct warmup_args, workers), "N", 1, 512,
		"run it on N pytest-xdist workers (-n N): compiling in parallel"),
	CLI_FLAG("--json", offsetof(struct warmup_args, json),
		 "print the result as JSON (pytest's output goes to stderr)"),
	CLI_END,
};

const struct command cmd_warmup = {
	.name = "warmup",
	.summary = "run the gate test once outside the loop to fill the compile caches",
	.open = OPEN_WRITE,
	.opts = warmup_opts,
	.args_size = sizeof(struct warmup_args),
	.defaults = &(const struct warmup_args){.workers = 1},
	.examples = (const char *const[]){"warmup --workers 16", NULL},
	.more = "Runs the workspace's gate test (python3 -m pytest TEST -q, no shell between;\n"
		"$OPTLOOP_PYTHON names another Python) once in the repository, not as a run\n"
		"of the loop: nothing is measured or judged, an event records its time.\n"
		"SIGINT, SIGTERM or SIGHUP stops pytest and all it started.  exit: pytest's;\n"
		"4 when stopped.",
	.run = warmup_run,
};
