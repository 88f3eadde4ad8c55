/*
 * help — the key reference, generated from the one action table
 * (views/actions.h), so it cannot drift from the keymap; then the legend:
 * every mark the panes draw (from the glyph table they draw from), the
 * loop's states in the engine's words, the noise band, and what the live
 * pane does with lines wider than itself.  Built for the pane's width, so
 * the prose wraps.
 */
#include "views/view.h"

#include "core/sb.h"
#include "views/sanitize.h"

#include <stdio.h>
#include <string.h>

#define KEYS_W 16 /* the keys column */
#define MARK_W 16 /* "timeline  keep?" */

static struct wb_line *lines;
static size_t nlines, cap;
static int built_for = -1;
static bool built_ascii;

static void add(enum role role, const char *text)
{
	if (nlines == cap) {
		cap = cap ? cap * 2 : 64;
		lines = xrealloc(lines, cap * sizeof(*lines));
	}
	lines[nlines++] = (struct wb_line){xstrdup(text), role};
}

/* text after a first-line lead, wrapped at width with the continuation
 * lines indented to the lead's width. */
static void add_wrapped(enum role role, const char *lead, const char *text, int width)
{
	struct sb line = SB_INIT;
	int indent = sanitize_width(lead, strlen(lead));
	const char *p = text;

	sb_init(&line);
	sb_adds(&line, lead);
	int used = indent;
	if (width < indent + 20)
		width = indent + 20; /* too narrow to wrap well: the pane scrolls sideways */
	while (*p) {
		size_t n = strcspn(p, " ");
		int ww = sanitize_width(p, n);
		if (used > indent && used + 1 + ww > width) {
			add(role, line.buf);
			sb_reset(&line);
			for (int k = 0; k < indent; k++)
				sb_addc(&line, ' ');
			used = indent;
		}
		if (used > indent) {
			sb_addc(&line, ' ');
			used++;
		}
		sb_add(&line, p, n);
		used += ww;
		p += n;
		while (*p == ' ')
			p++;
	}
	add(role, line.buf);
	sb_release(&line);
}

static void keys(void)
{
	struct sb s = SB_INIT;

	add(R_HEADER, "keys            action");
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
		while (s.len < KEYS_W);
		sb_addf(&s, "%s", a->help);
		add(R_NORMAL, s.buf);
		sb_release(&s);
	}
}

static void marks(int width)
{
	struct sb lead = SB_INIT;

	add(R_HEADER, "marks           what they say");
	sb_init(&lead);
	for (int g = 0; g < GL_NGLYPHS; g++) {
		sb_reset(&lead);
		sb_addf(&lead, "%-9s ", glyph_table[g].pane);
		sb_adds(&lead, glyph(g));
		while (sanitize_width(lead.buf, lead.len) < MARK_W)
			sb_addc(&lead, ' ');
		add_wrapped(R_NORMAL, lead.buf, glyph_table[g].meaning, width);
	}
	sb_release(&lead);
}

static void states(int width)
{
	char lead[32];

	add(R_HEADER, "states          (the status line names the one the loop is in)");
	for (int s = ST_NO_CONTRACT; s <= ST_STOPPING; s++) {
		const char *n = loop_state_name(s);
		size_t i = 0;
		for (; n[i] && i < 15; i++)
			lead[i] = (char)(n[i] >= 'a' && n[i] <= 'z' ? n[i] - 32 : n[i]);
		for (; i < KEYS_W; i++)
			lead[i] = ' ';
		lead[i] = '\0';
		add_wrapped(R_NORMAL, lead, loop_state_meaning(s), width);
	}
}

static void build(int width)
{
	if (built_for == width && built_ascii == sanitize_is_ascii())
		return;
	wb_lines_free(lines, nlines);
	lines = NULL;
	nlines = cap = 0;
	built_for = width;
	built_ascii = sanitize_is_ascii();
	add(R_NORMAL, "One change, one verify, one log row, one commit.");
	add(R_NORMAL, "");
	keys();
	add(R_NORMAL, "");
	marks(width);
	add(R_NORMAL, "");
	states(width);
	add(R_NORMAL, "");
	add(R_HEADER, "the noise band");
	add_wrapped(R_NORMAL, "",
		    "\"noise \xc2\xb1" "1.5%\" beside the best is the band around the best's bench: two "
		    "sigma either side, sigma being how much one run of the same kernel differs from "
		    "the next (in log space, pooled over the best's repeated runs and every other "
		    "kernel's, averaged over the shapes). The chart shades it. \"(assumed)\": no "
		    "kernel has repeated runs yet, so 2% a run is assumed; optloop noise measures it. "
		    "A change is a win only when it clears the threshold (3%, or the contract's) by "
		    "more than the noise. optloop status prints the same figure.",
		    width);
	add(R_NORMAL, "");
	add(R_HEADER, "wide output");
	add_wrapped(R_NORMAL, "",
		    "The verify output's lines wider than the pane are condensed to fit: the blank "
		    "gaps between a table's columns shrink and, if need be, a run of text gives way "
		    "to \xe2\x80\xa6, so the ms and speedup columns stay on screen. Right (or >) shows "
		    "the lines as printed, scrolled sideways; Left (or <) goes back. The details, "
		    "this help and the problems list scroll sideways the same way.",
		    width);
}

/* The width the text is built for: the pane's, once it has been drawn. */
static int width_of(const struct view *v)
{
	return v->w > 2 ? v->w - 2 : 78;
}

static int help_nitems(const struct view *v)
{
	build(width_of(v));
	return (int)nlines;
}

static void help_draw(struct view *v, WINDOW *w)
{
	build(getmaxx(w) - 2);
	pager_draw(v, w, "Help (Esc back)", lines, nlines);
}

static void help_item_text(const struct view *v, int i, struct sb *out)
{
	build(width_of(v));
	if ((size_t)i < nlines)
		sb_adds(out, lines[i].text);
}

const struct view_ops help_view = {
	.name = "help",
	.draw = help_draw,
	.nitems = help_nitems,
	.item_text = help_item_text,
	.hscroll = true,
};
