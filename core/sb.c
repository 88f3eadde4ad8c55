/* sb — growable strings and the allocation helpers the engine shares. */
#include "core/sb.h"
#include "core/err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		BUG("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		BUG("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		BUG("out of memory (%zu bytes)", n);
	return q;
}

char *xstrdup(const char *s)
{
	return s ? xstrndup(s, strlen(s)) : NULL;
}

char *xstrndup(const char *s, size_t n)
{
	char *p;
	if (!s)
		return NULL;
	p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct sb s = SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&s, fmt, ap);
	va_end(ap);
	return sb_detach(&s);
}

void sb_init(struct sb *s)
{
	s->buf = NULL;
	s->len = s->cap = 0;
	sb_grow(s, 0);
}

void sb_release(struct sb *s)
{
	free(s->buf);
	s->buf = NULL;
	s->len = s->cap = 0;
}

void sb_reset(struct sb *s)
{
	s->len = 0;
	if (s->buf)
		s->buf[0] = '\0';
}

void sb_grow(struct sb *s, size_t extra)
{
	size_t need = s->len + extra + 1;
	if (need <= s->cap && s->buf)
		return;
	size_t cap = s->cap ? s->cap : 64;
	while (cap < need)
		cap *= 2;
	s->buf = xrealloc(s->buf, cap);
	if (s->cap == 0)
		s->buf[0] = '\0';
	s->cap = cap;
}

void sb_add(struct sb *s, const void *data, size_t n)
{
	sb_grow(s, n);
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

void sb_adds(struct sb *s, const char *str)
{
	sb_add(s, str, strlen(str));
}

void sb_addc(struct sb *s, char c)
{
	sb_add(s, &c, 1);
}

void sb_vaddf(struct sb *s, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	sb_grow(s, 64);
	va_copy(cp, ap);
	n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("bad format string %s", fmt);
	if ((size_t)n >= s->cap - s->len) {
		sb_grow(s, (size_t)n);
		vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
	}
	s->len += (size_t)n;
}

void sb_addf(struct sb *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(s, fmt, ap);
	va_end(ap);
}

void sb_trim(struct sb *s)
{
	size_t a = 0, b = s->len;
	if (!s->buf)
		return;
	while (a < b && isspace((unsigned char)s->buf[a]))
		a++;
	while (b > a && isspace((unsigned char)s->buf[b - 1]))
		b--;
	memmove(s->buf, s->buf + a, b - a);
	s->len = b - a;
	s->buf[s->len] = '\0';
}

char *sb_detach(struct sb *s)
{
	char *p;
	if (!s->buf)
		sb_grow(s, 0);
	p = s->buf;
	s->buf = NULL;
	s->len = s->cap = 0;
	return p;
}

const char *sb_str(const struct sb *s)
{
	return s->buf ? s->buf : "";
}

int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}
