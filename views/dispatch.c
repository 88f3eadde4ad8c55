/*
 * dispatch — the dispatch table: which entry point each shape bucket takes,
 * with the measured baseline and candidate and the iterations that
 * measured them; the focused pane shows the selected row's reason.
 */
#include "views/view.h"

#include "core/sb.h"
#include "views/sanitize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int disp_nitems(const struct view *v)
{
	return (int)v->d->ndisp;
}

static void num_cell(double x, const char *fmt, int cells, struct sb *out)
{
	char buf[32];

	if (isnan(x))
		snprintf(buf, sizeof(buf), "\xe2\x80\x94");
	else
		snprintf(buf, sizeof(buf), fmt, x);
	sanitize_cell(buf, cells, true, out);
}

static void disp_draw(struct view *v, WINDOW *w)
{
	int h = getmaxy(w), wd = getmaxx(w), inner = wd - 2;
	const struct wb_data *d = v->d;
	struct sb s = SB_INIT;
	int flex = inner - (8 + 8 + 8 + 3);
	int wb = flex / 2, we = flex - wb;

	v->h = h, v->w = wd;
	werase(w);
	draw_frame(w, "Dispatch", v->focused);
	if (h < 3 || inner < 20)
		return;
	if (d->ndisp == 0) {
		draw_text(w, 1, 2, inner - 1, "no dispatch.md rows", theme_attr(R_DIM));
		v->body_h = h - 2;
		return;
	}
	bool explain = v->focused && h >= 8;
	v->body_h = h - 3 - (explain ? 2 : 0);
	view_clamp(v);
	sb_init(&s);
	sanitize_cell("Bucket", wb, false, &s);
	sb_addc(&s, ' ');
	sanitize_cell("Entry", we, false, &s);
	sb_addc(&s, ' ');
	sanitize_cell("Base", 8, true, &s);
	sanitize_cell("Cand", 8, true, &s);
	sanitize_cell("Speedup", 8, true, &s);
	draw_text(w, 1, 1, inner, s.buf, theme_attr(R_HEADER));
	for (int y = 0; y < v->body_h; y++) {
		int i = v->top + y;
		if (i >= (int)d->ndisp)
			break;
		const struct dispatch_row *r = &d->disp[i];
		sb_reset(&s);
		sanitize_cell(r->bucket, wb, false, &s);
		sb_addc(&s, ' ');
		sanitize_cell(r->entry, we, false, &s);
		sb_addc(&s, ' ');
		num_cell(r->base_ms, "%.3f", 8, &s);
		num_cell(r->cand_ms, "%.3f", 8, &s);
		num_cell(r->speedup, "%.2fx", 8, &s);
		attr_t a = (v->focused && i == v->sel) ? theme_attr(R_SELECTED) : A_NORMAL;
		draw_text(w, 2 + y, 1, inner, s.buf, a);
	}
	if (explain && v->sel < (int)d->ndisp) {
		const struct dispatch_row *r = &d->disp[v->sel];
		sb_reset(&s);
		sb_addf(&s, "Why: %s", r->why ? r->why : "\xe2\x80\x94");
		if (r->evidence)
			sb_addf(&s, " (iterations %s)", r->evidence);
		draw_wrapped(w, h - 3, 1, inner, 2, s.buf, A_NORMAL);
	}
	sb_release(&s);
}

static void disp_item_text(const struct view *v, int i, struct sb *out)
{
	const struct dispatch_row *r = &v->d->disp[i];
	const char *parts[] = {r->bucket, r->entry, r->why};

	for (size_t k = 0; k < 3; k++)
		if (parts[k]) {
			sanitize_line(parts[k], strlen(parts[k]), out);
			sb_addc(out, ' ');
		}
}

const struct view_ops dispatch_view = {
	.name = "dispatch",
	.draw = disp_draw,
	.nitems = disp_nitems,
	.item_text = disp_item_text,
};
