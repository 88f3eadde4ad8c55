/*
 * help — the key reference, generated from the one action table
 * (views/actions.h), so it cannot drift from the keymap.
 */
#include "views/view.h"

#include "core/sb.h"

#include <stdio.h>
#include <string.h>

static struct wb_line lines[ACT_COUNT + 8];
static size_t nlines;

static void build(void)
{
	struct sb s = SB_INIT;

	if (nlines)
		return;
	lines[nlines++] = (struct wb_line){xstrdup("One change, one verify, one log row, one commit."), R_NORMAL};
	lines[nlines++] = (struct wb_line){xstrdup(""), R_NORMAL};
	lines[nlines++] = (struct wb_line){xstrdup("keys            action"), R_HEADER};
	for (int i = 0; i < ACT_COUNT - 1; i++) {
		const struct action_info *a = &action_table[i];
		sb_init(&s);
		for (const int *k = a->keys; *k; k++) {
			const char *name = action_key_name(*k);
			char one[16];
			snprintf(one, sizeof(one), " %s ", name);
			/* Enter has three codes; name it once. */
			struct sb pad = SB_INIT;
			sb_init(&pad);
			sb_addf(&pad, " %s ", s.buf);
			bool dup = strstr(pad.buf, one) != NULL;
			sb_release(&pad);
			if (dup)
				continue;
			if (s.len)
				sb_adds(&s, " ");
			sb_adds(&s, name);
		}
		do
			sb_addc(&s, ' ');
		while (s.len < 16);
		sb_addf(&s, "%s", a->help);
		lines[nlines++] = (struct wb_line){sb_detach(&s), R_NORMAL};
	}
	sb_release(&s);
}

static int help_nitems(const struct view *v)
{
	build();
	return (int)nlines;
}

static void help_draw(struct view *v, WINDOW *w)
{
	build();
	pager_draw(v, w, "Help (Esc back)", lines, nlines);
}

static void help_item_text(const struct view *v, int i, struct sb *out)
{
	build();
	sb_adds(out, lines[i].text);
}

const struct view_ops help_view = {
	.name = "help",
	.draw = help_draw,
	.nitems = help_nitems,
	.item_text = help_item_text,
	.hscroll = true,
};
