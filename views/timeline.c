/*
 * timeline — the iteration table: Iter, Direction, Gate, Bench, vs best,
 * Status, one row per logged iteration, coloured by status.  A failed gate
 * and an incomplete run carry a marker in the first column as well as a
 * role, so they stay unmistakable without colour.
 */
#include "views/view.h"

#include "core/sb.h"
#include "views/sanitize.h"

#include <string.h>

#include <stdio.h>

#define W_ITER 4 /* at least: wider when an iteration number needs it */
#define W_GATE 11
#define W_BENCH 8
#define W_VS 7
#define W_STATUS 6
#define FIXED(wi) (1 + (wi) + 1 + 1 + W_GATE + 1 + W_BENCH + 1 + W_VS + 1 + W_STATUS)

/* The Iter column's width: the widest iteration number whole (a log of
 * 20,000 rows reads 19999, never 199…). */
static int iter_width(const struct wb_data *d)
{
	int top = 0, wi = 1;
	for (size_t i = 0; i < d->nrows; i++)
		top = d->rows[i].iter > top ? d->rows[i].iter : top;
	for (; top >= 10; top /= 10)
		wi++;
	return wi > W_ITER ? wi : W_ITER;
}

static int tl_nitems(const struct view *v)
{
	return (int)v->d->nrows;
}

static const char *marker(const struct wb_data *d, const struct log_row *r)
{
	if (r->gate_v == GATE_FAIL || r->gate_v == GATE_ERROR)
		return glyph(GL_ROW_FAIL);
	if (r->gate_v == GATE_INCOMPLETE)
		return glyph(GL_ROW_INCOMPLETE);
	if (d->has_best && r->iter == d->best_iter)
		return glyph(GL_ROW_BEST);
	return " ";
}

/* The row as one line of exactly `inner` cells (clean text). */
static void tl_format(const struct wb_data *d, const struct log_row *r, int inner, int wi,
		      struct sb *out)
{
	struct sb cell = SB_INIT;
	char num[16];
	int dir = inner - FIXED(wi);

	if (dir < 4)
		dir = 4;
	sb_init(&cell);
	sb_adds(out, marker(d, r));
	snprintf(num, sizeof(num), "%d", r->iter);
	sanitize_cell(num, wi, true, out);
	sb_addc(out, ' ');
	sanitize_cell(r->direction, dir, false, out);
	sb_addc(out, ' ');
	fmt_gate(r, &cell);
	sanitize_cell(cell.buf, W_GATE, false, out);
	sb_addc(out, ' ');
	sb_reset(&cell);
	fmt_bench(r->bench_ms, &cell);
	sanitize_cell(cell.buf, W_BENCH, true, out);
	sb_addc(out, ' ');
	sb_reset(&cell);
	fmt_vs_best(r->vs_best, &cell);
	sanitize_cell(cell.buf, W_VS, true, out);
	sb_addc(out, ' ');
	/* "keep?": kept --unconfirmed, without a win beyond noise */
	sanitize_cell(r->status == RS_KEEP && r->unconfirmed ? glyph(GL_KEEP_UNCONFIRMED)
							     : row_status_name(r->status),
		      W_STATUS, false, out);
	sb_release(&cell);
}

static void tl_header(int inner, int wi, struct sb *out)
{
	int dir = inner - FIXED(wi);

	if (dir < 4)
		dir = 4;
	sb_addc(out, ' ');
	sanitize_cell("Iter", wi, true, out);
	sb_addc(out, ' ');
	sanitize_cell("Direction", dir, false, out);
	sb_addc(out, ' ');
	sanitize_cell("Gate", W_GATE, false, out);
	sb_addc(out, ' ');
	sanitize_cell("Bench ms", W_BENCH, true, out);
	sb_addc(out, ' ');
	sanitize_cell("vs best", W_VS, true, out);
	sb_addc(out, ' ');
	sanitize_cell("Status", W_STATUS, false, out);
}

static void tl_draw(struct view *v, WINDOW *w)
{
	int h = getmaxy(w), wd = getmaxx(w), inner = wd - 2;
	struct sb line = SB_INIT, title = SB_INIT;

	v->h = h, v->w = wd;
	v->body_h = h - 3;
	view_clamp(v);
	werase(w);
	sb_init(&title);
	if (v->d->filter)
		sb_addf(&title, "Timeline \xc2\xb7 %zu of %zu iterations \xc2\xb7 filter: %s",
			v->d->nrows, v->d->nrows_all, v->d->filter);
	else
		sb_addf(&title, "Timeline \xc2\xb7 %zu iteration%s", v->d->nrows + v->d->nrows_older,
			v->d->nrows + v->d->nrows_older == 1 ? "" : "s");
	draw_frame(w, title.buf, v->focused);
	sb_release(&title);
	if (h < 3 || inner < 8)
		return;
	sb_init(&line);
	int wi = iter_width(v->d);
	tl_header(inner, wi, &line);
	draw_text(w, 1, 1, inner, line.buf, theme_attr(R_HEADER));
	if (v->d->nrows == 0) {
		/* the due step, as the status line says it: the full words when
		 * they fit */
		const char *due = v->d->due;
		sb_reset(&line);
		if (v->d->readonly)
			sb_adds(&line, "no rows in this log");
		else
			sb_addf(&line, "no iterations yet%s%s", due ? ": " : "", due ? due : "");
		if (!v->d->readonly && v->d->due_brief &&
		    sanitize_width(line.buf, line.len) > inner - 1) {
			sb_reset(&line);
			sb_addf(&line, "no iterations yet: %s", v->d->due_brief);
		}
		draw_text(w, 2, 2, inner - 1, line.buf, theme_attr(R_DIM));
	}
	for (int y = 0; y < v->body_h; y++) {
		int i = v->top + y;
		if (i >= (int)v->d->nrows)
			break;
		const struct log_row *r = &v->d->rows[i];
		attr_t a = theme_attr(theme_row_role(r));
		if (i == v->sel && v->focused)
			a = theme_attr(R_SELECTED) | (a & A_BOLD);
		sb_reset(&line);
		tl_format(v->d, r, inner, wi, &line);
		draw_text(w, 2 + y, 1, inner, line.buf, a);
	}
	sb_release(&line);
}

static void tl_item_text(const struct view *v, int i, struct sb *out)
{
	const struct log_row *r = &v->d->rows[i];

	sb_addf(out, "%d ", r->iter);
	sanitize_line(r->direction ? r->direction : "", r->direction ? strlen(r->direction) : 0,
		      out);
	sb_addc(out, ' ');
	fmt_gate(r, out);
	sb_addf(out, " %s", row_status_name(r->status));
}

const struct view_ops timeline_view = {
	.name = "timeline",
	.draw = tl_draw,
	.nitems = tl_nitems,
	.item_text = tl_item_text,
};
