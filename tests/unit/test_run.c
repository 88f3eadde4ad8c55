/* Unit tests for the run engine: one rule for how a run ended, whatever its
 * kind (verify, noise, confirm), with real child processes and a real store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/run.h"
#include "core/sb.h"
#include "core/store.h"

#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYN "tests/fixtures/synthetic/"
#define FIX "tests/fixtures/fla-h200/"

static char tmpdir[64];
static char cwd[4096];
static struct store *st;
static struct patset *ps;

static int setup(void **state)
{
	struct err e = {0};
	strcpy(tmpdir, "/tmp/optloop-run.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	if (!getenv("OPTLOOP_ASSETS")) {
		char *assets = xasprintf("%s/assets", cwd);
		setenv("OPTLOOP_ASSETS", assets, 1);
		free(assets);
	}
	char *db = xasprintf("%s/optloop.db", tmpdir);
	assert_int_equal(store_open(db, STORE_CREATE, &st, &e), 0);
	free(db);
	assert_int_equal(patset_load(NULL, NULL, &ps, &e), 0);
	return 0;
}

static int teardown(void **state)
{
	store_close(st);
	patset_free(ps);
	char *cmd = xasprintf("rm -rf %s", tmpdir);
	int rc = system(cmd);
	free(cmd);
	return rc;
}

static int last_run_id(void)
{
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(store_db(st), "SELECT coalesce(max(id), 0) FROM runs",
					    -1, &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	int id = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	return id;
}

static void sh_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh_run(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static int last_run_gate(void)
{
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(store_db(st),
					    "SELECT gate FROM runs ORDER BY id DESC LIMIT 1", -1, &q,
					    NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	int g = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	return g;
}

static struct run_spec spec_for(const char *kind, const char *command, const char *log)
{
	static char trace[128];
	snprintf(trace, sizeof(trace), "%s/trace", tmpdir);
	return (struct run_spec){
		.kind = run_kind_parse(kind),
		.iter = 1,
		.command = command,
		.cwd = cwd,
		.log_path = log,
		.trace_dir = trace,
		.scope = SCOPE_FULL,
		.ps = ps,
	};
}

/* Start, run to the end, record; returns run_end's code and the stored run. */
static int run_whole(const struct run_spec *s, struct store_run *out, struct err *e)
{
	struct run *r;
	int rc = run_start(st, s, &r, e);
	assert_int_equal(rc, 0);
	while (run_pump(r, -1) > 0)
		;
	rc = run_end(r, NULL, e);
	struct err ge = {0};
	assert_int_equal(store_run_get(st, run_record(r)->id, out, &ge), 0);
	run_free(r);
	return rc;
}

static void a_passing_run_is_recorded_with_its_number_and_raw_log(void **state)
{
	struct err e = {0};
	struct store_run r;
	char *log = xasprintf("%s/trace/iter-1.log", tmpdir);
	struct run_spec s = spec_for("verify", "cat " SYN "demo-gate-pass-full.txt", log);
	s.start_event = "verify.start";
	assert_int_equal(run_whole(&s, &r, &e), 0);
	assert_int_equal(r.gate, GATE_PASS);
	assert_int_equal(r.scope, SCOPE_FULL);
	assert_true(isfinite(r.bench_ms) && r.bench_ms > 0);
	assert_true(r.t_end >= r.t_start && r.t_end > 0);
	assert_true(r.env_id > 0);
	assert_string_equal(r.log_path, log);
	/* every byte of the output is in the raw log */
	struct sb a = SB_INIT, b = SB_INIT;
	assert_int_equal(fsutil_read_file(log, &a, &e), 0);
	assert_int_equal(fsutil_read_file(SYN "demo-gate-pass-full.txt", &b, &e), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.buf, b.buf, a.len);
	sb_release(&a);
	sb_release(&b);
	store_run_release(&r);
	free(log);
}

static void a_run_without_a_log_path_is_named_by_its_id(void **state)
{
	struct err e = {0};
	struct store_run r;
	struct run_spec s = spec_for("noise", "cat " SYN "no-gate.txt", NULL);
	assert_int_equal(run_whole(&s, &r, &e), 0);
	char *want = xasprintf("%s/trace/noise-1-run%d.log", tmpdir, r.id);
	assert_string_equal(r.log_path, want);
	assert_true(fsutil_exists(want));
	assert_int_equal(r.gate, GATE_UNVERIFIED); /* --no-gate: a number, never a gate */
	assert_true(isfinite(r.bench_ms));
	free(want);
	store_run_release(&r);
}

/* 128 + N is how a shell reports a killed child: the run did not finish. */
static void a_killed_run_is_incomplete_and_has_no_number(void **state)
{
	struct err e = {0};
	struct store_run r;
	const char *kinds[] = {"verify", "confirm"};
	for (size_t k = 0; k < 2; k++) {
		struct run_spec s =
			spec_for(kinds[k], "cat " SYN "demo-gate-pass-full.txt; exit 143", NULL);
		assert_int_equal(run_whole(&s, &r, &e), 0);
		assert_int_equal(r.gate, GATE_INCOMPLETE);
		assert_true(isnan(r.bench_ms));
		assert_int_equal(r.exit_status, 143);
		store_run_release(&r);
	}
}

/* A failed test case stands even when the run was then stopped. */
static void a_failure_then_a_kill_stays_a_failure(void **state)
{
	struct err e = {0};
	struct store_run r;
	struct run_spec s = spec_for("verify", "cat " FIX "verify-gate-fail-k.txt; kill -TERM $$",
				     NULL);
	assert_int_equal(run_whole(&s, &r, &e), 0);
	assert_int_equal(r.gate, GATE_FAIL);
	assert_int_equal(r.signal, 15);
	assert_true(isnan(r.bench_ms));
	store_run_release(&r);
}

static void a_cancelled_run_is_recorded_cancelled(void **state)
{
	struct err e = {0};
	struct run *r;
	struct run_spec s = spec_for("confirm", "echo start; sleep 30", NULL);
	assert_int_equal(run_start(st, &s, &r, &e), 0);
	assert_true(run_going(r));
	assert_int_equal(run_pump(r, 50), 1);
	run_cancel(r);
	assert_int_equal(run_end(r, NULL, &e), 0);
	assert_false(run_going(r));
	const struct store_run *rec = run_record(r);
	assert_true(rec->cancelled);
	assert_int_equal(rec->gate, GATE_INCOMPLETE);
	/* ending twice is refused */
	assert_int_equal(run_end(r, NULL, &e), ERR_REFUSED);
	run_free(r);
}

/* The raw log is the evidence: when it cannot be written the run stops and
 * is recorded incomplete, and the error says why. */
static void a_raw_log_write_failure_stops_the_run(void **state)
{
	struct err e = {0};
	struct store_run r;
	if (access("/dev/full", W_OK) != 0) {
		skip();
		return;
	}
	struct run_spec s =
		spec_for("verify", "cat " SYN "demo-gate-pass-full.txt; sleep 30", "/dev/full");
	assert_int_equal(run_whole(&s, &r, &e), ERR_IO);
	assert_non_null(strstr(e.msg, "raw log"));
	assert_int_equal(r.gate, GATE_INCOMPLETE);
	assert_false(r.cancelled);
	assert_true(isnan(r.bench_ms));
	assert_true(r.t_end - r.t_start < 20);
	store_run_release(&r);
}

static void a_command_that_cannot_start_is_a_harness_error(void **state)
{
	struct err e = {0};
	struct run *r = NULL;
	struct run_spec s = spec_for("noise", "true", NULL);
	char *gone = xasprintf("%s/no-such-dir", tmpdir);
	s.cwd = gone;
	int before = last_run_id();
	assert_true(run_start(st, &s, &r, &e) < 0);
	assert_null(r);
	int after = last_run_id();
	assert_int_equal(after, before + 1);
	struct store_run rec;
	assert_int_equal(store_run_get(st, after, &rec, &e), 0);
	assert_int_equal(rec.gate, GATE_ERROR);
	assert_true(rec.t_end > 0);
	store_run_release(&rec);
	free(gone);
}

/* A link planted at the raw log's name is not followed: the run does not
 * start, it is recorded as a harness error, and the link's target is
 * untouched. */
static void a_raw_log_that_is_a_link_is_refused(void **state)
{
	struct err e = {0};
	struct run *r = NULL;
	char *target = xasprintf("%s/outside.txt", tmpdir);
	char *log = xasprintf("%s/trace/iter-7.log", tmpdir);
	sh_run("mkdir -p %s/trace && echo keep >%s && ln -sf %s %s", tmpdir, target, target, log);
	struct run_spec s = spec_for("verify", "echo overwritten", log);
	assert_int_equal(run_start(st, &s, &r, &e), ERR_IO);
	assert_null(r);
	assert_non_null(strstr(e.msg, "symbolic link"));
	struct sb got = SB_INIT;
	assert_int_equal(fsutil_read_file(target, &got, &e), 0);
	assert_string_equal(got.buf, "keep\n");
	assert_int_equal(last_run_gate(), GATE_ERROR);
	sb_release(&got);
	free(target);
	free(log);
}

static int fill_tree(void *ctx, struct store_run *rec, const struct parse_result *res,
		     struct err *e)
{
	(void)res;
	free(rec->tree);
	rec->tree = xstrdup(ctx);
	return 0;
}

static int refuse_in_tx(void *ctx, struct store *s, struct store_run *rec, struct err *e)
{
	return err_set(e, ERR_IO, "no room for run %d", rec->id);
}

/* The caller's fields go in with the record; a failing hook keeps nothing
 * of the transaction, so the run stays incomplete. */
static void hooks_fill_the_record_or_keep_it_incomplete(void **state)
{
	struct err e = {0};
	struct run *r;
	struct run_spec s = spec_for("verify", "cat " SYN "demo-gate-pass-full.txt", NULL);
	assert_int_equal(run_start(st, &s, &r, &e), 0);
	struct run_end_hooks h = {.fill = fill_tree, .ctx = "abc123"};
	assert_int_equal(run_end(r, &h, &e), 0);
	struct store_run got;
	assert_int_equal(store_run_get(st, run_record(r)->id, &got, &e), 0);
	assert_string_equal(got.tree, "abc123");
	assert_int_equal(got.gate, GATE_PASS);
	store_run_release(&got);
	run_free(r);

	assert_int_equal(run_start(st, &s, &r, &e), 0);
	h = (struct run_end_hooks){.in_tx = refuse_in_tx};
	assert_int_equal(run_end(r, &h, &e), ERR_IO);
	assert_non_null(strstr(e.msg, "no room"));
	assert_int_equal(store_run_get(st, run_record(r)->id, &got, &e), 0);
	assert_int_equal(got.gate, GATE_INCOMPLETE);
	assert_true(got.t_end <= 0);
	store_run_release(&got);
	run_free(r);
}

/* Freeing a going run stops the child; the record stays as going, for the
 * next open to settle as an attempt. */
static void freeing_a_going_run_stops_it(void **state)
{
	struct err e = {0};
	struct run *r;
	struct run_spec s = spec_for("verify", "echo $$ >" "pidfile; sleep 30", NULL);
	char *dir = xasprintf("%s", tmpdir);
	s.cwd = dir;
	assert_int_equal(run_start(st, &s, &r, &e), 0);
	int id = run_record(r)->id;
	char *pidfile = xasprintf("%s/pidfile", tmpdir);
	struct sb pid = SB_INIT;
	/* the shell creates the file before it writes the pid: wait for the
	 * whole line (read early, an empty file gave pid 0, this process) */
	for (int i = 0; i < 500; i++) {
		sb_reset(&pid);
		if (fsutil_read_file(pidfile, &pid, NULL) == 0 && pid.len && pid.buf[pid.len - 1] == '\n')
			break;
		run_pump(r, 20);
	}
	assert_true(pid.len > 1 && atoi(pid.buf) > 0);
	run_free(r);
	assert_int_not_equal(kill(atoi(pid.buf), 0), 0);
	struct store_run got;
	assert_int_equal(store_run_get(st, id, &got, &e), 0);
	assert_int_equal(got.gate, GATE_INCOMPLETE);
	assert_true(got.t_end <= 0);
	store_run_release(&got);
	sb_release(&pid);
	free(pidfile);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_passing_run_is_recorded_with_its_number_and_raw_log),
		cmocka_unit_test(a_run_without_a_log_path_is_named_by_its_id),
		cmocka_unit_test(a_killed_run_is_incomplete_and_has_no_number),
		cmocka_unit_test(a_failure_then_a_kill_stays_a_failure),
		cmocka_unit_test(a_cancelled_run_is_recorded_cancelled),
		cmocka_unit_test(a_raw_log_write_failure_stops_the_run),
		cmocka_unit_test(a_command_that_cannot_start_is_a_harness_error),
		cmocka_unit_test(a_raw_log_that_is_a_link_is_refused),
		cmocka_unit_test(hooks_fill_the_record_or_keep_it_incomplete),
		cmocka_unit_test(freeing_a_going_run_stops_it),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
