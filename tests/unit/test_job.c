/* Unit tests for the loop's job handle (core/loop_job.c): a verify, a noise
 * and a confirm begun, polled, pumped, cancelled and ended through it on a
 * real tiny project, one job at a time, and a job left going when the loop
 * is closed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/loop_core.h"
#include "core/parse.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/workspace.h"
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
	scratch_make(tmpdir, "job");
	/* The benchmark: its times follow the kernel's "# ms=" line; run n
	 * sleeps when tmpdir/slow_at holds n. */
	char *path = xasprintf("%s/bench.sh", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"#!/bin/sh\n"
		"d=%s\n"
		"n=$(cat \"$d/count\" 2>/dev/null || echo 0); n=$((n + 1)); echo \"$n\" >\"$d/count\"\n"
		"[ \"$(cat \"$d/slow_at\" 2>/dev/null)\" = \"$n\" ] && sleep 30\n"
		"ms=$(sed -n 's/^# ms=//p' kernel/compute.sh); ms=${ms:-1.000}\n"
		"case $((n %% 4)) in 0) f=1.003 ;; 1) f=0.998 ;; 2) f=0.997 ;; *) f=1.002 ;; esac\n"
		"eq=================================================================================\n"
		"echo \"$eq\"; echo '  Machine: tiny | CPU sh 1'; echo \"$eq\"\n"
		"printf '  fwd        B      T    H    D  op                            "
		"main[abc1234](ms)\\n'\n"
		"for t in 64 128; do\n"
		"  v=$(awk -v m=\"$ms\" -v f=\"$f\" -v t=\"$t\" 'BEGIN { printf \"%%.4f\", m * f * t / 64 }')\n"
		"  printf '          --------------------------------------------------------------\\n'\n"
		"  printf '             1  %%5d    1   16  compute                                  %%s\\n' "
		"\"$t\" \"$v\"\n"
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

/* A fresh tiny workspace, its baseline not yet measured. */
static int fresh(void **state)
{
	static int k;
	snprintf(repo, sizeof(repo), "%s/r%d", tmpdir, k++);
	tiny_workspace(repo);
	sh("rm -f %s/count %s/slow_at", tmpdir, tmpdir);
	unsetenv("KERNEL_SLEEP");
	return 0;
}

/* The baseline logged and committed (the best), then a kernel change in
 * the work tree: the candidate a noise run must put back. */
static int with_best(void **state)
{
	struct err e = {0};
	struct loop *l;
	struct loop_measurement m;
	struct loop_log_opts lo = {.direction = "baseline"};
	char sha[41];

	fresh(state);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	assert_int_equal(loop_log(l, &lo, NULL, &e), 0);
	assert_int_equal(loop_commit(l, sha, &e), 0);
	loop_close(l);
	sh("printf '# ms=0.900\\n' >>%s/kernel/compute.sh", repo);
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

/* Pump with poll on the job's descriptors, as the workbench does. */
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

static enum loop_state state_of(struct loop *l)
{
	struct loop_status st;
	struct err e = {0};
	assert_int_equal(loop_status(l, &st, &e), 0);
	enum loop_state s = st.state;
	loop_status_release(&st);
	return s;
}

/* One number the workspace's database answers sql with (sqlite3's shell). */
static int count(struct loop *l, const char *sql)
{
	char *cmd = xasprintf("sqlite3 '%s' \"%s\"", loop_workspace(l)->db_path, sql);
	FILE *p = popen(cmd, "r");
	int n = -1;
	assert_non_null(p);
	assert_int_equal(fscanf(p, "%d", &n), 1);
	assert_int_equal(pclose(p), 0);
	free(cmd);
	return n;
}

static void a_verify_job_runs_to_its_measurement(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_job_opts o = {.kind = LOOP_JOB_VERIFY};
	struct loop_job_progress p;
	struct loop_job_result r;
	struct loop_job *j;

	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &o, &j, &e), 0);
	loop_job_progress(j, &p);
	assert_int_equal(p.kind, LOOP_JOB_VERIFY);
	assert_int_equal(p.iter, 0);
	assert_int_equal(p.run, 1);
	assert_int_equal(p.nruns, 1);
	assert_null(p.role);
	assert_true(p.running);
	assert_string_equal(p.command, "./verify");
	assert_non_null(p.probe);
	assert_non_null(p.probe_apps);
	assert_true(p.elapsed_s >= 0);
	assert_int_equal(state_of(l), ST_VERIFYING);
	while (pump_polled(j) > 0)
		;
	loop_job_progress(j, &p);
	assert_false(p.running);
	/* the run's output, parsed as it came: its table */
	assert_non_null(p.result);
	assert_true(p.result->nrows >= 1);
	assert_int_equal(loop_job_pump(j, 0, NULL), 0); /* over stays over */
	assert_int_equal(loop_job_end(j, &r, &e), 0);
	assert_int_equal(r.kind, LOOP_JOB_VERIFY);
	assert_int_equal(r.m.iter, 0);
	assert_int_equal(r.m.gate, GATE_PASS);
	assert_true(isfinite(r.m.bench_ms));
	assert_false(r.m.attempt);
	assert_true(r.m.run_id > 0);
	assert_null(r.s.json); /* a verify has no session */
	assert_int_equal(state_of(l), ST_MEASURED);
	loop_job_result_release(&r);
	assert_int_equal(r.kind, LOOP_JOB_VERIFY);
	assert_null(r.m.command);
	loop_close(l);
}

static void a_cancelled_verify_job_is_an_attempt(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_job_opts o = {.kind = LOOP_JOB_VERIFY};
	struct loop_job_result r;
	struct loop_job *j;

	setenv("KERNEL_SLEEP", "20", 1);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &o, &j, &e), 0);
	assert_int_equal(pump_polled(j), 1);
	loop_job_cancel(j);
	while (pump_polled(j) > 0)
		;
	assert_int_equal(loop_job_end(j, &r, &e), 0);
	unsetenv("KERNEL_SLEEP");
	assert_true(r.m.cancelled);
	assert_int_equal(r.m.gate, GATE_INCOMPLETE);
	assert_true(r.m.attempt);
	assert_int_equal(state_of(l), ST_NEED_BASELINE);
	loop_job_result_release(&r);
	loop_close(l);
}

static void one_job_at_a_time(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_job_opts v = {.kind = LOOP_JOB_VERIFY};
	struct loop_job_opts n = {.kind = LOOP_JOB_NOISE, .session = {.command = bench_cmd}};
	struct loop_job_result r;
	struct loop_job *j, *k = (struct loop_job *)&e;

	setenv("KERNEL_SLEEP", "20", 1);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &v, &j, &e), 0);
	assert_int_equal(loop_job_begin(l, &n, &k, &e), ERR_REFUSED);
	assert_null(k);
	assert_string_equal(e.msg, "noise refused: a verify run is already going (cancel it first)");
	assert_int_equal(loop_job_begin(l, &v, &k, &e), ERR_REFUSED);
	/* the job going keeps the writer lock */
	assert_int_equal(loop_writer(l, false, &e), 0);
	struct loop_status st;
	assert_int_equal(loop_status(l, &st, &e), 0);
	assert_false(st.readonly);
	loop_status_release(&st);
	/* ended before it is over: cancelled, recorded */
	assert_int_equal(loop_job_end(j, &r, &e), 0);
	unsetenv("KERNEL_SLEEP");
	assert_true(r.m.cancelled);
	assert_true(r.m.attempt);
	loop_job_result_release(&r);
	/* and the next one may begin */
	assert_int_equal(loop_job_run(l, &v, &r, &e), 0);
	assert_int_equal(r.m.gate, GATE_PASS);
	loop_job_result_release(&r);
	loop_close(l);
}

static void a_noise_job_measures_the_best_and_puts_the_candidate_back(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_job_opts o = {.kind = LOOP_JOB_NOISE,
				  .session = {.command = bench_cmd, .runs = 3}};
	struct loop_job_progress p;
	struct loop_job_result r;
	struct loop_job *j;
	int last = 0;

	assert_true(kernel_is_candidate());
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &o, &j, &e), 0);
	loop_job_progress(j, &p);
	assert_int_equal(p.kind, LOOP_JOB_NOISE);
	assert_int_equal(p.iter, 1);
	assert_int_equal(p.run, 1);
	assert_int_equal(p.nruns, 3);
	assert_string_equal(p.role, "noise");
	assert_string_equal(p.command, bench_cmd);
	assert_true(p.running);
	while (pump_polled(j) > 0) {
		loop_job_progress(j, &p);
		assert_true(p.run >= last && p.run <= 3);
		last = p.run;
		/* the best is in the tree for every run */
		assert_false(kernel_is_candidate());
	}
	assert_int_equal(last, 3);
	assert_int_equal(loop_job_end(j, &r, &e), 0);
	assert_int_equal(r.kind, LOOP_JOB_NOISE);
	assert_int_equal(r.s.nruns, 3);
	assert_int_equal(r.s.iter, 1);
	assert_null(r.s.verdict);
	assert_int_equal(json_integer_value(json_object_get(r.s.json, "runs")), 3);
	assert_int_equal(json_integer_value(json_object_get(r.s.json, "best_iter")), 0);
	assert_int_equal(json_array_size(json_object_get(r.s.json, "shapes")), 2);
	assert_true(kernel_is_candidate());
	/* as optloop noise records it: three runs in the session, its event,
	 * no swap left open */
	char *sql = xasprintf("SELECT count(*) FROM stats_runs s JOIN runs r ON r.id = s.run_id "
			      "WHERE r.kind = 'noise' AND s.role = 'noise' AND s.session = %d",
			      r.s.session);
	assert_int_equal(count(l, sql), 3);
	free(sql);
	assert_int_equal(count(l, "SELECT count(*) FROM events WHERE kind = 'noise'"), 1);
	assert_int_equal(count(l, "SELECT count(*) FROM tree_intents WHERE done = 0"), 0);
	assert_int_equal(state_of(l), ST_EDITING);
	loop_job_result_release(&r);
	loop_close(l);
}

static void a_cancelled_noise_job_fails_with_the_candidate_back(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_job_opts o = {.kind = LOOP_JOB_NOISE,
				  .session = {.command = bench_cmd, .runs = 3}};
	struct loop_job_result r;
	struct loop_job *j;

	sh("echo 2 >%s/slow_at", tmpdir); /* the second run hangs */
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &o, &j, &e), 0);
	struct loop_job_progress p = {0};
	while (p.run < 2) {
		assert_int_equal(pump_polled(j), 1);
		loop_job_progress(j, &p);
	}
	assert_false(kernel_is_candidate());
	loop_job_cancel(j);
	while (pump_polled(j) > 0)
		;
	assert_int_equal(loop_job_end(j, &r, &e), ERR_HARNESS);
	assert_non_null(strstr(e.msg, "noise run "));
	assert_non_null(strstr(e.msg, "was stopped before it finished"));
	assert_int_equal(r.kind, LOOP_JOB_NOISE);
	assert_null(r.s.json); /* nothing to release */
	assert_true(kernel_is_candidate());
	assert_int_equal(count(l, "SELECT count(*) FROM runs WHERE kind = 'noise' AND cancelled = 1"),
			 1);
	assert_int_equal(count(l, "SELECT count(*) FROM events WHERE kind = 'noise'"), 0);
	assert_int_equal(count(l, "SELECT count(*) FROM tree_intents WHERE done = 0"), 0);
	loop_close(l);
}

static void closing_the_loop_ends_the_job_going(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_job_opts n = {.kind = LOOP_JOB_NOISE,
				  .session = {.command = bench_cmd, .runs = 3}};
	struct loop_job *j;

	sh("echo 1 >%s/slow_at", tmpdir); /* the first run hangs */
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_job_begin(l, &n, &j, &e), 0);
	assert_int_equal(pump_polled(j), 1);
	assert_false(kernel_is_candidate());
	time_t t0 = time(NULL);
	loop_close(l); /* j goes with it */
	assert_true(time(NULL) - t0 < 20); /* the sleeping run was stopped */
	assert_true(kernel_is_candidate());
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(count(l, "SELECT count(*) FROM runs WHERE kind = 'noise' AND cancelled = 1"),
			 1);
	assert_int_equal(count(l, "SELECT count(*) FROM runs WHERE t_end IS NULL"), 0);
	assert_int_equal(count(l, "SELECT count(*) FROM tree_intents WHERE done = 0"), 0);
	assert_int_equal(state_of(l), ST_EDITING);

	/* a confirm left going: closed without a verdict, candidate back */
	struct loop_measurement m;
	struct loop_job_opts c = {.kind = LOOP_JOB_CONFIRM,
				  .session = {.command = bench_cmd, .max_pairs = 2}};
	sh("rm -f %s/count; echo 1 >%s/slow_at", tmpdir, tmpdir);
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	sh("rm -f %s/count", tmpdir); /* the confirm's first run hangs */
	assert_int_equal(loop_job_begin(l, &c, &j, &e), 0);
	assert_int_equal(pump_polled(j), 1);
	assert_false(kernel_is_candidate());
	loop_close(l);
	assert_true(kernel_is_candidate());
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(count(l, "SELECT count(*) FROM stats_confirms WHERE done = 0"), 0);
	assert_int_equal(count(l, "SELECT count(*) FROM stats_confirms WHERE promoted = 1"), 0);
	assert_int_equal(count(l, "SELECT count(*) FROM events WHERE kind = 'confirm.cancelled'"), 1);
	assert_int_equal(state_of(l), ST_MEASURED);
	loop_close(l);
}

static void a_confirm_job_through_the_blocking_form(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_measurement m;
	struct loop_job_opts c = {.kind = LOOP_JOB_CONFIRM,
				  .session = {.command = bench_cmd, .max_pairs = 3}};
	struct loop_job_result r;

	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	assert_int_equal(loop_job_run(l, &c, &r, &e), 0);
	assert_int_equal(r.kind, LOOP_JOB_CONFIRM);
	assert_false(r.s.cancelled);
	assert_non_null(r.s.verdict);
	assert_true(r.s.nruns >= 2);
	assert_non_null(r.s.json);
	assert_true(kernel_is_candidate());
	loop_job_result_release(&r);
	assert_null(r.s.json);
	assert_int_equal(r.kind, LOOP_JOB_CONFIRM);
	loop_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(a_verify_job_runs_to_its_measurement, fresh),
		cmocka_unit_test_setup(a_cancelled_verify_job_is_an_attempt, fresh),
		cmocka_unit_test_setup(one_job_at_a_time, fresh),
		cmocka_unit_test_setup(a_noise_job_measures_the_best_and_puts_the_candidate_back,
				       with_best),
		cmocka_unit_test_setup(a_cancelled_noise_job_fails_with_the_candidate_back,
				       with_best),
		cmocka_unit_test_setup(closing_the_loop_ends_the_job_going, with_best),
		cmocka_unit_test_setup(a_confirm_job_through_the_blocking_form, with_best),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
