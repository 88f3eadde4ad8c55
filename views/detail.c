/*
 * detail — one iteration in full: per-shape table, gate scope, environment,
 * probe readings, commit, diff stat and diff, lint findings, traps hit.
 * The program builds the lines (from the engine and git) into
 * wb_data.detail and the row's verdict into wb_data.sel; this pane pages
 * through the lines under the verdict and its flags, which stay put.
 */
#include "views/view.h"

#include "core/sb.h"
#include "views/sanitize.h"

#include <math.h>
#include <stdlib.h>

static int detail_nitems(const struct view *v)
{
	return (int)v->d->ndetail;
}

/* The row's verdict and flags stay on top while the rest scrolls. */
static void detail_draw(struct view *v, WINDOW *w)
{
	const struct wb_verdict *vd = &v->d->sel;
	int inner = getmaxx(w) - 2;
	int pinned = vd->have ? (vd->flags ? 2 : 1) : 0;

	if (getmaxy(w) - 2 - pinned < 1)
		pinned = 0;
	pager_draw_pinned(v, w, "Iteration detail (Esc back)", pinned, v->d->detail, v->d->ndetail);
	if (!pinned)
		return;
	int used = draw_verdict(w, 1, 1, inner, "Verdict against the best: ", vd);
	if (vd->confirm) {
		struct sb c = SB_INIT;
		sb_init(&c);
		sb_addf(&c, " \xc2\xb7 %s", vd->confirm);
		draw_text(w, 1, 1 + used, inner - used, c.buf, theme_attr(R_NORMAL));
		sb_release(&c);
	}
	if (pinned > 1) {
		struct sb s = SB_INIT;
		sb_init(&s);
		sb_addf(&s, "Flags: %s", vd->flags);
		draw_text(w, 2, 1, inner, s.buf, theme_attr(R_REVERT));
		sb_release(&s);
	}
}

static void add_line(struct wb_line **lines, size_t *n, struct sb *s, enum role role)
{
	struct wb_line *v = realloc(*lines, (*n + 1) * sizeof(**lines));
	if (!v)
		abort();
	*lines = v;
	v[(*n)++] = (struct wb_line){sb_detach(s), role};
}

/* Cells of the roofline table: 78 in all, the inside of an 80-column pane. */
enum { RW_NAME = 27, RW_BW = 11, RW_SHARE = 8, RW_RATE = 13, RW_BOUND = 11 };

void detail_roof_lines(const char *peaks, char *const *names, const struct wb_roof *roof,
		       size_t nroof, struct wb_line **lines, size_t *n)
{
	struct sb s = SB_INIT, c = SB_INIT;
	if (!nroof)
		return;
	sb_init(&s);
	sb_init(&c);
	add_line(lines, n, &s, R_NORMAL);
	sb_init(&s);
	sb_addf(&s, "Roofline (%s peaks; the run's verdict recorded it)",
		peaks && *peaks ? peaks : "the device's");
	add_line(lines, n, &s, R_HEADER);
	sb_init(&s);
	sanitize_cell("Shape", RW_NAME, false, &s);
	sanitize_cell("bandwidth", RW_BW, true, &s);
	sanitize_cell("of peak", RW_SHARE, true, &s);
	sanitize_cell("FLOP rate", RW_RATE, true, &s);
	sanitize_cell("of peak", RW_SHARE, true, &s);
	sanitize_cell(" bound", RW_BOUND, false, &s);
	add_line(lines, n, &s, R_HEADER);
	for (size_t i = 0; i < nroof; i++) {
		const struct wb_roof *r = &roof[i];
		double v[4] = {r->bw, r->bw_share, r->rate, r->flop_share};
		static const int wd[4] = {RW_BW, RW_SHARE, RW_RATE, RW_SHARE};
		sb_init(&s);
		sanitize_cell(names[i] ? names[i] : "", RW_NAME, false, &s);
		for (int k = 0; k < 4; k++) {
			sb_reset(&c);
			if (k % 2 && isfinite(v[k]))
				sb_addf(&c, "%.0f%%", 100 * v[k]);
			else if (k % 2)
				sb_adds(&c, "\xe2\x80\x94");
			else
				fmt_rate(v[k], k ? "FLOP/s" : "B/s", false, &c);
			sanitize_cell(c.buf, wd[k], true, &s);
		}
		sb_reset(&c);
		sb_addf(&c, " %s", r->impossible ? "impossible" : r->bound[0] ? r->bound : "\xe2\x80\x94");
		sanitize_cell(c.buf, RW_BOUND, false, &s);
		add_line(lines, n, &s, r->impossible ? R_FAIL : R_NORMAL);
	}
	sb_release(&c);
}

static void detail_item_text(const struct view *v, int i, struct sb *out)
{
	sb_adds(out, v->d->detail[i].text ? v->d->detail[i].text : "");
}

const struct view_ops detail_view = {
	.name = "detail",
	.draw = detail_draw,
	.nitems = detail_nitems,
	.item_text = detail_item_text,
	.hscroll = true,
};
