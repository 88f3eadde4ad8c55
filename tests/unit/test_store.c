/* Unit tests for the store: schema, the one-writer lock, runs, rows, export. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/chart.h"
#include "core/err.h"
#include "core/parse.h"
#include "core/sb.h"
#include "core/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPORT_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

static int to_sb(const char *buf, size_t len, void *data)
{
	sb_add(data, buf, len);
	return 0;
}

static char tmpdir[64];
static char dbpath[128];

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/optloop-store.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(dbpath, sizeof(dbpath), "%s/optloop.db", tmpdir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static void open_creates_schema_in_wal_mode(void **state)
{
	struct store *s;
	struct err e = {0};
	sqlite3_stmt *st;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(sqlite3_prepare_v2(store_db(s), "PRAGMA journal_mode", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	assert_int_equal(sqlite3_prepare_v2(store_db(s), "PRAGMA user_version", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), STORE_SCHEMA_VERSION);
	sqlite3_finalize(st);
	store_close(s);
	/* reopening does not migrate again (a second CREATE TABLE would fail) */
	assert_int_equal(store_open(dbpath, 0, &s, &e), 0);
	store_close(s);
}

/* The writer leaves the WAL in place when it closes (no checkpoint at
 * close); what it committed is there for the next reader, of this process
 * or another, and for a plain sqlite3 connection. */
static void a_closed_writer_leaves_its_wal_and_its_data_readable(void **state)
{
	struct store *w, *r;
	struct err e = {0};
	char *val = NULL, wal[160];
	struct stat stw;

	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	assert_int_equal(store_open(dbpath, STORE_CREATE, &w, &e), 0);
	assert_int_equal(store_meta_set(w, "op", "chunk_gdn", &e), 0);
	store_close(w);
	assert_int_equal(stat(wal, &stw), 0);
	assert_true(stw.st_size > 0);

	assert_int_equal(store_open(dbpath, STORE_READONLY, &r, &e), 0);
	assert_int_equal(store_meta_get(r, "op", &val, &e), 0);
	assert_string_equal(val, "chunk_gdn");
	free(val);
	store_close(r);

	pid_t child = fork();
	if (child == 0) {
		sqlite3 *db;
		sqlite3_stmt *st;
		int ok = sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
			 sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'op'", -1, &st,
					    NULL) == SQLITE_OK &&
			 sqlite3_step(st) == SQLITE_ROW &&
			 !strcmp((const char *)sqlite3_column_text(st, 0), "chunk_gdn");
		_exit(ok ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* a second writer appends to the same WAL and sees the first one's rows */
	assert_int_equal(store_open(dbpath, 0, &w, &e), 0);
	assert_int_equal(store_meta_get(w, "op", &val, &e), 0);
	assert_string_equal(val, "chunk_gdn");
	free(val);
	assert_int_equal(store_meta_set(w, "op", "chunk_kda", &e), 0);
	store_close(w);
	assert_int_equal(store_open(dbpath, STORE_READONLY, &r, &e), 0);
	assert_int_equal(store_meta_get(r, "op", &val, &e), 0);
	assert_string_equal(val, "chunk_kda");
	free(val);
	store_close(r);
}

/* What migration 10 added, taken away again (triggers first: a column they
 * read cannot be dropped) */
#define UNDO_SCHEMA_10                                                                      \
	"DROP TRIGGER run_trees_insert; DROP TRIGGER run_trees_update; DROP TRIGGER "        \
	"run_trees_delete; DROP TRIGGER run_costs_insert; DROP TRIGGER run_costs_update; "   \
	"DROP TRIGGER run_costs_delete; DROP TABLE run_trees; DROP TABLE run_costs; "          \
	"DROP TABLE run_cost_totals; DROP INDEX aside_open; DROP INDEX stats_confirms_open; " \
	"DROP INDEX stats_confirms_iter; DROP INDEX stats_runs_pair; DROP INDEX "            \
	"guards_findings_iter; "        \
	"DROP INDEX stats_runs_session; DROP INDEX runs_unfinished; DROP INDEX "             \
	"runs_no_change; DROP INDEX tree_intents_open; ALTER TABLE runs DROP COLUMN repeats; ALTER TABLE runs DROP COLUMN " \
	"env_key; ALTER TABLE runs DROP COLUMN paired; "

#define UNDO_SCHEMA_15                                                                      \
	"DROP TRIGGER rows_stamp_insert; DROP TRIGGER rows_stamp_update; DROP TRIGGER "      \
	"rows_stamp_runs_insert; DROP TRIGGER rows_stamp_runs_update; DROP TRIGGER "         \
	"rows_stamp_runs_delete; DROP INDEX iterations_stamp; ALTER TABLE iterations DROP "  \
	"COLUMN stamp; DELETE FROM meta WHERE key = 'rows_stamp'; "

#define UNDO_SCHEMA_14                                                                      \
	"DROP TRIGGER runs_noise_insert; DROP TRIGGER runs_noise_update; DROP TRIGGER "      \
	"runs_noise_delete; DROP TRIGGER samples_noise_insert; DROP TRIGGER "               \
	"samples_noise_update; DROP TRIGGER samples_noise_delete; DROP TRIGGER "            \
	"stats_probes_noise_insert; DROP TRIGGER stats_probes_noise_update; DROP TRIGGER "  \
	"stats_probes_noise_delete; DROP TRIGGER stats_runs_noise_replace; DROP TRIGGER "   \
	"stats_runs_noise_insert; DROP TRIGGER stats_runs_noise_update; DROP TRIGGER "      \
	"stats_runs_noise_delete; DROP TRIGGER stats_confirms_noise_insert; DROP TRIGGER "  \
	"stats_confirms_noise_update; DROP TRIGGER stats_confirms_noise_delete; DROP INDEX " \
	"stats_confirms_session; DROP TABLE noise_terms; DELETE FROM meta WHERE key = "     \
	"'noise_gen'; "

#define UNDO_SCHEMA_13                                                                      \
	"DROP TRIGGER rows_n_insert; DROP TRIGGER rows_n_delete; DROP TRIGGER rows_key_update; " \
	"DROP INDEX iterations_best; DELETE FROM meta WHERE key IN ('rows_n', 'rows_key'); "

#define UNDO_SCHEMA_12                                                                      \
	"DROP TRIGGER rows_gen_full_fail_insert; DROP TRIGGER rows_gen_full_fail_update; "   \
	"DROP INDEX iterations_subset_tree; "

#define UNDO_SCHEMA_11                                                                      \
	"DROP TRIGGER rows_gen_insert; DROP TRIGGER rows_gen_delete; DROP TRIGGER "          \
	"rows_gen_update; DROP TRIGGER rows_gen_baseline; DROP TRIGGER iterations_env_insert; " \
	"DROP TRIGGER iterations_env_update; DROP TRIGGER runs_env_insert; DROP TRIGGER "      \
	"runs_env_update; DROP TRIGGER runs_env_delete; DROP INDEX iterations_env; "         \
	"ALTER TABLE iterations DROP COLUMN has_env; DELETE FROM meta WHERE key = 'rows_gen'; "

/* A workspace made by an older optloop (schema 1, no iterations_run index)
 * is upgraded by the first writer; a reader alone says what to do. */
static void an_older_schema_is_upgraded_by_the_first_writer(void **state)
{
	struct store *s;
	struct err e = {0};
	char *val = NULL;
	sqlite3 *db;
	sqlite3_stmt *st;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_meta_set(s, "op", "chunk_gla", &e), 0);
	store_close(s);
	assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, UNDO_SCHEMA_15 UNDO_SCHEMA_14 UNDO_SCHEMA_13 UNDO_SCHEMA_12 UNDO_SCHEMA_11 UNDO_SCHEMA_10 "DROP INDEX iterations_run; DROP INDEX runs_tree; "
				      "ALTER TABLE iterations DROP COLUMN "
				      "unconfirmed; ALTER TABLE runs DROP COLUMN branch; "
				      "ALTER TABLE iterations DROP COLUMN vs_from; "
				      "PRAGMA user_version = 1",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(store_open(dbpath, STORE_READONLY, &s, &e), ERR_BUSY);
	char *upgrade = xasprintf("schema upgrade (version 1 to %d)", STORE_SCHEMA_VERSION);
	assert_non_null(strstr(e.msg, upgrade));
	free(upgrade);
	assert_int_equal(store_open(dbpath, 0, &s, &e), 0);
	assert_int_equal(sqlite3_prepare_v2(store_db(s),
					    "SELECT (SELECT user_version FROM pragma_user_version), "
					    "(SELECT count(*) FROM sqlite_master WHERE name = "
					    "'iterations_run'), (SELECT count(*) FROM "
					    "pragma_table_info('iterations') WHERE name = 'unconfirmed'), "
					    "(SELECT count(*) FROM pragma_table_info('runs') WHERE name = "
					    "'branch'), (SELECT count(*) FROM sqlite_master WHERE name = "
					    "'runs_tree'), (SELECT count(*) FROM sqlite_master WHERE name = "
					    "'iterations_best'), (SELECT count(*) FROM sqlite_master WHERE "
					    "name = 'noise_terms')",
					    -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), STORE_SCHEMA_VERSION);
	assert_int_equal(sqlite3_column_int(st, 1), 1);
	assert_int_equal(sqlite3_column_int(st, 2), 1);
	assert_int_equal(sqlite3_column_int(st, 3), 1);
	assert_int_equal(sqlite3_column_int(st, 4), 1);
	assert_int_equal(sqlite3_column_int(st, 5), 1);
	assert_int_equal(sqlite3_column_int(st, 6), 1);
	sqlite3_finalize(st);
	assert_int_equal(store_meta_get(s, "op", &val, &e), 0);
	assert_string_equal(val, "chunk_gla");
	free(val);
	store_close(s);
}

static void missing_database_is_notfound_without_create(void **state)
{
	struct store *s;
	struct err e = {0};
	char p[160];
	snprintf(p, sizeof(p), "%s/none.db", tmpdir);
	assert_int_equal(store_open(p, 0, &s, &e), ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "optloop init"));
}

static void second_writer_is_refused_reader_allowed(void **state)
{
	struct store *w, *w2, *r;
	struct err e = {0};
	char *val;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &w, &e), 0);
	assert_int_equal(store_meta_set(w, "op", "chunk_la", &e), 0);
	assert_int_equal(store_open(dbpath, 0, &w2, &e), ERR_BUSY);
	assert_non_null(strstr(e.msg, "only one may write"));
	char pid[32];
	snprintf(pid, sizeof(pid), "pid %d", (int)getpid());
	assert_non_null(strstr(e.msg, pid));

	/* a separate process is refused as well */
	pid_t child = fork();
	if (child == 0) {
		struct store *x;
		_exit(store_open(dbpath, 0, &x, NULL) == ERR_BUSY ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	assert_int_equal(store_open(dbpath, STORE_READONLY, &r, &e), 0);
	assert_int_equal(store_meta_get(r, "op", &val, &e), 0);
	assert_string_equal(val, "chunk_la");
	free(val);
	assert_int_equal(store_begin(r, &e), ERR_BUSY);
	store_close(r);
	store_close(w);
	/* the lock goes with the writer */
	assert_int_equal(store_open(dbpath, 0, &w2, &e), 0);
	store_close(w2);
}

static void a_writer_waits_for_a_short_one(void **state)
{
	struct store *w;
	struct err e = {0};
	int fds[2];
	char c;

	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	if (child == 0) {
		struct store *x;
		if (store_open(dbpath, STORE_CREATE, &x, NULL) != 0)
			_exit(1);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		usleep(300 * 1000);
		store_close(x);
		_exit(0);
	}
	assert_int_equal(read(fds[0], &c, 1), 1);
	/* NOWAIT is refused while the child holds the lock ... */
	assert_int_equal(store_open(dbpath, STORE_NOWAIT, &w, &e), ERR_BUSY);
	/* ... a plain writer gets it once the child lets go */
	assert_int_equal(store_open(dbpath, 0, &w, &e), 0);
	store_close(w);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	close(fds[0]);
	close(fds[1]);
}

static void runs_round_trip_and_last_run(void **state)
{
	struct store *s;
	struct err e = {0};
	struct store_run a = {.iter = 0, .command = "./verify", .cwd = "/repo", .t_start = 100.5,
			      .gate = GATE_PASS, .scope = SCOPE_FULL, .bench_ms = 0.973,
			      .vs_best = NAN, .log_path = "trace/iter-0.log"};
	struct store_run b = {.iter = 0, .command = "./verify -k x", .t_start = 200,
			      .bench_ms = NAN, .vs_best = NAN};
	struct store_run got;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_run_insert(s, &a, &e), 0);
	assert_true(a.id > 0);
	assert_int_equal(store_run_insert(s, &b, &e), 0);
	assert_int_equal(store_run_last(s, 0, RUN_VERIFY, &got, &e), 0);
	assert_int_equal(got.id, b.id);
	assert_true(isnan(got.bench_ms));
	assert_true(got.t_end == 0);
	store_run_release(&got);

	a.t_end = 101.25;
	a.exit_status = 1;
	a.gate = GATE_FAIL;
	assert_int_equal(store_run_update(s, &a, &e), 0);
	assert_int_equal(store_run_get(s, a.id, &got, &e), 0);
	assert_string_equal(got.command, "./verify");
	assert_int_equal(got.kind, RUN_VERIFY);
	assert_true(fabs(got.t_end - 101.25) < 1e-9);
	assert_int_equal(got.gate, GATE_FAIL);
	assert_true(fabs(got.bench_ms - 0.973) < 1e-12);
	store_run_release(&got);
	assert_int_equal(store_run_last(s, 7, RUN_VERIFY, &got, &e), ERR_NOTFOUND);

	/* every kind is stored by its name; one this version does not know
	 * reads as RUN_OTHER and keeps its name when the run is updated */
	for (int k = RUN_VERIFY; k < RUN_OTHER; k++) {
		struct store_run c = {.iter = 3, .kind = k, .command = "x", .t_start = 300,
				      .bench_ms = NAN, .vs_best = NAN};
		assert_int_equal(store_run_insert(s, &c, &e), 0);
		assert_int_equal(store_run_last(s, 3, k, &got, &e), 0);
		assert_int_equal(got.id, c.id);
		assert_int_equal(got.kind, k);
		assert_int_equal(run_kind_parse(run_kind_name(k)), k);
		store_run_release(&got);
	}
	char *sql = sqlite3_mprintf("UPDATE runs SET kind = 'ab' WHERE id = %d", a.id);
	assert_int_equal(sqlite3_exec(store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_free(sql);
	assert_int_equal(store_run_get(s, a.id, &got, &e), 0);
	assert_int_equal(got.kind, RUN_OTHER);
	got.exit_status = 2;
	assert_int_equal(store_run_update(s, &got, &e), 0);
	store_run_release(&got);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT kind, exit_status FROM runs WHERE id = ?",
					    -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_int(st, 1, a.id);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ab");
	assert_int_equal(sqlite3_column_int(st, 1), 2);
	sqlite3_finalize(st);
	store_close(s);
}

static void rows_keep_order_status_and_commit(void **state)
{
	struct store *s;
	struct err e = {0};
	struct log_row r0 = {.iter = 0, .direction = "baseline", .gate = "pass", .gate_v = GATE_PASS,
			     .bench_ms = 1.0, .vs_best = NAN, .status = RS_BASE};
	struct log_row r1 = {.iter = 1, .direction = "a | b", .gate = "FAIL", .gate_v = GATE_FAIL,
			     .bench_ms = NAN, .vs_best = NAN, .status = RS_REVERT};
	struct log_row *rows;
	size_t n;
	int count;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_iter_add(s, &r1, 0, NULL, &e), 0);
	assert_int_equal(store_iter_add(s, &r0, 0, "abc", &e), 0);
	/* the same iteration twice is refused by the database */
	assert_int_equal(store_iter_add(s, &r0, 0, NULL, &e), ERR_IO);
	assert_int_equal(store_iter_set_commit(s, 0, "deadbeef", &e), 0);
	assert_int_equal(store_iters(s, &rows, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].iter, 0);
	assert_int_equal(rows[0].status, RS_BASE);
	assert_string_equal(rows[0].commit, "deadbeef");
	assert_int_equal(rows[1].status, RS_REVERT);
	assert_string_equal(rows[1].direction, "a | b");
	assert_true(isnan(rows[1].bench_ms));
	assert_null(rows[1].commit);
	for (size_t i = 0; i < n; i++)
		log_row_release(&rows[i]);
	free(rows);
	assert_int_equal(store_iter_count(s, &count, &e), 0);
	assert_int_equal(count, 2);
	store_close(s);
}

static void rollback_discards_a_transaction(void **state)
{
	struct store *s;
	struct err e = {0};
	struct log_row r = {.iter = 0, .direction = "x", .bench_ms = NAN, .vs_best = NAN,
			    .status = RS_BASE};
	int count;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_begin(s, &e), 0);
	assert_int_equal(store_iter_add(s, &r, 0, NULL, &e), 0);
	store_rollback(s);
	assert_int_equal(store_iter_count(s, &count, &e), 0);
	assert_int_equal(count, 0);
	store_close(s);
}

/* The rows are kept between calls: every kind of write must still show. */
static int nrows_now(struct store *s, const char **last_dir)
{
	struct log_row *rows;
	size_t n;
	static char dir[64];
	struct err e = {0};

	assert_int_equal(store_iters(s, &rows, &n, &e), 0);
	dir[0] = '\0';
	if (n)
		snprintf(dir, sizeof(dir), "%s", rows[n - 1].direction);
	*last_dir = dir;
	for (size_t i = 0; i < n; i++)
		log_row_release(&rows[i]);
	free(rows);
	return (int)n;
}

static void rows_read_again_see_every_write(void **state)
{
	struct store *w, *r;
	struct err e = {0};
	struct log_row row = {.iter = 0, .direction = "baseline", .gate = "pass", .bench_ms = 1.0,
			      .vs_best = NAN, .status = RS_BASE};
	const char *dir;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &w, &e), 0);
	assert_int_equal(store_open(dbpath, STORE_READONLY, &r, &e), 0);
	assert_int_equal(nrows_now(w, &dir), 0);
	assert_int_equal(nrows_now(r, &dir), 0);
	/* this connection's own write */
	assert_int_equal(store_iter_add(w, &row, 0, NULL, &e), 0);
	assert_int_equal(nrows_now(w, &dir), 1);
	assert_string_equal(dir, "baseline");
	/* another connection's commit */
	assert_int_equal(nrows_now(r, &dir), 1);
	/* rows read inside a transaction that is then rolled back */
	row.iter = 1;
	row.direction = "rolled back";
	row.status = RS_DROP;
	assert_int_equal(store_begin(w, &e), 0);
	assert_int_equal(store_iter_add(w, &row, 0, NULL, &e), 0);
	assert_int_equal(nrows_now(w, &dir), 2);
	store_rollback(w);
	assert_int_equal(nrows_now(w, &dir), 1);
	assert_string_equal(dir, "baseline");
	/* a write that bypasses the store's functions */
	assert_int_equal(sqlite3_exec(store_db(w), "UPDATE iterations SET direction = 'edited'", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	assert_int_equal(nrows_now(w, &dir), 1);
	assert_string_equal(dir, "edited");
	assert_int_equal(nrows_now(r, &dir), 1);
	assert_string_equal(dir, "edited");
	/* the copies handed out are the caller's: freeing them leaves the next read whole */
	assert_int_equal(nrows_now(r, &dir), 1);
	assert_string_equal(dir, "edited");

	/* writes that are no part of the rows (a setting, an event) keep them */
	struct log_rows *a, *b;
	assert_int_equal(store_rows_get(w, &a, &e), 0);
	assert_int_equal(store_meta_set(w, "some_setting", "1", &e), 0);
	assert_int_equal(store_event(w, 0, "test.event", NULL, &e), 0);
	assert_int_equal(store_rows_get(w, &b, &e), 0);
	assert_ptr_equal(a, b);
	log_rows_put(b);
	/* a run is part of them: a full gate that failed a subset-gate row's
	 * kernel marks the row (the snapshot held in a stays alive, so a new
	 * read is a new object) */
	struct log_row sub = {.iter = 1, .direction = "subset keep", .gate = "pass", .bench_ms = 0.9,
			      .vs_best = NAN, .status = RS_KEEP, .scope = SCOPE_SUBSET};
	assert_int_equal(store_iter_add(w, &sub, 0, "T1", &e), 0);
	assert_int_equal(store_rows_get(w, &b, &e), 0);
	assert_ptr_not_equal(a, b);
	assert_int_equal(b->n, 2);
	assert_false(b->v[1].full_gate_failed);
	log_rows_put(a);
	a = b;
	struct store_run run = {.iter = 2, .kind = RUN_VERIFY, .command = "x", .t_start = 1,
				.t_end = 2, .gate = GATE_FAIL, .scope = SCOPE_FULL, .tree = "T1",
				.bench_ms = NAN, .vs_best = NAN};
	assert_int_equal(store_run_insert(w, &run, &e), 0);
	assert_int_equal(store_rows_get(w, &b, &e), 0);
	assert_ptr_not_equal(a, b);
	assert_true(b->v[1].full_gate_failed);
	log_rows_put(a);
	log_rows_put(b);
	assert_int_equal(store_rows_get(r, &b, &e), 0);
	assert_true(b->v[1].full_gate_failed);
	log_rows_put(b);
	store_close(r);
	store_close(w);
}

/* The lean rows (a chart's) are the rows' numbers and flags without their
 * text, row for row; the newest rows come with how many are older. */
static void lean_and_newest_rows_agree_with_all_rows(void **state)
{
	struct store *s;
	struct err e = {0};
	struct log_rows *all, *newest;
	size_t older = 99;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	for (int i = 0; i < 40; i++) {
		struct log_row r = {.iter = i, .direction = "a direction", .gate = "pass",
				    .gate_v = i % 7 == 3 ? GATE_FAIL : GATE_PASS,
				    .scope = i == 5 ? SCOPE_SUBSET : SCOPE_FULL,
				    .bench_ms = i % 7 == 3 ? NAN : 1.0 - i * 0.001,
				    .vs_best = i ? 0.01 * i : NAN,
				    .status = i == 0 ? RS_BASE : i % 4 == 1 ? RS_KEEP : RS_DROP,
				    .commit = "0123456789abcdef0123456789abcdef01234567",
				    .unconfirmed = i == 9 ? "kept by hand" : NULL, .vs_confirm = i == 13};
		assert_int_equal(store_iter_add(s, &r, 0, i == 5 ? "T5" : NULL, &e), 0);
	}
	struct store_run run = {.iter = 6, .kind = RUN_VERIFY, .command = "x", .t_start = 1,
				.t_end = 2, .gate = GATE_FAIL, .scope = SCOPE_FULL, .tree = "T5",
				.bench_ms = NAN, .vs_best = NAN};
	assert_int_equal(store_run_insert(s, &run, &e), 0);
	assert_int_equal(store_rows_get(s, &all, &e), 0);
	/* what the chart reads of every row, and the chart from it: the one
	 * chart_build makes of the rows read whole */
	struct store_chart_row *cr;
	size_t ncr;
	assert_int_equal(store_rows_chart(s, &cr, &ncr, &e), 0);
	assert_int_equal(ncr, all->n);
	for (size_t i = 0; i < all->n; i++) {
		const struct log_row *a = &all->v[i];
		assert_int_equal(cr[i].iter, a->iter);
		assert_int_equal(cr[i].gate_v, a->gate_v);
		assert_true(isnan(a->bench_ms) ? isnan(cr[i].bench_ms) : cr[i].bench_ms == a->bench_ms);
	}
	free(cr);
	assert_true(all->v[5].full_gate_failed);
	struct chart loaded, built;
	assert_int_equal(chart_load(s, NULL, &loaded, &e), 0);
	chart_build(all->v, all->n, NULL, &built);
	assert_int_equal(loaded.n, built.n);
	assert_int_equal(loaded.has_best, built.has_best);
	assert_int_equal(loaded.best_iter, built.best_iter);
	assert_memory_equal(&loaded.best_ms, &built.best_ms, sizeof(double));
	for (size_t i = 0; i < built.n; i++) {
		const struct chart_item *x = &loaded.v[i], *y = &built.v[i];
		assert_int_equal(x->iter, y->iter);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->point, y->point);
		assert_int_equal(x->unconfirmed, y->unconfirmed);
		assert_true(isnan(y->ms) ? isnan(x->ms) : x->ms == y->ms);
		assert_true(isnan(y->best_ms) ? isnan(x->best_ms) : x->best_ms == y->best_ms);
	}
	/* (every kind is there: a failed gate, a dropped row, the baseline, a
	 * keep, an unconfirmed keep, a keep whose full gate failed) */
	assert_int_equal(built.v[3].kind, CHART_FAILED);
	assert_int_equal(built.v[2].kind, CHART_DROPPED);
	assert_int_equal(built.v[0].kind, CHART_BASE);
	assert_int_equal(built.v[1].kind, CHART_KEEP);
	assert_true(built.v[9].unconfirmed);
	assert_int_equal(built.v[5].kind, CHART_DROPPED);
	chart_release(&loaded);
	chart_release(&built);
	assert_int_equal(store_rows_newest(s, 16, &newest, &older, &e), 0);
	assert_int_equal(newest->n, 16);
	assert_int_equal(older, 24);
	for (size_t i = 0; i < newest->n; i++) {
		assert_int_equal(newest->v[i].iter, all->v[24 + i].iter);
		assert_string_equal(newest->v[i].commit, all->v[24 + i].commit);
	}
	log_rows_put(newest);
	assert_int_equal(store_rows_newest(s, 100, &newest, &older, &e), 0);
	assert_int_equal(newest->n, 40);
	assert_int_equal(older, 0);
	log_rows_put(newest);
	log_rows_put(all);
	store_close(s);
}

/* Readers share one snapshot of the rows instead of copies; a write makes
 * the next reader get a new one and leaves those handed out as they were,
 * for as long as they are held (the store closing included). */
static void rows_are_shared_until_a_write(void **state)
{
	struct store *s;
	struct log_rows *a, *b, *c;
	struct err e = {0};
	struct log_row row = {.iter = 0, .direction = "baseline", .gate = "pass", .bench_ms = 1.0,
			      .vs_best = NAN, .status = RS_BASE};

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_iter_add(s, &row, 0, NULL, &e), 0);
	assert_int_equal(store_rows_get(s, &a, &e), 0);
	assert_int_equal(store_rows_get(s, &b, &e), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(a->n, 1);
	row.iter = 1;
	row.direction = "second";
	row.status = RS_DROP;
	assert_int_equal(store_iter_add(s, &row, 0, NULL, &e), 0);
	assert_int_equal(store_rows_get(s, &c, &e), 0);
	assert_ptr_not_equal(c, a);
	assert_int_equal(c->n, 2);
	assert_string_equal(c->v[1].direction, "second");
	assert_int_equal(a->n, 1);
	log_rows_put(b);
	log_rows_put(c);
	store_close(s);
	assert_int_equal(a->n, 1);
	assert_string_equal(a->v[0].direction, "baseline");
	log_rows_put(a);
	log_rows_put(NULL);
}

static void samples_envs_and_export(void **state)
{
	struct store *s;
	struct err e = {0};
	struct parse_env env = {.raw = "NVIDIA H200 | CUDA 12.8 | PyTorch 2.9.1",
				.device = "NVIDIA H200", .backend = "CUDA 12.8"};
	struct parse_row rows[2] = {
		{.mode = "fwd", .B = 1, .T = 2048, .H = 16, .D = 128, .L = -1, .op = "chunk",
		 .base_ms = 0.5, .new_ms = 0.45, .speedup = 1.11},
		{.mode = "fwd", .B = 2, .T = 4096, .H = 16, .D = 128, .L = -1, .op = "chunk",
		 .base_ms = NAN, .new_ms = 0.9, .speedup = NAN},
	};
	struct store_run r = {.iter = 0, .t_start = 1, .bench_ms = NAN, .vs_best = NAN};
	int id1, id2;
	json_t *j;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_env_id(s, &env, &id1, &e), 0);
	assert_int_equal(store_env_id(s, &env, &id2, &e), 0);
	assert_true(id1 > 0);
	assert_int_equal(id1, id2);
	assert_int_equal(store_run_insert(s, &r, &e), 0);
	assert_int_equal(store_samples_add(s, r.id, id1, rows, 2, &e), 0);
	assert_int_equal(store_event(s, 0, "verify", "started", &e), 0);
	struct sb text = SB_INIT;
	json_t *extra = json_pack("{s:s}", "op", "chunk");
	sb_init(&text);
	assert_int_equal(store_export_json(s, extra, EXPORT_FLAGS, to_sb, &text, &e), 0);
	j = json_loads(text.buf, 0, NULL);
	assert_non_null(j);
	/* laid out as jansson dumps the whole document, the extra member last */
	char *whole = json_dumps(j, EXPORT_FLAGS);
	assert_string_equal(text.buf, whole);
	free(whole);
	const char *last_key = NULL, *key;
	json_t *v;
	json_object_foreach(j, key, v)
		last_key = key;
	assert_string_equal(last_key, "op");
	assert_string_equal(json_string_value(json_object_get(j, "op")), "chunk");
	json_decref(extra);
	sb_release(&text);
	json_t *tables = json_object_get(j, "tables");
	assert_int_equal(json_array_size(json_object_get(tables, "samples")), 2);
	json_t *s1 = json_array_get(json_object_get(tables, "samples"), 1);
	assert_true(json_is_null(json_object_get(s1, "base_ms")));
	assert_true(json_is_null(json_object_get(s1, "L")));
	assert_int_equal(json_integer_value(json_object_get(s1, "T")), 4096);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(json_object_get(tables, "envs"), 0),
						  "device")),
		"NVIDIA H200");
	assert_int_equal(json_array_size(json_object_get(tables, "events")), 1);
	assert_int_equal(json_integer_value(json_object_get(j, "schema")), STORE_SCHEMA_VERSION);
	json_decref(j);
	store_close(s);
}

/* A write that fails part way: the export stops there with ERR_IO. */
static int refuse_after_a_block(const char *buf, size_t len, void *data)
{
	int *calls = data;
	(void)buf;
	(void)len;
	return ++*calls > 1 ? -1 : 0;
}

static void export_stops_when_its_output_is_refused(void **state)
{
	struct store *s;
	struct err e = {0};
	int calls = 0;
	(void)state;
	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	/* more than one block of text: events with long details */
	char detail[2000];
	memset(detail, 'd', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	for (int i = 0; i < 40; i++)
		assert_int_equal(store_event(s, i, "note", detail, &e), 0);
	assert_int_equal(store_export_json(s, NULL, EXPORT_FLAGS, refuse_after_a_block, &calls, &e),
			 ERR_IO);
	assert_int_equal(calls, 2);
	assert_non_null(strstr(e.msg, "could not be written"));
	store_close(s);
}

static void aside_pending_until_done(void **state)
{
	struct store *s;
	struct err e = {0};
	char *sha, *ref;
	int iter = -1;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_aside_pending(s, &iter, &sha, &ref, &e), ERR_NOTFOUND);
	assert_int_equal(store_aside_add(s, 3, "abc123", "refs/optloop/aside", &e), 0);
	assert_int_equal(store_aside_pending(s, &iter, &sha, &ref, &e), 0);
	assert_int_equal(iter, 3);
	assert_string_equal(sha, "abc123");
	assert_string_equal(ref, "refs/optloop/aside");
	free(sha), free(ref);
	assert_int_equal(store_aside_done(s, "abc123", &e), 0);
	assert_int_equal(store_aside_pending(s, &iter, &sha, &ref, &e), ERR_NOTFOUND);
	store_close(s);
}

static void newer_schema_is_refused(void **state)
{
	struct store *s;
	struct err e = {0};
	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_exec(s, "PRAGMA user_version = 99", &e), 0);
	store_close(s);
	assert_int_equal(store_open(dbpath, 0, &s, &e), ERR_IO);
	assert_non_null(strstr(e.msg, "newer"));
}

static int fresh(void **state)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "rm -f %s %s-wal %s-shm %s.lock", dbpath, dbpath, dbpath, dbpath);
	return system(cmd);
}

static bool table_exists(struct store *s, const char *name)
{
	sqlite3_stmt *st;
	bool yes;
	assert_int_equal(sqlite3_prepare_v2(store_db(s),
					    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
					    "name = ?",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* Every table is made by the numbered migrations, the guards' and the
 * statistics' too; a version 3 database that the modules had already given
 * some of their tables upgrades without losing their rows. */
static void every_table_comes_from_the_migrations(void **state)
{
	struct store *s;
	struct err e = {0};
	static const char *const tables[] = {
		"runs", "iterations", "guards_frozen", "guards_findings", "guards_acks",
		"guards_trap_state", "guards_reassess", "guards_stop", "guards_dispatch",
		"guards_restore", "stats_probes", "stats_runs", "stats_verdicts", "stats_confirms",
		"stats_explained", "stats_artifacts", "tree_intents", "slurm_allocs", "slurm_steps",
	};
	char *old = xasprintf("%s/v3.db", tmpdir);
	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		assert_true(table_exists(s, tables[i]));
	store_close(s);

	/* a version 3 database with a module table of its own, and a row in it */
	assert_int_equal(store_open(old, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_exec(s, UNDO_SCHEMA_15 UNDO_SCHEMA_14 UNDO_SCHEMA_13 UNDO_SCHEMA_12 UNDO_SCHEMA_11 UNDO_SCHEMA_10 "DROP TABLE guards_stop; DROP TABLE stats_runs;"
				       "DELETE FROM guards_frozen; ALTER TABLE runs DROP COLUMN branch;"
				       "ALTER TABLE iterations DROP COLUMN vs_from;"
				       "PRAGMA user_version = 3", &e), 0);
	assert_int_equal(store_exec(s, "INSERT INTO guards_frozen VALUES ('t.py', 'abc', 1)", &e), 0);
	store_close(s);
	assert_int_equal(store_open(old, 0, &s, &e), 0);
	assert_true(table_exists(s, "guards_stop"));
	assert_true(table_exists(s, "stats_runs"));
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(store_db(s), "SELECT hash FROM guards_frozen", -1, &st,
					    NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "abc");
	sqlite3_finalize(st);
	store_close(s);
	free(old);
}

/* A workspace's Slurm allocations: the newest not released is current;
 * released ones are the last one's history.  A run's step round-trips. */
static void slurm_allocations_and_steps(void **state)
{
	struct store *s;
	struct err e = {0};
	struct store_alloc a = {0}, b;
	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(store_alloc_current(s, &b, &e), ERR_NOTFOUND);
	a.runner = xstrdup("slurm --partition=gpu");
	a.state = xstrdup("requested");
	a.requested = 100;
	assert_int_equal(store_alloc_insert(s, &a, &e), 0);
	assert_true(a.id > 0);
	assert_int_equal(store_alloc_current(s, &b, &e), 0);
	assert_null(b.job); /* salloc has not named it yet */
	assert_string_equal(b.state, "requested");
	assert_true(b.granted == 0);
	store_alloc_release(&b);
	a.job = xstrdup("42");
	free(a.state);
	a.state = xstrdup("running");
	a.node = xstrdup("gpu07");
	a.granted = 101;
	assert_int_equal(store_alloc_update(s, &a, &e), 0);
	assert_int_equal(store_alloc_current(s, &b, &e), 0);
	assert_string_equal(b.job, "42");
	assert_string_equal(b.node, "gpu07");
	assert_true(b.granted == 101);
	store_alloc_release(&b);
	a.released = 200;
	a.why = xstrdup("Slurm job 42 is TIMEOUT");
	assert_int_equal(store_alloc_update(s, &a, &e), 0);
	assert_int_equal(store_alloc_current(s, &b, &e), ERR_NOTFOUND);
	assert_int_equal(store_alloc_last(s, &b, &e), 0);
	assert_string_equal(b.why, "Slurm job 42 is TIMEOUT");
	store_alloc_release(&b);
	store_alloc_release(&a);

	struct store_step st = {.run_id = 7, .job = "42", .step = "3", .node = "gpu07",
				.gpus = "0", .cause = "time_limit", .why = "DUE TO TIME LIMIT"};
	struct store_step got;
	assert_int_equal(store_step_get(s, 7, &got, &e), ERR_NOTFOUND);
	assert_int_equal(store_step_put(s, &st, &e), 0);
	assert_int_equal(store_step_get(s, 7, &got, &e), 0);
	assert_string_equal(got.cause, "time_limit");
	assert_string_equal(got.node, "gpu07");
	assert_string_equal(got.step, "3");
	store_step_release(&got);
	store_close(s);
}

/* Queries are prepared once and reused: each use sees its own bindings and
 * the current data. */
static void reused_queries_see_fresh_bindings_and_data(void **state)
{
	struct store *s;
	struct err e = {0};
	char *v;

	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	for (int i = 0; i < 50; i++) {
		char key[16], val[16];
		snprintf(key, sizeof(key), "k%d", i % 5);
		snprintf(val, sizeof(val), "v%d", i);
		assert_int_equal(store_meta_set(s, key, val, &e), 0);
		assert_int_equal(store_meta_get(s, key, &v, &e), 0);
		assert_string_equal(v, val);
		free(v);
	}
	assert_int_equal(store_meta_get(s, "absent", &v, &e), 0);
	assert_null(v);
	for (int i = 0; i < 3; i++) {
		struct store_run r = {.iter = i, .kind = RUN_VERIFY, .bench_ms = NAN, .vs_best = NAN,
				      .t_start = 1.0 + i, .t_end = 2.0 + i};
		struct store_run back;
		assert_int_equal(store_run_insert(s, &r, &e), 0);
		assert_int_equal(store_run_last(s, i, RUN_VERIFY, &back, &e), 0);
		assert_int_equal(back.id, r.id);
		store_run_release(&back);
		assert_int_equal(store_run_last(s, i + 1, RUN_VERIFY, &back, &e), ERR_NOTFOUND);
	}
	/* close finalizes the kept statements (one left open would keep the
	 * connection and its memory alive: the sanitizer build reports it) */
	store_close(s);
	assert_int_equal(store_open(dbpath, 0, &s, &e), 0);
	assert_int_equal(store_meta_get(s, "k4", &v, &e), 0);
	assert_string_equal(v, "v49");
	free(v);
	store_close(s);
}

/* A tree's runs are found through an index, not a scan of every run. */
static void runs_are_found_by_tree_through_an_index(void **state)
{
	struct store *s;
	struct err e = {0};
	sqlite3_stmt *st;
	struct sb plan = SB_INIT;
	assert_int_equal(store_open(dbpath, STORE_CREATE, &s, &e), 0);
	assert_int_equal(sqlite3_prepare_v2(store_db(s),
					    "EXPLAIN QUERY PLAN SELECT id FROM runs WHERE tree = ?1", -1,
					    &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		sb_addf(&plan, "%s\n", (const char *)sqlite3_column_text(st, 3));
	sqlite3_finalize(st);
	assert_non_null(strstr(plan.buf, "USING COVERING INDEX runs_tree") ? plan.buf
			: strstr(plan.buf, "USING INDEX runs_tree"));
	sb_release(&plan);
	store_close(s);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(open_creates_schema_in_wal_mode, fresh),
		cmocka_unit_test_setup(runs_are_found_by_tree_through_an_index, fresh),
		cmocka_unit_test_setup(a_closed_writer_leaves_its_wal_and_its_data_readable, fresh),
		cmocka_unit_test_setup(an_older_schema_is_upgraded_by_the_first_writer, fresh),
		cmocka_unit_test_setup(missing_database_is_notfound_without_create, fresh),
		cmocka_unit_test_setup(second_writer_is_refused_reader_allowed, fresh),
		cmocka_unit_test_setup(a_writer_waits_for_a_short_one, fresh),
		cmocka_unit_test_setup(runs_round_trip_and_last_run, fresh),
		cmocka_unit_test_setup(rows_keep_order_status_and_commit, fresh),
		cmocka_unit_test_setup(rollback_discards_a_transaction, fresh),
		cmocka_unit_test_setup(rows_read_again_see_every_write, fresh),
		cmocka_unit_test_setup(lean_and_newest_rows_agree_with_all_rows, fresh),
		cmocka_unit_test_setup(rows_are_shared_until_a_write, fresh),
		cmocka_unit_test_setup(samples_envs_and_export, fresh),
		cmocka_unit_test_setup(export_stops_when_its_output_is_refused, fresh),
		cmocka_unit_test_setup(aside_pending_until_done, fresh),
		cmocka_unit_test_setup(newer_schema_is_refused, fresh),
		cmocka_unit_test_setup(every_table_comes_from_the_migrations, fresh),
		cmocka_unit_test_setup(reused_queries_see_fresh_bindings_and_data, fresh),
		cmocka_unit_test_setup(slurm_allocations_and_steps, fresh),
	};
	return cmocka_run_group_tests_name("store", tests, setup, teardown);
}
