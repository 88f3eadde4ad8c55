/*
 * live — the bounded output tail (see live.h) and the pane that shows it:
 * a header with elapsed time, a progress bar and the cancel key, then the
 * sanitised tail, following the end unless the user scrolled up.
 */
#include "views/live.h"

#include "core/sb.h"
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
	v->body_h = h - 3;
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
	int barw = inner - x - 20 - stw;
	if (barw > 30)
		barw = 30;
	if (barw < 10)
		barw = inner - x - 20 < 10 ? inner - x - 20 : 10;
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

	for (int y = 0; y < v->body_h; y++) {
		int i = v->top + y;
		if (i >= n)
			break;
		size_t len;
		const char *t = live_line(b, (size_t)i, &len);
		sb_reset(&s);
		sanitize_fit(t, len, inner, &s);
		attr_t a = (!follow && i == v->sel) ? theme_attr(R_SELECTED) : A_NORMAL;
		wattrset(w, a);
		mvwaddnstr(w, 2 + y, 1, s.buf, (int)s.len);
		wattrset(w, A_NORMAL);
	}
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
};
