/*
 * condense — see condense.h.  Lines are split into screen columns (a
 * double-width character takes two: its lead and a continuation), a keep
 * mask is worked out over the block's columns, and each line is written
 * again through the mask.
 */
#include "views/condense.h"

#include "core/sb.h"
#include "views/sanitize.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* One screen column of a line. */
struct col {
	unsigned off;        /* byte offset of the character in the line */
	unsigned short len;  /* its bytes, combining marks included; 0 for a continuation */
	signed char w;       /* 1 or 2 for a character's first column, 0 for a continuation */
};

struct cline {
	struct col *c;
	int n;
	bool sep;    /* a separator: only - = _ ─ ═ and blanks */
	bool header; /* the first line of the block that is not a separator */
};

static void split(const struct sb *l, struct cline *out)
{
	size_t i = 0, nb;
	int cap = 0;

	memset(out, 0, sizeof(*out));
	while (i < l->len) {
		int cw = sanitize_char_width(l->buf + i, l->len - i, &nb);
		if (cw == 0) {
			/* a combining mark belongs to the character before it */
			int k = out->n - 1;
			while (k >= 0 && out->c[k].w == 0)
				k--;
			if (k >= 0)
				out->c[k].len = (unsigned short)(out->c[k].len + nb);
			i += nb;
			continue;
		}
		if (out->n + 2 > cap) {
			cap = cap ? cap * 2 : 128;
			out->c = xrealloc(out->c, (size_t)cap * sizeof(*out->c));
		}
		out->c[out->n++] = (struct col){(unsigned)i, (unsigned short)nb, (signed char)cw};
		if (cw == 2)
			out->c[out->n++] = (struct col){(unsigned)i, 0, 0};
		i += nb;
	}
}

static bool is_blank(const struct sb *l, const struct cline *cl, int c)
{
	return c >= cl->n || (cl->c[c].w == 1 && l->buf[cl->c[c].off] == ' ');
}

static bool is_sep(const struct sb *l, const struct cline *cl)
{
	int marks = 0;
	for (int c = 0; c < cl->n; c++) {
		if (is_blank(l, cl, c) || cl->c[c].w == 0)
			continue;
		const char *p = l->buf + cl->c[c].off;
		if (cl->c[c].len == 1 && (*p == '-' || *p == '=' || *p == '_'))
			marks++;
		else if (cl->c[c].len == 3 && (!memcmp(p, "\xe2\x94\x80", 3) || !memcmp(p, "\xe2\x95\x90", 3)))
			marks++;
		else
			return false;
	}
	return marks >= 3;
}

/* What losing column c of a line costs: a number's digit dearly, a
 * header's text more than a row's, blanks and separators nothing. */
static int cost(const struct sb *l, const struct cline *cl, int c)
{
	if (cl->sep || is_blank(l, cl, c))
		return 0;
	const struct col *k = &cl->c[c];
	while (k > cl->c && k->w == 0)
		k--;
	if (k->len == 1 && isdigit((unsigned char)l->buf[k->off]))
		return 50;
	return cl->header ? 10 : 3;
}

/* Write line l through the kept columns keep[0..nk), leaving out the
 * window [ws, ws + wn) of them (ws < 0: none) and putting one mark there. */
static void emit(const struct sb *l, const struct cline *cl, const int *keep, int nk, int ws, int wn,
		 struct sb *out)
{
	const char *ell = sanitize_is_ascii() ? "~" : "\xe2\x80\xa6";
	bool lead_out = false;

	for (int p = 0; p < nk; p++) {
		if (p == ws) {
			bool any = false;
			int first = -1;
			for (int q = p; q < p + wn && q < nk; q++)
				if (!is_blank(l, cl, keep[q])) {
					any = true;
					if (first < 0)
						first = keep[q];
				}
			if (!any)
				sb_addc(out, ' ');
			else if (cl->sep && cl->c[first].w == 1)
				sb_add(out, l->buf + cl->c[first].off, cl->c[first].len);
			else
				sb_adds(out, ell);
			p += wn - 1;
			lead_out = false;
			continue;
		}
		int c = keep[p];
		if (c >= cl->n) {
			sb_addc(out, ' ');
			continue;
		}
		const struct col *k = &cl->c[c];
		if (k->w == 1) {
			sb_add(out, l->buf + k->off, k->len);
		} else if (k->w == 2) {
			/* whole only when its continuation is written right after it */
			lead_out = p + 1 < nk && keep[p + 1] == c + 1 && !(ws >= 0 && p + 1 == ws);
			if (lead_out)
				sb_add(out, l->buf + k->off, k->len);
			else
				sb_addc(out, ' ');
		} else {
			if (!lead_out)
				sb_addc(out, ' ');
			lead_out = false;
		}
	}
	while (out->len && out->buf[out->len - 1] == ' ')
		out->buf[--out->len] = '\0';
}

/* The kept columns with every common gap shrunk to k blanks (the gap
 * before the first column to k - 1); returns how many. */
static int mask(const bool *blank, int width, int k, int *keep)
{
	int nk = 0, run = 0;
	bool leading = true;
	for (int c = 0; c < width; c++) {
		if (!blank[c]) {
			leading = false;
			run = 0;
			keep[nk++] = c;
		} else if (++run <= (leading ? k - 1 : k)) {
			keep[nk++] = c;
		}
	}
	return nk;
}

/* The window of wn kept columns whose loss costs least (the rightmost of
 * equals: the start of a line holds its labels); -1 when none fits. */
static int cheapest_window(const struct sb *lines, const struct cline *cl, size_t n,
			   const int *keep, int nk, int wn)
{
	if (wn > nk)
		return -1;
	int *colcost = xcalloc((size_t)nk, sizeof(int));
	for (int p = 0; p < nk; p++)
		for (size_t i = 0; i < n; i++)
			colcost[p] += cost(&lines[i], &cl[i], keep[p]);
	long sum = 0, best = -1;
	int at = -1;
	for (int p = 0; p < nk; p++) {
		sum += colcost[p];
		if (p >= wn)
			sum -= colcost[p - wn];
		if (p >= wn - 1 && (best < 0 || sum <= best)) {
			best = sum;
			at = p - wn + 1;
		}
	}
	free(colcost);
	return at;
}

bool condense_block(struct sb *lines, size_t n, int cells)
{
	struct cline *cl;
	int width = 0;
	bool any_text = false, changed = false;

	if (n == 0 || cells <= 2)
		return false;
	cl = xcalloc(n, sizeof(*cl));
	for (size_t i = 0; i < n; i++) {
		split(&lines[i], &cl[i]);
		cl[i].sep = is_sep(&lines[i], &cl[i]);
		if (!cl[i].sep && !any_text)
			cl[i].header = true;
		any_text |= !cl[i].sep;
		if (cl[i].n > width)
			width = cl[i].n;
	}
	if (width <= cells || !any_text) {
		/* nothing to line up (separators alone): cut them at the edge */
		for (size_t i = 0; i < n && width > cells; i++) {
			if (cl[i].n <= cells)
				continue;
			int c = cells;
			while (c > 0 && cl[i].c[c].w == 0)
				c--;
			lines[i].len = cl[i].c[c].off;
			lines[i].buf[lines[i].len] = '\0';
			changed = true;
		}
		goto out;
	}
	bool *blank = xcalloc((size_t)width, sizeof(bool));
	int *keep = xcalloc((size_t)width, sizeof(int));
	for (int c = 0; c < width; c++) {
		blank[c] = true;
		for (size_t i = 0; i < n && blank[c]; i++)
			if (!cl[i].sep && !is_blank(&lines[i], &cl[i], c))
				blank[c] = false;
	}
	int nk = mask(blank, width, 2, keep);
	if (nk > cells)
		nk = mask(blank, width, 1, keep);
	int ws = -1, wn = 0;
	if (nk > cells) {
		wn = nk - cells + 1;
		ws = cheapest_window(lines, cl, n, keep, nk, wn);
		if (ws < 0)
			wn = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct sb o = SB_INIT;
		sb_init(&o);
		emit(&lines[i], &cl[i], keep, nk, ws, wn, &o);
		if (o.len != lines[i].len || memcmp(o.buf, lines[i].buf, o.len)) {
			sb_release(&lines[i]);
			lines[i] = o;
			changed = true;
		} else {
			sb_release(&o);
		}
	}
	free(blank);
	free(keep);
out:
	for (size_t i = 0; i < n; i++)
		free(cl[i].c);
	free(cl);
	return changed;
}
