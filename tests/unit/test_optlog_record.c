/* Unit tests for what optloop records of each OPT_LOG.md write
 * (core/loop_optlog.c): an open that finds the file as recorded takes it
 * for current without the rows, and every change to what the file shows
 * (a row added or changed by another program, a first row's commit, the
 * contract's Target, the Env line) or to the file itself (a hand edit of
 * the same size, a file deleted or cut short) takes the full comparison,
 * which renders the file again or says what it found.  On the tiny kernel
 * project with a real store and a real verify. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/loop_impl.h"
#include "core/sb.h"
#include "core/store.h"
#include "tests/unit/scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static char repo[128];
static char optlog[192];
static char db[192];

static int setup(void **state)
{
	(void)state;
	scratch_make(tmpdir, "optlog-record");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return scratch_remove(tmpdir);
}

/* A tiny project with its baseline measured and logged (one row, not
 * committed). */
/* A verify of the kernel as it is, through the job handle. */
static int verify(struct loop *l, struct err *e)
{
	struct loop_job_opts o = {.kind = LOOP_JOB_VERIFY};
	struct loop_job_result r;
	int rc = loop_job_run(l, &o, &r, e);
	if (rc == 0)
		loop_job_result_release(&r);
	return rc;
}

static int baseline(void **state)
{
	static int k;
	struct loop *l;
	struct err e = {0};
	struct loop_log_opts lo = {.direction = "baseline"};

	(void)state;
	snprintf(repo, sizeof(repo), "%s/r%d", tmpdir, k++);
	snprintf(optlog, sizeof(optlog), "%s/profile/tiny-opt/OPT_LOG.md", repo);
	snprintf(db, sizeof(db), "%s/profile/tiny-opt/optloop.db", repo);
	tiny_workspace(repo);
	sh("cd %s && git config user.name t && git config user.email t@optloop.invalid", repo);
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	assert_int_equal(verify(l, &e), 0);
	assert_int_equal(loop_log(l, &lo, NULL, &e), 0);
	loop_close(l);
	return 0;
}

static char *file_text(void)
{
	struct sb t = SB_INIT;
	struct err e = {0};
	assert_int_equal(fsutil_read_file(optlog, &t, &e), 0);
	return sb_detach(&t);
}

/* Whether the file is exactly a full render of the database now. */
static bool file_is_full_render(struct loop *l)
{
	struct sb have = SB_INIT, want = SB_INIT;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	struct err e = {0};
	assert_int_equal(fsutil_read_file(optlog, &have, &e), 0);
	assert_int_equal(loop_rows_get(l->ws.store, &sr, &rows, &n, &e), 0);
	bool same = loop_render_optlog(l, rows, n, -1, &have, &want, NULL);
	log_rows_put(sr);
	sb_release(&have);
	sb_release(&want);
	return same;
}

/* Whether the file is current by the record alone (no rows read). */
static bool current_by_record(struct loop *l)
{
	struct sb have = SB_INIT;
	struct err e = {0};
	assert_int_equal(fsutil_read_file(optlog, &have, &e), 0);
	bool cur = loop_optlog_current(l, &have);
	sb_release(&have);
	return cur;
}

static char *problems(struct loop *l)
{
	struct loop_status st;
	struct err e = {0};
	assert_int_equal(loop_status(l, &st, &e), 0);
	char *p = st.problems ? xstrdup(st.problems) : NULL;
	loop_status_release(&st);
	return p;
}

static struct loop *open_writer(void)
{
	struct loop *l;
	struct err e = {0};
	assert_int_equal(loop_open(repo, NULL, 0, &l, &e), 0);
	return l;
}

/* Every write records the file: after init, log and the baseline's commit
 * (its sha is in the Baseline line) the next open needs no rows. */
static void each_write_is_recorded(void **state)
{
	struct loop *l;
	struct err e = {0};
	char sha[41];
	(void)state;

	l = open_writer();
	assert_true(current_by_record(l));
	assert_true(file_is_full_render(l));
	assert_int_equal(loop_commit(l, sha, &e), 0);
	assert_true(current_by_record(l));
	assert_true(file_is_full_render(l));
	char *t = file_text();
	char want[32];
	snprintf(want, sizeof(want), "(iter 0, %.7s)", sha);
	assert_non_null(strstr(t, want));
	free(t);
	loop_close(l);

	/* a workspace with no record yet (made before it was kept): the full
	 * comparison finds the file current once and records it */
	sh("sqlite3 %s \"DELETE FROM meta WHERE key = 'optlog_written'\"", db);
	l = open_writer();
	assert_null(problems(l));
	assert_true(current_by_record(l));
	loop_close(l);
}

/* A row another program added (plain SQL: no file written) moves the
 * rows' generation: the record no longer matches and the row is
 * rendered. */
static void a_row_added_elsewhere_is_rendered(void **state)
{
	struct loop *l;
	(void)state;

	sh("sqlite3 %s \"INSERT INTO iterations(iter, direction, gate_v, scope, bench_ms, "
	   "status) VALUES (1, 'added elsewhere', 1, 1, 0.5, 'drop')\"",
	   db);
	l = open_writer();
	char *t = file_text();
	assert_non_null(strstr(t, "| 1 | added elsewhere |"));
	free(t);
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	loop_close(l);
}

/* A row changed by another program: its cells, and the first row's
 * commit, which the Baseline line cites.  A later row's commit is not in
 * the file: changing it leaves the record current. */
static void a_row_changed_elsewhere_is_rendered(void **state)
{
	struct loop *l;
	(void)state;

	sh("sqlite3 %s \"UPDATE iterations SET direction = 'edited row' WHERE iter = 0\"", db);
	l = open_writer();
	char *t = file_text();
	assert_non_null(strstr(t, "| 0 | edited row |"));
	free(t);
	assert_true(current_by_record(l));
	loop_close(l);

	sh("sqlite3 %s \"UPDATE iterations SET commit_sha = 'abcdef0123456789' WHERE iter = 0\"",
	   db);
	l = open_writer();
	t = file_text();
	assert_non_null(strstr(t, "(iter 0, abcdef0)"));
	free(t);
	assert_true(file_is_full_render(l));
	loop_close(l);

	sh("sqlite3 %s \"INSERT INTO iterations(iter, direction, gate_v, scope, bench_ms, "
	   "status) VALUES (1, 'second', 1, 1, 0.5, 'drop')\"",
	   db);
	loop_close(open_writer());
	sh("sqlite3 %s \"UPDATE iterations SET commit_sha = 'fedcba9876543210' WHERE iter = 1\"",
	   db);
	l = open_writer();
	assert_true(current_by_record(l));
	assert_true(file_is_full_render(l));
	loop_close(l);
}

/* The Target line comes from the contract, not the rows. */
static void a_new_target_is_rendered(void **state)
{
	struct loop *l;
	(void)state;

	sh("cd %s && sed -i '/^## Target/,/^## /s/^2x$/3x faster/' profile/tiny-opt/docs/draft.md",
	   repo);
	l = open_writer();
	char *t = file_text();
	assert_non_null(strstr(t, "\nTarget: 3x faster\n"));
	free(t);
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	loop_close(l);
}

/* The Env line: the latest logged row whose run printed an environment,
 * found by the index; a row whose run printed none leaves it as it was,
 * and a run's result changed by another program moves it. */
static void the_env_line_follows_the_runs(void **state)
{
	struct loop *l;
	(void)state;

	sh("sqlite3 %s \"UPDATE runs SET result_json = json_set(result_json, '$.env.raw', "
	   "'first env') WHERE id = (SELECT run_id FROM iterations WHERE iter = 0)\"",
	   db);
	l = open_writer();
	char *t = file_text();
	assert_non_null(strstr(t, "\nEnv: first env\n"));
	free(t);
	loop_close(l);

	/* a newer row without a run, and one whose run printed no env */
	sh("sqlite3 %s \"INSERT INTO runs(iter, kind, result_json) VALUES (2, 'verify', "
	   "'{\\\"env\\\": {\\\"raw\\\": \\\"\\\"}}'); "
	   "INSERT INTO iterations(iter, direction, gate_v, scope, bench_ms, status) VALUES "
	   "(1, 'no run', 1, 1, 0.5, 'drop'); "
	   "INSERT INTO iterations(iter, direction, gate_v, scope, bench_ms, status, run_id) "
	   "VALUES (2, 'no env', 1, 1, 0.5, 'drop', last_insert_rowid())\"",
	   db);
	l = open_writer();
	t = file_text();
	assert_non_null(strstr(t, "\nEnv: first env\n"));
	assert_non_null(strstr(t, "| 2 | no env |"));
	free(t);
	loop_close(l);

	/* the newest row's run gets an environment, through Slurm */
	sh("sqlite3 %s \"UPDATE runs SET result_json = '{\\\"env\\\": {\\\"raw\\\": \\\"new "
	   "env\\\"}, \\\"slurm\\\": {\\\"node\\\": \\\"gpu7\\\", \\\"gpus\\\": \\\"0\\\", "
	   "\\\"job\\\": \\\"42\\\"}}' WHERE id = (SELECT run_id FROM iterations WHERE iter = 2)\"",
	   db);
	l = open_writer();
	t = file_text();
	assert_non_null(strstr(t, "\nEnv: new env | node gpu7, GPU 0 (Slurm job 42)\n"));
	free(t);
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	loop_close(l);
}

/* Hand edits that keep the size: the hash tells them.  A cell changed is
 * said and left as the person wrote it (the next write keeps it); a row
 * number changed is a row the database lacks, said and left alone. */
static void a_hand_edit_of_the_same_size_is_found(void **state)
{
	struct loop *l;
	(void)state;

	sh("sed -i 's/| 0 | baseline |/| 0 | BASELINE |/' %s", optlog);
	l = open_writer();
	char *t = file_text();
	/* found, said, and left as the person wrote it */
	assert_non_null(strstr(t, "| 0 | BASELINE |"));
	free(t);
	assert_false(current_by_record(l));
	char *p = problems(l);
	assert_non_null(p);
	assert_non_null(strstr(p, "OPT_LOG.md was edited by hand: it has row 0's Direction"));
	free(p);
	loop_close(l);

	sh("sed -i 's/| 0 | BASELINE |/| 7 | baseline |/' %s", optlog);
	l = open_writer();
	assert_false(current_by_record(l));
	p = problems(l);
	assert_non_null(p);
	assert_non_null(strstr(p, "OPT_LOG.md holds 1 row the database does not"));
	free(p);
	t = file_text();
	assert_non_null(strstr(t, "| 7 | baseline |"));
	free(t);
	loop_close(l);
}

/* A file deleted, or cut short, is rendered again in full. */
static void a_lost_or_cut_file_is_rendered_again(void **state)
{
	struct loop *l;
	(void)state;

	sh("rm %s", optlog);
	l = open_writer();
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	loop_close(l);

	sh("truncate -s -12 %s", optlog);
	l = open_writer();
	assert_null(problems(l));
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	loop_close(l);
}

/* A reader finds a stale file without writing it or the record. */
static void a_reader_writes_nothing(void **state)
{
	struct loop *l;
	struct err e = {0};
	(void)state;

	sh("sqlite3 %s \"UPDATE iterations SET direction = 'changed' WHERE iter = 0\"", db);
	char *before = file_text();
	assert_int_equal(loop_open(repo, NULL, LOOP_READONLY, &l, &e), 0);
	assert_false(current_by_record(l));
	loop_close(l);
	char *after = file_text();
	assert_string_equal(before, after);
	free(before);
	free(after);
	l = open_writer();
	assert_true(current_by_record(l));
	loop_close(l);
}

/* A row appended to the file as recorded: the text is byte for byte a
 * full render, the Env line the new row's run moved included, for rows of
 * every shape a cell can take. */
static void an_appended_row_is_a_full_render(void **state)
{
	struct loop *l = open_writer();
	struct err e = {0};
	(void)state;

	sh("sqlite3 %s \"INSERT INTO runs(iter, kind, result_json) VALUES (1, 'verify', "
	   "'{\\\"env\\\": {\\\"raw\\\": \\\"moved env\\\"}}'); "
	   "INSERT INTO iterations(iter, direction, gate, gate_v, scope, bench_ms, vs_best, "
	   "status, unconfirmed, vs_from, run_id) VALUES (1, 'a | pipe \\\\ and more', "
	   "'pass (-k)', 1, 2, 0.12345, 0.25, 'keep', 'a reason', 'confirm', "
	   "last_insert_rowid())\"",
	   db);
	assert_int_equal(loop_write_optlog_appended(l, 1, &e), 1);
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	char *t = file_text();
	assert_non_null(strstr(t, "\nEnv: moved env\n"));
	assert_non_null(strstr(t, "| 1 | a \\| pipe"));
	free(t);

	sh("sqlite3 %s \"INSERT INTO iterations(iter, direction, gate_v, scope, status) VALUES "
	   "(2, 'no bench', 3, 1, 'revert')\"",
	   db);
	assert_int_equal(loop_write_optlog_appended(l, 2, &e), 1);
	assert_true(file_is_full_render(l));
	loop_close(l);
}

/* Anything else changed since the record, or a file that is not the one
 * recorded: the row is not appended, the file is written in full (a hand
 * edit of it merged, not lost). */
static void an_append_after_other_changes_renders_in_full(void **state)
{
	struct loop *l = open_writer();
	struct err e = {0};
	(void)state;

	/* another row changed as well */
	sh("sqlite3 %s \"UPDATE iterations SET direction = 'changed' WHERE iter = 0; "
	   "INSERT INTO iterations(iter, direction, gate_v, scope, status) VALUES "
	   "(1, 'one', 1, 1, 'drop')\"",
	   db);
	assert_int_equal(loop_write_optlog_appended(l, 1, &e), 0);
	assert_true(file_is_full_render(l));
	char *t = file_text();
	assert_non_null(strstr(t, "| 0 | changed |"));
	free(t);

	/* the file edited by hand since it was written */
	sh("sed -i 's/| 0 | changed |/| 0 | CHANGED |/' %s", optlog);
	sh("sqlite3 %s \"INSERT INTO iterations(iter, direction, gate_v, scope, status) VALUES "
	   "(2, 'two', 1, 1, 'drop')\"",
	   db);
	assert_int_equal(loop_write_optlog_appended(l, 2, &e), 0);
	/* the row is written into the table, the hand edit kept */
	t = file_text();
	assert_non_null(strstr(t, "| 0 | CHANGED |"));
	assert_non_null(strstr(t, "| 2 | two |"));
	free(t);
	assert_true(current_by_record(l));

	/* the contract's Target changed: the head is rendered again either way */
	sh("cd %s && sed -i '/^## Target/,/^## /s/^2x$/4x/' profile/tiny-opt/docs/draft.md", repo);
	assert_int_equal(loop_load_contract(l, &e), 0);
	sh("sqlite3 %s \"INSERT INTO iterations(iter, direction, gate_v, scope, status) VALUES "
	   "(3, 'three', 1, 1, 'drop')\"",
	   db);
	assert_int_equal(loop_write_optlog_appended(l, 3, &e), 1);
	assert_true(current_by_record(l));
	t = file_text();
	assert_non_null(strstr(t, "\nTarget: 4x\n"));
	assert_non_null(strstr(t, "| 0 | CHANGED |"));
	assert_non_null(strstr(t, "| 3 | three |"));
	free(t);
	loop_close(l);
}

/* A whole iteration through the loop: verify, log (which appends) and
 * commit leave the file a full render, known current by its record. */
static void a_logged_iteration_leaves_a_full_render(void **state)
{
	struct loop *l = open_writer();
	struct err e = {0};
	struct loop_log_opts lo = {.direction = "a comment", .status = RS_DROP};
	char sha[41];
	(void)state;

	assert_int_equal(loop_commit(l, sha, &e), 0);
	sh("cd %s && printf '# a comment\\n' >>kernel/compute.sh", repo);
	assert_int_equal(verify(l, &e), 0);
	assert_int_equal(loop_log(l, &lo, NULL, &e), 0);
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	assert_int_equal(loop_commit(l, sha, &e), 0);
	assert_true(current_by_record(l));
	loop_close(l);
}

/* A re-assessment and a stop recorded while the file did not list them
 * (by an optloop that did not write them there, or plain SQL): the file
 * is not current, and the next open renders them under the table; a file
 * edited by hand meanwhile keeps its edit when they are written in. */
static void events_recorded_elsewhere_are_rendered(void **state)
{
	struct loop *l;
	struct err e = {0};
	(void)state;

	sh("sqlite3 %s \"INSERT INTO guards_reassess(after_iter, t, axes, next) VALUES "
	   "(0, 1, 'tiling', 'fuse the gate')\"",
	   db);
	l = open_writer();
	assert_null(problems(l));
	char *t = file_text();
	assert_non_null(strstr(t, "|\n\n### Re-assessments and stops\n\n- After iteration 0: "
				  "**re-assessed**; axes tried: tiling; next direction: fuse the "
				  "gate\n"));
	free(t);
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	loop_close(l);

	/* edited by hand, then a stop recorded: said, left as it is */
	sh("printf '\\nmy note\\n' >>%s", optlog);
	sh("sqlite3 %s \"INSERT INTO guards_stop(iter, t, reason) VALUES (0, 2, 'cap')\"", db);
	l = open_writer();
	char *p = problems(l);
	assert_non_null(p);
	assert_non_null(strstr(p, "the re-assessments and stops under the table"));
	free(p);
	t = file_text();
	assert_null(strstr(t, "**stopped**"));
	free(t);
	/* the next write lists the stop and keeps the note */
	assert_int_equal(loop_write_optlog(l, &e), 0);
	t = file_text();
	assert_non_null(strstr(t, "next direction: fuse the gate\n- After iteration 0: **stopped**, "
				  "the iteration cap reached\n\nmy note\n"));
	free(t);
	assert_true(current_by_record(l));
	loop_close(l);
}

/* A row appended to a file that lists re-assessments goes into the table,
 * above them, without a full render. */
static void an_appended_row_goes_above_the_events(void **state)
{
	struct loop *l;
	struct err e = {0};
	(void)state;

	sh("sqlite3 %s \"INSERT INTO guards_reassess(after_iter, t, next) VALUES (0, 1, 'n')\"", db);
	l = open_writer();
	sh("sqlite3 %s \"INSERT INTO iterations(iter, direction, gate_v, scope, status) VALUES "
	   "(1, 'one', 1, 1, 'drop')\"",
	   db);
	assert_int_equal(loop_write_optlog_appended(l, 1, &e), 1);
	assert_true(file_is_full_render(l));
	assert_true(current_by_record(l));
	char *t = file_text();
	char *row = strstr(t, "| 1 | one |"), *ev = strstr(t, "### Re-assessments");
	assert_non_null(row);
	assert_non_null(ev);
	assert_true(row < ev);
	free(t);
	loop_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(each_write_is_recorded, baseline),
		cmocka_unit_test_setup(a_row_added_elsewhere_is_rendered, baseline),
		cmocka_unit_test_setup(a_row_changed_elsewhere_is_rendered, baseline),
		cmocka_unit_test_setup(a_new_target_is_rendered, baseline),
		cmocka_unit_test_setup(the_env_line_follows_the_runs, baseline),
		cmocka_unit_test_setup(a_hand_edit_of_the_same_size_is_found, baseline),
		cmocka_unit_test_setup(a_lost_or_cut_file_is_rendered_again, baseline),
		cmocka_unit_test_setup(a_reader_writes_nothing, baseline),
		cmocka_unit_test_setup(an_appended_row_is_a_full_render, baseline),
		cmocka_unit_test_setup(an_append_after_other_changes_renders_in_full, baseline),
		cmocka_unit_test_setup(a_logged_iteration_leaves_a_full_render, baseline),
		cmocka_unit_test_setup(events_recorded_elsewhere_are_rendered, baseline),
		cmocka_unit_test_setup(an_appended_row_goes_above_the_events, baseline),
	};
	return cmocka_run_group_tests_name("optlog_record", tests, setup, teardown);
}
