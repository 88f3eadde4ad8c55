/*
 * report — final claim, kept-candidate header and PR body, from the store.
 * Numbers come from stats (per-run medians, log-space intervals); nothing
 * here decides anything, it only states what the loop measured.
 */
#include "core/report.h"
#include "core/chart.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/measure.h"
#include "core/probe.h"
#include "core/sb.h"
#include "core/stats.h"
#include "core/store.h"
#include "core/rules.h"
#include "core/workspace.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define METHOD_PAIRED                                                                      \
	"on per-run medians; baseline and candidate measured interleaved in one session, "    \
	"noise within that session"
#define METHOD_ACROSS "on per-run medians; each session counts once, noise between sessions"

/* "log-normal t interval (95%) on per-run medians; ..." for a comparison. */

/* A field of the contract the workspace's owner read, or NULL. */
static const char *report_field(const struct workspace *ws, enum contract_field f)
{
	return ws->contract ? ws->contract->v[f] : NULL;
}

/* The contract's win threshold; 0 (the default) without one. */
static double report_threshold(const struct workspace *ws)
{
	return ws->contract ? ws->contract->threshold : 0;
}

static char *method_text(const struct stats_cmp *c, bool paired)
{
	struct sb m = SB_INIT;
	sb_init(&m);
	sb_adds(&m, "log-normal t interval (");
	stats_level_text(c, &m);
	sb_addf(&m, ") %s", paired ? METHOD_PAIRED : METHOD_ACROSS);
	return sb_detach(&m);
}

struct side {
	int iter, run_id;
	char *tree, *commit, *direction;
	struct stats_set set;
};

struct claim {
	struct side base, cand;
	char *env;
	struct stats_cmp cmp;
	bool paired;
	int confirm_session;
	struct store_confirm conf;
	bool have_conf;
	struct measure_target tgt; /* the same over the contract's target shapes */
	bool have_tgt;
};

static void side_release(struct side *s)
{
	free(s->tree);
	free(s->commit);
	free(s->direction);
	stats_set_release(&s->set);
	memset(s, 0, sizeof(*s));
}

static void claim_release(struct claim *c)
{
	side_release(&c->base);
	side_release(&c->cand);
	free(c->env);
	stats_cmp_release(&c->cmp);
	if (c->have_conf)
		store_confirm_release(&c->conf);
	if (c->have_tgt)
		measure_target_release(&c->tgt);
	memset(c, 0, sizeof(*c));
}

static int row_of(struct store *s, int iter, struct side *out, struct err *e)
{
	struct log_rows *rs;
	/* the one row, through the rows' key: not every row of a long history */
	int rc = iter < INT_MAX ? store_rows_before(s, iter + 1, 1, false, &rs, e)
				: err_set(e, ERR_NOTFOUND, "no row for iteration %d", iter);
	if (rc < 0)
		return rc;
	const struct log_row *rows = rs->v;
	rc = err_set(e, ERR_NOTFOUND, "no row for iteration %d", iter);
	for (size_t i = 0; i < rs->n; i++) {
		if (rows[i].iter == iter) {
			out->iter = iter;
			out->commit = rows[i].commit ? xstrdup(rows[i].commit) : NULL;
			out->direction = rows[i].direction ? xstrdup(rows[i].direction) : NULL;
			rc = store_iter_run(s, iter, &out->run_id, &out->tree, e);
		}
	}
	log_rows_put(rs);
	return rc;
}

/* against_iter vs cand_iter, with the most direct numbers there are: a
 * confirm session that measured both, else every run of each.  as_row: the
 * confirm that sized the candidate's row (its figure, as the header shows
 * it), not a later confirm --baseline of it (what a claim against the
 * baseline reads). */
static int claim_read(const struct workspace *ws, int cand_iter, int against_iter, bool as_row,
		      struct claim *c, struct err *e)
{
	struct store *s = ws->store;
	memset(c, 0, sizeof(*c));
	c->cmp.worst = -1;
	int rc = row_of(s, against_iter, &c->base, e);
	if (rc == 0)
		rc = row_of(s, cand_iter, &c->cand, e);
	if (rc < 0)
		return rc;
	if (c->cand.run_id)
		measure_env_key(s, c->cand.run_id, &c->env, NULL);
	c->have_conf = (as_row ? store_confirm_as_candidate(s, cand_iter, &c->conf, NULL)
			       : store_confirm_last(s, cand_iter, &c->conf, NULL)) == 0;
	if (c->have_conf && c->conf.done && c->conf.best_iter == against_iter && c->conf.session) {
		c->paired = true;
		rc = measure_tree_set(s, c->base.tree, NULL, c->conf.session, "best", &c->base.set, e);
		if (rc == 0)
			rc = measure_tree_set(s, c->cand.tree, NULL, c->conf.session, "cand",
					      &c->cand.set, e);
	} else {
		rc = measure_tree_set(s, c->base.tree, c->env, 0, NULL, &c->base.set, e);
		if (rc == 0)
			rc = measure_tree_set(s, c->cand.tree, c->env, 0, NULL, &c->cand.set, e);
	}
	if (rc < 0)
		return rc;
	if (c->paired) {
		/* the confirm's own comparison: one confirm, one number */
		rc = measure_confirm_compare(s, c->base.tree, c->cand.tree, c->conf.session,
					     report_threshold(ws), contract_target_text(ws->contract), NULL,
					     &c->cmp, &c->tgt, e);
		if (rc < 0) {
			memset(&c->cmp, 0, sizeof(c->cmp));
			c->cmp.worst = -1;
			return rc;
		}
	} else {
		struct stats_opts o = {.threshold = report_threshold(ws)};
		stats_compare(&c->base.set, &c->cand.set, &o, &c->cmp);
		measure_target_compare(&c->base.set, &c->cand.set, contract_target_text(ws->contract), &o,
				       &c->tgt);
	}
	c->have_tgt = true;
	return 0;
}

/* The same runs are read as the claim's sides and again as the confirm's
 * history: each read once (a measure memo). */
static int claim_load(const struct workspace *ws, int cand_iter, int against_iter, bool as_row,
		      struct claim *c, struct err *e)
{
	struct measure_memo *m = measure_memo_open();
	int rc = claim_read(ws, cand_iter, against_iter, as_row, c, e);
	measure_memo_close(m);
	return rc;
}

static double sp(double gain);

/* One line on the contract's target shapes: the claim is about them. */
static void target_line(struct sb *md, const struct measure_target *t)
{
	if (!t->ntargets) {
		sb_adds(md, "Target shapes: the contract's Target names none, so every measured shape "
			    "counts.\n");
		return;
	}
	sb_addf(md, "Target shapes (%zu named in the contract:", t->ntargets);
	for (size_t i = 0; i < t->ntargets; i++)
		sb_addf(md, "%s %s", i ? "," : "", t->named[i]);
	if (t->cmp.ncommon)
		sb_addf(md, "): **%.3f×** geomean over %zu measured shape(s), 95 %% interval "
			    "%.3f× – %.3f×, %s",
			t->cmp.speedup, t->cmp.ncommon, sp(t->cmp.lo), sp(t->cmp.hi),
			stats_verdict_name(t->cmp.verdict));
	else
		sb_adds(md, "): none was measured on both sides");
	for (size_t i = 0; i < t->nmissing; i++)
		sb_addf(md, "%s%s", i ? ", " : "; not measured: ", t->missing[i]);
	sb_adds(md, ".\n");
}

static void fmt_ms(struct sb *md, double v)
{
	if (isfinite(v))
		sb_addf(md, " %.4f |", v);
	else
		sb_adds(md, " — |");
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *summary_json(const struct stats_summary *s)
{
	json_t *j = json_object();
	json_object_set_new(j, "n", json_integer((json_int_t)s->n));
	json_object_set_new(j, "median", jnum(s->median));
	json_object_set_new(j, "mean", jnum(s->mean));
	json_object_set_new(j, "std", jnum(s->std));
	json_object_set_new(j, "min", jnum(s->min));
	json_object_set_new(j, "p10", jnum(s->p10));
	json_object_set_new(j, "p90", jnum(s->p90));
	return j;
}

static void summary_row(struct sb *md, const char *shape, const char *side,
			const struct stats_summary *s)
{
	sb_addf(md, "| %s | %s | %zu |", shape, side, s->n);
	fmt_ms(md, s->median);
	fmt_ms(md, s->mean);
	fmt_ms(md, s->std);
	fmt_ms(md, s->min);
	fmt_ms(md, s->p10);
	fmt_ms(md, s->p90);
	sb_addc(md, '\n');
}

static double sp(double gain)
{
	return 1.0 / (1.0 - gain);
}

static void short_sha(struct sb *md, const char *sha)
{
	if (sha)
		sb_addf(md, "`%s`", sha);
	else
		sb_adds(md, "(not committed)");
}

/* The run's command line. */
static char *run_command(struct store *s, int run_id)
{
	struct store_run r;
	char *cmd = NULL;
	if (run_id && store_run_get(s, run_id, &r, NULL) == 0) {
		cmd = r.command ? xstrdup(r.command) : NULL;
		store_run_release(&r);
	}
	return cmd;
}

/* Probe evidence of every finished run of a tree, one line per run. */
/* Runs in a row that say the same (no probe here, and why) are one line:
 * "- runs 3-9 (verify 1, confirm 6): ...", not the sentence once a run. */
struct probe_group {
	struct sb text;
	int first, last, n;
	int nkind[RUN_OTHER + 1];
};

static void group_flush(struct probe_group *g, struct sb *md)
{
	if (!g->n)
		return;
	if (g->n == 1) {
		sb_addf(md, "- run %d (", g->first);
	} else {
		sb_addf(md, "- runs %d-%d (", g->first, g->last);
	}
	bool any = false;
	for (int k = 0; k <= RUN_OTHER; k++) {
		if (!g->nkind[k])
			continue;
		sb_addf(md, "%s%s", any ? ", " : "", run_kind_name((enum run_kind)k));
		if (g->n > 1)
			sb_addf(md, " %d", g->nkind[k]);
		any = true;
	}
	sb_addf(md, "): %s\n", g->text.buf ? g->text.buf : "");
	sb_reset(&g->text);
	memset(g->nkind, 0, sizeof(g->nkind));
	g->n = 0;
}

static void group_add(struct probe_group *g, struct sb *md, int id, enum run_kind kind,
		      const char *text)
{
	if (g->n && strcmp(g->text.buf ? g->text.buf : "", text) != 0)
		group_flush(g, md);
	if (!g->n) {
		sb_adds(&g->text, text);
		g->first = id;
	}
	g->last = id;
	g->n++;
	if ((unsigned)kind <= RUN_OTHER)
		g->nkind[kind]++;
}

static void probe_lines(struct store *s, const char *tree, struct sb *md, json_t *arr)
{
	int *ids;
	enum run_kind *kinds;
	size_t nr;
	struct probe_group grp = {.text = SB_INIT};
	store_runs_of_tree(s, tree, &ids, &kinds, &nr);
	for (size_t r = 0; r < nr; r++) {
		int id = ids[r];
		const char *kind = run_kind_name(kinds[r]);
		struct probe_reading before, after;
		bool hb = measure_probe_get(s, id, "before", &before, NULL) == 0;
		bool ha = measure_probe_get(s, id, "after", &after, NULL) == 0;
		json_t *j = json_object();
		json_object_set_new(j, "run", json_integer(id));
		json_object_set_new(j, "kind", json_string(kind ? kind : ""));
		if (!hb) {
			group_add(&grp, md, id, kinds[r], "no probe reading recorded");
		} else if (!before.available) {
			group_add(&grp, md, id, kinds[r], before.why ? before.why : "no probe");
		} else {
			group_flush(&grp, md);
			sb_addf(md, "- run %d (%s): ", id, kind ? kind : "");
			const struct probe_gpu *g = before.ngpus ? &before.gpus[0] : NULL;
			sb_addf(md, "before: SM %.0f of %.0f MHz, %.0f C, %.2f W, util %.0f %%",
				g ? g->sm_mhz : NAN, g ? g->max_sm_mhz : NAN, g ? g->temp_c : NAN,
				g ? g->power_w : NAN, g ? g->util_pct : NAN);
			if (before.busy)
				sb_addf(md, " (BUSY: %s)", before.busy_why ? before.busy_why : "");
			if (ha && after.available && after.ngpus)
				sb_addf(md, "; after: SM %.0f MHz, %.0f C, %.2f W",
					after.gpus[0].sm_mhz, after.gpus[0].temp_c,
					after.gpus[0].power_w);
			sb_addc(md, '\n');
		}
		if (hb)
			json_object_set_new(j, "before", probe_reading_json(&before));
		if (ha)
			json_object_set_new(j, "after", probe_reading_json(&after));
		json_array_append_new(arr, j);
		if (hb)
			probe_reading_release(&before);
		if (ha)
			probe_reading_release(&after);
	}
	group_flush(&grp, md);
	sb_release(&grp.text);
	free(kinds);
	free(ids);
}

/* The bench per iteration as a Mermaid chart under its own heading; the
 * series into *json when json is not NULL (a JSON row per iteration: only
 * when the caller prints JSON).  A chart that cannot be read is left out
 * with a line saying why: the rest of the report stands without it. */
static void chart_section(const struct workspace *ws, const char *heading,
			  struct sb *md, json_t **json)
{
	struct store *s = ws->store;
	struct chart c;
	struct err e = {0};
	sb_addf(md, "\n%s Bench per iteration\n\n", heading);
	if (chart_load(s, NULL, &c, &e) < 0) {
		sb_addf(md, "(no chart: %s)\n", e.msg);
		if (json)
			*json = json_null();
	} else {
		chart_mermaid(&c, ws->op, md);
		if (json)
			*json = chart_json(&c);
	}
	chart_release(&c);
}

static json_t *device_json(struct store *s, int run_id, struct sb *md)
{
	struct probe_reading p;
	if (run_id && measure_probe_get(s, run_id, "before", &p, NULL) == 0) {
		json_t *j = probe_reading_json(&p);
		probe_describe(&p, md);
		sb_addc(md, '\n');
		probe_reading_release(&p);
		return j;
	}
	sb_adds(md, "no probe reading recorded for the candidate's verify run\n");
	return json_null();
}

/* The most lines of the Markdown cost table, besides the total. */
#define COST_ROWS 200

/* The cost table's lines: width iterations to a line, summed. */
struct cost_lines {
	struct sb *md;
	size_t width, k;
	struct loop_cost_row sum;
	int last;
	json_t *its; /* each iteration's, when the caller prints JSON */
};

static void cost_line_end(struct cost_lines *L)
{
	if (!L->k)
		return;
	if (L->last == L->sum.iter)
		sb_addf(L->md, "| %d", L->sum.iter);
	else
		sb_addf(L->md, "| %d-%d", L->sum.iter, L->last);
	sb_addf(L->md, " | %d | %d | %.1f | %d | %d | %d |\n", L->sum.runs, L->sum.measurements,
		L->sum.gpu_s, L->sum.verify, L->sum.confirm, L->sum.noise);
	L->k = 0;
}

static void cost_line_add(void *ctx, const struct loop_cost_row *r)
{
	struct cost_lines *L = ctx;
	if (L->k == 0) {
		L->sum = *r;
	} else {
		measure_cost_row_add(&L->sum, r);
	}
	L->last = r->iter;
	if (L->its) {
		json_t *o = measure_cost_json(r);
		json_object_set_new(o, "iter", json_integer(r->iter));
		json_array_append_new(L->its, o);
	}
	if (++L->k == L->width)
		cost_line_end(L);
}

/* How many iterations ran something comes first: the table's width */
static void cost_head(void *ctx, size_t n)
{
	struct cost_lines *L = ctx;
	/* past COST_ROWS iterations, a line stands for several, summed */
	L->width = n <= COST_ROWS ? 1 : (n + COST_ROWS - 1) / COST_ROWS;
	if (L->width > 1)
		sb_addf(L->md, "%zu iterations ran something, %zu to a line (FIRST-LAST: their sums); "
			       "the JSON report has each\n\n",
			n, L->width);
	sb_adds(L->md, "| Iter | runs | measurements | GPU s | verify | confirm | noise |\n"
		       "|---|---|---|---|---|---|---|\n");
}

/* What the session's decisions cost in GPU runs: per iteration and in all;
 * the same as JSON when want_json (else NULL: a JSON object per iteration
 * only when the caller prints JSON).  The rows are summed as they are read:
 * none is held. */
static json_t *cost_section(struct store *s, struct sb *md, bool want_json)
{
	struct loop_cost_row total;
	struct cost_lines L = {.md = md, .its = want_json ? json_array() : NULL};
	size_t mark;
	sb_adds(md, "\n### Cost\n\n");
	mark = md->len;
	if (measure_cost_each(s, cost_head, &total, cost_line_add, &L, NULL) < 0) {
		md->len = mark;
		md->buf[mark] = '\0';
		sb_adds(md, "not available (the store could not be read)\n");
		json_decref(L.its);
		return want_json ? json_null() : NULL;
	}
	cost_line_end(&L);
	sb_addf(md, "| **session** | %d | %d | %.1f | %d | %d | %d |\n", total.runs,
		total.measurements, total.gpu_s, total.verify, total.confirm, total.noise);
	return want_json ? json_pack("{s:o,s:o}", "iterations", L.its, "session",
				     measure_cost_json(&total))
			 : NULL;
}

int report_best_vs_baseline(const struct workspace *ws, struct stats_cmp *out,
			    struct err *e)
{
	struct store *s = ws->store;
	struct measure_best b;
	struct claim c;
	memset(out, 0, sizeof(*out));
	out->worst = -1;
	int rc = measure_best(s, &b, e);
	if (rc < 0)
		return rc;
	int iter = b.iter;
	bool have = b.have && b.iter > 0;
	measure_best_release(&b);
	if (!have)
		return err_set(e, ERR_NOTFOUND, "the best is the baseline");
	rc = claim_load(ws, iter, 0, false, &c, e);
	if (rc == 0) {
		*out = c.cmp;
		memset(&c.cmp, 0, sizeof(c.cmp));
	}
	claim_release(&c);
	return rc;
}

/* One line per entry of a list the measure module gives (one per line). */
static json_t *list_lines(const char *text, struct sb *md, const char *none)
{
	json_t *arr = json_array();
	const char *p = text ? text : "";
	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = (int)(nl ? nl - p : (long)strlen(p));
		if (len) {
			sb_addf(md, "- %.*s\n", len, p);
			json_array_append_new(arr, json_stringn(p, (size_t)len));
		}
		p = nl ? nl + 1 : p + strlen(p);
	}
	if (!json_array_size(arr))
		sb_addf(md, "- %s\n", none);
	return arr;
}

/* A shape's share of the peak of bound ("memory": bandwidth, else FLOP) in
 * roofline rl, or NAN where rl did not read that shape. */
static double shape_share(const json_t *rl, const char *shape, bool mem)
{
	const json_t *v;
	size_t i;
	json_array_foreach(json_object_get(rl, "shapes"), i, v) {
		const char *k = json_string_value(json_object_get(v, "shape"));
		if (k && !strcmp(k, shape)) {
			const json_t *x = json_object_get(v, mem ? "bw_share" : "flop_share");
			return json_is_number(x) ? json_number_value(x) : NAN;
		}
	}
	return NAN;
}

/* Before and after on the roofline: each shape of the best's run, its
 * nearest bound and its share of that peak at the baseline and at the
 * best (from the runs' recorded rooflines); nothing when the best's run
 * has none. */
static json_t *roofline_section(struct store *s, int iter, struct sb *md)
{
	int best_run = 0, base_run = 0;
	store_iter_run(s, iter, &best_run, NULL, NULL);
	store_iter_run(s, 0, &base_run, NULL, NULL);
	json_t *bd, *zd;
	const json_t *best = measure_run_roofline(s, best_run, &bd);
	const json_t *base = measure_run_roofline(s, base_run, &zd);
	json_t *rows = json_array();
	if (best) {
		const char *peak =
			json_string_value(json_object_get(json_object_get(best, "peaks"), "name"));
		sb_addf(md, "\nRoofline (%s peaks; share of the peak of each shape's nearest bound, "
			    "computed from the runs):\n\n| Shape | Bound | Baseline | Best |\n|---|---|---|---|\n",
			peak && *peak ? peak : "the device's");
		const json_t *v;
		size_t i;
		json_array_foreach(json_object_get(best, "shapes"), i, v) {
			const char *shape = json_string_value(json_object_get(v, "shape"));
			const char *bound = json_string_value(json_object_get(v, "bound"));
			if (!shape)
				continue;
			bool mem = !bound || strcmp(bound, "compute");
			double after = shape_share(best, shape, mem);
			double before = base ? shape_share(base, shape, mem) : NAN;
			sb_addf(md, "| %s | %s | ", shape, bound ? bound : "—");
			if (isfinite(before))
				sb_addf(md, "%.1f%% |", 100 * before);
			else
				sb_adds(md, "— |");
			if (isfinite(after))
				sb_addf(md, " %.1f%% |\n", 100 * after);
			else
				sb_adds(md, " — |\n");
			json_array_append_new(
				rows, json_pack("{s:s,s:o,s:o,s:o}", "shape", shape, "bound",
						bound ? json_string(bound) : json_null(), "baseline_share",
						isfinite(before) ? json_real(before) : json_null(),
						"best_share", isfinite(after) ? json_real(after) : json_null()));
		}
	}
	json_decref(bd);
	json_decref(zd);
	return rows;
}

/* What promotion rested on besides the numbers: the full-gate run, the
 * explanations of flagged speedups, the attached profiler evidence. */
static json_t *evidence_section(struct store *s, int iter, int gate_run, struct sb *md)
{
	struct sb notes = SB_INIT, arts = SB_INIT;
	sb_init(&notes);
	sb_init(&arts);
	measure_explanations(s, iter, &notes);
	measure_artifacts(s, iter, &arts);
	char *gcmd = run_command(s, gate_run);
	sb_adds(md, "\n### Evidence\n\n");
	sb_addf(md, "Full correctness gate: run %d, `%s`.\n\n", gate_run, gcmd ? gcmd : "");
	sb_adds(md, "Explanations of flagged speedups:\n\n");
	json_t *ex = list_lines(notes.buf, md, "none recorded");
	sb_adds(md, "\nProfiler or roofline evidence attached:\n\n");
	json_t *at = list_lines(arts.buf, md, "none attached");
	json_t *rl = roofline_section(s, iter, md);
	json_t *j = json_pack("{s:i,s:o,s:o,s:o,s:o}", "gate_run", gate_run, "gate_command",
			      gcmd ? json_string(gcmd) : json_null(), "explanations", ex,
			      "artifacts", at, "roofline", rl);
	free(gcmd);
	sb_release(&notes);
	sb_release(&arts);
	return j;
}

/* The claim for the best against the baseline, when one can be made
 * (measure_best_claimable); *c is released on failure. */
static int best_claim(const struct workspace *ws, const char *what,
		      struct claim *c, int *iter, int *gate_run, struct err *e)
{
	struct store *s = ws->store;
	int rc = measure_best_claimable(s, what, iter, gate_run, e);
	if (rc < 0)
		return rc;
	rc = claim_load(ws, *iter, 0, false, c, e);
	if (rc < 0)
		claim_release(c);
	return rc;
}

int report_final(const struct workspace *ws, struct sb *md, json_t **json,
		 struct err *e)
{
	struct store *s = ws->store;
	struct claim c;
	int best_iter, gate_run;
	int rc = best_claim(ws, "report final", &c, &best_iter, &gate_run, e);
	if (rc < 0)
		return rc;
	json_t *j = json_object(), *shapes = json_array();

	sb_addf(md, "## Final claim — %s\n\n", ws->op ? ws->op : "");
	sb_addf(md, "- Candidate: iteration %d, commit ", c.cand.iter);
	short_sha(md, c.cand.commit);
	sb_addf(md, " — %s\n", c.cand.direction ? c.cand.direction : "");
	sb_adds(md, "- Baseline: iteration 0, commit ");
	short_sha(md, c.base.commit);
	sb_addc(md, '\n');
	sb_addf(md, "- Environment: %s\n", c.env ? c.env : "(no Machine line)");
	/* every confirm of the candidate counts: the k-th decides at alpha/2^(k-1) */
	int nconf = store_confirm_count(s, best_iter);
	sb_addf(md, "- Confirm runs of the candidate: %d (all counted: the k-th of the same two "
		    "kernels decides at %.2g%% / 2^(k-1), so confirming again until one reads "
		    "fast gains nothing)\n",
		nconf, 100 * STATS_SEQ_ALPHA);
	json_object_set_new(j, "confirms", json_integer(nconf));
	if (report_field(ws, CF_TARGET))
		sb_addf(md, "- Target: %s\n", report_field(ws, CF_TARGET));
	sb_addf(md, "- Verdict vs baseline: %s", stats_verdict_name(c.cmp.verdict));
	if (c.cmp.flags) {
		struct sb f = SB_INIT;
		stats_flags_text(c.cmp.flags, &f);
		sb_addf(md, " (flags: %s)", f.buf);
		sb_release(&f);
	}
	sb_addc(md, '\n');

	sb_adds(md, "\n### Per shape (ms; statistics over n runs, each run's median)\n\n");
	sb_adds(md, "| Shape | side | n | median | mean | std | min | p10 | p90 |\n");
	sb_adds(md, "|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < c.cmp.nshapes; i++) {
		const struct stats_shape_cmp *sc = &c.cmp.shapes[i];
		const struct stats_shape *bs = stats_set_find(&c.base.set, sc->key);
		const struct stats_shape *cs = stats_set_find(&c.cand.set, sc->key);
		struct stats_summary sb_, sc_;
		stats_summarize(bs ? bs->ms : NULL, bs ? bs->n : 0, &sb_);
		stats_summarize(cs ? cs->ms : NULL, cs ? cs->n : 0, &sc_);
		summary_row(md, sc->key, "baseline", &sb_);
		summary_row(md, "", "candidate", &sc_);
		json_t *sj = json_object();
		json_object_set_new(sj, "shape", json_string(sc->key));
		json_object_set_new(sj, "baseline", summary_json(&sb_));
		json_object_set_new(sj, "candidate", summary_json(&sc_));
		json_object_set_new(sj, "speedup", jnum(sc->speedup));
		json_object_set_new(sj, "interval", json_pack("[oo]", jnum(sp(sc->lo)), jnum(sp(sc->hi))));
		json_array_append_new(shapes, sj);
	}

	sb_adds(md, "\n### Speedup vs baseline\n\n| Shape | speedup | ");
	stats_level_text(&c.cmp, md);
	sb_adds(md, " interval |\n|---|---|---|\n");
	for (size_t i = 0; i < c.cmp.nshapes; i++) {
		const struct stats_shape_cmp *sc = &c.cmp.shapes[i];
		sb_addf(md, "| %s | %.3f× | %.3f× – %.3f× |\n", sc->key, sc->speedup, sp(sc->lo),
			sp(sc->hi));
	}
	sb_addf(md, "| **geomean (equal weight, %zu shapes)** | **%.3f×** | %.3f× – %.3f× |\n",
		c.cmp.ncommon, c.cmp.speedup, sp(c.cmp.lo), sp(c.cmp.hi));
	const char *worst = c.cmp.worst >= 0 ? c.cmp.shapes[c.cmp.worst].key : NULL;
	if (worst)
		sb_addf(md, "\nWorst shape: %s (%.3f×).\n", worst, c.cmp.shapes[c.cmp.worst].speedup);
	target_line(md, &c.tgt);
	char *method = method_text(&c.cmp, c.paired);
	sb_addf(md, "Interval method: %s.\n", method);
	json_t *chart = NULL;
	chart_section(ws, "###", md, json ? &chart : NULL);

	json_t *evidence = evidence_section(s, best_iter, gate_run, md);

	char *vcmd = run_command(s, c.cand.run_id);
	char *bcmd = run_command(s, c.base.run_id);
	char *ccmd = c.paired ? run_command(s, c.conf.session) : NULL;
	sb_adds(md, "\n### Commands\n\n");
	sb_addf(md, "- validation (contract): `%s`\n", report_field(ws, CF_VALIDATION) ? report_field(ws, CF_VALIDATION) : "");
	if (report_field(ws, CF_BENCHMARK))
		sb_addf(md, "- benchmark (contract): `%s`\n", report_field(ws, CF_BENCHMARK));
	sb_addf(md, "- baseline verify: `%s`\n", bcmd ? bcmd : "");
	sb_addf(md, "- candidate verify: `%s`\n", vcmd ? vcmd : "");
	if (ccmd)
		sb_addf(md, "- confirm runs (interleaved, %zu per side): `%s`\n",
			c.cmp.shapes ? c.cmp.shapes[0].n_cand : 0, ccmd);

	json_t *cost = cost_section(s, md, json != NULL);

	sb_adds(md, "\n### GPU\n\n");
	json_t *dev = device_json(s, c.cand.run_id, md);
	sb_adds(md, "\nClock evidence per run (before the run, idle; after it):\n\n");
	json_t *clocks = json_array();
	probe_lines(s, c.cand.tree, md, clocks);

	json_object_set_new(j, "op", json_string(ws->op ? ws->op : ""));
	json_object_set_new(j, "candidate",
			    json_pack("{s:i,s:o,s:o,s:o}", "iter", c.cand.iter, "commit",
				      c.cand.commit ? json_string(c.cand.commit) : json_null(),
				      "tree", c.cand.tree ? json_string(c.cand.tree) : json_null(),
				      "direction",
				      c.cand.direction ? json_string(c.cand.direction) : json_null()));
	json_object_set_new(j, "baseline",
			    json_pack("{s:i,s:o}", "iter", 0, "commit",
				      c.base.commit ? json_string(c.base.commit) : json_null()));
	json_object_set_new(j, "env", c.env ? json_string(c.env) : json_null());
	json_object_set_new(j, "verdict", json_string(stats_verdict_name(c.cmp.verdict)));
	json_object_set_new(j, "flags", stats_flags_json(c.cmp.flags));
	json_object_set_new(j, "shapes", shapes);
	json_object_set_new(j, "geomean",
			    json_pack("{s:o,s:[oo],s:i}", "speedup", jnum(c.cmp.speedup), "interval",
				      jnum(sp(c.cmp.lo)), jnum(sp(c.cmp.hi)), "shapes",
				      (int)c.cmp.ncommon));
	json_object_set_new(j, "worst_shape", worst ? json_string(worst) : json_null());
	json_object_set_new(j, "target", measure_target_json(&c.tgt));
	json_object_set_new(j, "interval_method",
			    json_string(method));
	free(method);
	json_object_set_new(j, "chart", chart);
	json_object_set_new(j, "evidence", evidence);
	json_t *cmds = json_object();
	json_object_set_new(cmds, "validation", json_string(report_field(ws, CF_VALIDATION) ? report_field(ws, CF_VALIDATION) : ""));
	json_object_set_new(cmds, "benchmark", report_field(ws, CF_BENCHMARK) ? json_string(report_field(ws, CF_BENCHMARK))
							       : json_null());
	json_object_set_new(cmds, "baseline_verify", bcmd ? json_string(bcmd) : json_null());
	json_object_set_new(cmds, "candidate_verify", vcmd ? json_string(vcmd) : json_null());
	json_object_set_new(cmds, "confirm", ccmd ? json_string(ccmd) : json_null());
	json_object_set_new(j, "commands", cmds);
	json_object_set_new(j, "device", dev);
	json_object_set_new(j, "clocks", clocks);
	json_object_set_new(j, "cost", cost);
	free(vcmd);
	free(bcmd);
	free(ccmd);
	if (json)
		*json = j;
	else
		json_decref(j);
	claim_release(&c);
	return 0;
}

/* Rows between two iterations (exclusive, inclusive) whose status is revert
 * or drop: the dead ends on the way to a kept candidate. */
static void dead_ends(struct store *s, int from, int to, struct sb *md, json_t *arr)
{
	struct log_rows *rs;
	int k = 0;
	if (store_rows_get(s, &rs, NULL) < 0)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		const struct log_row *r = &rs->v[i];
		if (r->iter > from && r->iter < to &&
		    (r->status == RS_REVERT || r->status == RS_DROP || r->gate_v == GATE_FAIL)) {
			sb_addf(md, "- iteration %d (%s, gate %s): %s\n", r->iter,
				row_status_name(r->status), r->gate ? r->gate : "?",
				r->direction ? r->direction : "");
			json_array_append_new(arr, json_pack("{s:i,s:s,s:s}", "iter", r->iter,
							     "status", row_status_name(r->status),
							     "direction",
							     r->direction ? r->direction : ""));
			k++;
		}
	}
	log_rows_put(rs);
	if (!k)
		sb_adds(md, "- none recorded between the parent and this iteration\n");
}

int report_header(const struct workspace *ws, int iter, struct sb *md,
		  json_t **json, struct err *e)
{
	struct store *s = ws->store;
	struct claim c;
	int parent = 0;
	/* The parent: the best when iter was logged, the baseline or the last
	 * keep before it (log_rows_best over the rows before iter). */
	struct log_rows *rs;
	int rc = store_rows_get(s, &rs, e);
	if (rc < 0)
		return rc;
	size_t k = 0;
	while (k < rs->n && rs->v[k].iter < iter)
		k++;
	enum row_status st = k < rs->n && rs->v[k].iter == iter ? rs->v[k].status : RS_NONE;
	const struct log_row *pb = log_rows_best(rs->v, k);
	parent = pb ? pb->iter : 0;
	if (st == RS_NONE) {
		/* no such row: not found (exit 2), with the rows that would do */
		struct sb keeps = SB_INIT;
		for (size_t i = 0; i < rs->n; i++)
			if (rs->v[i].status == RS_KEEP)
				sb_addf(&keeps, "%s%d", keeps.len ? ", " : "", rs->v[i].iter);
		if (!rs->n)
			rc = err_set(e, ERR_NOTFOUND,
				     "report header: there is no iteration %d: the log has no row "
				     "yet; the header describes a kept candidate (a keep row)",
				     iter);
		else
			rc = err_set(e, ERR_NOTFOUND,
				     "report header: there is no iteration %d (the log has "
				     "iterations %d to %d); give the iteration of a keep row (%s)",
				     iter, rs->v[0].iter, rs->v[rs->n - 1].iter,
				     keeps.len ? sb_str(&keeps) : "there is none yet");
		sb_release(&keeps);
		log_rows_put(rs);
		return rc;
	}
	log_rows_put(rs);
	if (st != RS_KEEP)
		return err_set(e, ERR_REFUSED,
			       "report header refused: iteration %d is %s; the header describes a "
			       "kept candidate (a keep row)",
			       iter, row_status_name(st));
	rc = claim_load(ws, iter, parent, true, &c, e);
	if (rc < 0) {
		claim_release(&c);
		return rc;
	}
	json_t *j = json_object(), *dead = json_array();
	struct sb notes = SB_INIT;
	sb_addf(md, "## Kept candidate — iteration %d\n\n", iter);
	sb_adds(md, "### Identity\n\n");
	sb_addf(md, "- op: %s\n- iteration: %d, commit ", ws->op ? ws->op : "", iter);
	short_sha(md, c.cand.commit);
	sb_addf(md, "\n- parent: iteration %d, commit ", parent);
	short_sha(md, c.base.commit);
	sb_addf(md, "\n- direction: %s\n", c.cand.direction ? c.cand.direction : "");
	sb_addf(md, "- confirmed: %s\n",
		store_confirm_promoted(s, iter) ? "yes (promoted by a confirm run)" : "no");
	sb_adds(md, "\n### Delta\n\n");
	if (c.cmp.ncommon) {
		sb_addf(md, "- %.3f× geomean vs the parent (", c.cmp.speedup);
		stats_level_text(&c.cmp, md);
		sb_addf(md, " interval %.3f× – %.3f×), verdict %s\n", sp(c.cmp.lo), sp(c.cmp.hi),
			stats_verdict_name(c.cmp.verdict));
		if (c.cmp.worst >= 0)
			sb_addf(md, "- worst shape: %s (%.3f×)\n", c.cmp.shapes[c.cmp.worst].key,
				c.cmp.shapes[c.cmp.worst].speedup);
		sb_addf(md, "- numbers: %s\n", c.paired ? "the confirm session" : "every run of each");
	} else {
		sb_adds(md, "- no comparable measurement of this iteration and its parent\n");
	}
	sb_adds(md, "\n### Lessons\n\n");
	int nexp = measure_explanations(s, iter, &notes);
	if (nexp) {
		const char *p = notes.buf;
		while (*p) {
			const char *nl = strchr(p, '\n');
			sb_addf(md, "- %.*s\n", (int)(nl ? nl - p : (long)strlen(p)), p);
			p = nl ? nl + 1 : p + strlen(p);
		}
	} else {
		sb_adds(md, "- (write what this iteration taught)\n");
	}
	sb_adds(md, "\n### Dead-ends\n\n");
	dead_ends(s, parent, iter, md, dead);
	sb_adds(md, "\n### Open\n\n");
	int open = 0;
	if (c.cmp.flags & SF_IMPLAUSIBLE_MASK && !nexp) {
		struct sb f = SB_INIT;
		stats_flags_text(c.cmp.flags & SF_IMPLAUSIBLE_MASK, &f);
		sb_addf(md, "- unexplained flags: %s\n", f.buf);
		sb_release(&f);
		open++;
	}
	if (!store_confirm_promoted(s, iter)) {
		sb_adds(md, "- the win is not confirmed yet (optloop confirm)\n");
		open++;
	}
	if (!measure_artifacts(s, iter, NULL)) {
		sb_adds(md, "- no profiler or roofline artifact attached (optloop promote --attach FILE)\n");
		open++;
	}
	if (!open)
		sb_adds(md, "- nothing recorded\n");

	json_object_set_new(j, "iter", json_integer(iter));
	json_object_set_new(j, "parent", json_integer(parent));
	json_object_set_new(j, "commit", c.cand.commit ? json_string(c.cand.commit) : json_null());
	json_object_set_new(j, "parent_commit",
			    c.base.commit ? json_string(c.base.commit) : json_null());
	json_object_set_new(j, "direction",
			    c.cand.direction ? json_string(c.cand.direction) : json_null());
	json_object_set_new(j, "confirmed", json_boolean(store_confirm_promoted(s, iter)));
	json_object_set_new(j, "delta", stats_cmp_json(&c.cmp));
	json_object_set_new(j, "lessons", json_string(notes.buf ? notes.buf : ""));
	json_object_set_new(j, "dead_ends", dead);
	json_object_set_new(j, "open", json_integer(open));
	sb_release(&notes);
	if (json)
		*json = j;
	else
		json_decref(j);
	claim_release(&c);
	return 0;
}

int report_pr(const struct workspace *ws, struct sb *md, json_t **json,
	      struct err *e)
{
	struct store *s = ws->store;
	struct claim c;
	int iter, gate_run;
	int rc = best_claim(ws, "report pr", &c, &iter, &gate_run, e);
	if (rc < 0)
		return rc;
	struct sb dev = SB_INIT;
	json_t *devj = device_json(s, c.cand.run_id, &dev);
	sb_trim(&dev);
	/* the speedup is the baseline's against the best: every keep on the
	 * way has a share in it, not only the last one */
	struct log_rows *rs = NULL;
	size_t nkeeps = 0;
	if (store_rows_get(s, &rs, NULL) < 0)
		rs = NULL;
	for (size_t i = 0; rs && i < rs->n; i++)
		nkeeps += rs->v[i].status == RS_KEEP && rs->v[i].iter <= iter;
	sb_addf(md, "## Summary\n\n%s: %.2f× geomean over %zu shape(s) (", ws->op ? ws->op : "",
		c.cmp.speedup, c.cmp.ncommon);
	stats_level_text(&c.cmp, md);
	sb_addf(md, " interval %.2f×–%.2f×) against the baseline", sp(c.cmp.lo), sp(c.cmp.hi));
	if (nkeeps > 1)
		sb_addf(md, ", from %zu kept changes (below); the last: %s.\n", nkeeps,
			c.cand.direction ? c.cand.direction : "");
	else
		sb_addf(md, ": %s.\n", c.cand.direction ? c.cand.direction : "");
	json_t *changes = json_array();
	if (nkeeps > 1)
		sb_adds(md, "\n## Changes\n\nEach kept iteration, with its figure against the best "
			    "before it:\n\n");
	for (size_t i = 0; rs && i < rs->n; i++) {
		const struct log_row *r = &rs->v[i];
		if (r->status != RS_KEEP || r->iter > iter)
			continue;
		if (nkeeps > 1) {
			sb_addf(md, "- iteration %d: %s", r->iter, r->direction ? r->direction : "");
			if (isfinite(r->vs_best))
				sb_addf(md, " (%+.1f%% vs best)", 100 * r->vs_best);
			sb_addc(md, '\n');
		}
		json_array_append_new(changes,
				      json_pack("{s:i,s:s,s:o}", "iter", r->iter, "direction",
						r->direction ? r->direction : "", "vs_best",
						jnum(r->vs_best)));
	}
	log_rows_put(rs);
	sb_adds(md, "\n## Test plan\n\n");
	char *gcmd = run_command(s, gate_run);
	sb_addf(md, "- [x] full correctness gate passed: `%s`\n", gcmd ? gcmd : "");
	free(gcmd);
	sb_addf(md, "- [x] win confirmed with best and candidate interleaved in one session "
		    "(iteration %d)\n", iter);
	sb_adds(md, "\n## Benchmark\n\n");
	sb_addf(md, "- Hardware: %s\n", dev.len ? dev.buf : "unknown");
	sb_addf(md, "- Environment: %s\n", c.env ? c.env : "unknown");
	sb_addf(md, "- Workload: %zu shape(s)", c.cmp.nshapes);
	if (report_field(ws, CF_BENCHMARK))
		sb_addf(md, ", `%s`", report_field(ws, CF_BENCHMARK));
	sb_adds(md, "\n\n| Shape | before (ms) | after (ms) | speedup |\n|---|---|---|---|\n");
	for (size_t i = 0; i < c.cmp.nshapes; i++) {
		const struct stats_shape_cmp *sc = &c.cmp.shapes[i];
		sb_addf(md, "| %s | %.4f | %.4f | %.2f× |\n", sc->key, sc->best_ms, sc->cand_ms,
			sc->speedup);
	}
	sb_addf(md, "\nConclusion: %s, %.2f× equal-weight geomean; worst shape %s.\n",
		stats_verdict_name(c.cmp.verdict), c.cmp.speedup,
		c.cmp.worst >= 0 ? c.cmp.shapes[c.cmp.worst].key : "—");
	target_line(md, &c.tgt);
	json_t *chart = NULL;
	chart_section(ws, "###", md, json ? &chart : NULL);
	sb_adds(md, "\n## Breaking changes\n\nNone: only the kernel changed; the frozen test and "
		    "reference are untouched.\n");
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "iter", json_integer(iter));
		json_object_set_new(j, "summary", json_string(c.cand.direction ? c.cand.direction : ""));
		json_object_set_new(j, "changes", changes);
		json_object_set_new(j, "speedup", jnum(c.cmp.speedup));
		json_object_set_new(j, "interval",
				    json_pack("[oo]", jnum(sp(c.cmp.lo)), jnum(sp(c.cmp.hi))));
		json_object_set_new(j, "hardware", devj);
		json_object_set_new(j, "comparison", stats_cmp_json(&c.cmp));
		json_object_set_new(j, "chart", chart);
		*json = j;
	} else {
		json_decref(devj);
		json_decref(changes);
	}
	sb_release(&dev);
	claim_release(&c);
	return 0;
}
