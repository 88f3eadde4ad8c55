/*
 * detail — one iteration in full: per-shape table, gate scope, environment,
 * probe readings, commit, diff stat and diff, lint findings, traps hit.
 * The program builds the lines (from the engine and git) into
 * wb_data.detail; this pane only pages through them.
 */
#include "views/view.h"

#include "core/sb.h"

static int detail_nitems(const struct view *v)
{
	return (int)v->d->ndetail;
}

static void detail_draw(struct view *v, WINDOW *w)
{
	pager_draw(v, w, "Iteration detail (Esc back)", v->d->detail, v->d->ndetail);
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
};
