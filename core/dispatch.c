/*
 * dispatch — read and write dispatch.md (see dispatch.h).
 *
 * The first pipe table whose header names a bucket column is the dispatch
 * table; its columns are found by header name, so a hand-edited table with
 * columns in another order still reads.  Rendering always writes the six
 * documented columns with the evidence at the end of the Why cell.
 */
#include "core/dispatch.h"
#include "core/mdtable.h"
#include "core/contract.h"

#include "core/err.h"
#include "core/sb.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum col { C_BUCKET, C_ENTRY, C_BASE, C_CAND, C_SPEEDUP, C_WHY, C_EVIDENCE, NCOLS };

/* ---- cells --------------------------------------------------------------- */

/* The line's cells, unescaped (md_split_row, then md_unescape_cell). */
static size_t split_cells(const char *l, struct md_cells *tmp, char ***out)
{
	struct md_span line = {l, strlen(l)};
	md_split_row(line, false, tmp);
	char **v = xcalloc(tmp->n ? tmp->n : 1, sizeof(*v));
	for (size_t i = 0; i < tmp->n; i++)
		v[i] = md_unescape_cell(tmp->v[i]);
	*out = v;
	return tmp->n;
}

static void free_cells(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static bool is_table_line(const char *l)
{
	struct md_span line = {l, strlen(l)};
	line = md_span_trim(line);
	return line.n && line.s[0] == '|';
}

static int col_of(const char *h)
{
	static const struct {
		const char *word;
		enum col c;
	} w[] = {
		{"bucket", C_BUCKET},	  {"entry", C_ENTRY},	   {"baseline", C_BASE},
		{"candidate", C_CAND},	  {"speedup", C_SPEEDUP},  {"why", C_WHY},
		{"evidence", C_EVIDENCE}, {"iter", C_EVIDENCE},
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strncasecmp(h, w[i].word, strlen(w[i].word)))
			return w[i].c;
	return -1;
}

/* "0.973", "0.973 ms", "1.25x", "1.25×"; "—", "-", "" -> NAN. */
static double num_of(const char *s, bool *bad)
{
	while (isspace((unsigned char)*s))
		s++;
	if (!*s || !strcmp(s, "—") || !strcmp(s, "-") || !strcasecmp(s, "n/a"))
		return NAN;
	char *end;
	double v = strtod(s, &end);
	if (end == s || !isfinite(v)) {
		*bad = true;
		return NAN;
	}
	while (isspace((unsigned char)*end))
		end++;
	if (*end && strcasecmp(end, "ms") && strcmp(end, "x") && strcmp(end, "X") &&
	    strcmp(end, "×")) {
		*bad = true;
		return NAN;
	}
	return v;
}

/* ---- evidence ------------------------------------------------------------- */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int dispatch_evidence_parse(const char *s, int **iters, size_t *n, struct err *e)
{
	*iters = NULL;
	*n = 0;
	int *v = NULL;
	size_t nv = 0;
	const char *p = s ? s : "";
	while (*p) {
		if (isdigit((unsigned char)*p)) {
			char *end;
			long a = strtol(p, &end, 10), b = a;
			p = end;
			if (*p == '-' && isdigit((unsigned char)p[1])) {
				b = strtol(p + 1, &end, 10);
				p = end;
			}
			if (a < 0 || b < a || b - a > 1000 || b > 1000000) {
				free(v);
				return err_set(e, ERR_USAGE,
					       "evidence '%s': %ld-%ld is not a range of iterations "
					       "(write e.g. 3,5 or 3-5)",
					       s, a, b);
			}
			for (long k = a; k <= b; k++) {
				v = xrealloc(v, (nv + 1) * sizeof(*v));
				v[nv++] = (int)k;
			}
			continue;
		}
		if (isalpha((unsigned char)*p)) {
			const char *w = p;
			while (isalpha((unsigned char)*p))
				p++;
			size_t wl = (size_t)(p - w);
			static const char *const ok[] = {"iter", "iters", "iteration", "iterations",
							 "it", "and", "i"};
			bool known = false;
			for (size_t k = 0; k < sizeof(ok) / sizeof(ok[0]); k++)
				if (strlen(ok[k]) == wl && !strncasecmp(w, ok[k], wl))
					known = true;
			if (!known) {
				free(v);
				return err_set(e, ERR_USAGE,
					       "evidence '%s': '%.*s' is not an iteration number "
					       "(cite iterations as e.g. 3,5)",
					       s, (int)wl, w);
			}
			continue;
		}
		if (!strchr(" ,;#.\t", *p)) {
			free(v);
			return err_set(e, ERR_USAGE,
				       "evidence '%s': unexpected '%c' (cite iterations as e.g. 3,5)",
				       s, *p);
		}
		p++;
	}
	if (!nv)
		return err_set(e, ERR_USAGE,
			       "no evidence cited: a dispatch row must name the iterations that "
			       "measured its bucket (e.g. --evidence 3,5)");
	qsort(v, nv, sizeof(*v), cmp_int);
	size_t u = 0;
	for (size_t i = 0; i < nv; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*iters = v;
	*n = u;
	return 0;
}

static char *evidence_norm(const int *v, size_t n)
{
	struct sb s = SB_INIT;
	for (size_t i = 0; i < n; i++)
		sb_addf(&s, "%s%d", i ? "," : "", v[i]);
	return sb_detach(&s);
}

/* Split "why text (iters 3, 5)" into the text and "3,5". */
static void why_split(const char *cell, char **why, char **evidence)
{
	*evidence = NULL;
	size_t n = strlen(cell);
	if (n && cell[n - 1] == ')') {
		const char *open = strrchr(cell, '(');
		if (open && !strncasecmp(open + 1, "iter", 4)) {
			struct sb inner = SB_INIT;
			sb_add(&inner, open + 1, (size_t)(cell + n - 1 - open - 1));
			int *v;
			size_t nv;
			if (dispatch_evidence_parse(inner.buf, &v, &nv, NULL) == 0) {
				*evidence = evidence_norm(v, nv);
				free(v);
				struct sb w = SB_INIT;
				sb_add(&w, cell, (size_t)(open - cell));
				sb_trim(&w);
				*why = sb_detach(&w);
				if (!*why)
					*why = xstrdup("");
				sb_release(&inner);
				return;
			}
			sb_release(&inner);
		}
	}
	*why = xstrdup(cell);
}

/* ---- parse ---------------------------------------------------------------- */

static void problem(struct problems *p, int lineno, char *msg)
{
	if (!p) {
		free(msg);
		return;
	}
	p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
	p->v[p->n++] = (struct problem){lineno, msg};
}

static void push_row(struct dispatch_doc *d, struct dispatch_row *r)
{
	d->v = xrealloc(d->v, (d->n + 1) * sizeof(*d->v));
	d->v[d->n++] = *r;
}

int dispatch_parse(const char *text, size_t len, struct dispatch_doc *d,
		   struct problems *probs, struct err *e)
{
	struct sb pre = SB_INIT, after = SB_INIT, line = SB_INIT;
	const char *p = text, *end = text + len;
	int stage = 0; /* 0 before the table, 1 header seen, 2 in rows, 3 after */
	int map[NCOLS];
	int lineno = 0;
	struct md_cells tmp = {0};

	memset(d, 0, sizeof(*d));
	if (probs)
		memset(probs, 0, sizeof(*probs));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		sb_reset(&line);
		sb_add(&line, p, n);
		p = nl ? nl + 1 : end;
		lineno++;
		line.len = strlen(line.buf);
		while (line.len && line.buf[line.len - 1] == '\r')
			line.buf[--line.len] = '\0';
		const char *l = line.buf;

		if (stage == 0 && is_table_line(l)) {
			char **c;
			size_t nc = split_cells(l, &tmp, &c);
			for (int k = 0; k < NCOLS; k++)
				map[k] = -1;
			for (size_t k = 0; k < nc; k++) {
				int col = col_of(c[k]);
				if (col >= 0 && map[col] < 0)
					map[col] = (int)k;
			}
			free_cells(c, nc);
			if (map[C_BUCKET] >= 0 && map[C_ENTRY] >= 0) {
				stage = 1;
				continue;
			}
		} else if (stage == 1) {
			if (md_is_delim_row((struct md_span){l, strlen(l)}, &tmp)) {
				stage = 2;
				continue;
			}
			problem(probs, lineno,
				xasprintf("the dispatch table header is not followed by a |---| "
					  "separator line; the table is not read"));
			stage = 3;
		} else if (stage == 2) {
			if (!is_table_line(l)) {
				stage = 3;
			} else {
				char **c;
				size_t nc = split_cells(l, &tmp, &c);
				const char *cell[NCOLS];
				for (int k = 0; k < NCOLS; k++)
					cell[k] = map[k] >= 0 && (size_t)map[k] < nc ? c[map[k]] : "";
				struct dispatch_row r = {0};
				bool bad = false;
				r.bucket = xstrdup(cell[C_BUCKET]);
				r.entry = xstrdup(cell[C_ENTRY]);
				r.base_ms = num_of(cell[C_BASE], &bad);
				r.cand_ms = num_of(cell[C_CAND], &bad);
				r.speedup = num_of(cell[C_SPEEDUP], &bad);
				why_split(cell[C_WHY], &r.why, &r.evidence);
				if (map[C_EVIDENCE] >= 0 && *cell[C_EVIDENCE]) {
					int *v;
					size_t nv;
					if (dispatch_evidence_parse(cell[C_EVIDENCE], &v, &nv, NULL) == 0) {
						free(r.evidence);
						r.evidence = evidence_norm(v, nv);
						free(v);
					} else {
						bad = true;
					}
				}
				if (bad)
					problem(probs, lineno,
						xasprintf("dispatch row '%s': a number or the evidence "
							  "cannot be read (timings like 0.973, speedup "
							  "like 1.25x, evidence like (iters 3, 5))",
							  r.bucket));
				if (!r.evidence)
					problem(probs, lineno,
						xasprintf("dispatch row '%s' cites no iterations; add "
							  "(iters N, ...) to its Why cell",
							  r.bucket));
				if (!*r.bucket && !*r.entry && nc == 0) {
					dispatch_row_release(&r);
				} else {
					push_row(d, &r);
				}
				free_cells(c, nc);
				continue;
			}
		}
		if (stage == 0)
			sb_addf(&pre, "%s%s", lineno > 1 ? "\n" : "", l);
		else if (stage >= 3)
			sb_addf(&after, "%s%s", after.len || stage == 4 ? "\n" : "", l), stage = 4;
	}
	sb_trim(&pre);
	sb_trim(&after);
	d->preamble = xstrdup(sb_str(&pre));
	d->after = xstrdup(sb_str(&after));
	sb_release(&pre);
	sb_release(&after);
	sb_release(&line);
	md_cells_release(&tmp);
	(void)e;
	return 0;
}

/* ---- render --------------------------------------------------------------- */

static void cell_text(struct sb *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			sb_adds(out, "\\|");
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			sb_addc(out, ' ');
		else
			sb_addc(out, *s);
	}
}

static void cell_num(struct sb *out, double v, const char *suffix)
{
	if (isnan(v))
		sb_adds(out, "—");
	else
		sb_addf(out, suffix ? "%.2f%s" : "%.3f", v, suffix ? suffix : "");
}

void dispatch_render(const struct dispatch_doc *d, struct sb *out)
{
	if (d->preamble && *d->preamble)
		sb_addf(out, "%s\n\n", d->preamble);
	else
		sb_adds(out, "# Dispatch\n\nWhich entry point serves which bucket of shapes, and the "
			     "iterations whose measurements chose it.\n\n");
	sb_adds(out, "| Bucket condition | Entry point chosen | Baseline ms | Candidate ms | "
		     "Speedup | Why this path |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < d->n; i++) {
		const struct dispatch_row *r = &d->v[i];
		sb_adds(out, "| ");
		cell_text(out, r->bucket);
		sb_adds(out, " | ");
		cell_text(out, r->entry);
		sb_adds(out, " | ");
		cell_num(out, r->base_ms, NULL);
		sb_adds(out, " | ");
		cell_num(out, r->cand_ms, NULL);
		sb_adds(out, " | ");
		cell_num(out, r->speedup, "x");
		sb_adds(out, " | ");
		cell_text(out, r->why);
		if (r->evidence && *r->evidence) {
			bool many = strchr(r->evidence, ',') != NULL;
			sb_addf(out, "%s(iter%s ", r->why && *r->why ? " " : "", many ? "s" : "");
			for (const char *p = r->evidence; *p; p++) {
				sb_addc(out, *p);
				if (*p == ',')
					sb_addc(out, ' ');
			}
			sb_addc(out, ')');
		}
		sb_adds(out, " |\n");
	}
	if (d->after && *d->after)
		sb_addf(out, "\n%s\n", d->after);
}

/* ---- rows ----------------------------------------------------------------- */

static bool blank(const char *s)
{
	for (; s && *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

int dispatch_row_check(const struct dispatch_row *r, struct err *e)
{
	if (blank(r->bucket))
		return err_set(e, ERR_USAGE,
			       "dispatch row refused: no bucket condition (say which shapes, e.g. "
			       "'T <= 64')");
	if (blank(r->entry))
		return err_set(e, ERR_USAGE,
			       "dispatch row refused: no entry point (name the function chosen for "
			       "bucket '%s')",
			       r->bucket);
	int *v;
	size_t n;
	int rc = dispatch_evidence_parse(r->evidence, &v, &n, e);
	if (rc < 0)
		return err_prefix(e, "dispatch row refused: "), rc;
	free(v);
	if ((!isnan(r->base_ms) && r->base_ms <= 0) || (!isnan(r->cand_ms) && r->cand_ms <= 0))
		return err_set(e, ERR_USAGE,
			       "dispatch row refused: timings must be positive milliseconds");
	return 0;
}

void dispatch_doc_add(struct dispatch_doc *d, const struct dispatch_row *r)
{
	struct dispatch_row c = {
		.bucket = xstrdup(r->bucket ? r->bucket : ""),
		.entry = xstrdup(r->entry ? r->entry : ""),
		.base_ms = r->base_ms,
		.cand_ms = r->cand_ms,
		.speedup = r->speedup,
		.why = xstrdup(r->why ? r->why : ""),
		.evidence = NULL,
	};
	int *v;
	size_t n;
	if (r->evidence && dispatch_evidence_parse(r->evidence, &v, &n, NULL) == 0) {
		c.evidence = evidence_norm(v, n);
		free(v);
	}
	if (isnan(c.speedup) && !isnan(c.base_ms) && !isnan(c.cand_ms) && c.cand_ms > 0)
		c.speedup = c.base_ms / c.cand_ms;
	push_row(d, &c);
}

void dispatch_doc_release(struct dispatch_doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		dispatch_row_release(&d->v[i]);
	free(d->v);
	free(d->preamble);
	free(d->after);
	memset(d, 0, sizeof(*d));
}

/* ---- buckets as tests on shapes ---- */

static const char bucket_dims[] = "BTHDL";

/* One comparison at p ("T <= 1024", "T≥4096"); its end, or NULL. */
static const char *read_cmp(const char *text, const char *p, int *dim, int *op, long *v)
{
	const char *d = strchr(bucket_dims, *p);
	if (!*p || !d || (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
		return NULL;
	const char *q = p + 1;
	while (*q == ' ')
		q++;
	if (!strncmp(q, "<=", 2) || !strncmp(q, "\xe2\x89\xa4", 3)) {
		*op = 'l';
		q += *q == '<' ? 2 : 3;
	} else if (!strncmp(q, ">=", 2) || !strncmp(q, "\xe2\x89\xa5", 3)) {
		*op = 'g';
		q += *q == '>' ? 2 : 3;
	} else if (*q == '<' || *q == '>') {
		*op = *q++;
	} else if (*q == '=') {
		*op = '=';
		q += q[1] == '=' ? 2 : 1;
	} else {
		return NULL;
	}
	while (*q == ' ')
		q++;
	if (!isdigit((unsigned char)*q))
		return NULL;
	char *end;
	*v = strtol(q, &end, 10);
	*dim = (int)(d - bucket_dims);
	return end;
}

int dispatch_bucket_parse(const char *text, struct dispatch_bucket *b, struct err *e)
{
	memset(b, 0, sizeof(*b));
	const char *t = text ? text : "";
	bool ordered = false;
	for (const char *p = t; *p;) {
		int dim, op;
		long v;
		const char *end = read_cmp(t, p, &dim, &op, &v);
		if (!end) {
			p++;
			continue;
		}
		if (b->ncmp == DISPATCH_CMP_MAX)
			return err_set(e, ERR_USAGE, "the bucket '%s' holds more than %d conditions",
				       t, DISPATCH_CMP_MAX);
		b->cmp[b->ncmp].dim = dim;
		b->cmp[b->ncmp].op = op;
		b->cmp[b->ncmp].v = v;
		b->ncmp++;
		ordered |= op != '=';
		p = end;
	}
	/* only equalities: the shapes it names ("T=2048 H=16" is one shape) */
	if (!ordered) {
		b->ncmp = 0;
		b->nshapes = contract_target_shapes(t, &b->shapes);
	}
	if (!b->ncmp && !b->nshapes)
		return err_set(e, ERR_USAGE,
			       "cannot read the bucket '%s' as shapes: write it as conditions "
			       "(T <= 1024, D = 64 and T > 512) or shapes (B4_T2048_H16_D128, "
			       "T=2048 H=16), or give its times with --base-ms and --cand-ms",
			       t);
	return 0;
}

static long row_dim(const struct parse_row *r, int dim)
{
	const long v[] = {r->B, r->T, r->H, r->D, r->L};
	return v[dim];
}

bool dispatch_bucket_matches(const struct dispatch_bucket *b, const struct parse_row *r)
{
	if (b->ncmp) {
		for (size_t i = 0; i < b->ncmp; i++) {
			long x = row_dim(r, b->cmp[i].dim), v = b->cmp[i].v;
			bool ok = x >= 0 && (b->cmp[i].op == '<'   ? x < v
					     : b->cmp[i].op == '>' ? x > v
					     : b->cmp[i].op == 'l' ? x <= v
					     : b->cmp[i].op == 'g' ? x >= v
								   : x == v);
			if (!ok)
				return false;
		}
		return true;
	}
	for (size_t i = 0; i < b->nshapes; i++) {
		const struct contract_shape *s = &b->shapes[i];
		const long want[] = {s->B, s->T, s->H, s->D, s->L};
		bool ok = !s->mode || (r->mode && !strcasecmp(s->mode, r->mode));
		for (int d = 0; ok && d < 5; d++)
			ok = want[d] < 0 || want[d] == row_dim(r, d);
		if (ok)
			return true;
	}
	return false;
}

void dispatch_bucket_release(struct dispatch_bucket *b)
{
	contract_shapes_free(b->shapes, b->nshapes);
	memset(b, 0, sizeof(*b));
}
