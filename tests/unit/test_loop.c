/* Unit tests for the loop state machine through core/loop.h, on the tiny
 * kernel project (tests/fixtures/make_tiny_project.sh): a real repository,
 * a real verify child process, the real store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/parse.h"
#include "core/sb.h"
#include "core/store.h"
#include "tests/unit/scratch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static char repo[128];

static int setup(void **state)
{
	scratch_make(tmpdir, "loop");
	return 0;
}

static int teardown(void **state)
{
	return scratch_remove(tmpdir);
}

/* A tiny project with a workspace whose contract is complete. */
static int fresh(void **state)
{
	static int k;
	snprintf(repo, sizeof(repo), "%s/r%d", tmpdir, k++);
	tiny_workspace(repo);
	return 0;
}

static enum loop_state state_of(struct loop *l, int *iter)
{
	struct loop_status st;
	struct err e = {0};
	assert_int_equal(loop_status(l, &st, &e), 0);
	enum loop_state s = st.state;
	if (iter)
		*iter = st.iteration;
	loop_status_release(&st);
	return s;
}

/* Whether l is read-only, as its status says. */
static bool readonly_of(struct loop *l)
{
	struct loop_status st;
	struct err e = {0};
	assert_int_equal(loop_status(l, &st, &e), 0);
	bool ro = st.readonly;
	loop_status_release(&st);
	return ro;
}

static void sink(void *ctx, const char *buf, size_t len)
{
	struct sb *s = ctx;
	sb_add(s, buf, len);
}

static void a_whole_iteration_walks_the_states(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_measurement m;
	struct sb out = SB_INIT;
	struct loop_verify_opts vo = {.output = sink, .ctx = &out};
	struct loop_log_opts lo = {.direction = "baseline"};
	struct log_row row;
	char sha[41];
	int iter;

	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(state_of(l, &iter), ST_NEED_BASELINE);
	assert_int_equal(iter, 0);
	assert_int_equal(verify_run(l, &vo, &m, &e), 0);
	assert_non_null(strstr(out.buf, "GATE PASSED"));
	assert_int_equal(m.gate, GATE_PASS);
	assert_int_equal(m.scope, SCOPE_FULL);
	assert_true(m.bench_ms > 0);
	assert_true(isnan(m.vs_best));
	assert_true(m.no_change);
	loop_measurement_release(&m);
	assert_int_equal(state_of(l, NULL), ST_MEASURED);
	assert_int_equal(loop_measurement(l, &m, &e), 0);
	assert_int_equal(m.iter, 0);
	loop_measurement_release(&m);

	assert_int_equal(loop_log(l, &lo, &row, &e), 0);
	assert_int_equal(row.status, RS_BASE);
	log_row_release(&row);
	assert_int_equal(state_of(l, NULL), ST_LOGGED);
	assert_int_equal(loop_commit(l, sha, &e), 0);
	assert_int_equal(strlen(sha), 40);
	assert_int_equal(state_of(l, &iter), ST_READY);
	assert_int_equal(iter, 1);

	sh("cd %s && sed -i 's/\\* 2/* 3/' kernel/compute.sh", repo);
	assert_int_equal(state_of(l, NULL), ST_EDITING);
	sb_reset(&out);
	assert_int_equal(verify_run(l, &vo, &m, &e), 0);
	assert_int_equal(m.gate, GATE_FAIL);
	assert_true(isnan(m.bench_ms));
	assert_false(m.no_change);
	loop_measurement_release(&m);
	lo.direction = "times three\nsecond line";
	lo.status = RS_REVERT;
	assert_int_equal(loop_log(l, &lo, &row, &e), 0);
	assert_string_equal(row.direction, "times three second line");
	assert_string_equal(row.gate, "FAIL");
	log_row_release(&row);
	assert_int_equal(loop_commit(l, sha, &e), 0);

	struct log_rows *rows;
	assert_int_equal(loop_rows(l, &rows, &e), 0);
	assert_int_equal(rows->n, 2);
	assert_int_equal(rows->v[1].gate_v, GATE_FAIL);
	assert_string_equal(rows->v[1].commit, sha);
	log_rows_put(rows);
	sb_release(&out);
	loop_close(l);
}

static void refusals_name_the_step_due(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_measurement m;
	struct loop_log_opts lo = {.direction = "x", .status = RS_KEEP};
	char sha[41];

	assert_int_equal(loop_open(repo, "tiny", 0, &l, &e), 0);
	assert_int_equal(loop_log(l, &lo, NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "baseline has not been measured"));
	assert_int_equal(loop_commit(l, sha, &e), ERR_REFUSED);
	struct loop_verify_opts k = {.gate_k = "N1"};
	assert_int_equal(verify_run(l, &k, &m, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "full gate"));
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	assert_int_equal(verify_run(l, NULL, &m, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "iteration 0 is measured but OPT_LOG.md has no row"));
	assert_int_equal(loop_commit(l, sha, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "run optloop log first"));
	assert_int_equal(loop_log(l, &lo, NULL, &e), ERR_USAGE); /* keep on the baseline */
	lo.status = RS_NONE;
	assert_int_equal(loop_log(l, &lo, NULL, &e), 0);
	assert_int_equal(verify_run(l, NULL, &m, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "logged but not committed (run optloop commit)"));
	assert_int_equal(loop_commit(l, sha, &e), 0);
	/* iteration 1 needs a status */
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	assert_int_equal(loop_log(l, &lo, NULL, &e), ERR_USAGE);
	lo.status = RS_BASE;
	assert_int_equal(loop_log(l, &lo, NULL, &e), ERR_USAGE);
	loop_close(l);
}

static void a_cancelled_run_is_incomplete_never_a_pass(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_measurement m;
	int fds[2];

	setenv("KERNEL_SLEEP", "20", 1);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	struct loop_job *job;
	struct loop_job_result res;
	struct loop_job_opts jo = {.kind = LOOP_JOB_VERIFY};
	assert_int_equal(loop_job_begin(l, &jo, &job, &e), 0);
	assert_int_equal(state_of(l, NULL), ST_VERIFYING);
	assert_true(loop_job_fds(job, fds) >= 1);
	/* a second optloop: read-only, sees the run, may not verify */
	struct loop *r;
	assert_int_equal(loop_open(repo, NULL, 0, &r, &e), ERR_BUSY);
	assert_int_equal(loop_open(repo, NULL, LOOP_TRY_WRITE, &r, &e), 0);
	assert_true(readonly_of(r));
	assert_int_equal(state_of(r, NULL), ST_VERIFYING);
	assert_int_equal(verify_run(r, NULL, &m, &e), ERR_BUSY);
	loop_close(r);

	assert_int_equal(loop_job_pump(job, 100, &e), 1);
	loop_job_cancel(job);
	assert_int_equal(loop_job_end(job, &res, &e), 0);
	assert_int_equal(res.kind, LOOP_JOB_VERIFY);
	m = res.m;
	assert_int_equal(m.gate, GATE_INCOMPLETE);
	assert_true(m.cancelled);
	assert_true(isnan(m.bench_ms));
	/* an attempt, not an iteration: no row, and verify may run again */
	assert_true(m.attempt);
	char *first_log = m.log_path ? strdup(m.log_path) : NULL;
	int first_run = m.run_id;
	loop_measurement_release(&m);
	assert_int_equal(state_of(l, NULL), ST_NEED_BASELINE);
	struct loop_status st;
	assert_int_equal(loop_status(l, &st, &e), 0);
	assert_int_equal(st.attempt_run, first_run);
	assert_non_null(strstr(st.attempt, "cancelled"));
	assert_non_null(strstr(st.next, "attempt, not the baseline"));
	loop_status_release(&st);
	struct loop_log_opts lo = {.direction = "baseline"};
	assert_int_equal(loop_log(l, &lo, NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "attempt"));
	unsetenv("KERNEL_SLEEP");
	assert_int_equal(verify_run(l, NULL, &m, &e), 0);
	assert_int_equal(m.gate, GATE_PASS);
	assert_false(m.attempt);
	loop_measurement_release(&m);
	assert_int_equal(state_of(l, NULL), ST_MEASURED);
	/* the attempt's raw output was kept beside the new run's */
	char kept[4096];
	assert_non_null(first_log);
	snprintf(kept, sizeof(kept), "%.*s.attempt-%d.log", (int)(strlen(first_log) - 4),
		 first_log, first_run);
	assert_int_equal(access(kept, F_OK), 0);
	assert_int_equal(access(first_log, F_OK), 0);
	free(first_log);
	loop_close(l);
}

static void a_timeout_is_incomplete(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_measurement m;
	struct loop_verify_opts vo = {.timeout_s = 0.5};

	setenv("KERNEL_SLEEP", "20", 1);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(verify_run(l, &vo, &m, &e), 0);
	unsetenv("KERNEL_SLEEP");
	assert_int_equal(m.gate, GATE_INCOMPLETE);
	assert_true(m.timed_out);
	assert_true(m.seconds < 15);
	loop_measurement_release(&m);
	loop_close(l);
}

static void readonly_open_writes_nothing(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_measurement m;
	struct loop_log_opts lo = {.direction = "x"};
	char sha[41];

	assert_int_equal(loop_open(repo, NULL, LOOP_READONLY, &l, &e), 0);
	assert_true(readonly_of(l));
	assert_int_equal(verify_run(l, NULL, &m, &e), ERR_BUSY);
	assert_int_equal(loop_log(l, &lo, NULL, &e), ERR_BUSY);
	assert_int_equal(loop_commit(l, sha, &e), ERR_BUSY);
	assert_int_equal(state_of(l, NULL), ST_NEED_BASELINE);
	loop_close(l);
}

/* Two long-lived clients of one workspace (a workbench and an agent's
 * loop): each writes only while it holds the lock, and sees the other's
 * writes when it takes it. */
static void the_writer_lock_is_taken_and_given_back(void **state)
{
	struct loop *a, *b;
	struct err e = {0};
	struct loop_measurement m;

	(void)state;
	assert_int_equal(loop_open(repo, NULL, LOOP_READONLY, &a, &e), 0);
	assert_int_equal(loop_open(repo, NULL, LOOP_READONLY, &b, &e), 0);
	assert_int_equal(loop_writer(a, true, &e), 0);
	assert_false(readonly_of(a));
	assert_int_equal(loop_writer(a, true, &e), 0); /* already */
	/* b cannot while a holds it, and stays read-only */
	assert_int_equal(loop_writer(b, true, &e), ERR_BUSY);
	assert_true(readonly_of(b));
	assert_int_equal(verify_run(b, NULL, &m, &e), ERR_BUSY);
	/* a measures the baseline, then gives the lock back */
	assert_int_equal(verify_run(a, NULL, &m, &e), 0);
	loop_measurement_release(&m);
	assert_int_equal(loop_writer(a, false, &e), 0);
	assert_true(readonly_of(a));
	/* b takes it and goes on from where a left the loop */
	assert_int_equal(loop_writer(b, true, &e), 0);
	assert_int_equal(state_of(b, NULL), ST_MEASURED);
	struct loop_log_opts lo = {.direction = "baseline"};
	assert_int_equal(loop_log(b, &lo, NULL, &e), 0);
	char sha[41];
	assert_int_equal(loop_commit(b, sha, &e), 0);
	assert_int_equal(loop_writer(b, false, &e), 0);
	/* a sees it without reopening */
	assert_int_equal(state_of(a, NULL), ST_READY);
	loop_close(a);
	loop_close(b);
}

static void contract_gap_blocks_everything(void **state)
{
	struct loop *l;
	struct err e = {0};
	struct loop_measurement m;
	struct loop_status st;

	sh("cd %s && sed -i '/^## Target/,/^## /{/^2x$/d}' profile/tiny-opt/docs/draft.md", repo);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(loop_status(l, &st, &e), 0);
	assert_int_equal(st.state, ST_NO_CONTRACT);
	assert_non_null(st.missing);
	assert_non_null(strstr(st.missing, "Target"));
	loop_status_release(&st);
	assert_int_equal(verify_run(l, NULL, &m, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "contract is incomplete"));
	loop_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(a_whole_iteration_walks_the_states, fresh),
		cmocka_unit_test_setup(refusals_name_the_step_due, fresh),
		cmocka_unit_test_setup(a_cancelled_run_is_incomplete_never_a_pass, fresh),
		cmocka_unit_test_setup(a_timeout_is_incomplete, fresh),
		cmocka_unit_test_setup(readonly_open_writes_nothing, fresh),
		cmocka_unit_test_setup(contract_gap_blocks_everything, fresh),
		cmocka_unit_test_setup(the_writer_lock_is_taken_and_given_back, fresh),
	};
	return cmocka_run_group_tests_name("loop", tests, setup, teardown);
}
