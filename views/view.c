/*
 * view — colour roles, common list navigation, searching, and the drawing
 * helpers every pane uses.  Nothing here draws outside the window it is
 * given, and every string reaches curses through the sanitiser.
 */
#include "views/view.h"

#include "core/sb.h"
#include "core/stats.h"
#include "views/sanitize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static attr_t roles[R_NROLES];
static bool colour_on;

/* Monochrome: attributes alone must tell the states apart. */
static const attr_t mono[R_NROLES] = {
	[R_NORMAL] = A_NORMAL,
	[R_TITLE] = A_BOLD,
	[R_TITLE_FOCUS] = A_BOLD | A_REVERSE,
	[R_HEADER] = A_BOLD | A_UNDERLINE,
	[R_SELECTED] = A_REVERSE,
	[R_BASE] = A_NORMAL,
	[R_KEEP] = A_BOLD,
	[R_REVERT] = A_NORMAL,
	[R_DROP] = A_DIM,
	[R_FLOOR] = A_NORMAL,
	[R_FAIL] = A_BOLD | A_UNDERLINE,
	[R_INCOMPLETE] = A_UNDERLINE,
	[R_SUBSET] = A_DIM,
	[R_BEST] = A_BOLD,
	[R_BAND] = A_DIM,
	[R_POINT] = A_BOLD,
	[R_DIM] = A_DIM,
	[R_STATUS] = A_REVERSE,
	[R_MESSAGE] = A_NORMAL,
	[R_ERROR] = A_BOLD,
	[R_PROGRESS] = A_REVERSE,
	[R_KEY] = A_BOLD,
	[R_MATCH] = A_STANDOUT,
};

/* Colour: {foreground, background, extra attributes}; -1 is the default. */
static const struct {
	short fg, bg;
	attr_t extra;
} palette[R_NROLES] = {
	[R_NORMAL] = {-1, -1, 0},
	[R_TITLE] = {COLOR_CYAN, -1, A_BOLD},
	[R_TITLE_FOCUS] = {COLOR_BLACK, COLOR_CYAN, A_BOLD},
	[R_HEADER] = {COLOR_YELLOW, -1, A_BOLD},
	[R_SELECTED] = {COLOR_BLACK, COLOR_WHITE, 0},
	[R_BASE] = {COLOR_BLUE, -1, A_BOLD},
	[R_KEEP] = {COLOR_GREEN, -1, A_BOLD},
	[R_REVERT] = {COLOR_YELLOW, -1, 0},
	[R_DROP] = {-1, -1, A_DIM},
	[R_FLOOR] = {COLOR_CYAN, -1, 0},
	[R_FAIL] = {COLOR_WHITE, COLOR_RED, A_BOLD},
	[R_INCOMPLETE] = {COLOR_MAGENTA, -1, A_BOLD | A_UNDERLINE},
	[R_SUBSET] = {COLOR_YELLOW, -1, A_DIM},
	[R_BEST] = {COLOR_GREEN, -1, A_BOLD},
	[R_BAND] = {COLOR_GREEN, -1, A_DIM},
	[R_POINT] = {COLOR_CYAN, -1, A_BOLD},
	[R_DIM] = {-1, -1, A_DIM},
	[R_STATUS] = {COLOR_BLACK, COLOR_CYAN, 0},
	[R_MESSAGE] = {-1, -1, 0},
	[R_ERROR] = {COLOR_RED, -1, A_BOLD},
	[R_PROGRESS] = {COLOR_BLACK, COLOR_GREEN, 0},
	[R_KEY] = {COLOR_YELLOW, -1, A_BOLD},
	[R_MATCH] = {COLOR_BLACK, COLOR_YELLOW, 0},
};

void theme_init(bool colour)
{
	colour_on = colour && has_colors() && start_color() == OK;
	if (colour_on && use_default_colors() != OK)
		colour_on = colour_on && COLORS >= 8;
	for (int r = 0; r < R_NROLES; r++) {
		roles[r] = mono[r];
		if (colour_on && r + 1 < COLOR_PAIRS) {
			short fg = palette[r].fg, bg = palette[r].bg;
			if (init_pair((short)(r + 1), fg, bg) == OK)
				roles[r] = COLOR_PAIR(r + 1) | palette[r].extra;
		}
	}
}

attr_t theme_attr(enum role r)
{
	return (unsigned)r < R_NROLES ? roles[r] : A_NORMAL;
}

enum role theme_row_role(const struct log_row *r)
{
	if (r->gate_v == GATE_FAIL || r->gate_v == GATE_ERROR)
		return R_FAIL;
	if (r->gate_v == GATE_INCOMPLETE)
		return R_INCOMPLETE;
	switch (r->status) {
	case RS_BASE:
		return R_BASE;
	case RS_KEEP:
		return R_KEEP;
	case RS_REVERT:
		return R_REVERT;
	case RS_DROP:
		return R_DROP;
	case RS_FLOOR:
		return R_FLOOR;
	default:
		return R_NORMAL;
	}
}

/* ---- glyphs ---------------------------------------------------------------- */

const struct glyph glyph_table[GL_NGLYPHS] = {
	[GL_ROW_FAIL] = {"timeline", "!", "!", "the gate failed, or the harness broke"},
	[GL_ROW_INCOMPLETE] = {"timeline", "?", "?", "incomplete: killed, timed out or cancelled"},
	[GL_ROW_BEST] = {"timeline", "*", "*", "the best: the baseline or the last keep"},
	[GL_KEEP_UNCONFIRMED] = {"timeline", "keep?", "keep?",
				 "kept --unconfirmed: no win beyond noise backs it"},
	[GL_PT_FAIL] = {"chart", "x", "x", "a failed gate (or a harness error)"},
	[GL_PT_INCOMPLETE] = {"chart", "?", "?", "an incomplete run"},
	[GL_PT_BEST] = {"chart", "*", "*", "the best"},
	[GL_PT_UNDONE] = {"chart", ".", ".", "a reverted or dropped row"},
	[GL_PT] = {"chart", "o", "o", "any other row's bench"},
	[GL_BEST_LINE] = {"chart", "\xe2\x94\x80", "-", "the best's bench, across the chart"},
	[GL_BAND] = {"chart", "\xc2\xb7", ":", "the noise band around the best"},
	[GL_TRAP_CHECKED] = {"traps", "[x]", "[x]", "checked for this iteration"},
	[GL_TRAP_HIT] = {"traps", "[!]", "[!]", "hit: a lint found it in this iteration's diff"},
	[GL_TRAP_UNCHECKED] = {"traps", "[ ]", "[ ]", "not checked yet"},
};

const char *glyph(enum glyph_id g)
{
	if ((unsigned)g >= GL_NGLYPHS)
		return "?";
	return sanitize_is_ascii() ? glyph_table[g].ascii : glyph_table[g].utf8;
}

/* ---- navigation ---------------------------------------------------------- */

void view_clamp(struct view *v)
{
	int n = v->ops->nitems ? v->ops->nitems(v) : 0;
	int h = v->body_h > 0 ? v->body_h : 1;

	if (v->sel >= n)
		v->sel = n - 1;
	if (v->sel < 0)
		v->sel = 0;
	if (v->sel < v->top)
		v->top = v->sel;
	if (v->sel >= v->top + h)
		v->top = v->sel - h + 1;
	if (v->top > n - h)
		v->top = n - h;
	if (v->top < 0)
		v->top = 0;
}

int view_navigate(struct view *v, enum action a)
{
	int n = v->ops->nitems ? v->ops->nitems(v) : 0;
	int page = v->body_h > 1 ? v->body_h - 1 : 1;

	switch (a) {
	case ACT_DOWN:
		v->sel++;
		break;
	case ACT_UP:
		v->sel--;
		break;
	case ACT_PAGE_DOWN:
		v->sel += page;
		v->top += page;
		break;
	case ACT_PAGE_UP:
		v->sel -= page;
		v->top -= page;
		break;
	case ACT_TOP:
		v->sel = 0;
		break;
	case ACT_BOTTOM:
		v->sel = n - 1;
		break;
	case ACT_SCROLL_LEFT:
	case ACT_SCROLL_RIGHT: {
		if (!v->ops->hscroll)
			return 0;
		/* a quarter of the pane at a time */
		int step = v->w / 4 > 4 ? v->w / 4 : 4;
		v->hscroll += a == ACT_SCROLL_RIGHT ? step : -step;
		if (v->hscroll > v->hmax)
			v->hscroll = v->hmax;
		if (v->hscroll < 0)
			v->hscroll = 0;
		return HANDLED | REDRAW;
	}
	default:
		return 0;
	}
	view_clamp(v);
	return HANDLED | REDRAW;
}

bool view_search(struct view *v, const char *needle, bool forward)
{
	int n = v->ops->nitems ? v->ops->nitems(v) : 0;
	struct sb t = SB_INIT;
	size_t nl = strlen(needle);

	if (!v->ops->item_text || n == 0 || nl == 0)
		return false;
	sb_init(&t);
	for (int k = 1; k <= n; k++) {
		int i = forward ? (v->sel + k) % n : ((v->sel - k) % n + n) % n;
		sb_reset(&t);
		v->ops->item_text(v, i, &t);
		for (const char *p = t.buf; *p; p++) {
			if (strncasecmp(p, needle, nl) == 0) {
				v->sel = i;
				view_clamp(v);
				sb_release(&t);
				return true;
			}
		}
	}
	sb_release(&t);
	return false;
}

/* ---- drawing ------------------------------------------------------------- */

int draw_text(WINDOW *w, int y, int x, int cells, const char *text, attr_t attr)
{
	struct sb s = SB_INIT;
	int n;

	if (cells <= 0 || !text)
		return 0;
	sb_init(&s);
	n = sanitize_fit(text, strlen(text), cells, &s);
	wattrset(w, attr);
	mvwaddnstr(w, y, x, s.buf, (int)s.len);
	wattrset(w, A_NORMAL);
	sb_release(&s);
	return n;
}

int draw_text_from(WINDOW *w, int y, int x, int cells, const char *text, int skip, attr_t attr)
{
	struct sb clean = SB_INIT, rest = SB_INIT;
	int n;

	if (skip <= 0)
		return draw_text(w, y, x, cells, text, attr);
	if (cells <= 0 || !text)
		return 0;
	sb_init(&clean);
	sb_init(&rest);
	sanitize_line(text, strlen(text), &clean);
	sanitize_skip(clean.buf, clean.len, skip, &rest);
	n = draw_text(w, y, x, cells, rest.buf, attr);
	sb_release(&clean);
	sb_release(&rest);
	return n;
}

void draw_foot(WINDOW *w, const char *text)
{
	int h = getmaxy(w), wd = getmaxx(w);
	int tw = sanitize_width(text, strlen(text));

	if (tw > wd - 4)
		tw = wd - 4;
	if (tw > 0)
		draw_text(w, h - 1, wd - 2 - tw, tw, text, theme_attr(R_DIM));
}

void draw_fill(WINDOW *w, int y, int x, int x_end, attr_t attr)
{
	wattrset(w, attr);
	for (int i = x; i < x_end; i++)
		mvwaddch(w, y, i, ' ');
	wattrset(w, A_NORMAL);
}

void draw_frame(WINDOW *w, const char *title, bool focused)
{
	int mw = getmaxx(w);

	if (sanitize_is_ascii())
		wborder(w, '|', '|', '-', '-', '+', '+', '+', '+');
	else
		box(w, 0, 0);
	if (title && mw > 6) {
		struct sb t = SB_INIT;
		sb_init(&t);
		sb_addf(&t, " %s ", title);
		draw_text(w, 0, 2, mw - 4, t.buf, theme_attr(focused ? R_TITLE_FOCUS : R_TITLE));
		sb_release(&t);
	}
}

int draw_wrapped(WINDOW *w, int y, int x, int cells, int max_lines, const char *text,
		 attr_t attr)
{
	struct sb clean = SB_INIT, line = SB_INIT;
	int lines = 0;

	if (!text || cells <= 0 || max_lines <= 0)
		return 0;
	sb_init(&clean);
	sb_init(&line);
	sanitize_line(text, strlen(text), &clean);
	const char *p = clean.buf;
	while (*p && lines < max_lines) {
		/* Take as many words as fit; a word longer than the line is cut. */
		const char *q = p, *last_break = NULL;
		int used = 0;
		while (*q) {
			size_t n = 1;
			while ((q[n] & 0xc0) == 0x80)
				n++;
			int cw = sanitize_width(q, n);
			if (used + cw > cells)
				break;
			if (*q == ' ')
				last_break = q;
			used += cw;
			q += n;
		}
		const char *end = (*q && last_break && last_break > p) ? last_break : q;
		if (end == p) /* nothing fits at all */
			break;
		sb_reset(&line);
		sb_add(&line, p, (size_t)(end - p));
		if (w)
			draw_text(w, y + lines, x, cells, line.buf, attr);
		lines++;
		p = end;
		while (*p == ' ')
			p++;
	}
	sb_release(&clean);
	sb_release(&line);
	return lines;
}

/* ---- cells --------------------------------------------------------------- */

/* The log's own formatting, so the panes show exactly what OPT_LOG.md holds. */
void fmt_bench(double ms, struct sb *out)
{
	optlog_fmt_bench(ms, out);
}

void fmt_vs_best(double frac, struct sb *out)
{
	optlog_fmt_vs_best(frac, out);
}

/* An imported row keeps its cell as written ("pass (-k, 3 tests)"). */
void fmt_gate(const struct log_row *r, struct sb *out)
{
	if (r->gate && *r->gate)
		sb_adds(out, r->gate);
	else
		optlog_fmt_gate(r->gate_v, r->scope, out);
}

void fmt_rate(double v, const char *unit, bool tight, struct sb *out)
{
	static const char *const pre[] = {"", "K", "M", "G", "T", "P", "E"};
	int i = 0;
	if (!isfinite(v)) {
		sb_adds(out, "\xe2\x80\x94");
		return;
	}
	while (fabs(v) >= 1000 && i < 6)
		v /= 1000, i++;
	if (tight && !strncmp(unit, "FLOP", 4))
		unit = "F/s";
	sb_addf(out, fabs(v) >= 100 ? "%.0f%s%s%s" : fabs(v) >= 10 ? "%.1f%s%s%s" : "%.2f%s%s%s", v,
		tight ? "" : " ", pre[i], unit);
}

static void fmt_share(double f, struct sb *out)
{
	if (isfinite(f))
		sb_addf(out, "%.0f%%", 100 * f);
	else
		sb_adds(out, "\xe2\x80\x94");
}

/* The bound's name, or its short form ("mem", "comp", "launch"). */
static const char *bound_word(const struct wb_roof *r, bool brief)
{
	if (!r->bound[0])
		return "none";
	if (brief && !strcmp(r->bound, "memory"))
		return "mem";
	if (brief && !strcmp(r->bound, "compute"))
		return "comp";
	return r->bound;
}

/* Wording `form` of a shape's roofline, from the fullest (0) to the
 * briefest (4). */
static void roof_form(const struct wb_roof *r, int form, struct sb *out)
{
	bool mem = strcmp(r->bound, "compute") != 0;
	/* an impossible time says so before all, in place of its bound when
	 * room is short */
	const char *word = r->impossible ? "IMPOSSIBLE" : bound_word(r, form >= 2);
	if (r->impossible && form == 0)
		sb_adds(out, "IMPOSSIBLE \xc2\xb7 ");
	if (form == 0) {
		sb_addf(out, "%s%s \xc2\xb7 ", bound_word(r, false), r->bound[0] ? "-bound" : "");
		fmt_rate(r->bw, "B/s", false, out);
		sb_adds(out, ", ");
		fmt_share(r->bw_share, out);
		sb_adds(out, " of peak \xc2\xb7 ");
		fmt_rate(r->rate, "FLOP/s", false, out);
		sb_adds(out, ", ");
		fmt_share(r->flop_share, out);
		sb_addf(out, " of %s", r->dtype[0] ? r->dtype : "peak");
	} else if (form <= 2) {
		sb_addf(out, "%s \xc2\xb7 ", word);
		fmt_rate(r->bw, "B/s", form == 2, out);
		sb_addc(out, ' ');
		fmt_share(r->bw_share, out);
		sb_adds(out, " \xc2\xb7 ");
		fmt_rate(r->rate, "FLOP/s", form == 2, out);
		sb_addc(out, ' ');
		fmt_share(r->flop_share, out);
	} else if (form == 3) {
		sb_addf(out, "%s \xc2\xb7 BW ", word);
		fmt_share(r->bw_share, out);
		sb_adds(out, " \xc2\xb7 FLOP ");
		fmt_share(r->flop_share, out);
	} else {
		sb_addf(out, "%s ", word);
		fmt_share(mem ? r->bw_share : r->flop_share, out);
	}
}

void fmt_roof(const struct wb_roof *r, int cells, struct sb *out)
{
	struct sb s = SB_INIT;
	sb_init(&s);
	for (int form = 0; form <= 4; form++) {
		sb_reset(&s);
		roof_form(r, form, &s);
		if (sanitize_width(s.buf, s.len) <= cells)
			break;
	}
	sb_add(out, s.buf, s.len);
	sb_release(&s);
}

void wb_shapes_clear(struct wb_data *d)
{
	for (size_t i = 0; i < d->nshapes; i++) {
		free(d->shapes[i].name);
		free(d->shapes[i].ms);
		free(d->shapes[i].roof);
	}
	free(d->shapes);
	d->shapes = NULL;
	d->nshapes = 0;
	for (size_t i = 0; i < d->nroof_peaks; i++)
		free(d->roof_peaks[i]);
	free(d->roof_peaks);
	d->roof_peaks = NULL;
	d->nroof_peaks = 0;
}

void wb_lines_free(struct wb_line *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

void wb_verdict_clear(struct wb_verdict *v)
{
	free(v->verdict);
	free(v->flags);
	free(v->why);
	free(v->confirm);
	memset(v, 0, sizeof(*v));
	v->gain = NAN;
}

enum role theme_verdict_role(const char *verdict)
{
	switch (verdict ? stats_verdict_parse(verdict) : SV_NONE) {
	case SV_FAST:
		return R_KEEP;
	case SV_SLOW:
		return R_REVERT;
	case SV_AMBIGUOUS:
		return R_SUBSET;
	case SV_MISSING:
	case SV_NOT_COMPARABLE:
		return R_INCOMPLETE;
	default:
		return R_NORMAL;
	}
}

int draw_verdict(WINDOW *w, int y, int x, int cells, const char *label,
		 const struct wb_verdict *v)
{
	struct sb s = SB_INIT;
	int used = 0;

	if (!v->have || cells <= 0)
		return 0;
	sb_init(&s);
	used += draw_text(w, y, x, cells, label ? label : "", theme_attr(R_NORMAL));
	used += draw_text(w, y, x + used, cells - used, v->verdict ? v->verdict : "none",
			  theme_attr(theme_verdict_role(v->verdict)) | A_BOLD);
	if (isfinite(v->gain)) {
		sb_adds(&s, " ");
		fmt_vs_best(v->gain, &s);
	}
	used += draw_text(w, y, x + used, cells - used, s.buf, theme_attr(R_NORMAL));
	sb_release(&s);
	return used;
}

void pager_draw(struct view *v, WINDOW *w, const char *title, const struct wb_line *lines,
		size_t n)
{
	pager_draw_pinned(v, w, title, 0, lines, n);
}

/* The scroll keys' note for a pane whose lines may be cut at its edge. */
void view_hscroll_note(const struct view *v, const char *cut, struct sb *out)
{
	if (v->hscroll > 0) {
		sb_addf(out, "from column %d \xc2\xb7 ", v->hscroll + 1);
		sb_addf(out, "%s/", action_first_key(ACT_SCROLL_LEFT));
		sb_addf(out, "%s scroll", action_first_key(ACT_SCROLL_RIGHT));
	} else if (v->hmax > 0) {
		sb_addf(out, "%s \xc2\xb7 %s scrolls", cut, action_first_key(ACT_SCROLL_RIGHT));
	}
}

void pager_draw_pinned(struct view *v, WINDOW *w, const char *title, int pinned,
		       const struct wb_line *lines, size_t n)
{
	int h = getmaxy(w), wd = getmaxx(w), inner = wd - 2, widest = 0;
	struct sb foot = SB_INIT;

	v->h = h, v->w = wd;
	if (pinned > h - 3)
		pinned = h - 3 > 0 ? h - 3 : 0;
	v->body_h = h - 2 - pinned;
	/* A pager scrolls: the selection is the first visible line. */
	if (v->sel > (int)n - v->body_h)
		v->sel = (int)n - v->body_h;
	if (v->sel < 0)
		v->sel = 0;
	v->top = v->sel;
	for (int y = 0; y < v->body_h && (size_t)(v->top + y) < n; y++) {
		const char *t = lines[v->top + y].text ? lines[v->top + y].text : "";
		struct sb c = SB_INIT;
		sb_init(&c);
		int tw = sanitize_line(t, strlen(t), &c);
		sb_release(&c);
		if (tw > widest)
			widest = tw;
	}
	v->hmax = widest > inner ? widest - inner : 0;
	if (v->hscroll > v->hmax)
		v->hscroll = v->hmax;
	werase(w);
	draw_frame(w, title, true);
	for (int y = 0; y < v->body_h; y++) {
		size_t i = (size_t)(v->top + y);
		if (i >= n)
			break;
		draw_text_from(w, 1 + pinned + y, 1, inner, lines[i].text ? lines[i].text : "",
			       v->hscroll, theme_attr(lines[i].role));
	}
	sb_init(&foot);
	if (n > (size_t)v->body_h)
		sb_addf(&foot, "%d/%zu", v->top + 1, n);
	struct sb hs = SB_INIT;
	sb_init(&hs);
	view_hscroll_note(v, "lines cut", &hs);
	if (hs.len)
		sb_addf(&foot, "%s%s", foot.len ? " \xc2\xb7 " : "", hs.buf);
	if (foot.len && inner > 12) {
		struct sb pad = SB_INIT;
		sb_init(&pad);
		sb_addf(&pad, " %s ", foot.buf);
		draw_foot(w, pad.buf);
		sb_release(&pad);
	}
	sb_release(&hs);
	sb_release(&foot);
}
