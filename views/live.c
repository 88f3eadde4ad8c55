/*
 * live — the bounded output tail (see live.h) and the pane that shows it:
 * a header with elapsed time, a progress bar and the cancel key, then the
 * sanitised tail, following the end unless the user scrolled up.
 */
#include "views/live.h"

#include "core/sb.h"
#include "views/condense.h"
#include "views/sanitize.h"
#include "views/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct live_buf *live_new(size_t max_lines, size_t max_line)
{
	struct live_buf *b = xcalloc(1, sizeof(*b));

	b->cap = max_lines ? max_lines : 1;
	b->max_line = max_line > 0 && max_line < 65535 ? max_line : 4096;
	b->ring = xcalloc(b->cap, sizeof(*b->ring));
	b->part = xmalloc(b->max_line + 1);
	b->progress = -1;
	return b;
}

void live_reset(struct live_buf *b, const char *title)
{
	for (size_t i = 0; i < b->cap; i++) {
		free(b->ring[i].text);
		b->ring[i].text = NULL;
	}
	b->head = b->count = 0;
	b->part_len = 0;
	b->part_cut = b->pending_cr = false;
	b->lines = b->bytes = 0;
	free(b->title);
	b->title = xstrdup(title);
	free(b->verdict);
	b->verdict = NULL;
	b->verdict_bad = false;
	free(b->note);
	b->note = NULL;
	b->progress = -1;
	free(b->stage);
	b->stage = NULL;
	b->running = false;
	b->t_start = b->t_end = b->now = 0;
}

void live_free(struct live_buf *b)
{
	if (!b)
		return;
	live_reset(b, NULL);
	free(b->ring);
	free(b->part);
	free(b->title);
	free(b);
}

static void push_line(struct live_buf *b)
{
	size_t slot;

	if (b->count < b->cap) {
		slot = (b->head + b->count) % b->cap;
		b->count++;
	} else {
		slot = b->head;
		b->head = (b->head + 1) % b->cap;
	}
	struct live_line *l = &b->ring[slot];
	/* Reuse the slot's buffer when it is big enough. */
	l->text = xrealloc(l->text, b->part_len + 1);
	memcpy(l->text, b->part, b->part_len);
	l->text[b->part_len] = '\0';
	l->len = (unsigned short)b->part_len;
	l->cut = b->part_cut;
	b->part_len = 0;
	b->part_cut = false;
	b->lines++;
}

static void part_add(struct live_buf *b, const char *p, size_t n)
{
	size_t room = b->max_line - b->part_len;

	if (n > room) {
		n = room;
		b->part_cut = true;
	}
	memcpy(b->part + b->part_len, p, n);
	b->part_len += n;
}

void live_feed(struct live_buf *b, const char *data, size_t len)
{
	const char *p = data, *end = data + len;

	b->bytes += len;
	while (p < end) {
		if (b->pending_cr) {
			b->pending_cr = false;
			if (*p != '\n') { /* a redraw: start the line again */
				b->part_len = 0;
				b->part_cut = false;
			}
		}
		const char *q = p;
		while (q < end && *q != '\n' && *q != '\r')
			q++;
		part_add(b, p, (size_t)(q - p));
		if (q == end)
			break;
		if (*q == '\n')
			push_line(b);
		else
			b->pending_cr = true;
		p = q + 1;
	}
}

void live_flush(struct live_buf *b)
{
	if (b->part_len > 0)
		push_line(b);
	b->pending_cr = false;
}

size_t live_count(const struct live_buf *b)
{
	return b->count + (b->part_len > 0 ? 1 : 0);
}

const char *live_line(const struct live_buf *b, size_t i, size_t *len)
{
	if (i < b->count) {
		const struct live_line *l = &b->ring[(b->head + i) % b->cap];
		*len = l->len;
		return l->text;
	}
	if (i == b->count && b->part_len > 0) {
		*len = b->part_len;
		return b->part;
	}
	*len = 0;
	return "";
}

void live_set_verdict(struct live_buf *b, const char *text, bool bad)
{
	free(b->verdict);
	b->verdict = xstrdup(text);
	b->verdict_bad = bad;
}

void live_set_note(struct live_buf *b, const char *text)
{
	free(b->note);
	b->note = text ? xstrdup(text) : NULL;
}

void live_set_progress(struct live_buf *b, int pct, const char *stage, size_t n)
{
	if (pct >= 0 && pct <= 100)
		b->progress = pct;
	if (stage) {
		free(b->stage);
		b->stage = xstrndup(stage, n);
	}
}

/* ---- the pane ------------------------------------------------------------ */

static int live_nitems(const struct view *v)
{
	return v->d->live ? (int)live_count(v->d->live) : 0;
}

static void elapsed(double s, struct sb *out)
{
	long t = s > 0 ? (long)s : 0;
	if (t >= 3600)
		sb_addf(out, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		sb_addf(out, "%02ld:%02ld", t / 60, t % 60);
}

/* How far past the visible lines a block of wide lines is followed: a
 * table taller than the pane still lines up as one. */
#define BLOCK_REACH 64

static int clean_line(const struct live_buf *b, int i, struct sb *out)
{
	size_t len;
	const char *t = live_line(b, (size_t)i, &len);
	sb_reset(out);
	return sanitize_line(t, len, out);
}

/* Condense the block of lines wider than the pane around visible line y
 * (vis[0..nvis) hold the visible lines, line top + k); returns the first
 * visible line after the block. */
static int condense_around(const struct live_buf *b, int top, int n, struct sb *vis,
			   const int *wid, int nvis, int y, int inner, bool *changed)
{
	struct sb t = SB_INIT;
	int a = top + y, e = top + y;

	sb_init(&t);
	while (e < top + nvis && wid[e - top] > inner)
		e++;
	if (y == 0)
		while (a > 0 && a > top - BLOCK_REACH && clean_line(b, a - 1, &t) > inner)
			a--;
	if (e == top + nvis)
		while (e < n && e < top + nvis + BLOCK_REACH && clean_line(b, e, &t) > inner)
			e++;
	sb_release(&t);
	struct sb *blk = xcalloc((size_t)(e - a), sizeof(*blk));
	for (int i = a; i < e; i++) {
		sb_init(&blk[i - a]);
		if (i >= top && i < top + nvis)
			sb_add(&blk[i - a], vis[i - top].buf, vis[i - top].len);
		else
			clean_line(b, i, &blk[i - a]);
	}
	*changed |= condense_block(blk, (size_t)(e - a), inner);
	for (int i = a; i < e; i++) {
		if (i >= top && i < top + nvis) {
			sb_reset(&vis[i - top]);
			sb_add(&vis[i - top], blk[i - a].buf, blk[i - a].len);
		}
		sb_release(&blk[i - a]);
	}
	free(blk);
	return e - top;
}

/* The output lines.  Lines wider than the pane are condensed (a table
 * keeps its right-hand numbers) until the user scrolls sideways; then they
 * are shown as printed, from the column scrolled to. */
static void draw_body(struct view *v, WINDOW *w, const struct live_buf *b, int n, int inner,
		      bool follow)
{
	int nvis = n - v->top < v->body_h ? n - v->top : v->body_h, widest = 0;
	bool changed = false;

	if (nvis <= 0) {
		v->hmax = 0;
		return;
	}
	struct sb *vis = xcalloc((size_t)nvis, sizeof(*vis));
	int *wid = xcalloc((size_t)nvis, sizeof(int));
	for (int y = 0; y < nvis; y++) {
		sb_init(&vis[y]);
		wid[y] = clean_line(b, v->top + y, &vis[y]);
		if (wid[y] > widest)
			widest = wid[y];
	}
	v->hmax = widest > inner ? widest - inner : 0;
	if (v->hscroll > v->hmax)
		v->hscroll = v->hmax;
	for (int y = 0; v->hscroll == 0 && y < nvis;) {
		if (wid[y] > inner)
			y = condense_around(b, v->top, n, vis, wid, nvis, y, inner, &changed);
		else
			y++;
	}
	for (int y = 0; y < nvis; y++) {
		int i = v->top + y;
		attr_t a = (!follow && i == v->sel) ? theme_attr(R_SELECTED) : A_NORMAL;
		draw_text_from(w, 2 + y, 1, inner, vis[y].buf, v->hscroll, a);
		sb_release(&vis[y]);
	}
	free(vis);
	free(wid);
	struct sb note = SB_INIT;
	sb_init(&note);
	view_hscroll_note(v, changed ? "wide lines condensed" : "lines cut", &note);
	if (note.len) {
		struct sb pad = SB_INIT;
		sb_init(&pad);
		sb_addf(&pad, " %s ", note.buf);
		draw_foot(w, pad.buf);
		sb_release(&pad);
	}
	sb_release(&note);
}

static void live_draw(struct view *v, WINDOW *w)
{
	int h = getmaxy(w), wd = getmaxx(w), inner = wd - 2;
	struct live_buf *b = v->d->live;
	struct sb s = SB_INIT;
	int n;

	v->h = h, v->w = wd;
	werase(w);
	draw_frame(w, b && b->title ? b->title : "Verify output", v->focused);
	if (!b || h < 4 || inner < 10)
		return;
	n = (int)live_count(b);
	/* Follow the end unless the user moved up. */
	bool follow = v->mode == 0;
	/* the finished run's note takes the last rows (three at most), the
	 * output keeps at least two */
	int note_rows = 0;
	if (!b->running && b->note) {
		note_rows = draw_wrapped(NULL, 0, 0, inner, 3, b->note, 0);
		if (h - 3 - note_rows < 2)
			note_rows = h - 3 - 2 > 0 ? h - 3 - 2 : 0;
	}
	v->body_h = h - 3 - note_rows;
	if (follow)
		v->sel = n - 1;
	view_clamp(v);
	if (follow)
		v->top = n - v->body_h > 0 ? n - v->body_h : 0;

	/* Header: state, elapsed, progress bar, what keys do. */
	sb_init(&s);
	if (b->running)
		sb_adds(&s, "running ");
	else
		sb_adds(&s, "finished ");
	elapsed((b->t_end > 0 ? b->t_end : b->now) - b->t_start, &s);
	sb_addf(&s, " \xc2\xb7 %llu lines ", b->lines);
	int x = 1 + draw_text(w, 1, 1, inner, s.buf, A_BOLD);
	/* The bar gives way to the phase's name, down to 10 cells. */
	bool staged = b->running && b->stage && *b->stage;
	int stw = staged ? sanitize_width(b->stage, strlen(b->stage)) + 2 : 0;
	/* A finished run's verdict comes before its bar. */
	int reserve = 20;
	if (!b->running && b->verdict) {
		int vw = sanitize_width(b->verdict, strlen(b->verdict)) + 10;
		reserve = vw > reserve ? vw : reserve;
	}
	int barw = inner - x - reserve - stw;
	if (barw > 30)
		barw = 30;
	if (barw < 10)
		barw = inner - x - reserve < 10 ? inner - x - reserve : 10;
	if (b->progress >= 0 && barw >= 5) {
		int fill = b->progress * barw / 100;
		mvwaddstr(w, 1, x, "[");
		wattrset(w, theme_attr(R_PROGRESS));
		for (int i = 0; i < fill; i++)
			mvwaddstr(w, 1, x + 1 + i, sanitize_is_ascii() ? "#" : "\xe2\x96\x88");
		wattrset(w, theme_attr(R_DIM));
		for (int i = fill; i < barw; i++)
			mvwaddstr(w, 1, x + 1 + i, sanitize_is_ascii() ? "." : "\xc2\xb7");
		wattrset(w, A_NORMAL);
		char pct[16];
		snprintf(pct, sizeof(pct), "] %3d%%", b->progress);
		x += barw + 1 + draw_text(w, 1, x + 1 + barw, 6, pct, A_NORMAL);
	}
	sb_reset(&s);
	if (b->running)
		sb_addf(&s, "  %s cancel", action_first_key(ACT_CANCEL));
	else if (b->verdict)
		sb_addf(&s, "  %s", b->verdict);
	/* The phase the harness is in, while it runs, in the room the key hint leaves. */
	if (staged) {
		struct sb st = SB_INIT;
		sb_init(&st);
		sb_addf(&st, "\xc2\xb7 %s", b->stage);
		int room = inner - x - sanitize_width(s.buf, s.len);
		if (room > 4)
			x += draw_text(w, 1, x + 1, room, st.buf, theme_attr(R_PROGRESS));
		sb_release(&st);
	}
	if (s.len && x < inner)
		draw_text(w, 1, x + 1, inner - x, s.buf,
			  theme_attr(!b->running && b->verdict_bad ? R_FAIL : R_KEY));

	draw_body(v, w, b, n, inner, follow);
	if (note_rows)
		draw_wrapped(w, 2 + v->body_h, 1, inner, note_rows, b->note, theme_attr(R_REVERT));
	sb_release(&s);
}

static void live_item_text(const struct view *v, int i, struct sb *out)
{
	size_t len;
	const char *t = live_line(v->d->live, (size_t)i, &len);
	sanitize_line(t, len, out);
}

static int live_action(struct view *v, enum action a)
{
	int n = live_nitems(v);
	int r = view_navigate(v, a);

	if (r) {
		/* Back at the end: follow again. */
		v->mode = v->sel < n - 1;
		return r;
	}
	return 0;
}

const struct view_ops live_view = {
	.name = "live",
	.draw = live_draw,
	.nitems = live_nitems,
	.item_text = live_item_text,
	.action = live_action,
	.hscroll = true,
};
