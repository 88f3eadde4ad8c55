/*
 * sanitize — see sanitize.h.  A security boundary: every byte a view draws
 * from outside optloop went through sanitize_line/fit/cell first.  Keep this
 * file free of curses so it can be tested and fuzzed on its own.
 */
#include "views/sanitize.h"

#include "core/sb.h"

#include <langinfo.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

#define REPLACEMENT 0xFFFD
#define ESC 0x1b

static bool ascii_mode;

bool sanitize_init(void)
{
	const char *cs = nl_langinfo(CODESET);
	ascii_mode = !(cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8")));
	return !ascii_mode;
}

void sanitize_set_ascii(bool ascii)
{
	ascii_mode = ascii;
}

bool sanitize_is_ascii(void)
{
	return ascii_mode;
}

/* Strict UTF-8 decoding: no overlongs, no surrogates, nothing past
 * U+10FFFF.  Returns the byte length consumed (>= 1) and the code point,
 * or -1 in *cp for an invalid sequence (one byte consumed). */
static size_t utf8_decode(const unsigned char *s, size_t len, int32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	int32_t v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, v = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, v = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, v = c & 0x07, min = 0x10000;
	else
		goto bad;
	if (len < n)
		goto bad;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		goto bad;
	*cp = v;
	return n;
bad:
	*cp = -1;
	return 1;
}

static void utf8_put(struct sb *out, int32_t cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	sb_add(out, b, n);
}

/* Characters that must never reach the terminal even though they are
 * valid UTF-8: bidi embeddings, overrides and isolates (they reorder what
 * the user sees), and the BOM in mid-text. */
static bool is_invisible_control(int32_t cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff;
}

/* A few common typographic characters have honest ASCII spellings. */
static const char *ascii_spelling(int32_t cp)
{
	switch (cp) {
	case 0x2014: /* em dash */
	case 0x2013: /* en dash */
	case 0x2212: /* minus */
		return "-";
	case 0x2026:
		return "...";
	case 0x00b7: /* middle dot */
	case 0x2022: /* bullet */
		return ".";
	case 0x00d7:
		return "x";
	case 0x2018:
	case 0x2019:
		return "'";
	case 0x201c:
	case 0x201d:
		return "\"";
	case 0x2192:
		return "->";
	case 0x2264:
		return "<=";
	case 0x2265:
		return ">=";
	case 0x00b1:
		return "+-";
	case 0x2713:
		return "x";
	case 0x2588: /* full block */
	case 0x2593:
		return "#";
	case 0x2591:
	case 0x2500:
		return "-";
	case 0x2502:
		return "|";
	}
	return NULL;
}

/* Where a string-type control sequence (OSC, DCS, SOS, PM, APC) ends:
 * after BEL, ESC \ or C1 ST (U+009C as UTF-8), or at the end of input. */
static size_t skip_string(const unsigned char *s, size_t len, size_t i)
{
	while (i < len) {
		if (s[i] == 0x07)
			return i + 1;
		if (s[i] == ESC && i + 1 < len && s[i + 1] == '\\')
			return i + 2;
		if (s[i] == 0xc2 && i + 1 < len && s[i + 1] == 0x9c)
			return i + 2;
		/* A raw 8-bit ST as well, for terminals that take it. */
		if (s[i] == 0x9c)
			return i + 1;
		i++;
	}
	return len;
}

/* Parameters, intermediates and the final byte of a CSI starting at i. */
static size_t skip_csi(const unsigned char *s, size_t len, size_t i)
{
	while (i < len && s[i] >= 0x20 && s[i] <= 0x3f)
		i++;
	if (i < len && s[i] >= 0x40 && s[i] <= 0x7e)
		i++;
	return i;
}

/* s[i] is ESC: return the index just past the whole escape sequence. */
static size_t skip_escape(const unsigned char *s, size_t len, size_t i)
{
	i++; /* ESC */
	if (i >= len)
		return i;
	switch (s[i]) {
	case '[':
		return skip_csi(s, len, i + 1);
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		return skip_string(s, len, i + 1);
	case 'N': /* SS2, SS3: one more character follows */
	case 'O':
		return (i + 1 < len && s[i + 1] >= 0x20 && s[i + 1] < 0x7f) ? i + 2 : i + 1;
	}
	/* nF / Fp / Fe / Fs: intermediates then one final byte. */
	while (i < len && s[i] >= 0x20 && s[i] <= 0x2f)
		i++;
	if (i < len && s[i] >= 0x30 && s[i] <= 0x7e)
		i++;
	return i;
}

/* Does the rest of the input hold anything but line ends? (A CR before
 * the end of the line is a redraw; a CR of a CRLF is not.) */
static bool only_line_ends(const unsigned char *s, size_t len, size_t i)
{
	for (; i < len; i++)
		if (s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

int sanitize_line(const char *in, size_t len, struct sb *out)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t start = out->len, i = 0;
	int col = 0;

	if (!in)
		return 0;
	while (i < len) {
		unsigned char c = s[i];

		if (c == ESC) {
			i = skip_escape(s, len, i);
			continue;
		}
		if (c == '\r') {
			if (!only_line_ends(s, len, i + 1)) {
				out->len = start;
				out->buf[start] = '\0';
				col = 0;
			}
			i++;
			continue;
		}
		if (c == '\t') {
			int n = 8 - col % 8;
			for (int k = 0; k < n; k++)
				sb_addc(out, ' ');
			col += n;
			i++;
			continue;
		}
		if (c == '\n') {
			sb_addc(out, ' ');
			col++;
			i++;
			continue;
		}
		if (c < 0x20 || c == 0x7f) {
			i++;
			continue;
		}
		if (c < 0x80) {
			sb_addc(out, (char)c);
			col++;
			i++;
			continue;
		}

		int32_t cp;
		size_t n = utf8_decode(s + i, len - i, &cp);

		/* C1 controls in their UTF-8 spelling: a UTF-8 terminal may act on
		 * them, so the introducers take their whole sequence with them. */
		if (cp >= 0x80 && cp <= 0x9f) {
			if (cp == 0x9b)
				i = skip_csi(s, len, i + n);
			else if (cp == 0x9d || cp == 0x90 || cp == 0x98 || cp == 0x9e || cp == 0x9f)
				i = skip_string(s, len, i + n);
			else
				i += n;
			continue;
		}
		i += n;
		if (cp >= 0 && is_invisible_control(cp))
			continue;
		if (cp == 0x2028 || cp == 0x2029)
			cp = ' ';
		if (ascii_mode) {
			const char *a = cp >= 0 ? ascii_spelling(cp) : NULL;
			if (!a)
				a = "?";
			sb_adds(out, a);
			col += (int)strlen(a);
			continue;
		}
		int w = cp >= 0 ? wcwidth((wchar_t)cp) : -1;
		if (w < 0) {
			cp = REPLACEMENT;
			w = 1;
		}
		utf8_put(out, cp);
		col += w;
	}
	return col;
}

/* Width of one clean character at s (length n returned). */
static int char_width(const char *s, size_t len, size_t *n)
{
	int32_t cp;

	*n = utf8_decode((const unsigned char *)s, len, &cp);
	if (cp < 0)
		return 1;
	if (cp < 0x80)
		return 1;
	int w = wcwidth((wchar_t)cp);
	return w < 0 ? 1 : w;
}

int sanitize_width(const char *clean, size_t len)
{
	int w = 0;
	size_t i = 0, n;

	while (i < len) {
		w += char_width(clean + i, len - i, &n);
		i += n;
	}
	return w;
}

int sanitize_char_width(const char *clean, size_t len, size_t *n)
{
	return char_width(clean, len, n);
}

int sanitize_skip(const char *clean, size_t len, int skip, struct sb *out)
{
	size_t i = 0, n;
	int col = 0;

	while (i < len && col < skip) {
		col += char_width(clean + i, len - i, &n);
		i += n;
	}
	/* combining marks of a skipped character go with it */
	while (i < len && char_width(clean + i, len - i, &n) == 0)
		i += n;
	int w = 0;
	if (col > skip) {
		sb_addc(out, ' ');
		w = 1;
	}
	sb_add(out, clean + i, len - i);
	return w + sanitize_width(clean + i, len - i);
}

int sanitize_fit(const char *in, size_t len, int cells, struct sb *out)
{
	struct sb tmp = SB_INIT;
	int w;

	if (cells <= 0 || !in)
		return 0;
	sb_init(&tmp);
	w = sanitize_line(in, len, &tmp);
	if (w <= cells) {
		sb_add(out, tmp.buf, tmp.len);
		sb_release(&tmp);
		return w;
	}

	const char *ell = ascii_mode ? "~" : "\xe2\x80\xa6";
	int used = 0;
	size_t i = 0, n;

	while (i < tmp.len) {
		int cw = char_width(tmp.buf + i, tmp.len - i, &n);
		if (used + cw > cells - 1)
			break;
		sb_add(out, tmp.buf + i, n);
		used += cw;
		i += n;
	}
	/* Combining marks that belong to the last kept character. */
	while (i < tmp.len && char_width(tmp.buf + i, tmp.len - i, &n) == 0) {
		sb_add(out, tmp.buf + i, n);
		i += n;
	}
	sb_adds(out, ell);
	sb_release(&tmp);
	return used + 1;
}

void sanitize_cell(const char *in, int cells, bool right, struct sb *out)
{
	struct sb tmp = SB_INIT;
	int w;

	if (cells <= 0)
		return;
	sb_init(&tmp);
	w = sanitize_fit(in ? in : "", in ? strlen(in) : 0, cells, &tmp);
	if (right)
		for (int k = w; k < cells; k++)
			sb_addc(out, ' ');
	sb_add(out, tmp.buf, tmp.len);
	if (!right)
		for (int k = w; k < cells; k++)
			sb_addc(out, ' ');
	sb_release(&tmp);
}
