/*
 * best — the current best and how the iterations got there: a chart of
 * bench per iteration with the best line and the noise band, and a
 * per-shape mode (s) listing each shape's baseline and best, and under
 * each, where the selected row's run recorded one, its roofline.  The last
 * verify run's verdict against the best and its flags sit under the
 * best line (at the foot in per-shape mode).
 */
#include "views/view.h"

#include "core/sb.h"
#include "core/rules.h"
#include "views/sanitize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define YLAB 7

static int best_nitems(const struct view *v)
{
	return v->mode ? (int)v->d->nshapes : 0;
}

static int value_row(double val, double lo, double hi, int ch)
{
	if (hi <= lo)
		return ch / 2;
	double f = (hi - val) / (hi - lo);
	int y = (int)lround(f * (ch - 1));
	return y < 0 ? 0 : y >= ch ? ch - 1 : y;
}

static const char *point_glyph(const struct wb_data *d, const struct log_row *r, enum role *role)
{
	*role = R_POINT;
	if (r->gate_v == GATE_FAIL || r->gate_v == GATE_ERROR) {
		*role = R_FAIL;
		return glyph(GL_PT_FAIL);
	}
	if (r->gate_v == GATE_INCOMPLETE) {
		*role = R_INCOMPLETE;
		return glyph(GL_PT_INCOMPLETE);
	}
	if (d->has_best && r->iter == d->best_iter) {
		*role = R_BEST;
		return glyph(GL_PT_BEST);
	}
	if (r->status == RS_REVERT || r->status == RS_DROP) {
		*role = R_DIM;
		return glyph(GL_PT_UNDONE);
	}
	return glyph(GL_PT);
}

#define FLAGS_LABEL "flags: "

/* "flags: implausible · implausible_shape: ... at 859.00x is above 3x":
 * the flags, and which rule fired with its number. */
static void flags_text(const struct wb_verdict *v, struct sb *out)
{
	sb_addf(out, FLAGS_LABEL "%s", v->flags);
	if (v->why)
		sb_addf(out, " \xc2\xb7 %s", v->why);
}

/* Rows the last run's verdict takes: the verdict, the confirm, then the
 * flags and their rules on up to four rows. */
static int verdict_rows(const struct wb_data *d, int inner)
{
	const struct wb_verdict *v = &d->last;
	if (!v->have)
		return 0;
	int rows = 1 + (v->confirm ? 1 : 0);
	if (v->flags) {
		struct sb s = SB_INIT;
		flags_text(v, &s);
		int n = draw_wrapped(NULL, 0, 0, inner, 4, s.buf, 0);
		rows += n > 0 ? n : 1;
		sb_release(&s);
	}
	return rows;
}

static void draw_last_verdict(const struct wb_data *d, WINDOW *w, int y, int inner, int rows)
{
	const struct wb_verdict *v = &d->last;
	char label[32];
	snprintf(label, sizeof(label), "last iter %d: ", v->iter);
	draw_verdict(w, y++, 1, inner, label, v);
	if (v->confirm)
		draw_text(w, y++, 1, inner, v->confirm, theme_attr(R_DIM));
	if (v->flags) {
		struct sb s = SB_INIT;
		sb_init(&s);
		flags_text(v, &s);
		draw_wrapped(w, y, 1, inner, rows - (v->confirm ? 2 : 1), s.buf, theme_attr(R_REVERT));
		sb_release(&s);
	}
}

/* One y label, right-aligned in the label column, as fmt_bench writes it. */
static void y_label(WINDOW *w, int y, int ylab, double ms, enum role role)
{
	struct sb s = SB_INIT;
	sb_init(&s);
	fmt_bench(ms, &s);
	char lab[64];
	snprintf(lab, sizeof(lab), "%*s", ylab, s.buf);
	if ((int)s.len <= ylab) /* a cut label would read as another number */
		draw_text(w, y, 1, ylab, lab, theme_attr(role));
	sb_release(&s);
}

static void draw_chart(struct view *v, WINDOW *w, int inner, int h)
{
	const struct wb_data *d = v->d;
	int vr = verdict_rows(d, inner), br = 0;
	double lo = INFINITY, hi = -INFINITY;
	size_t n = d->nrows, first = 0;
	struct sb s = SB_INIT;

	sb_init(&s);
	if (d->has_best) {
		sb_adds(&s, "best ");
		fmt_bench(d->best_ms, &s);
		sb_addf(&s, " ms @ iter %d", d->best_iter);
		if (d->best_unconfirmed)
			sb_adds(&s, " (unconfirmed)");
		/* The band beside the best, or under it when the pane is narrow:
		 * the figure is never cut. */
		if (d->band_text) {
			int bw = sanitize_width(s.buf, s.len) + 3 + sanitize_width(d->band_text, strlen(d->band_text));
			if (bw <= inner)
				sb_addf(&s, " \xc2\xb7 %s", d->band_text);
			else
				br = 1;
		}
	} else {
		sb_adds(&s, "no best yet (no base or kept row with a bench)");
	}
	draw_text(w, 1, 1, inner, s.buf, theme_attr(d->has_best ? R_BEST : R_DIM));
	if (br)
		draw_text(w, 2, 1, inner, d->band_text, theme_attr(R_BAND));
	/* the y labels are written as the bench is everywhere (fmt_bench), in a
	 * column as wide as the widest of them: a label is never cut to
	 * another number.  The labels are of the rows the chart can show (at
	 * most a pane's width of them, the newest or around the selection),
	 * the best and the band. */
	int ylab = YLAB;
	size_t from = n > (size_t)inner ? n - (size_t)inner : 0;
	if (d->has_sel && d->sel_row < from)
		from = d->sel_row > (size_t)inner ? d->sel_row - (size_t)inner : 0;
	for (size_t i = from; i < n + 3; i++) {
		double b = i < n	  ? d->rows[i].bench_ms
			   : i == n	  ? (d->has_best ? d->best_ms : NAN)
			   : i == n + 1 ? d->band_lo
					  : d->band_hi;
		if (!isfinite(b))
			continue;
		sb_reset(&s);
		fmt_bench(b, &s);
		ylab = (int)s.len > ylab ? (int)s.len : ylab;
	}
	int ch = h - 4 - vr - br, pw = inner - ylab - 1;
	if (vr && h - 2 >= 1 + br + vr)
		draw_last_verdict(d, w, 2 + br, inner, vr);
	if (ch < 2 || pw < 4)
		goto out;

	/* the newest rows, or the ones around the timeline's selection when
	 * it is older than they are */
	size_t end = n;
	if (n > (size_t)pw) {
		first = n - (size_t)pw;
		if (d->has_sel && d->sel_row < first) {
			first = d->sel_row > (size_t)pw / 2 ? d->sel_row - (size_t)pw / 2 : 0;
			end = first + (size_t)pw;
		}
	}
	for (size_t i = first; i < end; i++) {
		double b = d->rows[i].bench_ms;
		if (!isnan(b)) {
			lo = fmin(lo, b);
			hi = fmax(hi, b);
		}
	}
	if (d->has_best) {
		lo = fmin(lo, d->best_ms);
		hi = fmax(hi, d->best_ms);
	}
	if (!isnan(d->band_lo) && !isnan(d->band_hi)) {
		lo = fmin(lo, d->band_lo);
		hi = fmax(hi, d->band_hi);
	}
	if (!isfinite(lo) || !isfinite(hi)) {
		draw_text(w, 3 + br + vr, 2, inner - 1, "no bench numbers to chart yet", theme_attr(R_DIM));
		goto out;
	}
	if (hi - lo < 1e-9) {
		lo -= 0.05 * (lo > 0 ? lo : 1);
		hi += 0.05 * (hi > 0 ? hi : 1);
	}

	int top = 2 + br + vr, x0 = 1 + ylab + 1;
	const char *bandc = glyph(GL_BAND);
	const char *linec = glyph(GL_BEST_LINE);

	/* Band first, then the best line over it, then the points on top. */
	if (!isnan(d->band_lo) && !isnan(d->band_hi)) {
		int y1 = value_row(d->band_hi, lo, hi, ch), y2 = value_row(d->band_lo, lo, hi, ch);
		wattrset(w, theme_attr(R_BAND));
		for (int y = y1; y <= y2; y++)
			for (int x = 0; x < pw; x++)
				mvwaddstr(w, top + y, x0 + x, bandc);
	}
	int ybest = -1;
	if (d->has_best) {
		ybest = value_row(d->best_ms, lo, hi, ch);
		wattrset(w, theme_attr(R_BEST));
		for (int x = 0; x < pw; x++)
			mvwaddstr(w, top + ybest, x0 + x, linec);
	}
	wattrset(w, A_NORMAL);
	size_t shown = end - first;
	int xsel = -1;
	for (size_t i = first; i < end; i++) {
		const struct log_row *r = &d->rows[i];
		int x = shown > 1 ? (int)((i - first) * (size_t)(pw - 1) / (shown - 1)) : 0;
		if (shown <= (size_t)pw && shown > 1 && (size_t)pw / shown >= 2)
			x = (int)((i - first) * (size_t)(pw / shown));
		bool sel = d->has_sel && i == d->sel_row;
		if (sel)
			xsel = x;
		if (isnan(r->bench_ms))
			continue;
		enum role role;
		const char *g = point_glyph(d, r, &role);
		wattrset(w, theme_attr(sel ? R_SELECTED : role) | (sel ? A_REVERSE : 0));
		mvwaddstr(w, top + value_row(r->bench_ms, lo, hi, ch), x0 + x, g);
	}
	wattrset(w, A_NORMAL);

	/* Y labels: top, best, bottom; where the best line falls on the top
	 * or bottom row, that row is labelled the best. */
	if (ybest != 0)
		y_label(w, top, ylab, hi, R_DIM);
	if (ybest != ch - 1)
		y_label(w, top + ch - 1, ylab, lo, R_DIM);
	if (ybest >= 0)
		y_label(w, top + ybest, ylab, d->best_ms, R_BEST);
	/* X axis: first and last iteration shown; the selected one under its
	 * point where it has room between them. */
	if (n > 0) {
		sb_reset(&s);
		sb_addf(&s, "iter %d", d->rows[first].iter);
		int fw = (int)s.len;
		draw_text(w, top + ch, x0, pw, s.buf, theme_attr(R_DIM));
		sb_reset(&s);
		sb_addf(&s, "iter %d", d->rows[end - 1].iter);
		int lw = (int)s.len;
		if (pw > lw + 8)
			draw_text(w, top + ch, x0 + pw - lw, lw, s.buf, theme_attr(R_DIM));
		if (xsel >= 0 && d->sel_row != first && d->sel_row != end - 1) {
			sb_reset(&s);
			sb_addf(&s, "^%d", d->rows[d->sel_row].iter);
			int sw = (int)s.len, sx = xsel;
			if (sx + sw > pw - lw - 1)
				sx = pw - lw - 1 - sw;
			if (sx <= fw)
				sx = fw + 1;
			if (sx + sw <= pw - lw - 1)
				draw_text(w, top + ch, x0 + sx, sw, s.buf, theme_attr(R_KEY));
		}
	}
out:
	sb_release(&s);
}

/* Per shape: the baseline's time, the best's, and the speedup between
 * them.  Only rows that may be a best count (a base or keep row whose gate
 * passed with a bench number): a dropped, reverted or failed run's time is
 * never shown as where the loop stands. */
/* The row whose roofline the per-shape table shows: the timeline's
 * selection, else the newest row; -1 when its run has none. */
static long roof_row(const struct wb_data *d)
{
	if (!d->nrows || !d->roof_peaks || d->nroof_peaks != d->nrows)
		return -1;
	size_t r = d->has_sel && d->sel_row < d->nrows ? d->sel_row : d->nrows - 1;
	for (size_t i = 0; i < d->nshapes; i++)
		if (d->shapes[i].roof && d->shapes[i].roof[r].have)
			return (long)r;
	return -1;
}

static void draw_shapes(struct view *v, WINDOW *w, int inner, int h)
{
	const struct wb_data *d = v->d;
	struct sb s = SB_INIT;
	int name_w = inner - 2 * 9 - 8;
	int vr = verdict_rows(d, inner);
	long rr = roof_row(d);
	/* with a roofline: a caption, and a second line under each shape */
	int cap = rr >= 0 ? 1 : 0, per = rr >= 0 ? 2 : 1;

	if (h - 4 - vr - cap < per)
		vr = 0;
	if (h - 4 - vr - cap < per)
		cap = 0, per = 1, rr = -1;
	/* two lines a shape: the spare line above the verdict goes to them */
	v->body_h = rr >= 0 ? (h - 3 - cap - (vr ? vr + 1 : 0)) / per : h - 4 - vr;
	view_clamp(v);
	if (vr)
		draw_last_verdict(d, w, h - 1 - vr, inner, vr);
	if (d->nshapes == 0) {
		draw_wrapped(w, 1, 1, inner, h - 2 - vr,
			     "per-shape: no per-shape numbers for this log (OPT_LOG.md holds the "
			     "geomean; the database holds each shape once verify has run, and a "
			     "Notes column may give them, SHAPE: ms a line)",
			     theme_attr(R_DIM));
		return;
	}
	if (name_w < 6)
		name_w = 6;
	sb_init(&s);
	sanitize_cell("Shape", name_w, false, &s);
	sanitize_cell("base", 9, true, &s);
	sanitize_cell("best", 9, true, &s);
	sanitize_cell("speedup", 8, true, &s);
	draw_text(w, 1 + cap, 1, inner, s.buf, theme_attr(R_HEADER));
	if (cap) {
		sb_reset(&s);
		sb_addf(&s, "roofline of iter %d \xc2\xb7 %s peaks", d->rows[rr].iter,
			d->roof_peaks[rr] ? d->roof_peaks[rr] : "device");
		draw_text(w, 1, 1, inner, s.buf, theme_attr(R_DIM));
	}
	for (int y = 0; y < v->body_h; y++) {
		size_t i = (size_t)(v->top + y);
		if (i >= d->nshapes)
			break;
		const struct wb_shape *sh = &d->shapes[i];
		double base = NAN, best = NAN;
		for (size_t k = 0; k < d->nrows; k++) {
			double m = sh->ms[k];
			if (isnan(m) || !log_row_can_be_best(&d->rows[k]))
				continue;
			if (isnan(base) && d->rows[k].status == RS_BASE)
				base = m;
			/* the best row's own time, not the fastest time seen */
			if (d->has_best && d->rows[k].iter == d->best_iter)
				best = m;
		}
		/* the workspace's one comparison when there is one (the speedup
		 * report final claims); a plain log's own times otherwise */
		double speedup = base / best;
		if (sh->speedup > 0) {
			base = sh->base_ms;
			best = sh->best_ms;
			speedup = sh->speedup;
		}
		char num[32];
		sb_reset(&s);
		sanitize_cell(sh->name, name_w, false, &s);
		double vals[2] = {base, best};
		for (int k = 0; k < 2; k++) {
			if (isnan(vals[k]))
				snprintf(num, sizeof(num), "\xe2\x80\x94");
			else
				snprintf(num, sizeof(num), "%.3f", vals[k]);
			sanitize_cell(num, 9, true, &s);
		}
		if (isnan(base) || isnan(best) || best <= 0 || !isfinite(speedup))
			snprintf(num, sizeof(num), "\xe2\x80\x94");
		else
			snprintf(num, sizeof(num), "%.2fx", speedup);
		sanitize_cell(num, 8, true, &s);
		attr_t a = (v->focused && (int)i == v->sel) ? theme_attr(R_SELECTED) : A_NORMAL;
		int y0 = 2 + cap + y * per;
		draw_text(w, y0, 1, inner, s.buf, a);
		if (rr >= 0 && sh->roof && sh->roof[rr].have) {
			sb_reset(&s);
			fmt_roof(&sh->roof[rr], inner - 2, &s);
			draw_text(w, y0 + 1, 3, inner - 2, s.buf,
				  theme_attr(sh->roof[rr].impossible ? R_FAIL : R_DIM));
		}
	}
	sb_release(&s);
}

static void best_draw(struct view *v, WINDOW *w)
{
	int h = getmaxy(w), wd = getmaxx(w), inner = wd - 2;

	v->h = h, v->w = wd;
	werase(w);
	draw_frame(w, v->mode ? "Best \xc2\xb7 per shape (s: chart)" : "Best \xc2\xb7 bench per iteration (s: per shape)",
		   v->focused);
	if (h < 4 || inner < 10)
		return;
	if (v->mode)
		draw_shapes(v, w, inner, h);
	else
		draw_chart(v, w, inner, h);
}

static void best_item_text(const struct view *v, int i, struct sb *out)
{
	sb_adds(out, v->d->shapes[i].name ? v->d->shapes[i].name : "");
}

static int best_action(struct view *v, enum action a)
{
	if (a == ACT_MODE) {
		v->mode = !v->mode;
		v->sel = v->top = 0;
		return HANDLED | REDRAW;
	}
	return 0;
}

const struct view_ops best_view = {
	.name = "best",
	.draw = best_draw,
	.nitems = best_nitems,
	.item_text = best_item_text,
	.action = best_action,
};
