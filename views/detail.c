/*
 * detail — one iteration in full: per-shape table, gate scope, environment,
 * probe readings, commit, diff stat and diff, lint findings, traps hit.
 * The program builds the lines (from the engine and git) into
 * wb_data.detail and the row's verdict into wb_data.sel; this pane pages
 * through the lines under the verdict and its flags, which stay put.
 */
#include "views/view.h"

#include "core/sb.h"

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
