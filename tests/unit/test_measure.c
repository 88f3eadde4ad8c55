/* Unit tests for measure: verdicts, sessions, the best, the stall count and
 * the promotion check, on a real sqlite store in a scratch directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/chart.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/rules.h"
#include "core/fsutil.h"
#include "core/measure.h"
#include "core/parse.h"
#include "core/probe.h"
#include "core/report.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/workspace.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static struct store *st;

static int setup(void **state)
{
	struct err e = {0};
	strcpy(tmpdir, "/tmp/optloop-measure.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	char *db = fsutil_join(tmpdir, "optloop.db");
	int rc = store_open(db, STORE_CREATE, &st, &e);
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
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

/* A finished run of kernel state tree with two shapes' times. */
static int add_run(int iter, const char *kind, const char *tree, const char *device,
		   enum gate_verdict gate, enum gate_scope scope, double a_ms, double b_ms)
{
	struct err e = {0};
	struct store_run r = {0};
	struct parse_env env = {0};
	int env_id = 0;
	r.iter = iter;
	r.kind = run_kind_parse(kind);
	r.t_start = 1;
	r.t_end = 2;
	r.gate = gate;
	r.scope = scope;
	r.bench_ms = sqrt(a_ms * b_ms);
	r.vs_best = NAN;
	r.tree = (char *)tree;
	env.raw = xasprintf("%s | CUDA 13.0 | PyTorch 2.11.0", device);
	env.device = (char *)device;
	env.backend = "CUDA 13.0";
	env.pytorch = "2.11.0";
	assert_int_equal(store_env_id(st, &env, &env_id, &e), 0);
	free(env.raw);
	r.env_id = env_id;
	assert_int_equal(store_run_insert(st, &r, &e), 0);
	assert_int_equal(store_run_update(st, &r, &e), 0);
	struct parse_row rows[2] = {
		{.mode = "fwd", .B = 4, .T = 2048, .H = 16, .D = 64, .L = -1, .op = "op",
		 .base_ms = NAN, .new_ms = a_ms, .speedup = NAN},
		{.mode = "fwd", .B = 8, .T = 1024, .H = 8, .D = 64, .L = -1, .op = "op",
		 .base_ms = NAN, .new_ms = b_ms, .speedup = NAN},
	};
	assert_int_equal(store_samples_add(st, r.id, env_id, rows, 2, &e), 0);
	return r.id;
}

static void add_row_why(int iter, enum row_status status, int run_id, const char *tree,
			const char *unconfirmed)
{
	struct log_row row = {0};
	row.unconfirmed = (char *)unconfirmed;
	row.iter = iter;
	row.direction = "d";
	row.gate = "pass";
	row.gate_v = GATE_PASS;
	row.scope = SCOPE_FULL;
	row.bench_ms = 1;
	row.vs_best = NAN;
	row.status = status;
	assert_int_equal(store_iter_add(st, &row, run_id, tree, NULL), 0);
}

static void add_row(int iter, enum row_status status, int run_id, const char *tree)
{
	add_row_why(iter, status, run_id, tree, NULL);
}

/* The bench chart's caption counts the shapes the rows' verify runs
 * measured: not those of a run no row points at, each shape once however
 * many rows measured it; the same count as a chart of one shape finds. */
static void the_chart_counts_the_shapes_the_rows_measured(void **state)
{
	struct err e = {0};
	struct chart c;
	(void)state;
	int r0 = add_run(0, "verify", "t0", "NVIDIA H200", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	int r1 = add_run(1, "verify", "t1", "NVIDIA H200", GATE_PASS, SCOPE_FULL, 0.9, 1.9);
	int noise = add_run(1, "noise", "t0", "NVIDIA H200", GATE_NONE, SCOPE_FULL, 1.0, 2.0);
	struct parse_row other = {.mode = "bwd", .B = 4, .T = 2048, .H = 16, .D = 64, .L = -1,
				  .op = "op", .base_ms = NAN, .new_ms = 3.0, .speedup = NAN};
	assert_int_equal(store_samples_add(st, noise, 0, &other, 1, &e), 0);
	add_row(0, RS_BASE, r0, "t0");
	add_row(1, RS_DROP, r1, "t1");
	add_row(2, RS_DROP, 0, NULL); /* imported: no run behind it */
	assert_int_equal(chart_load(st, NULL, &c, &e), 0);
	assert_int_equal(c.nshapes, 2);
	assert_int_equal(c.n, 3);
	chart_release(&c);
	/* a row whose run measured the third shape */
	int r3 = add_run(3, "verify", "t3", "NVIDIA H200", GATE_PASS, SCOPE_FULL, 0.8, 1.8);
	other.new_ms = 2.5;
	assert_int_equal(store_samples_add(st, r3, 0, &other, 1, &e), 0);
	add_row(3, RS_DROP, r3, "t3");
	assert_int_equal(chart_load(st, NULL, &c, &e), 0);
	assert_int_equal(c.nshapes, 3);
	chart_release(&c);
	assert_int_equal(chart_load(st, "bwd B=4 T=2048 H=16 D=64", &c, &e), 0);
	assert_int_equal(c.nshapes, 3);
	assert_true(isnan(c.v[1].ms));
	assert_true(fabs(c.v[3].ms - 2.5) < 1e-12);
	chart_release(&c);
}

static void shape_keys_name_every_dimension(void **state)
{
	struct parse_row r = {.mode = "fwdbwd", .B = 1, .T = 63, .H = 2, .D = 32, .L = 4,
			      .op = "chunk_gla"};
	char *k = measure_shape_key(&r);
	assert_string_equal(k, "fwdbwd B=1 T=63 H=2 D=32 L=4 chunk_gla");
	free(k);
	r.L = -1;
	k = measure_shape_key(&r);
	assert_string_equal(k, "fwdbwd B=1 T=63 H=2 D=32 chunk_gla");
	free(k);
}

static void verdicts_against_the_best_are_stored(void **state)
{
	struct stats_cmp c;
	int r0 = add_run(0, "verify", "T0", "NVIDIA H200", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	int r1 = add_run(1, "verify", "T1", "NVIDIA H200", GATE_PASS, SCOPE_FULL, 0.8, 1.6);
	assert_int_equal(measure_judge_run(st, r1, 0, &c, NULL), 0);
	assert_int_equal(c.verdict, SV_FAST); /* 20 % faster, 2 % assumed noise */
	assert_true(c.flags & SF_NOISE_ASSUMED);
	assert_true(fabs(c.gain - 0.2) < 1e-9);
	assert_string_equal(c.shapes[0].key, "fwd B=4 T=2048 H=16 D=64 op");
	stats_cmp_release(&c);

	char *v;
	unsigned flags;
	json_t *j;
	assert_int_equal(measure_verdict_get(st, r1, &v, &flags, &j, NULL), 0);
	assert_string_equal(v, "fast");
	assert_true(flags & SF_NOISE_ASSUMED);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "fast");
	free(v);
	json_decref(j);

	/* a busy GPU before the run and a subset gate are carried as flags */
	struct probe_reading p = {0};
	p.available = true;
	p.busy = true;
	p.compute_procs = 1;
	assert_int_equal(measure_probe_put(st, r1, "before", &p, NULL), 0);
	int r2 = add_run(1, "verify", "T1", "NVIDIA H200", GATE_PASS, SCOPE_SUBSET, 0.8, 1.6);
	assert_int_equal(measure_probe_put(st, r2, "before", &p, NULL), 0);
	assert_int_equal(measure_judge_run(st, r2, 0, &c, NULL), 0);
	assert_true(c.flags & SF_BUSY_GPU);
	assert_true(c.flags & SF_SUBSET_GATE);
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);

	/* another GPU: not comparable until the best is measured there */
	int r3 = add_run(1, "verify", "T1", "NVIDIA A100", GATE_PASS, SCOPE_FULL, 0.5, 1.0);
	assert_int_equal(measure_judge_run(st, r3, 0, &c, NULL), 0);
	assert_int_equal(c.verdict, SV_NOT_COMPARABLE);
	assert_true(c.flags & SF_ENV_CHANGED);
	stats_cmp_release(&c);
	/* the best re-measured on the A100 makes it comparable again */
	add_run(1, "noise", "T0", "NVIDIA A100", GATE_UNVERIFIED, SCOPE_UNKNOWN, 1.0, 2.0);
	assert_int_equal(measure_judge_run(st, r3, 0, &c, NULL), 0);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.flags & SF_IMPLAUSIBLE_AGG); /* 2× in one iteration */
	stats_cmp_release(&c);

	/* The last judged verify run, not a later noise run nor an unjudged one. */
	int last;
	add_run(2, "verify", "T2", "NVIDIA A100", GATE_PASS, SCOPE_FULL, 0.5, 1.0);
	assert_int_equal(store_last_judged_run(st, &last, NULL), 0);
	assert_int_equal(last, r3);
}

static void no_judged_run_is_notfound(void **state)
{
	int last = -1;
	assert_int_equal(store_last_judged_run(st, &last, NULL), ERR_NOTFOUND);
	assert_int_equal(last, 0);
}

static void failed_and_killed_runs_are_not_samples(void **state)
{
	struct stats_set s;
	add_run(0, "verify", "T9", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_run(0, "verify", "T9", "GPU", GATE_FAIL, SCOPE_FULL, 5.0, 5.0);
	add_run(0, "verify", "T9", "GPU", GATE_INCOMPLETE, SCOPE_FULL, 5.0, 5.0);
	assert_int_equal(measure_tree_set(st, "T9", NULL, 0, NULL, &s, NULL), 0);
	assert_int_equal(s.nshapes, 2);
	assert_int_equal(s.shapes[0].n, 1);
	assert_true(s.shapes[0].ms[0] == 1.0);
	stats_set_release(&s);
}

static void confirm_sessions_pick_their_runs(void **state)
{
	struct stats_set b, c;
	int first = 0;
	for (int i = 0; i < 3; i++) {
		int rb = add_run(1, "confirm", "T0", "GPU", GATE_UNVERIFIED, SCOPE_UNKNOWN, 1.0, 2.0);
		int rc = add_run(1, "confirm", "T1", "GPU", GATE_UNVERIFIED, SCOPE_UNKNOWN, 0.9, 1.8);
		if (!first)
			first = rb;
		assert_int_equal(store_session_put(st, rb, first, "best", NULL), 0);
		assert_int_equal(store_session_put(st, rc, first, "cand", NULL), 0);
	}
	add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.5, 1.0); /* another session */
	assert_int_equal(measure_tree_set(st, "T0", NULL, first, "best", &b, NULL), 0);
	assert_int_equal(measure_tree_set(st, "T1", NULL, first, "cand", &c, NULL), 0);
	assert_int_equal(b.shapes[0].n, 3);
	assert_int_equal(c.shapes[0].n, 3);
	assert_int_equal(c.shapes[0].session[2], first);
	stats_set_release(&b);
	stats_set_release(&c);
}

/* The best is the baseline or the last keep; a keep kept --unconfirmed is
 * the best too (revert/drop restore it) but is no win: the stall goes on. */
static void best_is_the_last_keep_and_only_a_win_resets_the_stall(void **state)
{
	struct measure_best b;
	int r0 = add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	int r1 = add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.8, 1.6);
	add_row_why(1, RS_KEEP, r1, "T1", "measured on a quiet machine");
	assert_int_equal(measure_best(st, &b, NULL), 0);
	assert_int_equal(b.iter, 1);
	assert_true(b.unconfirmed);
	assert_false(b.confirmed);
	assert_string_equal(b.tree, "T1");
	measure_best_release(&b);

	int count;
	assert_int_equal(measure_stall_count(st, -1, &count, NULL), 0);
	assert_int_equal(count, 1); /* the unconfirmed keep is not a win */

	struct store_confirm c = {.iter = 2, .session = 99, .best_iter = 1};
	c.best_tree = "T1";
	c.cand_tree = "T2";
	assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
	struct store_confirm u;
	assert_int_equal(store_confirm_unfinished(st, &u, NULL), 0); /* cut off so far */
	assert_int_equal(u.id, c.id);
	store_confirm_release(&u);
	struct stats_cmp cmp = {.verdict = SV_FAST, .worst = -1};
	assert_int_equal(measure_confirm_end(st, c.id, &cmp, true, NULL), 0);
	assert_int_equal(store_confirm_unfinished(st, &u, NULL), ERR_NOTFOUND);
	assert_true(store_confirm_promoted(st, 2));
	int r2 = add_run(2, "verify", "T2", "GPU", GATE_PASS, SCOPE_FULL, 0.7, 1.4);
	add_row(2, RS_KEEP, r2, "T2");
	assert_int_equal(measure_best(st, &b, NULL), 0);
	assert_int_equal(b.iter, 2);
	assert_true(b.confirmed);
	assert_false(b.unconfirmed);
	assert_string_equal(b.tree, "T2");
	measure_best_release(&b);
	assert_int_equal(measure_stall_count(st, -1, &count, NULL), 0);
	assert_int_equal(count, 0);

	int r3 = add_run(3, "verify", "T3", "GPU", GATE_PASS, SCOPE_FULL, 0.6, 1.2);
	add_row(3, RS_REVERT, r3, "T3");
	int r4 = add_run(4, "verify", "T4", "GPU2", GATE_PASS, SCOPE_FULL, 0.8, 1.6);
	assert_int_equal(measure_judge_run(st, r4, 0, NULL, NULL), 0); /* not comparable */
	add_row_why(4, RS_KEEP, r4, "T4", "other GPU");
	assert_int_equal(measure_stall_count(st, -1, &count, NULL), 0);
	assert_int_equal(count, 1); /* the revert; the not-comparable keep does not count */
	assert_int_equal(measure_stall_count(st, 3, &count, NULL), 0);
	assert_int_equal(count, 0); /* re-assessed after iteration 3 */
	/* the reverted row was faster, but the best is the last keep */
	assert_int_equal(measure_best(st, &b, NULL), 0);
	assert_int_equal(b.iter, 4);
	measure_best_release(&b);
}

/* The stall count, run on every start, finds the not-comparable verdicts
 * and their iterations through stored indexes: no scan of the whole log. */
static void stall_count_reads_indexes_not_the_whole_log(void **state)
{
	int count;
	sqlite3_stmt *q;
	struct sb plan = SB_INIT;

	assert_int_equal(measure_stall_count(st, -1, &count, NULL), 0); /* makes the tables */
	assert_int_equal(sqlite3_prepare_v2(store_db(st),
					    "EXPLAIN QUERY PLAN SELECT i.iter FROM iterations i JOIN "
					    "stats_verdicts v ON v.run_id = i.run_id WHERE v.verdict "
					    "= 'not_comparable'",
					    -1, &q, NULL),
			 SQLITE_OK);
	while (sqlite3_step(q) == SQLITE_ROW)
		sb_addf(&plan, "%s\n", (const char *)sqlite3_column_text(q, 3));
	sqlite3_finalize(q);
	assert_non_null(strstr(sb_str(&plan), "stats_verdicts_verdict"));
	assert_non_null(strstr(sb_str(&plan), "iterations_run"));
	assert_null(strstr(sb_str(&plan), "SCAN"));
	sb_release(&plan);
}

static void promote_check_lists_what_is_missing(void **state)
{
	struct sb out = SB_INIT;
	json_t *j = NULL;
	struct err e = {0};
	int r0 = add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, &j, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "MISSING  confirmed win"));
	assert_false(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	sb_reset(&out);

	int r1 = add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.9, 1.8);
	add_row(1, RS_KEEP, r1, "T1");
	struct store_confirm c = {.iter = 1, .session = 5, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
	struct stats_cmp cmp = {.verdict = SV_FAST, .worst = -1};
	assert_int_equal(measure_confirm_end(st, c.id, &cmp, true, NULL), 0);
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "ok       confirmed win"));
	assert_non_null(strstr(out.buf, "ok       full gate"));
	assert_non_null(strstr(out.buf, "MISSING  profiler evidence"));
	sb_reset(&out);

	/* the roofline the best's run recorded: far from every limit it is no
	 * evidence (and says so); at 45% of the HBM peak it is */
	const char *far = "{\"roofline\": {\"peaks\": {\"name\": \"H200\"}, \"shapes\": ["
			  "{\"shape\": \"fwd B=4 T=2048 H=16 D=64\", \"bound\": \"memory\","
			  " \"bw_share\": 0.02, \"flop_share\": 0.001}]}}";
	assert_int_equal(store_verdict_put(st, r1, 1, "fast", 0, far, NULL), 0);
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "MISSING  profiler evidence: attach a profiler or roofline "
					"reading (optloop promote --attach FILE); the roofline computed "
					"from the best's run reads memory-bound at 2% of the H200's "
					"bandwidth peak (fwd B=4 T=2048 H=16 D=64), too far from any limit"));
	sb_reset(&out);
	const char *near = "{\"roofline\": {\"peaks\": {\"name\": \"H200\"}, \"shapes\": ["
			   "{\"shape\": \"fwd B=4 T=2048 H=16 D=64\", \"bound\": \"memory\","
			   " \"bw_share\": 0.02, \"flop_share\": 0.001},"
			   "{\"shape\": \"fwd B=8 T=1024 H=8 D=64\", \"bound\": \"compute\","
			   " \"bw_share\": 0.2, \"flop_share\": 0.45}]}}";
	assert_int_equal(store_verdict_put(st, r1, 1, "fast", 0, near, NULL), 0);
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "ok       profiler evidence: the roofline computed from the "
					"best's run: compute-bound at 45% of the H200's FLOP peak (fwd "
					"B=8 T=1024 H=8 D=64)"));
	assert_int_equal(store_verdict_put(st, r1, 1, "fast", 0, "{}", NULL), 0);
	sb_reset(&out);

	char *prof = fsutil_join(tmpdir, "ncu.txt");
	assert_int_equal(fsutil_write_atomic(prof, "x", 1, NULL), 0);
	assert_int_equal(measure_attach(st, 1, "ncu.txt", NULL), 0);
	/* without a contract there is no Target to check the speedup against */
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, &j, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "MISSING  target speedup: the contract has no Target"));
	assert_non_null(strstr(out.buf, "ok       profiler evidence"));
	assert_false(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	sb_reset(&out);

	/* an implausible flag blocks until it is explained */
	struct stats_cmp imp = {.verdict = SV_FAST, .flags = SF_IMPLAUSIBLE_AGG, .worst = -1};
	struct store_confirm c2 = {.iter = 1, .session = 6, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &c2, NULL), 0);
	assert_int_equal(measure_confirm_end(st, c2.id, &imp, true, NULL), 0);
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "MISSING  implausible flags: implausible, "
					"implausible_aggregate"));
	sb_reset(&out);
	assert_int_equal(measure_explain(st, 1, "the old path recomputed the state per chunk",
					 NULL, NULL), 0);
	/* explained: only the Target's speedup (no contract here) is left */
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "ok       implausible flags"));
	assert_null(strstr(out.buf, "MISSING  implausible"));
	assert_non_null(strstr(out.buf, "MISSING  target speedup"));
	free(prof);
	sb_release(&out);
}

/* A kept best whose last confirm ended without promoting it: the check says
 * which confirm, against what, and the one thing that would release it. */
static void promote_check_words_a_held_back_confirm(void **state)
{
	static const struct {
		enum stats_verdict v;
		unsigned flags;
		const char *says;
	} cases[] = {
		{SV_FAST, SF_IMPLAUSIBLE_AGG,
		 "iteration 1's confirm against the baseline says fast and did not promote it: "
		 "its implausible flags are not explained (optloop promote --explain TEXT)"},
		{SV_FAST, SF_BUSY_GPU,
		 "says fast and did not promote it: it ran on a busy GPU; run optloop confirm "
		 "--baseline on an idle one"},
		{SV_AMBIGUOUS, 0,
		 "says ambiguous and did not promote it: run optloop confirm --baseline (the best "
		 "against the baseline), or keep looking for a win"},
	};
	struct sb out = SB_INIT;
	struct err e = {0};
	int r0 = add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	int r1 = add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.5, 1.0);
	add_row(1, RS_KEEP, r1, "T1");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct store_confirm c = {.iter = 1, .session = 5 + (int)i, .best_iter = 0};
		assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
		struct stats_cmp cmp = {.verdict = cases[i].v, .flags = cases[i].flags,
					.worst = -1};
		assert_int_equal(measure_confirm_end(st, c.id, &cmp, false, NULL), 0);
		assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
		assert_non_null(strstr(out.buf, "MISSING  confirmed win: "));
		assert_non_null(strstr(out.buf, cases[i].says));
		sb_reset(&out);
	}
	/* explained before its confirm ended (a session recorded by an older
	 * version): said so, not "not explained" */
	assert_int_equal(measure_explain(st, 1, "half the work", NULL, NULL), 0);
	struct store_confirm c = {.iter = 1, .session = 9, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
	struct stats_cmp odd = {.verdict = SV_FAST, .flags = SF_IMPLAUSIBLE_AGG, .worst = -1};
	assert_int_equal(measure_confirm_end(st, c.id, &odd, false, NULL), 0);
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "it ran before its flags were explained; record the "
					"explanation again"));
	sb_release(&out);
	(void)state;
}

/* Three runs per side in one session (paired), spread ±5 % around ms. */
static void add_paired(struct stats_set *b, struct stats_set *c, const char *key, double best_ms,
		       double cand_ms)
{
	static const double f[3] = {1.0, 1.05, 0.95};
	for (int i = 0; i < 3; i++) {
		stats_set_add_run(b, key, best_ms * f[i], 1);
		stats_set_add_run(c, key, cand_ms * f[i], 1);
	}
}

static void target_compare_restricts_to_the_named_shapes(void **state)
{
	struct stats_set b = {0}, c = {0};
	struct measure_target t;
	struct stats_opts o = {.threshold = 0.03};
	add_paired(&b, &c, "fwd B=8 T=4096 H=16 D=128 op", 2.0, 1.0);    /* 2x */
	add_paired(&b, &c, "fwdbwd B=8 T=4096 H=16 D=128 op", 1.0, 2.0); /* 0.5x */
	add_paired(&b, &c, "fwd B=16 T=4096 H=32 D=64 op", 3.0, 2.0);    /* 1.5x */

	/* The two modes of one shape: geomean of 2 and 0.5 is exactly 1. */
	measure_target_compare(&b, &c, "B=8 T=4096 H=16 D=128, fwd and fwdbwd, 1.3x", &o, &t);
	assert_int_equal(t.ntargets, 2);
	assert_int_equal(t.nmissing, 0);
	assert_int_equal(t.cmp.ncommon, 2);
	assert_float_equal(t.cmp.speedup, 1.0, 1e-12);
	assert_string_equal(t.cmp.shapes[t.cmp.worst].key, "fwdbwd B=8 T=4096 H=16 D=128 op");
	/* Per-run spread: range/d2 of log(1.05/0.95) = 0.1001/1.693 = 0.0591,
	 * 4 dof; three whole pairs in one session, so the Hodges-Lehmann
	 * estimate with se per shape 0.0591·√(2/3)·1.05 = 0.0507; band
	 * 2.776·0.0507 = 0.141 around 0: the band reaches past both thresholds,
	 * but the change itself is nil, below the threshold: same. */
	assert_float_equal(t.cmp.band, 0.1407, 5e-4);
	assert_int_equal(t.cmp.verdict, SV_SAME);
	json_t *j = measure_target_json(&t);
	assert_int_equal(json_array_size(json_object_get(j, "named")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "named"), 1)),
			    "fwdbwd B=8 T=4096 H=16 D=128");
	assert_float_equal(json_real_value(json_object_get(j, "speedup")), 1.0, 1e-12);
	json_decref(j);
	measure_target_release(&t);

	/* One target measured, one not: the geomean is the measured one's,
	 * log 1.5 − 0.141 clears the threshold (fast), and the other is named. */
	measure_target_compare(&b, &c, "fwd B16-T4096-H32-D64 and fwd B=1 T=64 H=1 D=16", &o, &t);
	assert_int_equal(t.ntargets, 2);
	assert_int_equal(t.cmp.ncommon, 1);
	assert_float_equal(t.cmp.speedup, 1.5, 1e-12);
	assert_int_equal(t.cmp.verdict, SV_FAST);
	assert_int_equal(t.nmissing, 1);
	assert_string_equal(t.missing[0], "fwd B=1 T=64 H=1 D=16");
	measure_target_release(&t);

	/* No shapes named: every shape counts, (2 · 0.5 · 1.5)^(1/3). */
	measure_target_compare(&b, &c, "all three shapes, 1.2x", &o, &t);
	assert_int_equal(t.ntargets, 0);
	assert_int_equal(t.cmp.ncommon, 3);
	assert_float_equal(t.cmp.speedup, cbrt(1.5), 1e-12);
	j = measure_target_json(&t);
	assert_int_equal(json_array_size(json_object_get(j, "named")), 0);
	json_decref(j);
	measure_target_release(&t);

	/* A target the best measured and the candidate did not is missing. */
	struct stats_set c2 = {0};
	stats_set_add_run(&c2, "fwd B=8 T=4096 H=16 D=128 op", 1.0, 1);
	measure_target_compare(&b, &c2, "fwd B=8 T=4096 H=16 D=128 and fwd B=16 T=4096 H=32 D=64",
			       &o, &t);
	assert_int_equal(t.nmissing, 1);
	assert_string_equal(t.missing[0], "fwd B=16 T=4096 H=32 D=64");
	assert_int_equal(t.cmp.verdict, SV_MISSING);
	measure_target_release(&t);
	stats_set_release(&c2);
	stats_set_release(&b);
	stats_set_release(&c);
}

/* A promoted confirm of iteration 1 over three interleaved pairs: shape
 * fwd B=4 T=2048 H=16 D=64 twice as fast, fwd B=8 T=1024 H=8 D=64 the same. */
static void confirmed_win_on_one_shape(void)
{
	static const double f[3] = {1.0, 1.05, 0.95};
	int r0 = add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	int r1 = add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.5, 2.0);
	add_row(1, RS_KEEP, r1, "T1");
	int first = 0;
	for (int i = 0; i < 3; i++) {
		int rb = add_run(1, "confirm", "T0", "GPU", GATE_UNVERIFIED, SCOPE_UNKNOWN, f[i], 2 * f[i]);
		int rc = add_run(1, "confirm", "T1", "GPU", GATE_UNVERIFIED, SCOPE_UNKNOWN, 0.5 * f[i],
				 2 * f[i]);
		if (!first)
			first = rb;
		assert_int_equal(store_session_put(st, rb, first, "best", NULL), 0);
		assert_int_equal(store_session_put(st, rc, first, "cand", NULL), 0);
	}
	struct store_confirm c = {.iter = 1, .session = first, .best_iter = 0};
	c.best_tree = "T0";
	c.cand_tree = "T1";
	assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
	struct stats_cmp cmp = {.verdict = SV_FAST, .worst = -1};
	assert_int_equal(measure_confirm_end(st, c.id, &cmp, true, NULL), 0);
	char *prof = fsutil_join(tmpdir, "ncu.txt");
	assert_int_equal(fsutil_write_atomic(prof, "x", 1, NULL), 0);
	assert_int_equal(measure_attach(st, 1, "ncu.txt", NULL), 0);
	free(prof);
}

static int check_with_target(const char *target, struct sb *out)
{
	struct contract k = {.threshold = 0.03};
	struct err e = {0};
	k.v[CF_TARGET] = (char *)target;
	sb_reset(out);
	return measure_promote_check(st, tmpdir, &k, out, NULL, &e);
}

static void promote_check_requires_the_win_on_target_shapes(void **state)
{
	struct sb out = SB_INIT;
	confirmed_win_on_one_shape();

	/* the geomean of 2x (+50 % time saved) and an unmoved shape is 1.414x */
	assert_int_equal(check_with_target("the two shapes, 1.2x geomean", &out), 0);
	assert_non_null(strstr(out.buf, "ok       target shapes: the contract's Target names no "
					"shapes: every measured shape counts (2 in the confirm)"));
	if (!strstr(out.buf, "ok       target speedup: geomean 1.414x"))
		fprintf(stderr, "%s", out.buf);
	assert_non_null(strstr(out.buf, "ok       target speedup: geomean 1.414x"));
	/* every shape 1.3x: the unmoved one misses it */
	assert_int_equal(check_with_target("every shape, 1.3x", &out), ERR_FAIL);
	assert_non_null(strstr(out.buf, "MISSING  target speedup: worst shape "));
	assert_non_null(strstr(out.buf, "the Target asks 1.3x of every shape"));

	assert_int_equal(check_with_target("fwd B4-T2048-H16-D64, 1.3x", &out), 0);
	assert_non_null(strstr(out.buf, "ok       target shapes: +50.0% over 1 target shape"));
	assert_non_null(strstr(out.buf, "ok       target speedup: worst shape fwd B=4 T=2048"));

	/* The shape that did not move: no win beyond noise there. */
	assert_int_equal(check_with_target("B=8 T=1024 H=8 D=64", &out), ERR_FAIL);
	assert_non_null(strstr(out.buf, "MISSING  target shapes: the confirm of iteration 1 shows "
					"same"));

	/* A target shape the confirm never measured is named. */
	assert_int_equal(check_with_target("fwd B=4 T=2048 H=16 D=64 and fwd B=8 T=4096 H=16 D=128",
					   &out), ERR_FAIL);
	assert_non_null(strstr(out.buf, "MISSING  target shapes: fwd B=8 T=4096 H=16 D=128 was not "
					"measured in the confirm of iteration 1"));

	/* No contract at all reads as no target shapes, and no speedup to check. */
	struct err e = {0};
	sb_reset(&out);
	assert_int_equal(measure_promote_check(st, tmpdir, NULL, &out, NULL, &e), ERR_FAIL);
	assert_non_null(strstr(out.buf, "ok       target shapes: the contract's Target names no"));
	assert_non_null(strstr(out.buf, "MISSING  target speedup: the contract has no Target"));
	sb_release(&out);
}

static void explaining_flags_releases_a_held_back_confirm(void **state)
{
	bool promoted;
	int r0 = add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	struct store_confirm c = {.iter = 1, .session = 7, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
	struct stats_cmp imp = {.verdict = SV_FAST, .flags = SF_IMPLAUSIBLE_AGG, .worst = -1};
	assert_false(rules_promotes(imp.verdict, imp.flags, false));
	assert_int_equal(measure_confirm_end(st, c.id, &imp, false, NULL), 0);
	assert_false(store_confirm_promoted(st, 1));
	assert_int_equal(measure_explain(st, 1, "loop interchange: 1.5x is expected", &promoted,
					 NULL), 0);
	assert_true(promoted);
	assert_true(store_confirm_promoted(st, 1));

	/* a busy GPU is not something an explanation fixes */
	struct store_confirm c2 = {.iter = 2, .session = 8, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &c2, NULL), 0);
	struct stats_cmp busy = {.verdict = SV_FAST, .flags = SF_BUSY_GPU, .worst = -1};
	assert_int_equal(measure_confirm_end(st, c2.id, &busy, false, NULL), 0);
	assert_int_equal(measure_explain(st, 2, "it was fine", &promoted, NULL), 0);
	assert_false(promoted);
	assert_false(store_confirm_promoted(st, 2));
}

/* The evidence a keep needs is the candidate's own: a confirm --baseline of
 * the best, run after its row was logged, is not its verdict; and an
 * implausible flag is no win until explained. */
static void the_win_is_the_candidates_own_confirm(void **state)
{
	struct measure_win w;
	int r0 = add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	int r1 = add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.8, 1.6);
	struct store_confirm c = {.iter = 1, .session = 7, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
	struct stats_cmp fast = {.verdict = SV_FAST, .gain = 0.2, .worst = -1};
	assert_int_equal(measure_confirm_end(st, c.id, &fast, true, NULL), 0);
	assert_int_equal(measure_win(st, 1, r1, &w, NULL), 0);
	assert_true(w.win);
	assert_int_equal(w.source, EVIDENCE_CONFIRM);
	assert_float_equal(w.vs_best, 0.2, 1e-12);
	assert_int_equal(w.implausible, 0);
	measure_win_release(&w);
	usleep(20 * 1000);
	add_row(1, RS_KEEP, r1, "T1");
	usleep(20 * 1000);
	/* the best against the baseline, later */
	struct store_confirm b = {.iter = 1, .session = 9, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &b, NULL), 0);
	struct stats_cmp base = {.verdict = SV_FAST, .gain = 0.35, .worst = -1};
	assert_int_equal(measure_confirm_end(st, b.id, &base, true, NULL), 0);
	assert_int_equal(measure_win(st, 1, r1, &w, NULL), 0);
	assert_float_equal(w.vs_best, 0.2, 1e-12);
	measure_win_release(&w);

	/* a confirm held back by an implausible flag: no win, flagged, until
	 * explained */
	int r2 = add_run(2, "verify", "T2", "GPU", GATE_PASS, SCOPE_FULL, 0.1, 0.2);
	struct store_confirm c2 = {.iter = 2, .session = 11, .best_iter = 1};
	assert_int_equal(store_confirm_begin(st, &c2, NULL), 0);
	struct stats_cmp odd = {.verdict = SV_FAST, .gain = 0.9, .flags = SF_IMPLAUSIBLE_AGG,
				.worst = -1};
	assert_int_equal(measure_confirm_end(st, c2.id, &odd, false, NULL), 0);
	assert_int_equal(measure_win(st, 2, r2, &w, NULL), 0);
	assert_false(w.win);
	assert_int_equal(w.implausible, SF_IMPLAUSIBLE_AGG);
	assert_non_null(strstr(w.why, "flagged implausible (implausible_aggregate) and not explained"));
	measure_win_release(&w);
	assert_int_equal(measure_explain(st, 2, "nine tenths of the work was redundant", NULL, NULL), 0);
	assert_int_equal(measure_win(st, 2, r2, &w, NULL), 0);
	assert_true(w.win);
	assert_int_equal(w.implausible, 0);
	measure_win_release(&w);
	(void)state;
}

/* A promoted confirm of iteration iter (kernel tree cand) against the
 * baseline T0: three interleaved pairs, the candidate 1.25x faster. */
static void confirm_against_baseline(int iter, const char *cand)
{
	const double f[] = {1.0, 1.02, 0.98};
	int first = 0;
	for (int i = 0; i < 3; i++) {
		int rb = add_run(iter, "confirm", "T0", "GPU", GATE_UNVERIFIED, SCOPE_UNKNOWN,
				 1.0 * f[i], 2.0 * f[i]);
		int rc = add_run(iter, "confirm", cand, "GPU", GATE_UNVERIFIED, SCOPE_UNKNOWN,
				 0.8 * f[i], 1.6 * f[i]);
		first = first ? first : rb;
		store_session_put(st, rb, first, "best", NULL);
		store_session_put(st, rc, first, "cand", NULL);
	}
	struct store_confirm c = {.iter = iter, .session = first, .best_iter = 0};
	assert_int_equal(store_confirm_begin(st, &c, NULL), 0);
	struct stats_cmp cmp = {.verdict = SV_FAST, .worst = -1};
	assert_int_equal(measure_confirm_end(st, c.id, &cmp, true, NULL), 0);
}

static void report_final_uses_the_confirm_session(void **state)
{
	struct err e = {0};
	struct sb md = SB_INIT;
	json_t *j = NULL;
	struct contract contract = {0};
	contract.v[CF_VALIDATION] = (char *)"./verify --op op";
	struct workspace ctx = {.op = (char *)"op", .dir = tmpdir, .store = st, .contract = &contract};
	int r0 = add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0);
	add_row(0, RS_BASE, r0, "T0");
	assert_int_equal(report_final(&ctx, &md, &j, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "no confirmed win"));
	int r1 = add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.7, 1.4);
	add_row(1, RS_KEEP, r1, "T1");
	confirm_against_baseline(1, "T1");

	assert_int_equal(report_final(&ctx, &md, &j, &e), 0);
	json_t *a = json_array_get(json_object_get(j, "shapes"), 0);
	json_t *base = json_object_get(a, "baseline");
	/* the confirm session's three runs, not the verify runs (1.0 and 0.7) */
	assert_int_equal(json_integer_value(json_object_get(base, "n")), 3);
	assert_true(fabs(json_real_value(json_object_get(base, "median")) - 1.0) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(base, "std")) - 0.02) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(base, "p10")) - 0.984) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(base, "p90")) - 1.016) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(a, "speedup")) - 1.25) < 1e-9);
	json_t *g = json_object_get(j, "geomean");
	assert_true(fabs(json_real_value(json_object_get(g, "speedup")) - 1.25) < 1e-9);
	assert_non_null(strstr(json_string_value(json_object_get(j, "interval_method")),
			       "interleaved in one session"));
	assert_non_null(strstr(md.buf, "| **geomean (equal weight, 2 shapes)** | **1.250×**"));
	assert_non_null(strstr(md.buf, "- validation (contract): `./verify --op op`"));
	assert_non_null(strstr(md.buf, "no probe reading recorded"));
	json_decref(j);
	sb_reset(&md);

	assert_int_equal(report_header(&ctx, 1, &md, &j, &e), 0);
	assert_non_null(strstr(md.buf, "### Identity"));
	assert_non_null(strstr(md.buf, "### Dead-ends"));
	assert_int_equal(json_integer_value(json_object_get(j, "parent")), 0);
	json_decref(j);
	sb_reset(&md);
	assert_int_equal(report_pr(&ctx, &md, &j, &e), 0);
	assert_non_null(strstr(md.buf, "## Breaking changes"));
	assert_non_null(strstr(md.buf, "1.25×"));
	/* one keep: the speedup is against the baseline, and its change is the one */
	assert_non_null(strstr(md.buf, ") against the baseline: "));
	assert_null(strstr(md.buf, "## Changes"));
	json_t *ch = json_object_get(j, "changes");
	assert_int_equal(json_array_size(ch), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(ch, 0), "iter")), 1);
	json_decref(j);
	sb_release(&md);
}

/* Two keeps on the way to the best: report pr names both, each with its own
 * figure, and credits the speedup to them, not to the last alone. */
static void report_pr_names_every_keep(void **state)
{
	struct err e = {0};
	struct sb md = SB_INIT;
	json_t *j = NULL;
	struct contract contract = {0};
	contract.v[CF_VALIDATION] = (char *)"./verify --op op";
	struct workspace ctx = {.op = (char *)"op", .dir = tmpdir, .store = st, .contract = &contract};
	add_row(0, RS_BASE, add_run(0, "verify", "T0", "GPU", GATE_PASS, SCOPE_FULL, 1.0, 2.0), "T0");
	add_row(1, RS_KEEP, add_run(1, "verify", "T1", "GPU", GATE_PASS, SCOPE_FULL, 0.9, 1.8), "T1");
	int r2 = add_run(2, "verify", "T2", "GPU", GATE_PASS, SCOPE_FULL, 0.7, 1.4);
	add_row(2, RS_KEEP, r2, "T2");
	confirm_against_baseline(2, "T2");
	int rc = report_pr(&ctx, &md, &j, &e);
	if (rc != 0)
		fail_msg("report pr: %s", e.msg);
	assert_non_null(strstr(md.buf, "against the baseline, from 2 kept changes (below); the last: d."));
	assert_non_null(strstr(md.buf, "## Changes"));
	assert_non_null(strstr(md.buf, "- iteration 1: d"));
	assert_non_null(strstr(md.buf, "- iteration 2: d"));
	assert_int_equal(json_array_size(json_object_get(j, "changes")), 2);
	json_decref(j);
	sb_release(&md);
}

static int attach_kind(const char *name, const char *text, const char **kind)
{
	char *p = fsutil_join(tmpdir, name);
	assert_int_equal(fsutil_write_atomic(p, text, strlen(text), NULL), 0);
	struct err e = {0};
	char *real = NULL;
	int rc = measure_attach_check(st, 7, p, tmpdir, &real, kind, &e);
	if (rc == 0)
		assert_non_null(real);
	free(real);
	free(p);
	return rc;
}

static void attach_recognises_profiler_and_roofline_readings(void **state)
{
	const char *k;
	assert_int_equal(attach_kind("k.ncu-rep", "\x01binary", &k), 0);
	assert_string_equal(k, "Nsight Compute report");
	assert_int_equal(attach_kind("ncu.csv", "==PROF== Connected\n\"ID\",\"Metric Name\"\n", &k), 0);
	assert_string_equal(k, "Nsight Compute export");
	assert_int_equal(attach_kind("nsys.txt", "** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n", &k), 0);
	assert_string_equal(k, "Nsight Systems export");
	assert_int_equal(attach_kind("perf.txt", "# Samples: 12K of event 'cycles'\n# Overhead  Command\n", &k),
			 0);
	assert_string_equal(k, "perf report");
	assert_int_equal(attach_kind("roof.txt", "Roofline: 3.9 TB/s of 4.8 TB/s peak\n", &k), 0);
	assert_string_equal(k, "roofline reading");
	/* the word alone, or numbers without it, are not a reading */
	assert_int_equal(attach_kind("words.txt", "we should look at the roofline\n", &k), ERR_USAGE);
	assert_int_equal(attach_kind("nums.txt", "3.9 TB/s\n", &k), ERR_USAGE);
	assert_null(k);
	/* outside the workspace */
	struct err e = {0};
	char *real = NULL;
	assert_int_equal(measure_attach_check(st, 7, "/etc/hostname", tmpdir, &real, &k, &e),
			 ERR_REFUSED);
	free(real);
	/* a relative path is found from the workspace too */
	assert_int_equal(attach_kind("roof2.txt", "roofline: 2 TB/s\n", &k), 0);
	assert_int_equal(measure_attach_check(st, 7, "roof2.txt", tmpdir, &real, &k, &e), 0);
	assert_non_null(strstr(real, "/roof2.txt"));
	free(real);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shape_keys_name_every_dimension),
		cmocka_unit_test_setup_teardown(attach_recognises_profiler_and_roofline_readings, setup,
						teardown),
		cmocka_unit_test_setup_teardown(verdicts_against_the_best_are_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(no_judged_run_is_notfound, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_and_killed_runs_are_not_samples, setup,
						teardown),
		cmocka_unit_test_setup_teardown(confirm_sessions_pick_their_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(best_is_the_last_keep_and_only_a_win_resets_the_stall, setup,
						teardown),
		cmocka_unit_test_setup_teardown(stall_count_reads_indexes_not_the_whole_log, setup,
						teardown),
		cmocka_unit_test_setup_teardown(promote_check_lists_what_is_missing, setup, teardown),
		cmocka_unit_test(target_compare_restricts_to_the_named_shapes),
		cmocka_unit_test_setup_teardown(promote_check_requires_the_win_on_target_shapes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(explaining_flags_releases_a_held_back_confirm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_win_is_the_candidates_own_confirm, setup, teardown),
		cmocka_unit_test_setup_teardown(promote_check_words_a_held_back_confirm, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_chart_counts_the_shapes_the_rows_measured, setup,
						teardown),
		cmocka_unit_test_setup_teardown(report_pr_names_every_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(report_final_uses_the_confirm_session, setup,
						teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
