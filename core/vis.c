/* vis — see vis.h. */
#include "core/vis.h"

#include "core/err.h"
#include "core/sb.h"

#include <stdio.h>
#include <string.h>

size_t vis_utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (n <= 1)
		return n;
	unsigned cp = c & (0x7f >> n);
	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[k] & 0x3f);
	}
	static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool vis_is_bidi(const unsigned char *p, size_t n)
{
	if (n == 2)
		return p[0] == 0xd8 && p[1] == 0x9c;
	if (n != 3 || p[0] != 0xe2)
		return false;
	return (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
	       (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
}

/* The code point of the valid n-byte sequence at p. */
static unsigned code_point(const unsigned char *p, size_t n)
{
	if (n == 1)
		return p[0];
	unsigned cp = p[0] & (0x7f >> n);
	for (size_t k = 1; k < n; k++)
		cp = cp << 6 | (p[k] & 0x3f);
	return cp;
}

enum kind { K_PLAIN, K_C0, K_C1, K_BIDI, K_BAD };

/* What the character at p is, and its length in *n (1 for a byte that is
 * not UTF-8).  All but K_PLAIN are what a terminal acts on or shows out of
 * order (C0 counts DEL). */
static enum kind classify(const unsigned char *p, size_t *n)
{
	*n = vis_utf8_len(p);
	if (*n == 0) {
		*n = 1;
		return K_BAD;
	}
	unsigned cp = code_point(p, *n);
	if (*n == 1)
		return cp < 0x20 || cp == 0x7f ? K_C0 : K_PLAIN;
	if (cp >= 0x80 && cp <= 0x9f)
		return K_C1;
	return vis_is_bidi(p, *n) ? K_BIDI : K_PLAIN;
}

bool vis_escape(const char *s, struct sb *out)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	bool spelled = false;
	for (size_t i = 0, n; p[i]; i += n) {
		enum kind k = classify(p + i, &n);
		spelled |= k != K_PLAIN;
		switch (k) {
		case K_PLAIN:
			sb_add(out, p + i, n);
			break;
		case K_BAD:
			sb_addf(out, "\\x%02x", p[i]);
			break;
		case K_C1:
		case K_BIDI:
			sb_addf(out, "\\u%04x", code_point(p + i, n));
			break;
		case K_C0:
			switch (p[i]) {
			case '\t': sb_adds(out, "\\t"); break;
			case '\r': sb_adds(out, "\\r"); break;
			case '\n': sb_adds(out, "\\n"); break;
			case 0x1b: sb_adds(out, "\\e"); break;
			default: sb_addf(out, "\\x%02x", p[i]); break;
			}
			break;
		}
	}
	return spelled;
}

int vis_check(const char *name, const char *s, const char *keep, const char *why,
	      const char *fix, struct err *e)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	for (size_t i = 0, n; p[i]; i += n) {
		enum kind k = classify(p + i, &n);
		if (k == K_BAD)
			return err_set(e, ERR_USAGE,
				       "%s is not valid UTF-8 (byte 0x%02x at byte %zu); give the text in "
				       "UTF-8",
				       name, p[i], i + 1);
		if (k == K_BIDI)
			return err_set(e, ERR_USAGE,
				       "%s holds a bidirectional control character (U+%04X, at byte %zu), "
				       "which makes a terminal show the text in another order than it "
				       "is stored; %s",
				       name, code_point(p + i, n), i + 1, fix);
		if (k == K_PLAIN || (k == K_C0 && strchr(keep ? keep : "", p[i])))
			continue;
		char what[16];
		if (k == K_C1)
			snprintf(what, sizeof(what), "U+%04X", code_point(p + i, n));
		else if (p[i] == 0x1b)
			snprintf(what, sizeof(what), "ESC");
		else if (p[i] == 0x7f)
			snprintf(what, sizeof(what), "DEL");
		else
			snprintf(what, sizeof(what), "0x%02x", p[i]);
		return err_set(e, ERR_USAGE, "%s holds a control character (%s, at byte %zu), %s; %s",
			       name, what, i + 1, why, fix);
	}
	return 0;
}

/* Characters a shell takes as they are, anywhere in a word. */
static const char bare[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			   "/._-+,:@%";

void vis_shell_word(const char *s, struct sb *out)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	bool acts = false;
	for (size_t i = 0, n; p[i] && !acts; i += n)
		acts = classify(p + i, &n) != K_PLAIN;
	if (*p && !p[strspn((const char *)p, bare)]) {
		sb_adds(out, (const char *)p);
	} else if (!acts) {
		sb_addc(out, '\'');
		for (size_t i = 0; p[i]; i++)
			if (p[i] == '\'')
				sb_adds(out, "'\\''");
			else
				sb_addc(out, (char)p[i]);
		sb_addc(out, '\'');
	} else {
		/* printf's format spells every byte out in octal, in any sh */
		sb_adds(out, "\"$(printf '");
		for (size_t i = 0, n; p[i]; i += n) {
			if (classify(p + i, &n) != K_PLAIN) {
				for (size_t k = 0; k < n; k++)
					sb_addf(out, "\\%03o", p[i + k]);
				continue;
			}
			for (size_t k = 0; k < n; k++) {
				unsigned char c = p[i + k];
				if (c == '\'')
					sb_adds(out, "'\\''");
				else if (c == '\\')
					sb_adds(out, "\\\\");
				else if (c == '%')
					sb_adds(out, "%%");
				else
					sb_addc(out, (char)c);
			}
		}
		sb_adds(out, "')\"");
	}
}
