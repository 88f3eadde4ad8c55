/*
 * notes — what the importer or the start-up reconciliation found: problems
 * in a hand-written OPT_LOG.md with their line numbers, repairs offered.
 * Listed, never hidden.
 */
#include "views/view.h"

#include "core/sb.h"

static int notes_nitems(const struct view *v)
{
	return (int)v->d->nnotes;
}

static void notes_draw(struct view *v, WINDOW *w)
{
	pager_draw(v, w, "Import problems (Esc back)", v->d->notes, v->d->nnotes);
}

static void notes_item_text(const struct view *v, int i, struct sb *out)
{
	sb_adds(out, v->d->notes[i].text ? v->d->notes[i].text : "");
}

const struct view_ops notes_view = {
	.name = "notes",
	.draw = notes_draw,
	.nitems = notes_nitems,
	.item_text = notes_item_text,
	.hscroll = true,
};
