/* flashape — an FLA op's benchmark shapes and the Target's shape names
 * (see flashape.h). */
#include "core/flashape.h"

#include "core/sb.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_blank(const char *p)
{
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (*p != '#')
			return p;
		while (*p && *p != '\n')
			p++;
	}
}

/* A quoted string at p: its contents in [*s, *e), the index past it. */
static const char *read_string(const char *p, const char **s, const char **e)
{
	char q = *p;
	if (q != '\'' && q != '"')
		return NULL;
	*s = ++p;
	while (*p && *p != q && *p != '\n')
		p += *p == '\\' && p[1] ? 2 : 1;
	if (*p != q)
		return NULL;
	*e = p;
	return p + 1;
}

/* Past the value at p: up to the ',' or closing bracket of its level. */
static const char *skip_value(const char *p)
{
	int depth = 0;
	while (*p) {
		const char *s, *e, *n;
		if ((*p == '\'' || *p == '"') && (n = read_string(p, &s, &e))) {
			p = n;
			continue;
		}
		if (*p == '(' || *p == '[' || *p == '{')
			depth++;
		else if ((*p == ')' || *p == ']' || *p == '}') && depth-- == 0)
			return p;
		else if (*p == ',' && depth == 0)
			return p;
		p++;
	}
	return p;
}

/* The dimensions of one {'B': 1, 'T': 8192, ...} from its '{'. */
static const char *read_dims(const char *p, struct fla_shape *s)
{
	s->B = s->T = s->H = s->D = s->L = -1;
	for (p = skip_blank(p + 1); *p && *p != '}'; p = skip_blank(p)) {
		const char *ks, *ke, *n = read_string(p, &ks, &ke);
		if (!n)
			return skip_value(p);
		p = skip_blank(n);
		if (*p != ':')
			return skip_value(p);
		p = skip_blank(p + 1);
		char *end;
		long v = strtol(p, &end, 10);
		const char *after = skip_blank(end);
		bool plain = end > p && (*after == ',' || *after == '}');
		static const char dims[] = "BTHDL";
		long *slot[] = {&s->B, &s->T, &s->H, &s->D, &s->L};
		if (ke - ks == 1 && strchr(dims, *ks) && plain)
			*slot[strchr(dims, *ks) - dims] = v;
		p = skip_value(p);
		if (*p == ',')
			p++;
	}
	return *p == '}' ? p + 1 : p;
}

/* Where the dict literal named var starts ('{'), or NULL. */
static const char *find_dict(const char *text, const char *var)
{
	if (*var == '{')
		return var;
	size_t vl = strlen(var);
	for (const char *p = text; (p = strstr(p, var)); p += vl) {
		if (p > text && p[-1] != '\n')
			continue;
		const char *q = p + vl;
		if (isalnum((unsigned char)*q) || *q == '_')
			continue;
		while (*q && *q != '\n' && *q != '=')
			q++;
		if (*q != '=' || q[1] == '=')
			continue;
		q = skip_blank(q + 1);
		if (*q == '{')
			return q;
	}
	return NULL;
}

size_t flashape_parse(const char *text, const char *var, struct fla_shape **out)
{
	size_t n = 0;
	*out = NULL;
	const char *p = find_dict(text ? text : "", var);
	if (!p)
		return 0;
	for (p = skip_blank(p + 1); *p && *p != '}'; p = skip_blank(p)) {
		const char *ks, *ke, *next = read_string(p, &ks, &ke);
		if (next && *(next = skip_blank(next)) == ':') {
			/* a value other than a dict literal: a shape of unknown
			 * dimensions */
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			struct fla_shape *s = &(*out)[n++];
			s->name = xstrndup(ks, (size_t)(ke - ks));
			s->B = s->T = s->H = s->D = s->L = -1;
			next = skip_blank(next + 1);
			p = *next == '{' ? read_dims(next, s) : skip_value(next);
		} else {
			p = skip_value(next ? next : p);
		}
		p = skip_blank(p);
		if (*p == ',')
			p++;
		else if (*p != '}')
			break;
	}
	return n;
}

void flashape_free(struct fla_shape *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Is [p, e) one part of a shape name (letters, digits, optional K/M)?
 * *dim: its letters are one dimension's. */
static bool name_part(const char *p, const char *e, bool *dim)
{
	const char *q = p;
	while (q < e && isalpha((unsigned char)*q))
		q++;
	size_t nl = (size_t)(q - p);
	if (nl < 1 || nl > 3 || q == e || !isdigit((unsigned char)*q))
		return false;
	while (q < e && isdigit((unsigned char)*q))
		q++;
	if (q < e && strchr("KkMm", *q))
		q++;
	*dim = nl == 1 && strchr("BTHDLbthdl", *p);
	return q == e;
}

size_t flashape_names_in(const char *text, char ***out)
{
	size_t n = 0;
	*out = NULL;
	for (const char *p = text ? text : ""; *p;) {
		if (!word_char(*p)) {
			p++;
			continue;
		}
		const char *w = p;
		while (word_char(*p))
			p++;
		int parts = 0, dims = 0;
		bool ok = true;
		for (const char *a = w; ok && a < p;) {
			const char *b = memchr(a, '_', (size_t)(p - a));
			b = b ? b : p;
			bool dim = false;
			ok = name_part(a, b, &dim);
			parts++;
			dims += dim;
			a = b + 1;
			if (b < p && a == p)
				ok = false; /* a trailing '_' */
		}
		if (ok && parts >= 2 && dims >= 2) {
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			(*out)[n++] = xstrndup(w, (size_t)(p - w));
		}
	}
	return n;
}

char *flashape_dims(const struct fla_shape *s)
{
	struct sb b = SB_INIT;
	const long v[] = {s->B, s->T, s->H, s->D, s->L};
	static const char dims[] = "BTHDL";
	sb_init(&b);
	for (int i = 0; i < 5; i++)
		if (v[i] >= 0)
			sb_addf(&b, "%s%c=%ld", b.len ? " " : "", dims[i], v[i]);
	return sb_detach(&b);
}
