/* Unit tests for the confirm session in steps (core/session.h) on the tiny
 * kernel project (tests/fixtures/make_tiny_project.sh): a real repository,
 * the real store, and a real benchmark child that prints an FLA-shaped
 * result table whose times follow the kernel in the work tree (a "# ms="
 * line in kernel/compute.sh; 1.000 ms without one), so the best and the
 * candidate measure differently only when the session really swaps them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/loop_core.h"
#include "core/workspace.h"
#include "core/measure.h"
#include "core/parse.h"
#include "core/sb.h"
#include "core/measure.h"
#include "core/stats.h"
#include "core/stats.h"
#include "core/store.h"
#include "tests/unit/scratch.h"

#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[64];
static char repo[128];
static char bench_cmd[256];

static int setup(void **state)
{
	scratch_make(tmpdir, "session");
	/* The benchmark: run n sleeps when tmpdir/slow_at holds n; tmpdir/bad_at
	 * makes run n print no table.  The factor per run (by n mod 4) gives
	 * both sides a small, equal spread. */
	char *path = xasprintf("%s/bench.sh", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"#!/bin/sh\n"
		"d=%s\n"
		"n=$(cat \"$d/count\" 2>/dev/null || echo 0); n=$((n + 1)); echo \"$n\" >\"$d/count\"\n"
		"[ \"$(cat \"$d/slow_at\" 2>/dev/null)\" = \"$n\" ] && sleep 30\n"
		"[ \"$(cat \"$d/bad_at\" 2>/dev/null)\" = \"$n\" ] && { echo 'Traceback: boom'; exit 1; }\n"
		"ms=$(sed -n 's/^# ms=//p' kernel/compute.sh); ms=${ms:-1.000}\n"
		"case $((n %% 4)) in 0) f=1.003 ;; 1) f=0.998 ;; 2) f=0.997 ;; *) f=1.002 ;; esac\n"
		"eq=================================================================================\n"
		"echo \"$eq\"; echo '  Machine: tiny | CPU sh 1'; echo \"$eq\"\n"
		"printf '  fwd        B      T    H    D  op                            main[abc1234](ms)\\n'\n"
		"printf '          ----------------------------------------------------------------------\\n'\n"
		"for t in 64 128 256; do\n"
		"  v=$(awk -v m=\"$ms\" -v f=\"$f\" -v t=\"$t\" 'BEGIN { printf \"%%.4f\", m * f * t / 64 }')\n"
		"  printf '             1  %%5d    1   16  compute                                  %%s\\n' \"$t\" \"$v\"\n"
		"done\n"
		"echo \"$eq\"\n",
		tmpdir);
	fclose(f);
	snprintf(bench_cmd, sizeof(bench_cmd), "sh %s", path);
	free(path);
	return 0;
}

static int teardown(void **state)
{
	return scratch_remove(tmpdir);
}

/* A tiny project whose baseline is logged and committed, and whose kernel
 * then got a change (10 % faster for the benchmark) that was verified: the
 * workspace is MEASURED, a confirm is allowed. */
static int measured(void **state)
{
	static int k;
	struct err e = {0};
	struct loop *l;
	struct loop_measurement m;
	struct loop_log_opts lo = {.direction = "baseline"};
	char sha[41];

	snprintf(repo, sizeof(repo), "%s/r%d", tmpdir, k++);
	/* the tiny project with a verify whose times follow the kernel's
	 * "# ms=" line as the benchmark's do: the screen a short confirm must
	 * agree with is exact, not the timing of a process on a loaded machine */
	sh("%s/tests/fixtures/make_tiny_project.sh %s", root(), repo);
	sh("cd %s && printf '%%s\\n' '#!/bin/sh' "
	   "'eq=$(printf \"%%78s\" \"\" | tr \" \" =)' "
	   "'printf \"\\n%%s\\n  Correctness gate: tests/test_compute.sh (full)\\n%%s\\n\\n\" \"$eq\" \"$eq\"' "
	   "'sh tests/test_compute.sh || exit 1' "
	   "'printf \"%%s\\n\\n  GATE PASSED.\\n\" \"============================== 4 passed in 0.01s ===============================\"' "
	   "'ms=$(sed -n \"s/^# ms=//p\" kernel/compute.sh); ms=${ms:-1.000}' "
	   "'printf \"%%s\\n  Machine: tiny | CPU sh 1\\n%%s\\n\" \"$eq\" \"$eq\"' "
	   "'printf \"  fwd        B      T    H    D  op                            main[abc1234](ms)\\n\"' "
	   "'for t in 64 128 256; do v=$(awk -v m=\"$ms\" -v t=\"$t\" \"BEGIN { printf \\\"%%.4f\\\", m * t / 64 }\"); "
	   "printf \"          ------------------------------------------------------------------\\n             1  %%5d    1   16  compute                                  %%s\\n\" \"$t\" \"$v\"; done' "
	   "'printf \"%%s\\n\" \"$eq\"' >verify && git add verify && git commit -qm exact",
	   repo);
	{
		struct sb notes = SB_INIT;
		struct err ie = {0};
		const char *kernel[] = {"kernel"};
		struct loop_init_opts io = {.op = "tiny", .test_file = "tests/test_compute.sh",
					    .naive = "ref/naive.sh", .kernel = kernel, .nkernel = 1,
					    .verify_cmd = "./verify", .target = "2x", .languages = "sh",
					    .promotion = "full gate"};
		assert_int_equal(loop_init(repo, &io, &notes, &ie), 0);
		sb_release(&notes);
	}
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	assert_int_equal(loop_log(l, &lo, NULL, &e), 0);
	assert_int_equal(loop_commit(l, sha, &e), 0);
	sh("printf '# ms=0.900\\n' >>%s/kernel/compute.sh", repo);
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	loop_close(l);
	sh("rm -f %s/count %s/slow_at %s/bad_at", tmpdir, tmpdir, tmpdir);
	return 0;
}

static bool kernel_is_candidate(void)
{
	char *p = xasprintf("%s/kernel/compute.sh", repo);
	struct sb s = SB_INIT;
	struct err e = {0};
	assert_int_equal(fsutil_read_file(p, &s, &e), 0);
	bool cand = strstr(s.buf, "# ms=0.900") != NULL;
	sb_release(&s);
	free(p);
	return cand;
}

struct seen {
	struct loop_job *job;
	struct sb out;
	size_t max_rows; /* the most rows the parse result of a run had */
	int events;
};

static void on_output(void *ctx, const char *buf, size_t len)
{
	struct seen *v = ctx;
	struct loop_job_progress p;
	sb_add(&v->out, buf, len);
	if (!v->job)
		return;
	loop_job_progress(v->job, &p);
	if (p.result && p.result->nrows > v->max_rows)
		v->max_rows = p.result->nrows;
}

static void on_event(void *ctx, const struct parse_event *ev)
{
	struct seen *v = ctx;
	v->events++;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Pump with poll on the job's descriptors, as the TUI does. */
static int pump_polled(struct loop_job *j)
{
	int fds[2];
	struct pollfd p[2];
	int n = loop_job_fds(j, fds);
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
	if (n)
		poll(p, (nfds_t)n, 250);
	return loop_job_pump(j, 0, NULL);
}

static struct loop_job_opts confirm_opts(const struct loop_session_opts *o)
{
	return (struct loop_job_opts){.kind = LOOP_JOB_CONFIRM, .session = *o};
}

static void stepwise_confirm_runs_best_and_candidate_interleaved(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct seen v = {.out = SB_INIT};
	struct loop_session_opts o = {.command = bench_cmd, .max_pairs = 3, .output = on_output,
				 .event = on_event, .ctx = &v};
	struct loop_job_opts jo = confirm_opts(&o);
	struct loop_job_result res;
	const struct loop_session *r = &res.s;
	struct loop_job_progress p;
	char roles[16] = "";
	int last_run = 0;

	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &jo, &v.job, &e), 0);
	assert_non_null(v.job);
	loop_job_progress(v.job, &p);
	assert_int_equal(p.kind, LOOP_JOB_CONFIRM);
	assert_int_equal(p.run, 1);
	assert_int_equal(p.nruns, 2); /* one pair at a time */
	assert_string_equal(p.role, "best");
	assert_true(p.running);
	assert_string_equal(p.command, bench_cmd); /* --no-gate is only added to the contract's */
	assert_non_null(p.probe);
	/* the best is in the work tree for the first run */
	assert_false(kernel_is_candidate());
	roles[0] = 'b';
	last_run = 1;
	while (pump_polled(v.job) > 0) {
		loop_job_progress(v.job, &p);
		if (p.run != last_run) {
			assert_int_equal(p.run, last_run + 1);
			assert_true(p.run <= 4);
			roles[p.run - 1] = p.role[0];
			/* the tree holds what the run measures */
			assert_int_equal(kernel_is_candidate(), p.role[0] == 'c');
			last_run = p.run;
		}
	}
	/* Each kernel's verify is a session of its own, so the spread between
	 * sessions is known at the first pair (within 0.3 % here), and the
	 * pair agrees with the verifies: one pair decides a 10 % win. */
	assert_string_equal(roles, "bc");
	loop_job_progress(v.job, &p);
	assert_false(p.running);
	assert_int_equal(p.pairs, 1);
	assert_null(p.result); /* no run goes */
	struct loop_job *job = v.job;
	v.job = NULL;
	assert_int_equal(loop_job_end(job, &res, &e), 0);
	assert_int_equal(res.kind, LOOP_JOB_CONFIRM);
	assert_false(r->cancelled);
	assert_int_equal(r->nruns, 2);
	assert_string_equal(r->verdict, "fast");
	assert_true(r->promoted);
	assert_true(fabs(r->speedup - 1 / 0.9) < 0.01);
	json_t *seq = json_object_get(json_object_get(r->json, "comparison"), "sequential");
	if (!seq)
		seq = json_object_get(r->json, "sequential");
	assert_non_null(seq);
	assert_true(json_is_true(json_object_get(seq, "decided")));
	assert_true(kernel_is_candidate());
	/* the output of every run reached the caller, parsed as it came */
	assert_non_null(strstr(v.out.buf, "Machine: tiny"));
	assert_int_equal(v.max_rows, 3);
	assert_true(v.events > 0);
	/* the store has the decision */
	struct store_confirm c;
	assert_int_equal(store_confirm_last(loop_workspace(l)->store, r->iter, &c, &e), 0);
	assert_true(c.done);
	assert_true(c.promoted);
	assert_string_equal(c.verdict, "fast");
	store_confirm_release(&c);
	loop_job_result_release(&res);
	sb_release(&v.out);
	loop_close(l);
}

static void blocking_confirm_gives_the_same_result(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_session_opts o = {.command = bench_cmd, .max_pairs = 3};
	struct loop_job_opts jo = confirm_opts(&o);
	struct loop_job_result ra, rb;
	const struct loop_session *a = &ra.s, *b = &rb.s;
	struct loop_job *j;

	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &jo, &j, &e), 0);
	while (loop_job_pump(j, -1, NULL) > 0)
		;
	assert_int_equal(loop_job_end(j, &ra, &e), 0);
	loop_close(l);
	/* The same confirm, blocking, on a second workspace in the same state
	 * (on this one the first confirm's noise would make it shorter). */
	measured(state);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_run(l, &jo, &rb, &e), 0);
	assert_string_equal(a->verdict, b->verdict);
	assert_int_equal(a->promoted, b->promoted);
	assert_int_equal(a->nruns, b->nruns);
	assert_true((!a->flags_text && !b->flags_text) || !strcmp(a->flags_text, b->flags_text));
	assert_int_equal(a->ncommon, b->ncommon);
	assert_true(a->speedup == b->speedup);
	assert_true(a->target_speedup == b->target_speedup ||
		    (isnan(a->target_speedup) && isnan(b->target_speedup)));
	assert_true(b->promoted);
	/* the JSON the CLI prints has the same fields, sessions aside */
	json_t *ja = json_deep_copy(a->json), *jb = json_deep_copy(b->json);
	json_object_del(ja, "session");
	json_object_del(jb, "session");
	json_object_del(ja, "gpu_s"); /* wall time */
	json_object_del(jb, "gpu_s");
	assert_true(json_equal(ja, jb));
	json_decref(ja);
	json_decref(jb);
	assert_true(kernel_is_candidate());
	loop_job_result_release(&ra);
	loop_job_result_release(&rb);
	loop_close(l);
}

static void cancel_in_the_middle_puts_the_candidate_back(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_session_opts o = {.command = bench_cmd, .max_pairs = 3};
	struct loop_job_opts jo = confirm_opts(&o);
	struct loop_job_result res;
	const struct loop_session *r = &res.s;
	struct loop_job_progress p;
	struct loop_job *j;

	sh("echo 1 >%s/slow_at", tmpdir); /* the first run, the best's, hangs */
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &jo, &j, &e), 0);
	double t0 = now_s();
	assert_int_equal(pump_polled(j), 1);
	loop_job_progress(j, &p);
	assert_int_equal(p.run, 1);
	assert_true(p.running);
	assert_string_equal(p.role, "best");
	assert_false(kernel_is_candidate());
	loop_job_cancel(j);
	while (pump_polled(j) > 0)
		assert_true(now_s() - t0 < 20);
	assert_int_equal(loop_job_end(j, &res, &e), 0);
	assert_true(now_s() - t0 < 20); /* the sleeping child was stopped */
	assert_true(r->cancelled);
	assert_false(r->promoted);
	assert_int_equal(r->nruns, 1);
	assert_true(kernel_is_candidate());
	assert_true(json_is_true(json_object_get(r->json, "cancelled")));

	/* closed without a verdict, nothing promoted, nothing left unfinished */
	struct store_confirm c;
	assert_int_equal(store_confirm_last(loop_workspace(l)->store, r->iter, &c, &e), 0);
	assert_true(c.done);
	assert_false(c.promoted);
	assert_null(c.verdict);
	assert_int_equal(c.session, r->session);
	store_confirm_release(&c);
	assert_int_equal(store_confirm_unfinished(loop_workspace(l)->store, &c, NULL), ERR_NOTFOUND);
	assert_false(store_confirm_promoted(loop_workspace(l)->store, r->iter));
	/* every run so far is kept; the cut one as cancelled and incomplete */
	struct store_run run;
	assert_int_equal(store_run_get(loop_workspace(l)->store, r->session, &run, &e), 0);
	assert_int_equal(run.kind, RUN_CONFIRM);
	assert_true(run.cancelled);
	assert_int_equal(run.gate, GATE_INCOMPLETE);
	store_run_release(&run);
	loop_job_result_release(&res);

	/* the workspace is still MEASURED and a new confirm runs to its verdict */
	struct loop_status st;
	assert_int_equal(loop_status(l, &st, &e), 0);
	assert_int_equal(st.state, ST_MEASURED);
	assert_false(st.telescoped);
	loop_status_release(&st);
	sh("rm -f %s/slow_at", tmpdir);
	assert_int_equal(loop_job_run(l, &jo, &res, &e), 0);
	assert_true(r->promoted);
	loop_job_result_release(&res);
	loop_close(l);
}

static void a_broken_run_ends_the_session_with_the_candidate_back(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_session_opts o = {.command = bench_cmd, .max_pairs = 3};
	struct loop_job_opts jo = confirm_opts(&o);
	struct loop_job_result res;

	sh("echo 2 >%s/bad_at", tmpdir);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_run(l, &jo, &res, &e), ERR_HARNESS);
	assert_non_null(strstr(e.msg, "ended in a harness error"));
	assert_null(res.s.json); /* nothing to release */
	assert_true(kernel_is_candidate());
	struct store_confirm c;
	assert_int_equal(store_confirm_last(loop_workspace(l)->store, 1, &c, &e), 0);
	assert_true(c.done);
	assert_false(c.promoted);
	store_confirm_release(&c);
	loop_close(l);
}

static void begin_refuses_when_the_protocol_does_not_allow_it(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_session_opts o = {.command = bench_cmd};
	struct loop_job_opts jo = confirm_opts(&o);
	struct loop_log_opts lo = {.direction = "faster", .status = RS_REVERT};
	struct loop_job *j = (struct loop_job *)&e; /* must be reset */

	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_log(l, &lo, NULL, &e), 0);
	assert_int_equal(loop_job_begin(l, &jo, &j, &e), ERR_REFUSED);
	assert_null(j);
	assert_non_null(strstr(e.msg, "confirm refused: iteration 1 is logged"));
	assert_true(kernel_is_candidate());
	loop_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(stepwise_confirm_runs_best_and_candidate_interleaved,
				       measured),
		cmocka_unit_test_setup(blocking_confirm_gives_the_same_result, measured),
		cmocka_unit_test_setup(cancel_in_the_middle_puts_the_candidate_back, measured),
		cmocka_unit_test_setup(a_broken_run_ends_the_session_with_the_candidate_back,
				       measured),
		cmocka_unit_test_setup(begin_refuses_when_the_protocol_does_not_allow_it, measured),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
