/*
 * chart — the bench-per-iteration series from the log's rows, one shape's
 * times from the store, and the Mermaid block of the reports.  See chart.h.
 */
#include "core/chart.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/measure.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/rules.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *chart_kind_name(enum chart_kind k)
{
	switch (k) {
	case CHART_BASE:
		return "base";
	case CHART_KEEP:
		return "keep";
	case CHART_DROPPED:
		return "dropped";
	case CHART_FAILED:
		return "failed";
	}
	return "";
}

static enum chart_kind row_kind(const struct log_row *r)
{
	if (r->gate_v == GATE_FAIL || r->gate_v == GATE_ERROR || r->gate_v == GATE_INCOMPLETE)
		return CHART_FAILED;
	if (log_row_can_be_best(r))
		return r->status == RS_BASE ? CHART_BASE : CHART_KEEP;
	return CHART_DROPPED;
}

/* Row i of c from its row r and its time at the chart (the row's bench or
 * the charted shape's); *best and *best_ms carry the best so far. */
static void chart_put(struct chart *c, size_t i, const struct log_row *r, double ms,
		      const struct log_row **best, double *best_ms)
{
	struct chart_item *it = &c->v[i];
	/* log_rows_best(rows, i + 1), carried along */
	if (log_row_can_be_best(r)) {
		*best = r;
		*best_ms = ms;
	}
	it->iter = r->iter;
	it->kind = row_kind(r);
	it->ms = ms;
	it->point = (it->kind == CHART_BASE || it->kind == CHART_KEEP) && isfinite(it->ms);
	it->unconfirmed = r->status == RS_KEEP && r->unconfirmed;
	it->best_ms = *best ? *best_ms : NAN;
}

static void chart_start(struct chart *c, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->best_ms = c->band_lo = c->band_hi = NAN;
	c->v = xcalloc(n ? n : 1, sizeof(*c->v));
	c->n = n;
}

static void chart_finish(struct chart *c, const struct log_row *best, double best_ms)
{
	if (best) {
		c->has_best = true;
		c->best_iter = best->iter;
		c->best_ms = best_ms;
	}
}

void chart_build(const struct log_row *rows, size_t n, const double *ms, struct chart *c)
{
	const struct log_row *best = NULL;
	double best_ms = NAN;
	chart_start(c, n);
	for (size_t i = 0; i < n; i++)
		chart_put(c, i, &rows[i], ms ? ms[i] : rows[i].bench_ms, &best, &best_ms);
	chart_finish(c, best, best_ms);
}

/* chart_build over every row, read as the chart needs it: all[] holds each
 * row's iteration, bench and gate, keeps[] the baselines and keeps whole
 * (both in the log's order).  A row that is neither is charted from what
 * all[] holds: it is never the best, never a point and never unconfirmed,
 * and its kind is its gate's, so the items are chart_build's. */
static void chart_build_from(const struct store_chart_row *all, size_t n,
			     const struct log_row *keeps, size_t nkeeps, const double *ms,
			     struct chart *c)
{
	const struct log_row *best = NULL;
	double best_ms = NAN;
	size_t k = 0;
	chart_start(c, n);
	for (size_t i = 0; i < n; i++) {
		while (k < nkeeps && keeps[k].iter < all[i].iter)
			k++;
		const struct log_row *r = k < nkeeps && keeps[k].iter == all[i].iter ? &keeps[k] : NULL;
		struct log_row other = {.iter = all[i].iter, .bench_ms = all[i].bench_ms,
					.gate_v = all[i].gate_v, .status = RS_NONE};
		if (!r)
			r = &other;
		chart_put(c, i, r, ms ? ms[i] : r->bench_ms, &best, &best_ms);
	}
	chart_finish(c, best, best_ms);
}

void chart_release(struct chart *c)
{
	free(c->op);
	free(c->shape);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* ---- one shape's times from the store ---- */

struct shape_col {
	char *key;  /* measure_shape_key: what the statistics call it */
	char *name; /* the key without the op, as the user writes it */
	double *ms; /* one per row */
};

struct shape_cols {
	struct shape_col *v;
	size_t n, nrows, row;
};

static void shape_cols_release(struct shape_cols *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		free(sc->v[i].key);
		free(sc->v[i].name);
		free(sc->v[i].ms);
	}
	free(sc->v);
	memset(sc, 0, sizeof(*sc));
}

static void add_sample(void *ctx, const struct parse_row *r, double ms)
{
	struct shape_cols *sc = ctx;
	char *key = measure_shape_key(r);
	size_t i = 0;
	while (i < sc->n && strcmp(sc->v[i].key, key))
		i++;
	if (i == sc->n) {
		struct parse_row bare = *r;
		bare.op = NULL;
		char *name = measure_shape_key(&bare);
		sc->v = xrealloc(sc->v, (sc->n + 1) * sizeof(*sc->v));
		sc->v[i].key = key;
		sc->v[i].name = !strncmp(name, "- ", 2) ? xstrdup(name + 2) : xstrdup(name);
		free(name);
		sc->v[i].ms = xmalloc(sc->nrows * sizeof(double));
		for (size_t k = 0; k < sc->nrows; k++)
			sc->v[i].ms[k] = NAN;
		sc->n++;
	} else {
		free(key);
	}
	/* a run's result is its last table: a later sample of a shape wins */
	sc->v[i].ms[sc->row] = ms;
}

/* Every shape the rows' verify runs measured, with each row's time. */
static int load_shapes(struct store *s, const struct store_chart_row *rows, size_t n,
		       struct shape_cols *sc, struct err *e)
{
	memset(sc, 0, sizeof(*sc));
	sc->nrows = n;
	for (size_t i = 0; i < n; i++) {
		int run_id = 0;
		if (store_iter_run(s, rows[i].iter, &run_id, NULL, NULL) < 0 || !run_id)
			continue; /* an imported row: no run behind it */
		sc->row = i;
		int rc = store_run_samples(s, run_id, add_sample, sc, e);
		if (rc < 0)
			return rc;
	}
	return 0;
}

struct shape_keys {
	char **v;
	size_t n;
};

static void count_shape(void *ctx, const struct parse_row *r)
{
	struct shape_keys *k = ctx;
	char *key = measure_shape_key(r);
	for (size_t i = 0; i < k->n; i++) {
		if (!strcmp(k->v[i], key)) {
			free(key);
			return;
		}
	}
	k->v = xrealloc(k->v, (k->n + 1) * sizeof(*k->v));
	k->v[k->n++] = key;
}

/* How many shapes the rows' verify runs measured (load_shapes' count,
 * without each row's times). */
static int count_shapes(struct store *s, size_t *n, struct err *e)
{
	struct shape_keys k = {0};
	int rc = store_row_shapes(s, count_shape, &k, e);
	*n = k.n;
	for (size_t i = 0; i < k.n; i++)
		free(k.v[i]);
	free(k.v);
	return rc;
}

static void list_names(const struct shape_cols *sc, const bool *only, struct sb *out)
{
	size_t k = 0;
	for (size_t i = 0; i < sc->n; i++)
		if (!only || only[i])
			sb_addf(out, "%s'%s'", k++ ? ", " : "", sc->v[i].name);
}

/* The one measured shape that text names. */
static int pick_shape(const struct shape_cols *sc, const char *text, size_t *out, struct err *e)
{
	struct sb names = SB_INIT;
	int rc = 0;
	sb_init(&names);
	list_names(sc, NULL, &names);
	for (size_t i = 0; i < sc->n; i++) {
		if (!strcmp(text, sc->v[i].name) || !strcmp(text, sc->v[i].key)) {
			*out = i;
			sb_release(&names);
			return 0;
		}
	}
	struct contract_shape *want;
	size_t nwant = contract_target_shapes(text, &want);
	bool *hit = xcalloc(sc->n ? sc->n : 1, sizeof(*hit));
	size_t nhit = 0;
	for (size_t i = 0; i < sc->n; i++) {
		for (size_t k = 0; k < nwant && !hit[i]; k++)
			hit[i] = contract_shape_matches(&want[k], sc->v[i].key);
		if (hit[i]) {
			nhit++;
			*out = i;
		}
	}
	if (!sc->n) {
		rc = err_set(e, ERR_USAGE, "--shape %s: no shape has been measured yet (verify the "
					   "baseline first, or leave --shape out)", text);
	} else if (!nwant) {
		rc = err_set(e, ERR_USAGE, "--shape '%s' is not a shape: name one of the measured "
					   "shapes, %s (as listed, or as a Target spells one: "
					   "B2-T512-H4-D64, B=2 T=512)", text, names.buf);
	} else if (nhit == 0) {
		rc = err_set(e, ERR_USAGE, "--shape '%s' was never measured; the measured shapes are %s",
			     text, names.buf);
	} else if (nhit > 1) {
		struct sb some = SB_INIT;
		sb_init(&some);
		list_names(sc, hit, &some);
		rc = err_set(e, ERR_USAGE, "--shape '%s' matches %zu measured shapes, %s: name one of them",
			     text, nhit, some.buf);
		sb_release(&some);
	}
	free(hit);
	contract_shapes_free(want, nwant);
	sb_release(&names);
	return rc;
}

int chart_load(struct store *s, const char *shape, struct chart *c, struct err *e)
{
	struct store_chart_row *all = NULL;
	struct log_rows *keeps = NULL;
	struct shape_cols sc;
	size_t n = 0, pick = 0;

	size_t nshapes = 0;
	memset(c, 0, sizeof(*c));
	memset(&sc, 0, sizeof(sc));
	/* every row's number and gate, and the baselines and keeps whole (the
	 * only rows that can be the best): not every row's columns */
	int rc = store_rows_chart(s, &all, &n, e);
	if (rc == 0)
		rc = store_rows_before(s, INT_MAX, INT_MAX, true, &keeps, e);
	/* the bench column needs only how many shapes there are; one shape's
	 * column needs each row's time of it */
	if (rc == 0 && !shape)
		rc = count_shapes(s, &nshapes, e);
	else if (rc == 0 && (rc = load_shapes(s, all, n, &sc, e)) == 0)
		rc = pick_shape(&sc, shape, &pick, e);
	if (rc < 0) {
		shape_cols_release(&sc);
		if (keeps)
			log_rows_put(keeps);
		free(all);
		return rc;
	}
	chart_build_from(all, n, keeps->v, keeps->n, shape ? sc.v[pick].ms : NULL, c);
	c->nshapes = shape ? sc.n : nshapes;
	if (shape)
		c->shape = xstrdup(sc.v[pick].name);
	struct loop_noise nz;
	if (c->has_best && (rc = measure_noise_band(s, shape ? sc.v[pick].key : NULL, c->best_ms, &nz,
						     e)) == 0 && nz.have) {
		c->band_lo = nz.lo_ms;
		c->band_hi = nz.hi_ms;
		c->band_assumed = nz.assumed;
	}
	shape_cols_release(&sc);
	log_rows_put(keeps);
	free(all);
	return rc;
}

/* ---- Mermaid ---- */

/* Four decimals as the reports' tables have them, four significant digits
 * below 1 ms, never an exponent: Mermaid's xychart reads numbers as
 * [+-]?(\d+(\.\d+)?|\.\d+). */
static void add_num(struct sb *md, double v)
{
	int d = v > 0 ? 3 - (int)floor(log10(v)) : 4;
	sb_addf(md, "%.*f", d < 4 ? 4 : d > 9 ? 9 : d, v);
}

/* Mermaid's quoted strings end at the next '"'. */
static void add_text(struct sb *md, const char *s)
{
	for (; *s; s++)
		if (*s != '"' && *s != '\n' && *s != '\r')
			sb_addc(md, *s);
}

/* An axis from lo to hi with a margin, rounded outward to the step of its
 * labels; the bars start at the bottom of the axis. */
static void y_range(double lo, double hi, double *a, double *b, int *dec)
{
	double span = hi - lo;
	if (span <= 0)
		span = hi > 0 ? hi * 0.1 : 1;
	*dec = 2 - (int)floor(log10(span));
	if (*dec < 0)
		*dec = 0;
	if (*dec > 9)
		*dec = 9;
	double f = pow(10, *dec);
	*a = floor((lo - 0.1 * span) * f) / f;
	*b = ceil((hi + 0.1 * span) * f) / f;
	if (*a < 0)
		*a = 0;
}

/* How many iterations one bar stands for: 1 up to CHART_MERMAID_BARS
 * iterations with a number, else enough that the bars stay within it. */
static size_t bin_width(size_t ncat)
{
	return ncat <= CHART_MERMAID_BARS ? 1 : (ncat + CHART_MERMAID_BARS - 1) / CHART_MERMAID_BARS;
}

/* The iterations left out for want of a number, listed up to this many;
 * past it, how many more (OPT_LOG.md lists every one). */
#define LEFT_OUT_LISTED 20

static void mermaid_caption(const struct chart *c, size_t ncat, size_t width, bool line,
			    struct sb *md)
{
	sb_adds(md, "Bars: ");
	if (c->shape)
		sb_addf(md, "the time at %s (ms)", c->shape);
	else if (c->nshapes > 1)
		sb_addf(md, "the bench (equal-weight geomean of %zu shapes, ms)", c->nshapes);
	else
		sb_adds(md, "the bench (ms)");
	if (width == 1)
		sb_addf(md, " of each of the %zu iteration(s) with a number", ncat);
	else
		sb_addf(md, " of the %zu iterations with a number, %zu to a bar (the bar is the "
			    "fastest of them; its label, the first and last iteration)",
			ncat, width);
	if (line)
		sb_addf(md, "; line: the best so far (the baseline or the last keep)%s",
			width == 1 ? "" : ", after each bar's last iteration");
	if (c->has_best && isfinite(c->best_ms)) {
		sb_addf(md, "; best %.4g ms at iteration %d", c->best_ms, c->best_iter);
		if (isfinite(c->band_lo) && c->best_ms > 0)
			sb_addf(md, ", noise ±%.1f %%%s", (c->band_hi - c->band_lo) / 2 / c->best_ms * 100,
				c->band_assumed ? " (assumed)" : "");
	}
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (isfinite(c->v[i].ms))
			continue;
		if (k < LEFT_OUT_LISTED)
			sb_addf(md, "%s%d (%s)", k ? ", " : ". Left out, no bench number: iteration ",
				c->v[i].iter, chart_kind_name(c->v[i].kind));
		k++;
	}
	if (k > LEFT_OUT_LISTED)
		sb_addf(md, ", and %zu more (OPT_LOG.md lists each)", k - LEFT_OUT_LISTED);
	sb_adds(md, ".\n");
}

/* The bars of the chart: iterations with a number, width to a bar, each
 * the fastest of its own and the best so far after its last. */
struct bar {
	int first, last;
	double ms, best_ms;
};

static size_t make_bars(const struct chart *c, size_t width, struct bar **out)
{
	size_t n = 0, in = 0;
	struct bar *v = xcalloc(c->n / width + 2, sizeof(*v));
	for (size_t i = 0; i < c->n; i++) {
		const struct chart_item *it = &c->v[i];
		if (!isfinite(it->ms))
			continue;
		if (in == 0) {
			v[n].first = it->iter;
			v[n].ms = it->ms;
			n++;
		}
		struct bar *b = &v[n - 1];
		b->last = it->iter;
		b->ms = fmin(b->ms, it->ms);
		b->best_ms = it->best_ms;
		in = (in + 1) % width;
	}
	*out = v;
	return n;
}

void chart_mermaid(const struct chart *c, const char *op, struct sb *md)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t ncat = 0;
	bool line = true;

	for (size_t i = 0; i < c->n; i++) {
		const struct chart_item *it = &c->v[i];
		if (!isfinite(it->ms))
			continue;
		ncat++;
		lo = fmin(lo, it->ms);
		hi = fmax(hi, it->ms);
		if (isfinite(it->best_ms)) {
			lo = fmin(lo, it->best_ms);
			hi = fmax(hi, it->best_ms);
		} else {
			line = false; /* a gap Mermaid cannot draw: no line at all */
		}
	}
	if (!ncat) {
		sb_adds(md, "No iteration has a bench number to chart yet.\n");
		return;
	}
	size_t width = bin_width(ncat);
	struct bar *bars;
	size_t nbars = make_bars(c, width, &bars);
	double a, b;
	int dec;
	y_range(lo, hi, &a, &b, &dec);
	sb_adds(md, "```mermaid\nxychart-beta\n    title \"");
	if (op) {
		add_text(md, op);
		sb_adds(md, ": ");
	}
	sb_adds(md, "bench per iteration");
	if (c->shape) {
		sb_adds(md, " at ");
		add_text(md, c->shape);
	}
	sb_adds(md, "\"\n    x-axis \"iteration\" [");
	for (size_t i = 0; i < nbars; i++) {
		if (bars[i].first == bars[i].last)
			sb_addf(md, "%s\"%d\"", i ? ", " : "", bars[i].first);
		else
			sb_addf(md, "%s\"%d-%d\"", i ? ", " : "", bars[i].first, bars[i].last);
	}
	sb_addf(md, "]\n    y-axis \"ms\" %.*f --> %.*f\n    bar [", dec, a, dec, b);
	for (size_t i = 0; i < nbars; i++) {
		sb_adds(md, i ? ", " : "");
		add_num(md, bars[i].ms);
	}
	sb_adds(md, "]\n");
	if (line) {
		sb_adds(md, "    line [");
		for (size_t i = 0; i < nbars; i++) {
			sb_adds(md, i ? ", " : "");
			add_num(md, bars[i].best_ms);
		}
		sb_adds(md, "]\n");
	}
	sb_adds(md, "```\n\n");
	mermaid_caption(c, ncat, width, line, md);
	free(bars);
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *chart_json(const struct chart *c)
{
	json_t *j = json_object(), *rows = json_array();
	for (size_t i = 0; i < c->n; i++) {
		const struct chart_item *v = &c->v[i];
		json_array_append_new(rows, json_pack("{s:i,s:s,s:b,s:o,s:o,s:b}", "iter", v->iter,
						      "kind", chart_kind_name(v->kind), "point",
						      v->point, "ms", jnum(v->ms), "best_ms",
						      jnum(v->best_ms), "unconfirmed", v->unconfirmed));
	}
	json_object_set_new(j, "shape", c->shape ? json_string(c->shape) : json_null());
	json_object_set_new(j, "best", c->has_best ? json_pack("{s:i,s:o}", "iter", c->best_iter,
							       "ms", jnum(c->best_ms))
						   : json_null());
	json_object_set_new(j, "band", isfinite(c->band_lo) && isfinite(c->band_hi)
					       ? json_pack("[ff]", c->band_lo, c->band_hi)
					       : json_null());
	json_object_set_new(j, "band_assumed", json_boolean(c->band_assumed));
	json_object_set_new(j, "rows", rows);
	return j;
}
