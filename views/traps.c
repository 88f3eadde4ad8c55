/*
 * traps — the trap checklist: one line per trap, [ ] unchecked, [x]
 * checked, [!] hit in this iteration; the focused pane shows the selected
 * trap's Fact, Why and How to apply below the list.
 */
#include "views/view.h"

#include "core/sb.h"
#include "views/sanitize.h"

#include <string.h>

static int traps_nitems(const struct view *v)
{
	return (int)v->d->ntraps;
}

static const char *box_of(enum trap_state s)
{
	return glyph(s == TRAP_HIT ? GL_TRAP_HIT : s == TRAP_CHECKED ? GL_TRAP_CHECKED : GL_TRAP_UNCHECKED);
}

static void traps_draw(struct view *v, WINDOW *w)
{
	int h = getmaxy(w), wd = getmaxx(w), inner = wd - 2;
	const struct wb_data *d = v->d;
	struct sb s = SB_INIT, title = SB_INIT;
	int hit = 0, checked = 0;

	v->h = h, v->w = wd;
	for (size_t i = 0; i < d->ntraps; i++) {
		hit += d->traps[i].state == TRAP_HIT;
		checked += d->traps[i].state == TRAP_CHECKED;
	}
	werase(w);
	sb_init(&title);
	sb_addf(&title, "Traps \xc2\xb7 %d/%zu checked", checked, d->ntraps);
	if (hit)
		sb_addf(&title, " \xc2\xb7 %d hit", hit);
	draw_frame(w, title.buf, v->focused);
	sb_release(&title);
	if (h < 3 || inner < 6)
		return;
	if (d->ntraps == 0) {
		draw_text(w, 1, 2, inner - 1, "no TRAPS.md", theme_attr(R_DIM));
		v->body_h = h - 2;
		return;
	}
	/* With focus, the lower part explains the selected trap. */
	int list_h = h - 2;
	bool explain = v->focused && h >= 10;
	if (explain)
		list_h = (h - 2) / 2 > 3 ? (h - 2) / 2 : 3;
	v->body_h = list_h;
	view_clamp(v);
	sb_init(&s);
	for (int y = 0; y < list_h; y++) {
		int i = v->top + y;
		if (i >= (int)d->ntraps)
			break;
		const struct trap *t = &d->traps[i];
		enum role role = t->state == TRAP_HIT ? R_FAIL : t->state == TRAP_CHECKED ? R_KEEP : R_NORMAL;
		attr_t a = theme_attr(role);
		if (v->focused && i == v->sel)
			a = theme_attr(R_SELECTED) | (a & A_BOLD);
		sb_reset(&s);
		sb_adds(&s, box_of(t->state));
		sb_addc(&s, ' ');
		sb_adds(&s, t->title ? t->title : t->id ? t->id : "(untitled)");
		draw_text(w, 1 + y, 1, inner, s.buf, a);
	}
	if (explain && v->sel < (int)d->ntraps) {
		const struct trap *t = &d->traps[v->sel];
		int y = 1 + list_h, left = h - 1 - y;
		const struct {
			const char *label, *text;
		} parts[] = {{"Fact: ", t->fact}, {"Why: ", t->why}, {"How: ", t->how}};
		for (size_t k = 0; k < 3 && left > 0; k++) {
			if (!parts[k].text)
				continue;
			sb_reset(&s);
			sb_adds(&s, parts[k].label);
			sb_adds(&s, parts[k].text);
			int n = draw_wrapped(w, y, 1, inner, left, s.buf, k == 0 ? A_BOLD : A_NORMAL);
			y += n, left -= n;
		}
	}
	sb_release(&s);
}

static void traps_item_text(const struct view *v, int i, struct sb *out)
{
	const struct trap *t = &v->d->traps[i];
	const char *parts[] = {t->id, t->title, t->fact, t->why, t->how};

	for (size_t k = 0; k < 5; k++)
		if (parts[k]) {
			sanitize_line(parts[k], strlen(parts[k]), out);
			sb_addc(out, ' ');
		}
}

const struct view_ops traps_view = {
	.name = "traps",
	.draw = traps_draw,
	.nitems = traps_nitems,
	.item_text = traps_item_text,
};
