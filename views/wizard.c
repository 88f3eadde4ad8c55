/*
 * wizard — the modal form engine (see wizard.h).  Input is filtered to
 * printable characters as it is typed, so a pasted escape sequence never
 * becomes part of a value or of the screen.
 */
#include "views/wizard.h"

#include "views/sanitize.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

struct wizard *wizard_new(const char *title, int kind)
{
	struct wizard *wz = xcalloc(1, sizeof(*wz));

	wz->title = xstrdup(title);
	wz->kind = kind;
	return wz;
}

void wizard_free(struct wizard *wz)
{
	if (!wz)
		return;
	for (size_t i = 0; i < wz->nf; i++) {
		struct wz_field *f = &wz->f[i];
		free(f->label);
		free(f->help);
		sb_release(&f->value);
		for (int k = 0; k < f->nchoices; k++)
			free(f->choices[k]);
		free(f->choices);
		free(f->keys);
	}
	free(wz->f);
	wb_lines_free(wz->info, wz->ninfo);
	free(wz->title);
	free(wz->error);
	free(wz);
}

void wizard_info(struct wizard *wz, enum role role, const char *fmt, ...)
{
	struct sb s = SB_INIT;
	va_list ap;

	sb_init(&s);
	va_start(ap, fmt);
	sb_vaddf(&s, fmt, ap);
	va_end(ap);
	wz->info = xrealloc(wz->info, (wz->ninfo + 1) * sizeof(*wz->info));
	wz->info[wz->ninfo++] = (struct wb_line){sb_detach(&s), role};
}

static struct wz_field *add(struct wizard *wz, enum wz_kind k, const char *label, const char *help)
{
	wz->f = xrealloc(wz->f, (wz->nf + 1) * sizeof(*wz->f));
	struct wz_field *f = &wz->f[wz->nf++];
	memset(f, 0, sizeof(*f));
	f->kind = k;
	f->label = xstrdup(label);
	f->help = xstrdup(help);
	sb_init(&f->value);
	return f;
}

struct wz_field *wizard_text(struct wizard *wz, const char *label, const char *help,
			     bool required, const char *initial)
{
	struct wz_field *f = add(wz, WZ_TEXT, label, help);
	f->required = required;
	if (initial)
		sanitize_line(initial, strlen(initial), &f->value);
	return f;
}

struct wz_field *wizard_choice(struct wizard *wz, const char *label, const char *help,
			       const char *const *choices, int initial)
{
	struct wz_field *f = add(wz, WZ_CHOICE, label, help);
	while (choices[f->nchoices])
		f->nchoices++;
	f->choices = xcalloc((size_t)f->nchoices + 1, sizeof(char *));
	for (int k = 0; k < f->nchoices; k++)
		f->choices[k] = xstrdup(choices[k]);
	f->choice = initial >= 0 && initial < f->nchoices ? initial : 0;
	/* a key per choice: its first letter no earlier one took */
	f->keys = xcalloc((size_t)f->nchoices + 1, 1);
	for (int k = 0; k < f->nchoices; k++)
		for (const char *p = f->choices[k]; *p && !f->keys[k]; p++) {
			char c = (char)tolower((unsigned char)*p);
			if (c >= 'a' && c <= 'z' && c != 'h' && c != 'l' && !strchr(f->keys, c))
				f->keys[k] = c;
		}
	return f;
}

void wizard_field_check(struct wz_field *f, wz_check_fn fn, void *ctx)
{
	f->check = fn;
	f->check_ctx = ctx;
}

void wizard_field_need(struct wz_field *f, wz_need_fn fn, void *ctx)
{
	f->need = fn;
	f->need_ctx = ctx;
}

const char *wizard_choice_value(const struct wizard *wz, const char *label)
{
	for (size_t i = 0; i < wz->nf; i++)
		if (wz->f[i].kind == WZ_CHOICE && !strcmp(wz->f[i].label, label))
			return wz->f[i].choices[wz->f[i].choice];
	return NULL;
}

struct wz_field *wizard_check(struct wizard *wz, const char *label, const char *help,
			      bool required)
{
	struct wz_field *f = add(wz, WZ_CHECK, label, help);
	f->required = required;
	return f;
}

static void set_error(struct wizard *wz, const char *msg)
{
	free(wz->error);
	wz->error = msg ? xstrdup(msg) : NULL;
}

static bool text_empty(const struct wz_field *f)
{
	for (const char *p = f->value.buf; p && *p; p++)
		if (!isspace((unsigned char)*p))
			return false;
	return true;
}

/* Does field i keep the wizard from going on?  why says so. */
static bool field_bad(const struct wizard *wz, size_t i, struct sb *why)
{
	const struct wz_field *f = &wz->f[i];
	bool required = f->need ? f->need(f->need_ctx, wz) : f->required;

	if (required && f->kind == WZ_TEXT && text_empty(f)) {
		sb_addf(why, "%s is required", f->label);
		return true;
	}
	if (required && f->kind == WZ_CHECK && !f->checked) {
		sb_addf(why, "%s must be confirmed", f->label);
		return true;
	}
	if (f->check && f->kind == WZ_TEXT && !text_empty(f) &&
	    f->check(f->check_ctx, f->value.buf, why) != 0) {
		if (!why->len)
			sb_addf(why, "%s is not accepted", f->label);
		return true;
	}
	return false;
}

static void backspace(struct sb *v)
{
	if (v->len == 0)
		return;
	size_t n = v->len - 1;
	while (n > 0 && (v->buf[n] & 0xc0) == 0x80)
		n--;
	v->len = n;
	v->buf[n] = '\0';
}

static enum wz_result advance(struct wizard *wz)
{
	struct sb why = SB_INIT;
	enum wz_result r = WZ_CONTINUE;

	sb_init(&why);
	if (wz->cur + 1 < (int)wz->nf) {
		/* Leaving a field: its own check must pass, and in step mode a
		 * required answer is needed before the next step. */
		const struct wz_field *f = &wz->f[wz->cur];
		bool checked = f->check && f->kind == WZ_TEXT && !text_empty(f);
		if ((wz->one_per_page || checked) && field_bad(wz, (size_t)wz->cur, &why)) {
			set_error(wz, why.buf);
		} else {
			wz->cur++;
			set_error(wz, NULL);
		}
		goto out;
	}
	for (size_t i = 0; i < wz->nf; i++) {
		if (field_bad(wz, i, &why)) {
			set_error(wz, why.buf);
			wz->cur = (int)i;
			goto out;
		}
	}
	r = WZ_SUBMIT;
out:
	sb_release(&why);
	return r;
}

enum wz_result wizard_key(struct wizard *wz, wint_t ch, bool fkey)
{
	struct wz_field *f = wz->nf ? &wz->f[wz->cur] : NULL;

	if (!fkey && ch == KEY_ESC)
		return WZ_CANCEL;
	if (fkey && (ch == KEY_NPAGE || ch == KEY_PPAGE)) {
		if (ch == KEY_NPAGE && wz->info_more) {
			/* down to the first line not shown whole */
			wz->info_top = wz->info_next > wz->info_top ? wz->info_next : wz->info_top + 1;
		} else if (ch == KEY_PPAGE && wz->info_top > 0) {
			/* back as many lines as fill the rows (less the two "more"
			 * lines), at least one */
			int rows = wz->info_rows - 2, used = 0, k = wz->info_top;
			while (k > 0) {
				int r = draw_wrapped(NULL, 0, 0, wz->info_cells, 8, wz->info[k - 1].text, 0);
				if (used + r > rows && k < wz->info_top)
					break;
				used += r;
				k--;
			}
			wz->info_top = k;
		}
		if (wz->info_top > (int)wz->ninfo - 1)
			wz->info_top = wz->ninfo ? (int)wz->ninfo - 1 : 0;
		return WZ_CONTINUE;
	}
	if ((!fkey && (ch == '\n' || ch == '\r')) || (fkey && ch == KEY_ENTER)) {
		if (!f)
			return WZ_SUBMIT;
		return advance(wz);
	}
	if ((!fkey && ch == '\t') || (fkey && ch == KEY_DOWN)) {
		if (wz->one_per_page)
			return advance(wz);
		if (wz->cur + 1 < (int)wz->nf)
			wz->cur++;
		return WZ_CONTINUE;
	}
	if (fkey && (ch == KEY_BTAB || ch == KEY_UP)) {
		if (wz->cur > 0)
			wz->cur--;
		set_error(wz, NULL);
		return WZ_CONTINUE;
	}
	if (!f)
		return WZ_CONTINUE;
	switch (f->kind) {
	case WZ_TEXT:
		set_error(wz, NULL);
		if ((fkey && ch == KEY_BACKSPACE) || (!fkey && (ch == 127 || ch == 8)))
			backspace(&f->value);
		else if (!fkey && ch == CTRL_KEY('u'))
			sb_reset(&f->value);
		else if (!fkey && iswprint(ch) && f->value.len < 400) {
			char mb[MB_LEN_MAX + 1];
			mbstate_t st;
			memset(&st, 0, sizeof(st));
			size_t n = wcrtomb(mb, (wchar_t)ch, &st);
			if (n != (size_t)-1)
				sanitize_line(mb, n, &f->value);
		}
		break;
	case WZ_CHOICE:
		if ((fkey && ch == KEY_LEFT) || (!fkey && ch == 'h'))
			f->choice = (f->choice + f->nchoices - 1) % f->nchoices;
		else if ((fkey && ch == KEY_RIGHT) || (!fkey && (ch == ' ' || ch == 'l')))
			f->choice = (f->choice + 1) % f->nchoices;
		else if (!fkey && ch < 0x80)
			/* the choice's own key (shown in brackets) picks it */
			for (int k = 0; k < f->nchoices; k++)
				if (f->keys[k] && f->keys[k] == tolower((int)ch)) {
					f->choice = k;
					break;
				}
		break;
	case WZ_CHECK:
		if (!fkey && (ch == ' ' || ch == 'x' || ch == 'y'))
			f->checked = !f->checked;
		break;
	}
	return WZ_CONTINUE;
}

/* Help lines under the focused field, wrapped: at most this many. */
#define HELP_LINES 4

static int label_width(int inner)
{
	return inner / 3 > 28 ? 28 : inner / 3;
}

/* The focused field's help, with the keys that pick a choice. */
static void field_help(const struct wz_field *f, struct sb *out)
{
	if (f->help)
		sb_adds(out, f->help);
	if (f->kind != WZ_CHOICE)
		return;
	sb_adds(out, out->len ? " \xc2\xb7 keys " : "keys ");
	for (int k = 0; k < f->nchoices; k++)
		if (f->keys[k])
			sb_addf(out, "%c ", f->keys[k]);
	sb_adds(out, "pick, or Left/Right");
}

static int help_rows(const struct wz_field *f, int cells)
{
	struct sb h = SB_INIT;
	sb_init(&h);
	field_help(f, &h);
	int n = h.len ? draw_wrapped(NULL, 0, 0, cells, HELP_LINES, h.buf, 0) : 0;
	sb_release(&h);
	return n;
}

int wizard_height(const struct wizard *wz, int width)
{
	int inner = width - 2, lw = label_width(inner), rows = 0, extra = 0;
	for (size_t i = 0; i < wz->ninfo; i++) {
		int n = draw_wrapped(NULL, 0, 0, inner, 8, wz->info[i].text, 0);
		rows += n > 0 ? n : 1;
	}
	for (size_t i = 0; i < wz->nf; i++) {
		int n = help_rows(&wz->f[i], inner - lw - 1) - 1;
		extra = n > extra ? n : extra;
	}
	int fields = wz->one_per_page ? 1 : (int)wz->nf;
	/* the frame, a blank after the context, two rows for the error, the keys */
	return 2 + rows + (wz->ninfo ? 1 : 0) + fields * 2 + extra + 3 + 1;
}

/* A choice as it is drawn: "(*) [k]eep", the key in brackets where the
 * word has it, else after it. */
static void choice_text(const struct wz_field *f, int k, struct sb *out)
{
	const char *c = f->choices[k], *at = NULL;
	sb_adds(out, k == f->choice ? "(*) " : "( ) ");
	for (const char *p = c; f->keys[k] && *p && !at; p++)
		if (tolower((unsigned char)*p) == f->keys[k])
			at = p;
	if (!at) {
		sb_adds(out, c);
		if (f->keys[k])
			sb_addf(out, " [%c]", f->keys[k]);
		return;
	}
	sb_add(out, c, (size_t)(at - c));
	sb_addf(out, "[%c]%s", *at, at + 1);
}

/* Draws field i at row y; returns the rows it took. */
static int draw_field(struct wizard *wz, WINDOW *w, int y, int inner, int max_y, size_t i)
{
	struct wz_field *f = &wz->f[i];
	bool cur = (int)i == wz->cur;
	struct sb s = SB_INIT;
	int lw = label_width(inner), rows = 2;

	sb_init(&s);
	sanitize_cell(f->label, lw, false, &s);
	draw_text(w, y, 1, lw, s.buf, cur ? theme_attr(R_KEY) : A_BOLD);
	sb_reset(&s);
	int vx = 1 + lw + 1, vw = inner - lw - 1;
	switch (f->kind) {
	case WZ_TEXT: {
		/* Show the end of a long value, with room for the cursor. */
		int width = sanitize_width(f->value.buf, f->value.len);
		const char *p = f->value.buf;
		while (width > vw - 2 && *p) {
			size_t n = 1;
			while ((p[n] & 0xc0) == 0x80)
				n++;
			width -= sanitize_width(p, n);
			p += n;
		}
		draw_fill(w, y, vx, vx + vw, theme_attr(cur ? R_SELECTED : R_DIM));
		draw_text(w, y, vx, vw - 1, p, theme_attr(cur ? R_SELECTED : R_NORMAL));
		if (cur)
			wmove(w, y, vx + width);
		break;
	}
	case WZ_CHOICE:
		for (int k = 0; k < f->nchoices; k++) {
			sb_reset(&s);
			choice_text(f, k, &s);
			int n = draw_text(w, y, vx, vw, s.buf,
					  k == f->choice ? (cur ? theme_attr(R_SELECTED) : A_BOLD) : A_NORMAL);
			vx += n + 2;
			vw -= n + 2;
			if (vw <= 0)
				break;
		}
		break;
	case WZ_CHECK:
		draw_text(w, y, vx, vw, f->checked ? "[x] yes" : "[ ] no",
			  cur ? theme_attr(R_SELECTED) : A_NORMAL);
		break;
	}
	if (cur) {
		sb_reset(&s);
		field_help(f, &s);
		int room = max_y - (y + 1);
		int n = s.len ? draw_wrapped(w, y + 1, 1 + lw + 1, inner - lw - 1,
					     room < HELP_LINES ? room : HELP_LINES, s.buf,
					     theme_attr(R_DIM))
			      : 0;
		rows = 1 + (n > 1 ? n : 1);
	}
	sb_release(&s);
	return rows;
}

void wizard_draw(struct wizard *wz, WINDOW *w)
{
	int h = getmaxy(w), wd = getmaxx(w), inner = wd - 2;
	int y = 1;
	struct sb t = SB_INIT;

	werase(w);
	sb_init(&t);
	sb_adds(&t, wz->title);
	if (wz->one_per_page && wz->nf > 1)
		sb_addf(&t, " \xc2\xb7 step %d/%zu", wz->cur + 1, wz->nf);
	draw_frame(w, t.buf, true);
	sb_release(&t);
	/* The fields come first: the context above them gets what they leave
	 * (a long list of past directions must not push the input off). */
	int frows = 0, lw = label_width(inner);
	for (size_t i = 0; i < wz->nf; i++) {
		if (wz->one_per_page && (int)i != wz->cur)
			continue;
		frows += 2;
		if ((int)i == wz->cur) {
			int n = help_rows(&wz->f[i], inner - lw - 1) - 1;
			frows += n > 0 ? n : 0;
		}
	}
	int info_end = h - 4 - frows - (wz->ninfo ? 1 : 0);
	if (info_end < 2)
		info_end = 2; /* a tiny window: one context line at least */
	/* A context longer than its rows scrolls: a line above says what is
	 * before the top, one below what is after the bottom, each with its key. */
	if (wz->info_top > 0 && wz->info_top >= (int)wz->ninfo)
		wz->info_top = wz->ninfo ? (int)wz->ninfo - 1 : 0;
	size_t k = (size_t)wz->info_top;
	bool scrolls = false;
	if (k > 0 && y < info_end - 1) {
		char above[80];
		snprintf(above, sizeof(above), "\xe2\x80\xa6 %zu earlier line%s: PgUp shows them", k,
			 k == 1 ? "" : "s");
		draw_text(w, y++, 1, inner, above, theme_attr(R_DIM));
		scrolls = true;
	}
	wz->info_rows = info_end - 1;
	wz->info_cells = inner;
	wz->info_more = false;
	wz->info_next = (int)wz->ninfo;
	for (; k < wz->ninfo && y < info_end; k++) {
		/* a line that does not fit whole, with a row kept for saying so,
		 * shows what fits and is counted as not shown: PgDn starts there */
		int need = draw_wrapped(NULL, 0, 0, inner, 8, wz->info[k].text, 0);
		int room = info_end - y - 1; /* the row saying what is not shown */
		bool last_fits = k + 1 == wz->ninfo && need <= info_end - y;
		if (need > room && !last_fits) {
			if (room > 0)
				draw_wrapped(w, y, 1, inner, room, wz->info[k].text,
					     theme_attr(wz->info[k].role));
			y += room > 0 ? room : 0;
			wz->info_next = (int)k;
			char more[80];
			snprintf(more, sizeof(more), "\xe2\x80\xa6 %zu more line%s not shown: PgDn shows them",
				 wz->ninfo - k, wz->ninfo - k == 1 ? "" : "s");
			draw_text(w, y++, 1, inner, more, theme_attr(R_DIM));
			scrolls = wz->info_more = true;
			break;
		}
		int n = draw_wrapped(w, y, 1, inner, info_end - y, wz->info[k].text,
				     theme_attr(wz->info[k].role));
		y += n > 0 ? n : 1;
	}
	if (wz->ninfo)
		y++;
	for (size_t i = 0; i < wz->nf && y < h - 4; i++) {
		if (wz->one_per_page && (int)i != wz->cur)
			continue;
		y += draw_field(wz, w, y, inner, h - 4, i);
	}
	if (wz->error)
		draw_wrapped(w, h - 4, 1, inner, 2, wz->error, theme_attr(R_ERROR));
	t = (struct sb)SB_INIT;
	sb_adds(&t, wz->one_per_page ? "Enter next step \xc2\xb7 Up back"
				      : "Enter next / save \xc2\xb7 Tab/Up/Down move");
	if (scrolls)
		sb_adds(&t, " \xc2\xb7 PgUp/PgDn context");
	sb_adds(&t, " \xc2\xb7 Esc cancel (nothing is saved)");
	draw_text(w, h - 2, 1, inner, t.buf, theme_attr(R_DIM));
	sb_release(&t);
}
