/*
 * mdtable — the one Markdown table reader and cell writer.  See mdtable.h.
 */
#include "core/mdtable.h"

#include "core/err.h"
#include "core/sb.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void md_cells_release(struct md_cells *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

struct md_span md_span_trim(struct md_span x)
{
	while (x.n && (x.s[0] == ' ' || x.s[0] == '\t'))
		x.s++, x.n--;
	while (x.n && (x.s[x.n - 1] == ' ' || x.s[x.n - 1] == '\t'))
		x.n--;
	return x;
}

const char *md_skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static void md_cells_push(struct md_cells *c, struct md_span x)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	c->v[c->n++] = x;
}

/* End of a code span opened by the backtick run at p (length k), or NULL. */
static const char *code_span_end(const char *p, size_t k, const char *end)
{
	const char *q = p + k;
	while (q < end) {
		const char *b = memchr(q, '`', (size_t)(end - q));
		if (!b)
			return NULL;
		size_t m = 0;
		while (b + m < end && b[m] == '`')
			m++;
		if (m == k)
			return b + m;
		q = b + m;
	}
	return NULL;
}

/* Split one table line into trimmed cells.  Unescaped pipes separate cells;
 * with code_spans, pipes inside `code` do not.  Returns the number of
 * unescaped separator pipes seen. */
size_t md_split_row(struct md_span line, bool code_spans, struct md_cells *c)
{
	const char *p = line.s, *end = line.s + line.n, *start;
	size_t pipes = 0;

	c->n = 0;
	p = md_skip_ws(p, end);
	if (p < end && *p == '|') {
		p++;
		pipes++;
	}
	start = p;
	/* Most rows have no escape and no code span: then every pipe separates,
	 * and memchr finds them far faster than the loop below. */
	if (!memchr(p, '\\', (size_t)(end - p)) && !(code_spans && memchr(p, '`', (size_t)(end - p)))) {
		const char *q;
		while ((q = memchr(p, '|', (size_t)(end - p)))) {
			md_cells_push(c, md_span_trim((struct md_span){start, (size_t)(q - start)}));
			pipes++;
			start = p = q + 1;
		}
		p = end;
	}
	while (p < end) {
		if (*p == '\\' && p + 1 < end) {
			p += 2;
		} else if (*p == '`' && code_spans) {
			size_t k = 0;
			while (p + k < end && p[k] == '`')
				k++;
			const char *q = code_span_end(p, k, end);
			p = q ? q : p + k;
		} else if (*p == '|') {
			md_cells_push(c, md_span_trim((struct md_span){start, (size_t)(p - start)}));
			pipes++;
			start = ++p;
		} else {
			p++;
		}
	}
	struct md_span last = md_span_trim((struct md_span){start, (size_t)(end - start)});
	if (last.n || pipes == 0 || start == line.s)
		md_cells_push(c, last);
	return pipes;
}

/* Cell text with escapes undone (\| -> |, \\ -> \, <br> -> newline),
 * appended to s. */
void md_unescape_into(struct md_span x, struct sb *s)
{
	const char *p = x.s, *end = x.s + x.n;

	while (p < end) {
		/* Copy the plain run up to the next escape or tag in one go. */
		const char *q = p;
		while (q < end && *q != '\\' && *q != '<' && *q != '\r' && *q != '\0')
			q++;
		sb_add(s, p, (size_t)(q - p));
		p = q;
		if (p >= end)
			break;
		if (*p == '\\' && p + 1 < end && (p[1] == '|' || p[1] == '\\')) {
			sb_addc(s, p[1]);
			p += 2;
		} else if (*p == '\0') {
			sb_adds(s, "\xef\xbf\xbd"); /* U+FFFD: a NUL would end the C string */
			p++;
		} else if (*p == '\r') {
			sb_addc(s, '\n'); /* a lone CR inside a line is a break, as render sees it */
			p++;
		} else if (*p == '<' && (end - p >= 4) && strncasecmp(p, "<br", 3) == 0) {
			q = p + 3;
			while (q < end && *q == ' ')
				q++;
			if (q < end && *q == '/')
				q++;
			if (q < end && *q == '>') {
				sb_addc(s, '\n');
				p = q + 1;
			} else {
				sb_addc(s, *p++);
			}
		} else {
			sb_addc(s, *p++);
		}
	}
}

char *md_unescape_cell(struct md_span x)
{
	struct sb s = SB_INIT;

	if (!memchr(x.s, '\\', x.n) && !memchr(x.s, '<', x.n) && !memchr(x.s, '\r', x.n) &&
	    !memchr(x.s, '\0', x.n))
		return xstrndup(x.s, x.n);
	sb_grow(&s, x.n + 2); /* one allocation: unescaping only shrinks, bar U+FFFD */
	md_unescape_into(x, &s);
	return sb_detach(&s);
}

bool md_has_pipe(struct md_span line)
{
	return memchr(line.s, '|', line.n) != NULL;
}

/* "|---|:---:|" — a pipe is required, so a bare "---" rule is not one. */
bool md_is_delim_row(struct md_span line, struct md_cells *c)
{
	if (!md_has_pipe(line))
		return false;
	md_split_row(line, false, c);
	if (c->n == 0)
		return false;
	for (size_t i = 0; i < c->n; i++) {
		const char *p = c->v[i].s, *end = p + c->v[i].n;
		size_t dashes = 0;
		if (p < end && *p == ':')
			p++;
		while (p < end && *p == '-')
			p++, dashes++;
		if (p < end && *p == ':')
			p++;
		if (p != end || dashes == 0)
			return false;
	}
	return true;
}

void md_escape_cell(const char *t, struct sb *out)
{
	if (!t)
		return;
	for (const char *p = t; *p; p++) {
		/* plain text in one piece: a long log renders every cell */
		size_t plain = strcspn(p, "|\\\r\n");
		sb_add(out, p, plain);
		p += plain;
		switch (*p) {
		case '\0':
			return;
		case '|':
			sb_add(out, "\\|", 2);
			break;
		case '\\':
			/* Only where the reader would otherwise take it as an escape. */
			if (p[1] == '\\' || p[1] == '|')
				sb_add(out, "\\\\", 2);
			else
				sb_addc(out, '\\');
			break;
		case '\r': /* CRLF is one break, a lone CR is one too */
			if (p[1] != '\n')
				sb_adds(out, "<br>");
			break;
		default: /* '\n' */
			sb_adds(out, "<br>");
		}
	}
}
