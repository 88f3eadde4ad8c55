/* verify — `optloop verify`: run the contract's validation command,
 * stream its output, record the run.  Ctrl-C cancels the run (recorded as
 * incomplete, never as a pass). */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/stats_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int exit_for(enum gate_verdict g)
{
	switch (g) {
	case GATE_PASS:
	case GATE_NONE:
	case GATE_UNVERIFIED:
		return 0;
	case GATE_FAIL:
		return 1;
	default:
		return 4;
	}
}

/* The run's summary in words: the iteration, gate, bench and vs best, the
 * parser's warnings, the verdict, lint findings, the profiler trace and the
 * next step (st may be NULL). */
static void print_summary(struct loop *l, const struct loop_measurement *m, bool profile,
			  const char *trace, const struct loop_status *st)
{
	struct sb bench = SB_INIT, vs = SB_INIT, gate = SB_INIT;
	optlog_fmt_bench(m->bench_ms, &bench);
	optlog_fmt_vs_best(m->vs_best, &vs);
	optlog_fmt_gate(m->gate, m->scope, &gate);
	printf("\noptloop: iteration %d %s: gate %s, bench %s ms, vs best %s%s%s "
	       "(%.1f s; raw output in %s)\n",
	       m->iter, m->attempt ? "attempt (not an iteration: it gets no row)" : "measured",
	       gate.buf, bench.buf, vs.buf, m->no_change ? ", no kernel change" : "",
	       m->timed_out ? ", timed out" : m->cancelled ? ", cancelled" : "", m->seconds,
	       m->log_path);
	/* what the parser found wrong with the output (a shape listed
	 * twice, the harness's own warnings) */
	json_t *res = m->result_json ? json_loads(m->result_json, 0, NULL) : NULL;
	size_t wi;
	json_t *w;
	json_array_foreach(json_object_get(res, "warnings"), wi, w)
		if (json_is_string(w))
			printf("warning: %s\n", json_string_value(w));
	json_decref(res);
	if (!m->attempt)
		stats_cli_print_verdict(l, m->run_id, stdout);
	if (m->nlints)
		printf("lint:    %d trap-lint finding%s on this diff (optloop lint lists them; "
		       "log needs --ack, promote --check lists any left unacknowledged)\n",
		       m->nlints, m->nlints == 1 ? "" : "s");
	if (trace)
		printf("profile: %s attached as iteration %d's profiler evidence\n", trace,
		       m->iter);
	else if (profile && !m->attempt)
		printf("profile: the run wrote no profiler trace into the workspace "
		       "(does the harness take --profile?)\n");
	if (st)
		printf("next: %s\n", st->next);
	sb_release(&bench);
	sb_release(&vs);
	sb_release(&gate);
}

struct verify_args {
	struct loop_verify_opts o;
	struct cli_list include;
	bool quiet, json;
};

static int verify_run(struct cmd_ctx *x)
{
	const struct verify_args *a = x->args;
	struct loop_job_opts jo = {.kind = LOOP_JOB_VERIFY, .verify = a->o};
	struct loop_verify_opts *o = &jo.verify;
	struct loop_job_progress p;
	struct loop_job_result res;
	struct loop_measurement *m = &res.m;
	struct loop_job *job;
	struct loop *l = x->l;
	struct err e = {0};
	bool json = a->json, quiet = a->quiet;
	int rc;

	o->include = a->include.v;
	o->ninclude = (size_t)a->include.n;
	/* with --json, stdout carries only the JSON object; with --quiet the
	 * output goes only to the raw log */
	o->output = quiet ? NULL : cli_to_stream;
	o->ctx = json ? stderr : stdout;

	const volatile sig_atomic_t *interrupted = cli_stop_on_signals();

	if (loop_job_begin(l, &jo, &job, &e) < 0)
		return cli_fail(&e);
	/* nothing runs unseen: the command and the probe around it */
	loop_job_progress(job, &p);
	const char *probe = p.probe, *probe_apps = p.probe_apps;
	struct sb v1 = SB_INIT, v2 = SB_INIT;
	fprintf(o->ctx, "optloop: running %s (through /bin/sh -c; GPU probe before and after: "
			"%s)\n",
		cli_vis(p.command, &v1), cli_vis(probe, &v2));
	sb_release(&v1);
	sb_release(&v2);
	fflush(o->ctx);
	bool cancelled = false;
	while ((rc = loop_job_pump(job, 200, NULL)) > 0) {
		if (*interrupted && !cancelled) {
			loop_job_cancel(job);
			cancelled = true;
		}
	}
	if (cancelled)
		cli_say_stopped("verify");
	if (loop_job_end(job, &res, &e) < 0)
		return cli_fail(&e);
	char *trace = NULL;
	struct err te = {0};
	if (o->profile && !m->attempt &&
	    loop_attach_run_trace(l, m->iter, m->run_id, &trace, &te) < 0 && te.code != ERR_NOTFOUND)
		fprintf(stderr, "optloop: %s\n", te.msg);
	rc = exit_for(m->gate);
	if (m->attempt && rc == 0)
		rc = 4; /* a baseline without a bench number or a gate: the harness fell short */
	struct loop_status st;
	int have_st = loop_status(l, &st, NULL) == 0;
	if (json) {
		json_t *j = loop_cli_measurement_json(m);
		if (have_st) {
			json_object_set_new(j, "state", json_string(loop_state_name(st.state)));
			json_object_set_new(j, "next", json_string(st.next));
		}
		stats_cli_add_verdict(l, m->run_id, j);
		json_object_set_new(j, "lint_findings", json_integer(m->nlints));
		json_object_set_new(j, "probe_command", json_string(probe));
		json_object_set_new(j, "profile_trace", trace ? json_string(trace) : json_null());
		json_object_set_new(j, "probe_apps_command", json_string(probe_apps));
		cli_print_json(j);
	} else {
		print_summary(l, m, o->profile, trace, have_st ? &st : NULL);
	}
	if (have_st)
		loop_status_release(&st);
	free(trace);
	loop_job_result_release(&res);
	return rc;
}

static const struct cli_opt verify_opts[] = {
	CLI_TEXT("--gate-k", offsetof(struct verify_args, o.gate_k), "EXPR",
		 "run only the tests pytest -k selects: a quick signal, never a result "
		 "(the baseline and promotion need the full gate)"),
	CLI_TEXT("--base", offsetof(struct verify_args, o.base), "REF",
		 "benchmark against REF too (the harness's --base), for the verdict's "
		 "comparison in one session"),
	CLI_FLAG("--profile", offsetof(struct verify_args, o.profile),
		 "the harness's profiler after the bench (FLA's verify --profile); the "
		 "trace it writes into the workspace is attached as the iteration's "
		 "profiler evidence"),
	CLI_LIST("--include", offsetof(struct verify_args, include), "PATH",
		 "a changed file outside the kernel and the frozen scope becomes a kernel "
		 "file (repeatable): measured, committed and restored with the kernel "
		 "(without it such a change refuses the run)"),
	CLI_NUM("--timeout", offsetof(struct verify_args, o.timeout_s), "SEC", 0, 1e7,
		"stop the run after SEC seconds (recorded as incomplete: an attempt)"),
	CLI_FLAG("--quiet", offsetof(struct verify_args, quiet),
		 "do not stream the harness output (it is in the raw log); "
				    "the summary stays"),
	CLI_FLAG("--json", offsetof(struct verify_args, json),
		 "stdout carries only the measurement as JSON; the "
				  "harness output goes to stderr"),
	CLI_END,
};

const struct command cmd_verify = {
	.name = "verify",
	.summary = "run the gated verify-and-bench command and record the run",
	.open = OPEN_WRITE,
	.opts = verify_opts,
	.args_size = sizeof(struct verify_args),
	.examples = (const char *const[]){"verify", "verify --gate-k 'test_chunk and T63'", NULL},
	.more = "Runs the contract's validation command, streams its output, writes\n"
		"trace/iter-N.log and records the run.  Ctrl-C stops it (recorded as\n"
		"incomplete, never as a pass).  exit: 0 gate passed, 1 gate failed,\n"
		"4 the harness broke or the run was incomplete (an attempt: verify again).\n"
		"{best} in the validation command is replaced by the best's commit (HEAD\n"
		"for the baseline): a harness such as assets/bench/optloop_ab.py then times\n"
		"the best beside the candidate in one process, and the verdict is that pair.",
	.run = verify_run,
};
