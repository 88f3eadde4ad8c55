/* Unit tests for the history's kept figures (schema 10, and the rows'
 * generation and Env look-up of schema 11): a database written
 * by schema version 9 (tests/fixtures/schema9, with what that optloop's
 * status --json printed on it) is migrated, and every figure derived from
 * the whole history is the same as before: the noise band, the cost, each
 * run's verdict.  Then the tables the triggers keep (run_trees, run_costs)
 * are checked against the runs after each kind of change; schema 13's
 * count of rows, and the best and the stall read from the newest rows back,
 * against every row; schema 14's kept terms of the noise band against
 * every run; schema 15's rows read again by their stamps against the rows
 * read whole; schema 16's shapes of the rows against every row's samples;
 * schema 17's kept confirm comparisons, and what forgets them; a measure
 * memo's sets against the store's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/measure.h"
#include "core/model.h"
#include "core/rules.h"
#include "core/sb.h"
#include "core/stats.h"
#include "core/store.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static struct store *st;
static json_t *before; /* the schema 9 optloop's status --json */

static char *fixture(const char *name)
{
	const char *root = getenv("OPTLOOP_ROOT");
	char *dir = fsutil_join(root ? root : ".", "tests/fixtures/schema9");
	char *p = fsutil_join(dir, name);
	free(dir);
	return p;
}

static int setup(void **state)
{
	struct err e = {0};
	strcpy(tmpdir, "/tmp/optloop-history.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	char *src = fixture("optloop.db"), *js = fixture("status.json");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/optloop.db'", src, tmpdir);
	assert_int_equal(system(cmd), 0);
	json_error_t je;
	before = json_load_file(js, 0, &je);
	assert_non_null(before);
	free(src);
	free(js);
	char *db = fsutil_join(tmpdir, "optloop.db");
	int rc = store_open(db, 0, &st, &e); /* the first writer migrates */
	free(db);
	if (rc < 0)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	store_close(st);
	st = NULL;
	json_decref(before);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static double num(const char *path)
{
	json_t *v = before;
	char *p = xstrdup(path), *save = NULL;
	for (char *k = strtok_r(p, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = json_object_get(v, k);
	free(p);
	assert_non_null(v);
	return json_number_value(v);
}

static int int_of(const char *sql)
{
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_prepare_v2(store_db(st), sql, -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	int v = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* the kept tables hold exactly what a scan of the runs gives */
static void assert_kept_tables_agree(void)
{
	assert_int_equal(
		int_of("SELECT count(*) FROM (SELECT tree, usable, repeats, first FROM run_trees"
		       " EXCEPT SELECT tree, count(*), max(COALESCE(repeats, 1)), min(id) FROM runs"
		       " WHERE tree IS NOT NULL AND t_end > 0 AND cancelled = 0 AND timed_out = 0"
		       " AND COALESCE(signal, 0) = 0 AND gate IN (1, 0, 5) GROUP BY tree)"),
		0);
	assert_int_equal(
		int_of("SELECT count(*) FROM (SELECT tree, count(*), max(COALESCE(repeats, 1)),"
		       " min(id) FROM runs WHERE tree IS NOT NULL AND t_end > 0 AND cancelled = 0"
		       " AND timed_out = 0 AND COALESCE(signal, 0) = 0 AND gate IN (1, 0, 5)"
		       " GROUP BY tree EXCEPT SELECT tree, usable, repeats, first FROM run_trees)"),
		0);
	assert_int_equal(
		int_of("SELECT count(*) FROM (SELECT iter, kind, runs, paired, round(seconds, 6)"
		       " FROM run_costs EXCEPT SELECT iter, kind, count(*), sum(COALESCE(paired, 0)),"
		       " round(sum(max(t_end - t_start, 0)), 6) FROM runs WHERE t_end > 0"
		       " GROUP BY iter, kind)"),
		0);
	assert_int_equal(
		int_of("SELECT count(*) FROM (SELECT kind, runs, paired, round(seconds, 6) FROM"
		       " run_cost_totals WHERE runs > 0 EXCEPT SELECT kind, sum(runs), sum(paired),"
		       " round(sum(seconds), 6) FROM run_costs GROUP BY kind)"),
		0);
	assert_int_equal(int_of("SELECT count(*) FROM run_costs"),
			 int_of("SELECT count(*) FROM (SELECT DISTINCT iter, kind FROM runs"
				" WHERE t_end > 0)"));
	/* schema 17's count of the iterations with a cost */
	assert_int_equal(int_of("SELECT value FROM meta WHERE key = 'cost_iters'"),
			 int_of("SELECT count(DISTINCT iter) FROM run_costs"));
}

static void the_migration_fills_the_kept_tables(void **state)
{
	assert_int_equal(int_of("SELECT user_version FROM pragma_user_version"),
			 STORE_SCHEMA_VERSION);
	assert_int_equal(int_of("SELECT count(*) FROM run_trees"), 3);
	/* the baseline's tree and the first comment's can show a spread; the
	 * second comment's one run cannot */
	assert_int_equal(int_of("SELECT count(*) FROM run_trees WHERE usable >= 2 OR repeats > 0"),
			 2);
	assert_int_equal(int_of("SELECT count(*) FROM runs WHERE repeats IS NULL OR repeats != 0"),
			 0);
	assert_kept_tables_agree();
}

static void the_noise_band_is_the_one_schema_9_printed(void **state)
{
	struct loop_noise nz;
	struct err e = {0};
	assert_int_equal(measure_noise_band(st, NULL, NAN, &nz, &e), 0);
	assert_true(nz.have);
	assert_false(nz.assumed);
	assert_int_equal(nz.runs, (int)num("noise_runs"));
	assert_true(fabs(nz.sigma - num("noise.sigma")) < 1e-9);
	assert_true(fabs(nz.lo_ms - num("noise.lo_ms")) < 1e-7);
	assert_true(fabs(nz.hi_ms - num("noise.hi_ms")) < 1e-7);
}

static void the_cost_is_the_one_schema_9_printed(void **state)
{
	struct loop_cost c;
	struct err e = {0};
	assert_int_equal(measure_cost(st, LOOP_COST_ALL, &c, &e), 0);
	assert_int_equal(c.total.runs, (int)num("cost.session.runs"));
	assert_int_equal(c.total.measurements, (int)num("cost.session.measurements"));
	assert_true(fabs(c.total.gpu_s - num("cost.session.gpu_s")) < 1e-6);
	assert_int_equal(c.total.verify, (int)num("cost.session.by_kind.verify.runs"));
	assert_int_equal(c.total.confirm, (int)num("cost.session.by_kind.confirm.runs"));
	assert_int_equal(c.total.noise, (int)num("cost.session.by_kind.noise.runs"));
	assert_true(fabs(c.total.confirm_s - num("cost.session.by_kind.confirm.s")) < 1e-6);
	/* every iteration's rows add up to the total */
	int runs = 0;
	for (size_t i = 0; i < c.n; i++)
		runs += c.v[i].runs;
	assert_int_equal(runs, c.total.runs);
	measure_cost_release(&c);
	/* one iteration: its row only, the same total */
	assert_int_equal(measure_cost(st, 1, &c, &e), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].iter, 1);
	assert_int_equal(c.v[0].runs, 10);
	assert_int_equal(c.total.runs, (int)num("cost.session.runs"));
	measure_cost_release(&c);
}

/* The last verify's verdict, judged again on the migrated history, is the
 * one schema 9 stored (its verdict, flags and speedup): nothing was measured
 * since, so the same history must give the same judgment.  (An earlier
 * run's verdict was judged against the history as it stood then.) */
static void the_last_verdict_judged_again_is_the_same(void **state)
{
	sqlite3_stmt *q;
	int n = 0;
	assert_int_equal(sqlite3_prepare_v2(store_db(st),
					    "SELECT run_id, verdict, flags, json_extract(json,"
					    " '$.speedup'), json_extract(json, '$.threshold')"
					    " FROM stats_verdicts ORDER BY run_id DESC LIMIT 1",
					    -1, &q, NULL),
			 SQLITE_OK);
	while (sqlite3_step(q) == SQLITE_ROW) {
		int run = sqlite3_column_int(q, 0);
		char *verdict = xstrdup((const char *)sqlite3_column_text(q, 1));
		unsigned flags = (unsigned)sqlite3_column_int(q, 2);
		bool has_speedup = sqlite3_column_type(q, 3) != SQLITE_NULL;
		double speedup = sqlite3_column_double(q, 3), thr = sqlite3_column_double(q, 4);
		struct stats_cmp c;
		struct err e = {0};
		assert_int_equal(measure_judge_run(st, run, thr > 0 ? thr : 0.03, &c, &e), 0);
		assert_string_equal(stats_verdict_name(c.verdict), verdict);
		assert_int_equal(c.flags, flags);
		if (has_speedup)
			assert_true(fabs(c.speedup - speedup) < 1e-12);
		stats_cmp_release(&c);
		free(verdict);
		n++;
	}
	sqlite3_finalize(q);
	assert_int_equal(n, 1);
}

/* The triggers keep both tables as runs are recorded, changed and removed;
 * a run's environment key is kept once made. */
static void the_triggers_keep_the_tables_as_runs_change(void **state)
{
	struct err e = {0};
	/* a second run of the one-run tree: now it can show a spread */
	assert_int_equal(store_exec(st,
				    "INSERT INTO runs (iter, kind, t_start, t_end, exit_status,"
				    " signal, timed_out, cancelled, no_change, gate, scope, bench_ms,"
				    " tree, repeats) SELECT 3, 'verify', t_start + 100, t_end + 100,"
				    " 0, NULL, 0, 0, 0, gate, scope, bench_ms, tree, 0 FROM runs"
				    " WHERE id = 12",
				    &e),
			 0);
	assert_int_equal(int_of("SELECT count(*) FROM run_trees WHERE usable >= 2 OR repeats > 0"),
			 3);
	assert_kept_tables_agree();
	/* cancelled after the fact: no longer usable, still a cost */
	assert_int_equal(store_exec(st, "UPDATE runs SET cancelled = 1 WHERE id = 12", &e), 0);
	assert_int_equal(int_of("SELECT count(*) FROM run_trees WHERE usable >= 2 OR repeats > 0"),
			 2);
	assert_kept_tables_agree();
	/* samples recorded with a shape timed twice: that one run repeats */
	assert_int_equal(store_exec(st, "UPDATE runs SET cancelled = 0 WHERE id = 12", &e), 0);
	assert_int_equal(store_exec(st, "DELETE FROM runs WHERE id > 12", &e), 0);
	assert_int_equal(int_of("SELECT usable FROM run_trees WHERE first = 12"), 1);
	struct parse_row rows[2] = {
		{.mode = "fwd", .B = 1, .T = 64, .H = 1, .D = 16, .L = -1, .op = "compute",
		 .new_ms = 1.0, .base_ms = NAN, .speedup = NAN},
		{.mode = "fwd", .B = 1, .T = 64, .H = 1, .D = 16, .L = -1, .op = "compute",
		 .new_ms = 1.1, .base_ms = NAN, .speedup = NAN},
	};
	assert_int_equal(store_samples_add(st, 12, 0, rows, 2, &e), 0);
	assert_int_equal(int_of("SELECT repeats FROM run_trees WHERE first = 12"), 2);
	assert_kept_tables_agree();
	/* the environment key: made once, then read back */
	char *k1 = NULL, *k2 = NULL;
	assert_int_equal(int_of("SELECT count(env_key) FROM runs WHERE id = 5"), 0);
	assert_int_equal(measure_env_key(st, 5, &k1, &e), 0);
	assert_int_equal(int_of("SELECT count(env_key) FROM runs WHERE id = 5"), 1);
	assert_int_equal(measure_env_key(st, 5, &k2, &e), 0);
	assert_non_null(k1);
	assert_string_equal(k1, k2);
	free(k1);
	free(k2);
}

/* Schema 11 on the same database: every logged row whose run printed an
 * environment is marked (the Env line's look-up), the rows' generation
 * starts, and a change to a rendered column of a row moves it while one
 * to a later row's commit or a setting does not. */
static void the_migration_marks_the_rows_with_an_env(void **state)
{
	struct err e = {0};
	long long g0, g1;
	char *env[4];
	assert_int_equal(int_of("SELECT count(*) FROM iterations WHERE has_env"), 3);
	assert_int_equal(int_of("SELECT count(*) FROM iterations i JOIN runs r ON r.id = i.run_id"
				" WHERE json_extract(r.result_json, '$.env.raw') <> ''"),
			 3);
	assert_int_equal(store_env_line(st, env, &e), 0);
	assert_string_equal(env[0], "tiny | CPU sh 1 | main[a5572b0]");
	assert_null(env[1]);
	free(env[0]);
	assert_int_equal(store_rows_gen(st, &g0, &e), 0);
	assert_true(g0 >= 0);
	assert_int_equal(store_exec(st, "UPDATE iterations SET commit_sha = 'x' WHERE iter = 2", &e),
			 0);
	assert_int_equal(store_meta_set(st, "k", "v", &e), 0);
	assert_int_equal(store_rows_gen(st, &g1, &e), 0);
	assert_true(g1 == g0);
	assert_int_equal(store_exec(st, "UPDATE iterations SET commit_sha = 'x' WHERE iter = 0", &e),
			 0);
	assert_int_equal(store_rows_gen(st, &g1, &e), 0);
	assert_true(g1 == g0 + 1);
	assert_int_equal(store_exec(st, "UPDATE iterations SET status = 'drop' WHERE iter = 2", &e),
			 0);
	assert_int_equal(store_rows_gen(st, &g1, &e), 0);
	assert_true(g1 == g0 + 2);
	/* the newest row's run loses its environment: the look-up moves back */
	assert_int_equal(store_exec(st, "UPDATE runs SET result_json = '{}' WHERE id = (SELECT"
				    " run_id FROM iterations WHERE iter = 2)", &e),
			 0);
	assert_int_equal(store_env_line(st, env, &e), 0);
	assert_string_equal(env[0], "tiny | CPU sh 1 | main[89c5791]");
	free(env[0]);
}

/* The stall count as it was read before schema 13: over every row */
static int stall_over_every_row(int after_iter)
{
	struct err e = {0};
	struct log_rows *rs;
	int *nc = NULL;
	size_t nnc = 0;
	assert_int_equal(store_rows_get(st, &rs, &e), 0);
	assert_int_equal(store_uncounted_iters(st, &nc, &nnc, &e), 0);
	struct rules_stall_row *sr = calloc(rs->n + 1, sizeof(*sr));
	for (size_t i = 0; i < rs->n; i++) {
		const struct log_row *r = &rs->v[i];
		sr[i].base = r->status == RS_BASE || r->iter <= after_iter;
		sr[i].win = log_row_is_win(r);
		for (size_t k = 0; k < nnc; k++)
			sr[i].not_comparable |= nc[k] == r->iter;
	}
	int c = rules_stall_count(sr, rs->n);
	free(sr);
	free(nc);
	log_rows_put(rs);
	return c;
}

/* Schema 13 on the same database: the count of rows and the key kept by
 * triggers, the best and the stall read from the newest rows back, each the
 * same as read from every row, through many random changes of the rows. */
static void the_kept_count_best_and_stall_agree_with_every_row(void **state)
{
	struct err e = {0};
	long long n, key0;
	static const char *const status[] = {"base", "keep", "revert", "drop", "floor", "keep"};
	assert_int_equal(int_of("SELECT count(*) FROM sqlite_master WHERE name = 'iterations_best'"), 1);
	assert_int_equal(store_rows_count(st, &n, &key0, &e), 0);
	assert_int_equal(n, int_of("SELECT count(*) FROM iterations"));
	assert_true(key0 >= 0);
	srand(35);
	int next = int_of("SELECT max(iter) + 1 FROM iterations");
	for (int k = 0; k < 400; k++) {
		char sql[512];
		int what = rand() % 10, it = rand() % (next + 1);
		if (what < 6) {
			snprintf(sql, sizeof(sql),
				 "INSERT INTO iterations (iter, direction, gate, gate_v, scope, bench_ms,"
				 " status, run_id, tree, commit_sha, unconfirmed) VALUES (%d, 'd%d',"
				 " 'pass', %d, %d, %s, '%s', %s, %s, %s, %s)",
				 next++, k, rand() % 4 ? GATE_PASS : GATE_FAIL,
				 rand() % 5 ? SCOPE_FULL : SCOPE_SUBSET,
				 rand() % 8 ? "1.5" : "NULL", status[rand() % 6],
				 rand() % 3 ? "(SELECT min(id) FROM runs)" : "NULL",
				 rand() % 2 ? "(SELECT tree FROM runs ORDER BY id LIMIT 1)" : "NULL",
				 rand() % 4 ? "'abc'" : "NULL", rand() % 4 ? "NULL" : "'by hand'");
		} else if (what < 7) {
			snprintf(sql, sizeof(sql), "DELETE FROM iterations WHERE iter = %d", it);
		} else if (what < 8) {
			snprintf(sql, sizeof(sql),
				 "UPDATE iterations SET status = '%s' WHERE iter = %d", status[rand() % 6], it);
		} else if (what < 9) {
			snprintf(sql, sizeof(sql),
				 "UPDATE iterations SET commit_sha = 'c%d' WHERE iter = %d", k, it);
		} else {
			/* the kernel of subset-gate rows fails a full gate */
			snprintf(sql, sizeof(sql),
				 "INSERT INTO runs (iter, kind, t_start, t_end, gate, scope, tree)"
				 " SELECT %d, 'verify', 1, 2, %d, %d, tree FROM iterations WHERE iter = %d",
				 it, GATE_FAIL, SCOPE_FULL, it);
		}
		int changed_before = int_of("SELECT total_changes()");
		assert_int_equal(store_exec(st, sql, &e), 0);
		bool changed = int_of("SELECT total_changes()") != changed_before;
		long long key1;
		assert_int_equal(store_rows_count(st, &n, &key1, &e), 0);
		assert_int_equal(n, int_of("SELECT count(*) FROM iterations"));
		if (changed && what < 7)
			assert_true(key1 != key0);
		key0 = key1;
		/* the best */
		struct log_rows *all, *page;
		const struct log_row *best;
		assert_int_equal(store_rows_get(st, &all, &e), 0);
		const struct log_row *want = log_rows_best(all->v, all->n);
		assert_int_equal(store_rows_best(st, &page, &best, &e), 0);
		assert_int_equal(best != NULL, want != NULL);
		if (want)
			assert_int_equal(best->iter, want->iter);
		log_rows_put(page);
		/* the newest row */
		assert_int_equal(store_rows_before(st, INT_MAX, 1, false, &page, &e), 0);
		assert_int_equal(page->n, all->n ? 1 : 0);
		if (all->n)
			assert_int_equal(page->v[0].iter, all->v[all->n - 1].iter);
		log_rows_put(page);
		log_rows_put(all);
		/* the stall, with and without a re-assessment */
		int c, after = rand() % 3 ? -1 : rand() % next;
		assert_int_equal(measure_stall_count(st, after, &c, &e), 0);
		assert_int_equal(c, stall_over_every_row(after));
	}
	/* more rows than one page back to the best and to the stall's start */
	assert_int_equal(store_exec(st, "INSERT INTO iterations (iter, direction, gate_v, scope,"
				    " bench_ms, status) VALUES (10000, 'b', 1, 1, 2.0, 'keep')", &e), 0);
	for (int k = 1; k <= 70; k++) {
		char sql[256];
		snprintf(sql, sizeof(sql), "INSERT INTO iterations (iter, direction, gate_v, scope,"
			 " bench_ms, status) VALUES (%d, 'x', %d, 1, 1.0, '%s')", 10000 + k,
			 GATE_FAIL, k % 2 ? "keep" : "drop");
		assert_int_equal(store_exec(st, sql, &e), 0);
	}
	struct log_rows *page;
	const struct log_row *best;
	int c;
	assert_int_equal(store_rows_best(st, &page, &best, &e), 0);
	assert_non_null(best);
	assert_int_equal(best->iter, 10000);
	log_rows_put(page);
	assert_int_equal(measure_stall_count(st, -1, &c, &e), 0);
	assert_int_equal(c, stall_over_every_row(-1));
	assert_true(c >= 35);
}

/* The noise band as it was read before schema 14: every spread tree's
 * runs, pooled by stats_noise_pool */
static void band_from_every_run(struct loop_noise *out)
{
	struct err e = {0};
	struct measure_best best;
	struct stats_set bset = {0};
	char **trees = NULL;
	size_t nt = 0;
	double sum = 0;
	int n = 0;
	memset(out, 0, sizeof(*out));
	out->sigma = out->lo_ms = out->hi_ms = out->half = NAN;
	assert_int_equal(measure_best(st, &best, &e), 0);
	if (best.have && best.tree && stats_time_ok(best.bench_ms))
		assert_int_equal(measure_tree_set(st, best.tree, NULL, 0, NULL, &bset, &e), 0);
	assert_int_equal(store_spread_trees(st, &trees, &nt, &e), 0);
	struct stats_set *sets = calloc(nt + 1, sizeof(*sets));
	const struct stats_set **g = calloc(nt + 1, sizeof(*g));
	size_t ng = 0;
	g[ng++] = &bset;
	for (size_t i = 0; i < nt; i++) {
		if (best.tree && !strcmp(trees[i], best.tree))
			continue;
		assert_int_equal(measure_tree_set(st, trees[i], bset.env, 0, NULL, &sets[i], &e), 0);
		g[ng++] = &sets[i];
	}
	for (size_t i = 0; i < bset.nshapes; i++) {
		struct stats_noise nz;
		stats_noise_pool(g, ng, bset.env, bset.shapes[i].key, &nz);
		if (isfinite(nz.sigma)) {
			sum += nz.sigma;
			n++;
			out->assumed |= nz.assumed;
			if (n == 1 || nz.runs < out->runs)
				out->runs = nz.runs;
		}
	}
	if (n && stats_time_ok(best.bench_ms)) {
		out->have = true;
		out->sigma = sum / n;
		out->lo_ms = best.bench_ms * exp(-2 * out->sigma);
		out->hi_ms = best.bench_ms * exp(2 * out->sigma);
		out->half = (out->hi_ms - out->lo_ms) / 2 / best.bench_ms;
	}
	for (size_t i = 0; i < nt; i++) {
		stats_set_release(&sets[i]);
		free(trees[i]);
	}
	free(trees);
	free(sets);
	free(g);
	stats_set_release(&bset);
	measure_best_release(&best);
}

static void assert_same_band(const struct loop_noise *a, const struct loop_noise *b)
{
	assert_int_equal(a->have, b->have);
	assert_int_equal(a->assumed, b->assumed);
	assert_int_equal(a->runs, b->runs);
	if (a->have) {
		/* to the last bit */
		assert_memory_equal(&a->sigma, &b->sigma, sizeof(double));
		assert_memory_equal(&a->half, &b->half, sizeof(double));
	}
}

/* Schema 14 on the same database: the noise band from the kept terms of
 * each spread tree is the one pooled from every run, to the last bit,
 * through many random changes of what the terms are made from (runs and
 * their samples, sessions, probes, confirms, the best) */
static void the_kept_noise_terms_agree_with_every_run(void **state)
{
	struct err e = {0};
	struct loop_noise kept, again, scratch;
	int used = 0;
	srand(14);
	for (int k = 0; k < 300; k++) {
		char sql[1024];
		int run = 1 + rand() % int_of("SELECT max(id) FROM runs");
		int what = rand() % 11;
		double f = 0.9 + (rand() % 200) / 1000.0;
		if (what < 3) {
			/* a run again: its tree's, another's, or a new tree's */
			/* (the other tree picked by the test's own seed: SQLite's
			 * random() would make the run differ each time) */
			char other[128];
			snprintf(other, sizeof(other), "(SELECT tree FROM runs ORDER BY id LIMIT 1"
				 " OFFSET %d)", rand() % int_of("SELECT count(*) FROM runs"));
			const char *tree = rand() % 3 ? "tree" : rand() % 2 ? "'t-new'" : other;
			snprintf(sql, sizeof(sql),
				 "INSERT INTO runs (iter, kind, t_start, t_end, exit_status, signal,"
				 " timed_out, cancelled, no_change, gate, scope, bench_ms, result_json,"
				 " tree, env_id, repeats) SELECT iter, 'noise', t_start + %d, t_end + %d,"
				 " 0, NULL, 0, 0, 0, gate, scope, bench_ms * %.3f, result_json, %s, env_id,"
				 " 0 FROM runs WHERE id = %d;"
				 "INSERT INTO samples (run_id, env_id, mode, B, T, H, D, L, op, base_ms,"
				 " new_ms, speedup) SELECT last_insert_rowid(), env_id, mode, B, T, H, D, L,"
				 " op, base_ms * %.3f, new_ms * %.3f, speedup FROM samples WHERE run_id = %d;"
				 "INSERT INTO stats_probes (run_id, phase, t, available, busy, json) SELECT"
				 " (SELECT max(id) FROM runs), phase, t, available, busy, json FROM"
				 " stats_probes WHERE run_id = %d",
				 k, k, f, tree, run, f, f, run, run);
		} else if (what < 4) {
			snprintf(sql, sizeof(sql), "UPDATE runs SET cancelled = 1 - cancelled WHERE id = %d",
				 run);
		} else if (what < 5) {
			snprintf(sql, sizeof(sql), "UPDATE samples SET new_ms = new_ms * %.3f, base_ms ="
				 " base_ms * %.3f WHERE run_id = %d", f, f, run);
		} else if (what < 6) {
			snprintf(sql, sizeof(sql), "DELETE FROM samples WHERE id = (SELECT min(id) FROM"
				 " samples WHERE run_id = %d)", run);
		} else if (what < 7) {
			static const char *const role[] = {"NULL", "'pair'", "'best'", "'cand'"};
			snprintf(sql, sizeof(sql), "INSERT OR REPLACE INTO stats_runs (run_id, session,"
				 " role) VALUES (%d, %d, %s)", run, rand() % 2 ? 6 : 100 + rand() % 4,
				 role[rand() % 4]);
		} else if (what < 8) {
			snprintf(sql, sizeof(sql), rand() % 2
				 ? "UPDATE stats_confirms SET best_tree = (SELECT tree FROM runs WHERE id = %d)"
				 : "INSERT INTO stats_confirms (iter, session, best_tree) SELECT 2, 100 + %d %% 4,"
				   " tree FROM runs WHERE id = %d", run, run);
		} else if (what < 9) {
			snprintf(sql, sizeof(sql), "DELETE FROM stats_probes WHERE run_id = %d;"
				 "UPDATE runs SET env_key = NULL WHERE id = %d", run, run);
		} else if (what < 10) {
			/* another best: a keep of a run's tree */
			snprintf(sql, sizeof(sql), "INSERT INTO iterations (iter, direction, gate, gate_v,"
				 " scope, bench_ms, status, run_id, tree, commit_sha) SELECT"
				 " (SELECT max(iter) + 1 FROM iterations), 'k', 'pass', %d, %d, bench_ms,"
				 " 'keep', id, tree, 'c' FROM runs WHERE id = %d AND bench_ms > 0",
				 GATE_PASS, SCOPE_FULL, run);
		} else {
			/* (refused where another table still refers to the run) */
			snprintf(sql, sizeof(sql), "DELETE FROM samples WHERE run_id = %d;"
				 "DELETE FROM stats_probes WHERE run_id = %d;"
				 "DELETE FROM runs WHERE id = %d AND id NOT IN (SELECT"
				 " run_id FROM iterations WHERE run_id IS NOT NULL)", run, run, run);
		}
		int rc = store_exec(st, sql, &e);
		if (what < 10)
			assert_int_equal(rc, 0);
		assert_int_equal(measure_noise_band(st, NULL, NAN, &kept, &e), 0);
		used += int_of("SELECT count(*) FROM noise_terms") > 0;
		assert_int_equal(measure_noise_band(st, NULL, NAN, &again, &e), 0);
		band_from_every_run(&scratch);
		assert_same_band(&kept, &scratch);
		assert_same_band(&again, &scratch);
	}
	/* the terms were kept and read, not made each time */
	assert_true(used > 100);
	assert_true(int_of("SELECT count(DISTINCT tree) FROM noise_terms") >= 2);
}

static bool same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_number(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

/* Two snapshots of the rows hold the same rows */
static void assert_same_rows(const struct log_rows *a, const struct log_rows *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct log_row *x = &a->v[i], *y = &b->v[i];
		assert_int_equal(x->iter, y->iter);
		assert_true(same_text(x->direction, y->direction));
		assert_true(same_text(x->gate, y->gate));
		assert_true(same_text(x->axis, y->axis));
		assert_true(same_text(x->commit, y->commit));
		assert_true(same_text(x->unconfirmed, y->unconfirmed));
		assert_int_equal(x->gate_v, y->gate_v);
		assert_int_equal(x->scope, y->scope);
		assert_int_equal(x->status, y->status);
		assert_true(same_number(x->bench_ms, y->bench_ms));
		assert_true(same_number(x->vs_best, y->vs_best));
		assert_int_equal(x->vs_confirm, y->vs_confirm);
		assert_int_equal(x->full_gate_failed, y->full_gate_failed);
	}
}

/* Schema 15 on the same database: a reader that holds the rows reads
 * again only those stamped since, and what it then holds is what a new
 * reader reads whole, through many random changes made through it and
 * through another connection (rows added, changed, taken away; runs that
 * fail a subset-gate row's kernel under a full gate, and taken away) */
static void the_rows_read_again_are_the_rows_read_whole(void **state)
{
	struct err e = {0};
	/* another process: a connection of its own */
	sqlite3 *other;
	char *db = fsutil_join(tmpdir, "optloop.db");
	assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000",
				      NULL, NULL, NULL), SQLITE_OK);
	static const char *const status[] = {"base", "keep", "revert", "drop", "floor"};
	srand(15);
	int next = int_of("SELECT max(iter) + 1 FROM iterations"), refreshed = 0;
	struct log_rows *held;
	assert_int_equal(store_rows_get(st, &held, &e), 0);
	for (int k = 0; k < 300; k++) {
		char sql[512];
		int what = rand() % 8, it = rand() % (next + 1);
		if (what < 3) {
			snprintf(sql, sizeof(sql),
				 "INSERT OR IGNORE INTO iterations (iter, direction, gate, gate_v, scope,"
				 " bench_ms, status, tree, commit_sha) VALUES (%d, 'd%d', 'pass', %d, %d, 1.5, '%s',"
				 " 't%d', %s)",
				 rand() % 4 ? next++ : it + 1000, k, GATE_PASS,
				 rand() % 3 ? SCOPE_FULL : SCOPE_SUBSET, status[rand() % 5], rand() % 5,
				 rand() % 2 ? "'abc'" : "NULL");
		} else if (what < 4) {
			snprintf(sql, sizeof(sql), "UPDATE iterations SET commit_sha = 'c%d', direction ="
				 " 'again %d' WHERE iter = %d", k, k, it);
		} else if (what < 5) {
			snprintf(sql, sizeof(sql), "DELETE FROM iterations WHERE iter = %d", it);
		} else if (what < 7) {
			snprintf(sql, sizeof(sql), "INSERT INTO runs (iter, kind, t_start, t_end, gate,"
				 " scope, tree) VALUES (%d, 'verify', 1, 2, %d, %d, 't%d')", it,
				 rand() % 2 ? GATE_FAIL : GATE_PASS, SCOPE_FULL, rand() % 5);
		} else {
			snprintf(sql, sizeof(sql), "DELETE FROM runs WHERE id = (SELECT max(id) FROM runs"
				 " WHERE tree LIKE 't_' AND id NOT IN (SELECT run_id FROM samples))");
		}
		if (rand() % 2)
			assert_int_equal(store_exec(st, sql, &e), 0);
		else
			assert_int_equal(sqlite3_exec(other, sql, NULL, NULL, NULL), SQLITE_OK);
		struct log_rows *now, *whole;
		assert_int_equal(store_rows_get(st, &now, &e), 0);
		refreshed += now != held;
		struct store *fresh;
		assert_int_equal(store_open(db, STORE_READONLY, &fresh, &e), 0);
		assert_int_equal(store_rows_get(fresh, &whole, &e), 0);
		assert_same_rows(now, whole);
		log_rows_put(whole);
		store_close(fresh);
		log_rows_put(held);
		held = now;
	}
	log_rows_put(held);
	sqlite3_close(other);
	free(db);
	assert_true(refreshed > 200);
}

/* schema 16's row_shapes hold exactly the distinct shapes of the rows'
 * runs' samples */
static void assert_row_shapes_agree(void)
{
	static const char *const every =
		"SELECT DISTINCT sa.mode, sa.B, sa.T, sa.H, sa.D, sa.L, sa.op FROM iterations i"
		" JOIN samples sa ON sa.run_id = i.run_id";
	static const char *const kept = "SELECT mode, B, T, H, D, L, op FROM row_shapes";
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM (%s EXCEPT %s)", every, kept);
	assert_int_equal(int_of(sql), 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM (%s EXCEPT %s)", kept, every);
	assert_int_equal(int_of(sql), 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM (%s)", every);
	assert_int_equal(int_of("SELECT count(*) FROM row_shapes"), int_of(sql));
}

/* Schema 16: the migration fills row_shapes, and every change that can add
 * or take away a shape of a row's run keeps it so: a row logged, samples
 * added to a row's run (and to a run no row has), a row's run changed, a
 * sample changed or deleted, a row deleted. */
static void the_kept_row_shapes_agree_with_every_rows_samples(void **state)
{
	struct err e = {0};
	assert_true(int_of("SELECT count(*) FROM row_shapes") > 0);
	assert_row_shapes_agree();
	int run = int_of("SELECT max(id) FROM runs"), next = int_of("SELECT max(iter) + 1 FROM iterations");
	struct parse_row r[1] = {{.mode = "bwd", .B = 2, .T = 512, .H = 4, .D = 64, .L = -1,
				  .op = "compute", .new_ms = 1.0, .base_ms = NAN, .speedup = NAN}};
	/* a run no row has: its shape is no row's */
	int shapes = int_of("SELECT count(*) FROM row_shapes");
	if (int_of("SELECT count(*) FROM iterations WHERE run_id = (SELECT max(id) FROM runs)")) {
		assert_int_equal(store_exec(st, "INSERT INTO runs (iter, kind, t_start, t_end, gate,"
						" scope, bench_ms) VALUES (99, 'noise', 1, 2, 1, 1, 1.0)",
					    &e),
				 0);
		run = int_of("SELECT max(id) FROM runs");
	}
	assert_int_equal(store_samples_add(st, run, 0, r, 1, &e), 0);
	assert_int_equal(int_of("SELECT count(*) FROM row_shapes"), shapes);
	assert_row_shapes_agree();
	/* a row logged with that run: its shape comes in */
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO iterations (iter, direction, gate, gate_v, scope, bench_ms, status,"
		 " run_id) VALUES (%d, 'd', 'pass', %d, %d, 1.0, 'drop', %d)",
		 next, GATE_PASS, SCOPE_FULL, run);
	assert_int_equal(store_exec(st, sql, &e), 0);
	assert_int_equal(int_of("SELECT count(*) FROM row_shapes"), shapes + 1);
	assert_row_shapes_agree();
	/* more samples for a row's run, one of a new shape (L given) */
	r[0].L = 3;
	assert_int_equal(store_samples_add(st, run, 0, r, 1, &e), 0);
	assert_int_equal(int_of("SELECT count(*) FROM row_shapes"), shapes + 2);
	assert_row_shapes_agree();
	/* a sample changed, then deleted */
	assert_int_equal(store_exec(st, "UPDATE samples SET T = 1024 WHERE id = (SELECT max(id)"
					" FROM samples)",
				    &e),
			 0);
	assert_row_shapes_agree();
	assert_int_equal(store_exec(st, "DELETE FROM samples WHERE id = (SELECT max(id) FROM"
					" samples)",
				    &e),
			 0);
	assert_int_equal(int_of("SELECT count(*) FROM row_shapes"), shapes + 1);
	assert_row_shapes_agree();
	/* the row's run changed to another's, then the row deleted */
	snprintf(sql, sizeof(sql), "UPDATE iterations SET run_id = (SELECT min(id) FROM runs)"
				   " WHERE iter = %d", next);
	assert_int_equal(store_exec(st, sql, &e), 0);
	assert_row_shapes_agree();
	snprintf(sql, sizeof(sql), "UPDATE iterations SET run_id = %d WHERE iter = %d", run, next);
	assert_int_equal(store_exec(st, sql, &e), 0);
	assert_int_equal(int_of("SELECT count(*) FROM row_shapes"), shapes + 1);
	snprintf(sql, sizeof(sql), "DELETE FROM iterations WHERE iter = %d", next);
	assert_int_equal(store_exec(st, sql, &e), 0);
	assert_int_equal(int_of("SELECT count(*) FROM row_shapes"), shapes);
	assert_row_shapes_agree();
}

static void assert_same_set(const struct stats_set *a, const struct stats_set *b)
{
	assert_true((!a->env && !b->env) || (a->env && b->env && !strcmp(a->env, b->env)));
	assert_int_equal(a->nshapes, b->nshapes);
	for (size_t i = 0; i < a->nshapes; i++) {
		assert_string_equal(a->shapes[i].key, b->shapes[i].key);
		assert_int_equal(a->shapes[i].n, b->shapes[i].n);
		for (size_t k = 0; k < a->shapes[i].n; k++) {
			assert_memory_equal(&a->shapes[i].ms[k], &b->shapes[i].ms[k], sizeof(double));
			assert_int_equal(a->shapes[i].session[k], b->shapes[i].session[k]);
		}
	}
}

/* A measure memo replays what the store gives: every spread tree's set,
 * of every session and of each session left out, and a history, read
 * twice with a memo open are the sets read without one, value for value
 * and in the same order; and a confirm's comparison (which opens its own)
 * is the same with an outer memo open. */
static void a_memo_reads_what_the_store_gives(void **state)
{
	struct err e = {0};
	char **trees = NULL;
	size_t nt = 0;
	assert_int_equal(store_spread_trees(st, &trees, &nt, &e), 0);
	assert_true(nt >= 2);
	int sessions[] = {0, -1, -2, 1, 2};
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nt; i++) {
			for (size_t k = 0; k < sizeof(sessions) / sizeof(*sessions); k++) {
				struct stats_set plain, memod, again;
				assert_int_equal(measure_tree_set_upto(st, trees[i], NULL, sessions[k],
								       NULL, 0, &plain, &e), 0);
				struct measure_memo *m = measure_memo_open();
				assert_non_null(m);
				assert_null(measure_memo_open()); /* one at a time */
				assert_int_equal(measure_tree_set_upto(st, trees[i], NULL, sessions[k],
								       NULL, 0, &memod, &e), 0);
				assert_int_equal(measure_tree_set_upto(st, trees[i], NULL, sessions[k],
								       NULL, 0, &again, &e), 0);
				measure_memo_close(m);
				assert_same_set(&plain, &memod);
				assert_same_set(&plain, &again);
				stats_set_release(&plain);
				stats_set_release(&memod);
				stats_set_release(&again);
			}
		}
	}
	/* one session's runs of a tree, read by the session, are the tree's
	 * runs of that session */
	for (size_t i = 0; i < nt; i++) {
		struct store_tree_run *all, *one;
		size_t na, no;
		assert_int_equal(store_tree_runs(st, trees[i], &all, &na, &e), 0);
		for (int session = 1; session <= 12; session++) {
			assert_int_equal(store_session_tree_runs(st, trees[i], session, &one, &no, &e),
					 0);
			size_t k = 0;
			for (size_t j = 0; j < na; j++) {
				if (all[j].session != session)
					continue;
				assert_true(k < no);
				assert_int_equal(one[k].id, all[j].id);
				assert_int_equal(one[k].base, all[j].base);
				assert_true((!one[k].role && !all[j].role) ||
					    !strcmp(one[k].role, all[j].role));
				k++;
			}
			assert_int_equal(k, no);
			store_tree_runs_release(one, no);
		}
		store_tree_runs_release(all, na);
	}
	struct stats_set *h1, *h2;
	size_t n1, n2;
	assert_int_equal(measure_history(st, NULL, 1, 0, &h1, &n1, &e), 0);
	struct measure_memo *m = measure_memo_open();
	assert_int_equal(measure_history(st, NULL, 1, 0, &h2, &n2, &e), 0);
	measure_memo_close(m);
	assert_int_equal(n1, n2);
	for (size_t i = 0; i < n1; i++)
		assert_same_set(&h1[i], &h2[i]);
	measure_history_release(h1, n1);
	measure_history_release(h2, n2);
	struct stats_cmp c1, c2;
	assert_int_equal(measure_confirm_compare(st, trees[0], trees[1], 1, 0.03, NULL, NULL, &c1,
						 NULL, &e), 0);
	m = measure_memo_open();
	assert_int_equal(measure_confirm_compare(st, trees[0], trees[1], 1, 0.03, NULL, NULL, &c2,
						 NULL, &e), 0);
	measure_memo_close(m);
	assert_int_equal(c1.verdict, c2.verdict);
	assert_memory_equal(&c1.speedup, &c2.speedup, sizeof(double));
	assert_memory_equal(&c1.lo, &c2.lo, sizeof(double));
	stats_cmp_release(&c1);
	stats_cmp_release(&c2);
	for (size_t i = 0; i < nt; i++)
		free(trees[i]);
	free(trees);
}

/* The text of a comparison, packed as the store keeps it */
static char *packed(const struct stats_cmp *c, const struct measure_target *t)
{
	json_t *j = json_pack("{s:o, s:o}", "cmp", stats_cmp_pack(c), "target",
			      stats_cmp_pack(&t->cmp));
	char *txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return txt;
}

/* measure_confirm_compare of the fixture's confirm (session 6, runs 6 to
 * 11) between two trees, as packed text */
static char *compare_text(const char *best, const char *cand, double threshold,
			  const char *target)
{
	struct err e = {0};
	struct stats_cmp c;
	struct measure_target t;
	int rc = measure_confirm_compare(st, best, cand, 6, threshold, target, NULL, &c, &t, &e);
	if (rc < 0)
		fprintf(stderr, "%s\n", e.msg);
	assert_int_equal(rc, 0);
	char *txt = packed(&c, &t);
	stats_cmp_release(&c);
	measure_target_release(&t);
	return txt;
}

/* the confirm's own trees */
static char *confirm_text(double threshold, const char *target)
{
	return compare_text("94fe76f025771d822ea165fca31fd670db083157",
			    "a91f6db171d53bea3843578614db73d505acebc9", threshold, target);
}

static int kept(void)
{
	return int_of("SELECT count(*) FROM confirm_compares");
}

static void run_sql(const char *sql)
{
	struct err e = {0};
	if (store_exec(st, sql, &e) != 0)
		fail_msg("%s: %s", sql, e.msg);
}

/* Schema 17: a confirm's comparison is kept by the first writer that makes
 * it and read back the same to the bit; a change to anything it was made
 * from (a run up to its session's last, their samples, probes and
 * sessions, a confirm's trees, an environment) forgets it, in the same
 * transaction; what came after it (a new run, a confirm ending, an
 * environment key written into a run) does not. */
static void a_confirms_comparison_is_kept_until_what_made_it_changes(void **state)
{
	assert_int_equal(kept(), 0);
	char *made = confirm_text(0.03, NULL);
	assert_int_equal(kept(), 1);
	assert_int_equal(int_of("SELECT upto FROM confirm_compares"), 11);
	char *again = confirm_text(0.03, NULL);
	assert_string_equal(made, again);
	free(again);
	/* read back, not made again: a kept text that says otherwise is what
	 * comes back (then the row goes, and it is made again) */
	run_sql("UPDATE confirm_compares SET json = replace(json, '\"noise_runs\":', "
		"'\"noise_runs\":1000')");
	again = confirm_text(0.03, NULL);
	assert_string_not_equal(made, again);
	free(again);
	run_sql("DELETE FROM confirm_compares");
	again = confirm_text(0.03, NULL);
	assert_string_equal(made, again);
	free(again);

	/* another threshold, and another Target (none and "" differ): kept
	 * beside it */
	free(confirm_text(0.05, NULL));
	free(confirm_text(0.03, ""));
	free(confirm_text(0.03, "B1-T64-H1-D16"));
	assert_int_equal(kept(), 4);
	/* and other trees in the same session: their own, not the confirm's */
	char *swapped = compare_text("a91f6db171d53bea3843578614db73d505acebc9",
				     "94fe76f025771d822ea165fca31fd670db083157", 0.03, NULL);
	assert_string_not_equal(swapped, made);
	free(swapped);
	assert_int_equal(kept(), 5);
	run_sql("DELETE FROM confirm_compares WHERE best_tree LIKE 'a91f%'");
	assert_int_equal(kept(), 4);

	/* what does not forget it */
	static const char *const keeps[] = {
		"INSERT INTO runs (iter, kind, t_start, t_end, cancelled, timed_out, gate, tree)"
		" VALUES (99, 'verify', 1, 2, 0, 0, 1, '94fe76f025771d822ea165fca31fd670db083157')",
		"INSERT INTO samples (run_id, mode, new_ms) SELECT max(id), 'fwd', 1 FROM runs",
		"INSERT INTO stats_runs (run_id, session, role) SELECT max(id), max(id), NULL FROM runs",
		"INSERT INTO stats_probes (run_id, phase, json) SELECT max(id), 'before', '{}' FROM runs",
		"DELETE FROM samples WHERE run_id = (SELECT max(id) FROM runs)",
		"DELETE FROM stats_probes WHERE run_id = (SELECT max(id) FROM runs)",
		"DELETE FROM stats_runs WHERE run_id = (SELECT max(id) FROM runs)",
		"DELETE FROM runs WHERE id = (SELECT max(id) FROM runs)",
		"UPDATE stats_confirms SET promoted = 1, verdict = 'fast', done = 1 WHERE session = 6",
		"UPDATE runs SET env_key = 'x' WHERE id = 7",
		"INSERT INTO stats_confirms (iter, session, best_tree, cand_tree) VALUES (3, 0, 'a', 'b')",
	};
	for (size_t i = 0; i < sizeof(keeps) / sizeof(*keeps); i++) {
		run_sql(keeps[i]);
		assert_int_equal(kept(), 4);
	}
	/* (the environment key was read again, as it is made: no difference) */
	run_sql("UPDATE runs SET env_key = NULL WHERE id = 7");
	/* what does, each on its own */
	static const char *const forgets[] = {
		"UPDATE runs SET gate = gate WHERE id = 7",
		"UPDATE runs SET t_end = t_end WHERE id = 2",
		/* (an id of the session's range, as one taken again after a delete) */
		"INSERT INTO runs (id, iter, kind) VALUES (0, 0, 'verify')",
		"DELETE FROM runs WHERE id = 0",
		"UPDATE samples SET new_ms = new_ms WHERE run_id = 9",
		"DELETE FROM samples WHERE run_id = 3 AND id = (SELECT min(id) FROM samples WHERE"
		" run_id = 3)",
		"INSERT INTO stats_probes (run_id, phase, json) VALUES (4, 'after', '{}')",
		"UPDATE stats_runs SET role = role WHERE run_id = 10",
		"UPDATE stats_confirms SET best_tree = best_tree WHERE session = 6",
		"UPDATE envs SET device = device",
	};
	for (size_t i = 0; i < sizeof(forgets) / sizeof(*forgets); i++) {
		free(confirm_text(0.03, NULL));
		assert_true(kept() >= 1);
		run_sql(forgets[i]);
		if (int_of("SELECT count(*) FROM confirm_compares WHERE threshold = 0.03 AND"
			   " target = '-'") != 0)
			fail_msg("still kept after: %s", forgets[i]);
	}

	/* made while a change came in: not kept */
	struct store_compare_key k = {.session = 6, .upto = 11, .best_tree = "x", .cand_tree = "y",
				      .threshold = 0.5, .target = NULL, .against = NULL,
				      .build = "b"};
	long long gen;
	assert_int_equal(store_compare_gen(st, &gen), 0);
	run_sql("UPDATE runs SET gate = gate WHERE id = 1");
	assert_int_equal(store_compare_put(st, &k, gen, "{}"), -1);
	assert_int_equal(store_compare_gen(st, &gen), 0);
	assert_int_equal(store_compare_put(st, &k, gen, "{}"), 0);
	char *j;
	assert_int_equal(store_compare_get(st, &k, &j), 0);
	assert_string_equal(j, "{}");
	free(j);
	/* another build's are gone once this build keeps one */
	assert_int_equal(int_of("SELECT count(*) FROM confirm_compares WHERE build <> 'b'"), 0);
	free(made);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(the_migration_fills_the_kept_tables, setup, teardown),
		cmocka_unit_test_setup_teardown(a_confirms_comparison_is_kept_until_what_made_it_changes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(the_migration_marks_the_rows_with_an_env, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_noise_band_is_the_one_schema_9_printed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_cost_is_the_one_schema_9_printed, setup, teardown),
		cmocka_unit_test_setup_teardown(the_last_verdict_judged_again_is_the_same, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_triggers_keep_the_tables_as_runs_change, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_kept_count_best_and_stall_agree_with_every_row,
						setup, teardown),
		cmocka_unit_test_setup_teardown(the_kept_noise_terms_agree_with_every_run, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_rows_read_again_are_the_rows_read_whole, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_kept_row_shapes_agree_with_every_rows_samples,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_memo_reads_what_the_store_gives, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
