/*
 * lint — trap patterns applied to an iteration's diff (see lint.h; the rule
 * file format is documented in assets/lints/README.md).
 *
 * The diff is first split into lines that know their file, hunk, side and
 * line number; each rule kind then walks that list: `match` line by line,
 * `increase` over paired removed/added lines of one hunk (a tolerance that
 * grew), `fewer` over one file's removed and added lines (cases that went
 * away).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "core/lint.h"

#include "core/assets.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum lint_kind { LK_MATCH, LK_INCREASE, LK_FEWER };
enum { SIDE_ADDED = 1, SIDE_REMOVED = 2 };

struct rule {
	char *id, *trap, *message, *origin;
	int lineno;
	enum lint_kind kind;
	int side;
	pcre2_code *match, *unless, *files, *exclude, *value, *count;
};

struct lint_set {
	struct rule *v;
	size_t n, cap;
};

/* ---- the diff as a list of lines ---------------------------------------- */

struct dline {
	int file, hunk;
	char side; /* '+' or '-'; context lines are not kept */
	int lineno;
	const char *text;
	size_t len;
	bool moved; /* the same text is on the other side in this file: only moved */
};

struct dfile {
	char *path;
};

struct diff {
	struct dline *l;
	size_t n, cap;
	struct dfile *f;
	size_t nf, capf;
};

static void diff_release(struct diff *d)
{
	for (size_t i = 0; i < d->nf; i++)
		free(d->f[i].path);
	free(d->f);
	free(d->l);
}

static int diff_add_file(struct diff *d)
{
	if (d->nf == d->capf) {
		d->capf = d->capf ? d->capf * 2 : 8;
		d->f = xrealloc(d->f, d->capf * sizeof(*d->f));
	}
	d->f[d->nf].path = NULL;
	return (int)d->nf++;
}

/* "a/x/y.py" -> "x/y.py"; "/dev/null" -> NULL.  Trailing tab+timestamp of
 * plain `diff -u` headers is cut. */
static char *header_path(const char *p, size_t n)
{
	const char *tab = memchr(p, '\t', n);
	if (tab)
		n = (size_t)(tab - p);
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\r'))
		n--;
	if (n == 9 && !memcmp(p, "/dev/null", 9))
		return NULL;
	if (n > 2 && (p[0] == 'a' || p[0] == 'b') && p[1] == '/') {
		p += 2;
		n -= 2;
	}
	return xstrndup(p, n);
}

static bool parse_range(const char **pp, long *start, long *count)
{
	char *end;
	*start = strtol(*pp, &end, 10);
	if (end == *pp)
		return false;
	*count = 1;
	if (*end == ',') {
		const char *c = end + 1;
		*count = strtol(c, &end, 10);
		if (end == c)
			return false;
	}
	*pp = end;
	return true;
}

static void diff_parse(const char *s, size_t len, struct diff *d)
{
	const char *p = s, *end = s + len;
	int file = -1, hunk = -1;
	bool file_has_hunks = false, from_git_header = false;
	long old_no = 0, new_no = 0, old_left = 0, new_left = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *line = p;
		p = nl ? nl + 1 : end;
		if (n && line[n - 1] == '\r')
			n--;

		if (old_left > 0 || new_left > 0) {
			char c = n ? line[0] : ' ';
			if (c == ' ' && old_left > 0 && new_left > 0) {
				old_no++, new_no++, old_left--, new_left--;
				continue;
			}
			if ((c == '-' && old_left > 0) || (c == '+' && new_left > 0)) {
				if (d->n == d->cap) {
					d->cap = d->cap ? d->cap * 2 : 64;
					d->l = xrealloc(d->l, d->cap * sizeof(*d->l));
				}
				d->l[d->n++] = (struct dline){
					.file = file,
					.hunk = hunk,
					.side = c,
					.lineno = (int)(c == '-' ? old_no : new_no),
					.text = line + 1,
					.len = n - 1,
				};
				if (c == '-')
					old_no++, old_left--;
				else
					new_no++, new_left--;
				continue;
			}
			if (c == '\\')
				continue;
			old_left = new_left = 0; /* malformed hunk: read it as a header */
		}
		if (n >= 11 && !memcmp(line, "diff --git ", 11)) {
			file = diff_add_file(d);
			file_has_hunks = false;
			from_git_header = true;
			/* "diff --git a/X b/X": the new name follows the last " b/". */
			for (size_t i = n; i-- > 11;) {
				if (i + 3 <= n && !memcmp(line + i, " b/", 3)) {
					d->f[file].path = header_path(line + i + 1, n - i - 1);
					break;
				}
			}
		} else if (n >= 4 && !memcmp(line, "--- ", 4)) {
			if (file < 0 || file_has_hunks || !from_git_header) {
				file = diff_add_file(d);
				file_has_hunks = false;
				from_git_header = false;
			}
			char *old = header_path(line + 4, n - 4);
			if (old) {
				free(d->f[file].path);
				d->f[file].path = old;
			}
		} else if (n >= 4 && !memcmp(line, "+++ ", 4) && file >= 0) {
			char *nw = header_path(line + 4, n - 4);
			if (nw) {
				free(d->f[file].path);
				d->f[file].path = nw;
			}
		} else if (n >= 4 && !memcmp(line, "@@ -", 4)) {
			const char *q = line + 4;
			long os, oc, ns, nc;
			if (!parse_range(&q, &os, &oc) || *q != ' ' || q[1] != '+')
				continue;
			q += 2;
			if (!parse_range(&q, &ns, &nc))
				continue;
			if (file < 0)
				file = diff_add_file(d);
			hunk++;
			file_has_hunks = true;
			old_no = os, new_no = ns, old_left = oc, new_left = nc;
		}
	}
}

/* A line's text without its leading and trailing blanks. */
static void trimmed(const struct dline *l, const char **s, size_t *n)
{
	const char *a = l->text, *b = l->text + l->len;
	while (a < b && (*a == ' ' || *a == '\t'))
		a++;
	while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
		b--;
	*s = a;
	*n = (size_t)(b - a);
}

/* A line as the moved-line check sorts it: its file and trimmed text. */
struct line_key {
	int file;
	const char *s;
	size_t n;
	size_t i; /* index in the diff */
};

static int key_cmp(const void *x, const void *y)
{
	const struct line_key *a = x, *b = y;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	int c = memcmp(a->s, b->s, a->n < b->n ? a->n : b->n);
	return c ? c : a->n < b->n ? -1 : a->n > b->n;
}

/* Mark the lines that were only moved (re-indented or reordered): a lint
 * reads what a change wrote, and a moved line wrote nothing new. */
static void mark_moved(struct diff *d)
{
	if (d->n < 2)
		return;
	struct line_key *k = xmalloc(d->n * sizeof(*k));
	for (size_t i = 0; i < d->n; i++) {
		k[i].file = d->l[i].file;
		k[i].i = i;
		trimmed(&d->l[i], &k[i].s, &k[i].n);
	}
	qsort(k, d->n, sizeof(*k), key_cmp);
	for (size_t i = 0; i < d->n;) {
		size_t j = i;
		bool add = false, rem = false;
		for (; j < d->n && key_cmp(&k[i], &k[j]) == 0; j++) {
			add |= d->l[k[j].i].side == '+';
			rem |= d->l[k[j].i].side == '-';
		}
		for (size_t m = i; add && rem && m < j; m++)
			d->l[k[m].i].moved = true;
		i = j;
	}
	free(k);
}

/* ---- rule files ---------------------------------------------------------- */

static void rule_release(struct rule *r)
{
	free(r->id);
	free(r->trap);
	free(r->message);
	free(r->origin);
	pcre2_code_free(r->match);
	pcre2_code_free(r->unless);
	pcre2_code_free(r->files);
	pcre2_code_free(r->exclude);
	pcre2_code_free(r->value);
	pcre2_code_free(r->count);
	memset(r, 0, sizeof(*r));
}

struct lint_set *lint_set_new(void)
{
	return xcalloc(1, sizeof(struct lint_set));
}

void lint_set_free(struct lint_set *ls)
{
	if (!ls)
		return;
	for (size_t i = 0; i < ls->n; i++)
		rule_release(&ls->v[i]);
	free(ls->v);
	free(ls);
}

size_t lint_set_count(const struct lint_set *ls)
{
	return ls ? ls->n : 0;
}

static int compile(const char *pat, const char *origin, int lineno, pcre2_code **out,
		   struct err *e)
{
	int ec;
	PCRE2_SIZE off;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
	if (!c) {
		PCRE2_UCHAR buf[256];
		pcre2_get_error_message(ec, buf, sizeof(buf));
		return err_set(e, ERR_USAGE,
			       "%s:%d: pattern does not compile at offset %zu: %s (fix the "
			       "pattern; PCRE2 syntax)",
			       origin, lineno, (size_t)off, (char *)buf);
	}
	/* No JIT: the rules run once over one iteration's diff, a few hundred
	 * lines, and compiling them to machine code costs more than it saves. */
	pcre2_code_free(*out);
	*out = c;
	return 0;
}

static bool valid_id(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return false;
	return true;
}

static int rule_finish(struct lint_set *ls, struct rule *r, struct err *e)
{
	const char *miss = !r->trap ? "trap" : !r->match ? "match" : !r->message ? "message"
		: (r->kind == LK_INCREASE && !r->value) ? "value" : NULL;
	if (miss) {
		int rc = err_set(e, ERR_USAGE, "%s:%d: lint %s has no '%s' line (every rule needs "
					       "trap, match and message; increase rules need value)",
				 r->origin, r->lineno, r->id, miss);
		rule_release(r);
		return rc;
	}
	if (r->kind == LK_INCREASE) {
		if (pcre2_substring_number_from_name(r->value, (PCRE2_SPTR) "num") < 0) {
			int rc = err_set(e, ERR_USAGE,
					 "%s:%d: lint %s: the value pattern needs a group named num, "
					 "e.g. (?<num>[0-9.eE+-]+)",
					 r->origin, r->lineno, r->id);
			rule_release(r);
			return rc;
		}
	}
	if (!r->side)
		r->side = SIDE_ADDED;
	for (size_t i = 0; i < ls->n; i++) {
		if (!strcmp(ls->v[i].id, r->id)) {
			rule_release(&ls->v[i]);
			ls->v[i] = *r;
			memset(r, 0, sizeof(*r));
			return 0;
		}
	}
	if (ls->n == ls->cap) {
		ls->cap = ls->cap ? ls->cap * 2 : 16;
		ls->v = xrealloc(ls->v, ls->cap * sizeof(*ls->v));
	}
	ls->v[ls->n++] = *r;
	memset(r, 0, sizeof(*r));
	return 0;
}

int lint_set_add_text(struct lint_set *ls, const char *text, size_t len, const char *origin,
		      struct err *e)
{
	struct rule r = {0};
	struct sb line = SB_INIT;
	const char *p = text, *end = text + len;
	int lineno = 0, rc = 0;

	if (!origin)
		origin = "lint";
	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		sb_reset(&line);
		sb_add(&line, p, n);
		p = nl ? nl + 1 : end;
		lineno++;
		sb_trim(&line);
		if (line.len == 0 || line.buf[0] == '#')
			continue;
		char *key = line.buf, *val = key;
		while (*val && !isspace((unsigned char)*val))
			val++;
		if (*val)
			*val++ = '\0';
		while (isspace((unsigned char)*val))
			val++;
		if (!strcmp(key, "lint")) {
			if (r.id && (rc = rule_finish(ls, &r, e)) < 0)
				break;
			if (!valid_id(val)) {
				rc = err_set(e, ERR_USAGE,
					     "%s:%d: 'lint' needs an id of letters, digits, '-', '_' "
					     "or '.' (got '%s')",
					     origin, lineno, val);
				break;
			}
			r.id = xstrdup(val);
			r.origin = xstrdup(origin);
			r.lineno = lineno;
			continue;
		}
		if (!r.id) {
			rc = err_set(e, ERR_USAGE, "%s:%d: '%s' before any 'lint ID' line", origin,
				     lineno, key);
			break;
		}
		if (!*val) {
			rc = err_set(e, ERR_USAGE, "%s:%d: '%s' has no value", origin, lineno, key);
			break;
		}
		if (!strcmp(key, "trap")) {
			free(r.trap);
			r.trap = xstrdup(val);
		} else if (!strcmp(key, "message")) {
			free(r.message);
			r.message = xstrdup(val);
		} else if (!strcmp(key, "side")) {
			if (!strcmp(val, "added"))
				r.side = SIDE_ADDED;
			else if (!strcmp(val, "removed"))
				r.side = SIDE_REMOVED;
			else if (!strcmp(val, "both"))
				r.side = SIDE_ADDED | SIDE_REMOVED;
			else
				rc = err_set(e, ERR_USAGE,
					     "%s:%d: side must be added, removed or both (got '%s')",
					     origin, lineno, val);
		} else if (!strcmp(key, "kind")) {
			if (!strcmp(val, "match"))
				r.kind = LK_MATCH;
			else if (!strcmp(val, "increase"))
				r.kind = LK_INCREASE;
			else if (!strcmp(val, "fewer"))
				r.kind = LK_FEWER;
			else
				rc = err_set(e, ERR_USAGE,
					     "%s:%d: kind must be match, increase or fewer (got '%s')",
					     origin, lineno, val);
		} else if (!strcmp(key, "match")) {
			rc = compile(val, origin, lineno, &r.match, e);
		} else if (!strcmp(key, "unless")) {
			rc = compile(val, origin, lineno, &r.unless, e);
		} else if (!strcmp(key, "files")) {
			rc = compile(val, origin, lineno, &r.files, e);
		} else if (!strcmp(key, "exclude")) {
			rc = compile(val, origin, lineno, &r.exclude, e);
		} else if (!strcmp(key, "value")) {
			rc = compile(val, origin, lineno, &r.value, e);
		} else if (!strcmp(key, "count")) {
			rc = compile(val, origin, lineno, &r.count, e);
		} else {
			rc = err_set(e, ERR_USAGE,
				     "%s:%d: unknown key '%s' (known: lint, trap, side, kind, files, "
				     "exclude, match, unless, value, count, message)",
				     origin, lineno, key);
		}
	}
	if (rc == 0 && r.id)
		rc = rule_finish(ls, &r, e);
	rule_release(&r);
	sb_release(&line);
	return rc;
}

static int load_dir(struct lint_set *ls, const char *dir, struct err *e)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".lint") || de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), strp_cmp);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char *path = fsutil_join(dir, names[i]);
		struct sb text = SB_INIT;
		if (rc == 0 && (rc = fsutil_read_file(path, &text, e)) == 0)
			rc = lint_set_add_text(ls, text.buf, text.len, path, e);
		sb_release(&text);
		free(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int lint_load(const char *extra_dir, struct lint_set **out, struct err *e)
{
	*out = NULL;
	char *dir = assets_path("lints", e);
	if (!dir)
		return ERR_NOTFOUND;
	struct lint_set *ls = lint_set_new();
	int rc = load_dir(ls, dir, e);
	free(dir);
	if (rc == 0 && extra_dir)
		rc = load_dir(ls, extra_dir, e);
	if (rc < 0) {
		lint_set_free(ls);
		return rc;
	}
	*out = ls;
	return 0;
}

/* ---- applying rules ------------------------------------------------------ */

struct found {
	struct lint_finding f;
	size_t pos, rule;
};

struct collector {
	struct found *v;
	size_t n, cap;
};

static bool re_match(const pcre2_code *re, const char *s, size_t n, pcre2_match_data *md)
{
	return pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, NULL) >= 0;
}

static bool file_ok(const struct rule *r, const char *path, pcre2_match_data *md)
{
	const char *p = path ? path : "";
	if (r->files && !re_match(r->files, p, strlen(p), md))
		return false;
	if (r->exclude && re_match(r->exclude, p, strlen(p), md))
		return false;
	return true;
}

static void add_found(struct collector *c, const struct rule *r, size_t ri, const struct diff *d,
		      size_t li, const char *detail)
{
	const struct dline *l = &d->l[li];
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	size_t tl = l->len;
	while (tl && isspace((unsigned char)l->text[tl - 1]))
		tl--;
	const char *t = l->text;
	while (tl && isspace((unsigned char)*t))
		t++, tl--;
	if (tl > 200)
		tl = 200;
	const char *path = d->f[l->file].path;
	c->v[c->n++] = (struct found){
		.f = {
			.lint = xstrdup(r->id),
			.trap = xstrdup(r->trap),
			.file = xstrdup(path ? path : "?"),
			.line = l->lineno,
			.side = l->side,
			.text = xstrndup(t, tl),
			.message = detail ? xasprintf("%s (%s)", r->message, detail)
					  : xstrdup(r->message),
		},
		.pos = li,
		.rule = ri,
	};
}

static bool line_hits(const struct rule *r, const struct dline *l, pcre2_match_data *md)
{
	if (!re_match(r->match, l->text, l->len, md))
		return false;
	return !(r->unless && re_match(r->unless, l->text, l->len, md));
}

static void run_match(const struct rule *r, size_t ri, const struct diff *d, pcre2_match_data *md,
		      struct collector *c)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct dline *l = &d->l[i];
		int side = l->side == '+' ? SIDE_ADDED : SIDE_REMOVED;
		if (l->moved || !(r->side & side) || !file_ok(r, d->f[l->file].path, md))
			continue;
		if (line_hits(r, l, md))
			add_found(c, r, ri, d, i, NULL);
	}
}

struct kv {
	char key[32];
	double num;
	char text[32];
};

/* Every value the rule's value pattern finds on one line, keyed by the
 * `key` group (or by position when the pattern has none). */
static size_t values_of(const struct rule *r, const struct dline *l, pcre2_match_data *md,
			struct kv *out, size_t max)
{
	size_t n = 0, off = 0;
	int knum = pcre2_substring_number_from_name(r->value, (PCRE2_SPTR) "key");
	int nnum = pcre2_substring_number_from_name(r->value, (PCRE2_SPTR) "num");
	while (n < max && off <= l->len) {
		int rc = pcre2_match(r->value, (PCRE2_SPTR)l->text, l->len, off, 0, md, NULL);
		if (rc < 0)
			break;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		struct kv *v = &out[n];
		memset(v, 0, sizeof(*v));
		if (knum > 0 && ov[2 * knum] != PCRE2_UNSET) {
			size_t kl = ov[2 * knum + 1] - ov[2 * knum];
			if (kl >= sizeof(v->key))
				kl = sizeof(v->key) - 1;
			memcpy(v->key, l->text + ov[2 * knum], kl);
		} else {
			snprintf(v->key, sizeof(v->key), "#%zu", n + 1);
		}
		if (ov[2 * nnum] != PCRE2_UNSET) {
			size_t nl = ov[2 * nnum + 1] - ov[2 * nnum];
			if (nl >= sizeof(v->text))
				nl = sizeof(v->text) - 1;
			memcpy(v->text, l->text + ov[2 * nnum], nl);
			char *end;
			v->num = strtod(v->text, &end);
			if (end != v->text && isfinite(v->num))
				n++;
		}
		off = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	return n;
}

static void compare_pair(const struct rule *r, size_t ri, const struct diff *d, size_t rem,
			 size_t add, pcre2_match_data *md, struct collector *c)
{
	struct kv before[16], after[16];
	size_t nb = values_of(r, &d->l[rem], md, before, 16);
	size_t na = values_of(r, &d->l[add], md, after, 16);
	struct sb detail = SB_INIT;
	for (size_t i = 0; i < na; i++) {
		const struct kv *old = NULL;
		for (size_t j = 0; j < nb; j++)
			if (!strcmp(before[j].key, after[i].key))
				old = &before[j];
		bool key_named = after[i].key[0] != '#';
		if (old && !(after[i].num > old->num * (1 + 1e-9) + 1e-300))
			continue;
		if (!old && !key_named)
			continue;
		if (detail.len)
			sb_adds(&detail, ", ");
		if (old)
			sb_addf(&detail, "%s%s%s -> %s", key_named ? after[i].key : "",
				key_named ? " " : "", old->text, after[i].text);
		else
			sb_addf(&detail, "%s %s added", after[i].key, after[i].text);
	}
	if (detail.len)
		add_found(c, r, ri, d, add, detail.buf);
	sb_release(&detail);
}

static void run_increase(const struct rule *r, size_t ri, const struct diff *d,
			 pcre2_match_data *md, struct collector *c)
{
	size_t i = 0;
	while (i < d->n) {
		size_t j = i;
		while (j < d->n && d->l[j].hunk == d->l[i].hunk && d->l[j].file == d->l[i].file)
			j++;
		if (file_ok(r, d->f[d->l[i].file].path, md)) {
			size_t *rem = xmalloc((j - i) * sizeof(size_t));
			size_t *add = xmalloc((j - i) * sizeof(size_t));
			size_t nr = 0, na = 0;
			for (size_t k = i; k < j; k++) {
				if (!line_hits(r, &d->l[k], md))
					continue;
				if (d->l[k].side == '-')
					rem[nr++] = k;
				else
					add[na++] = k;
			}
			for (size_t k = 0; k < nr && k < na; k++)
				compare_pair(r, ri, d, rem[k], add[k], md, c);
			free(rem);
			free(add);
		}
		i = j;
	}
}

static size_t count_on(const struct rule *r, const struct dline *l, pcre2_match_data *md)
{
	if (!r->count)
		return 1;
	size_t n = 0, off = 0;
	while (off <= l->len) {
		if (pcre2_match(r->count, (PCRE2_SPTR)l->text, l->len, off, 0, md, NULL) < 0)
			break;
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		n++;
		off = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	return n;
}

static void run_fewer(const struct rule *r, size_t ri, const struct diff *d, pcre2_match_data *md,
		      struct collector *c)
{
	for (size_t f = 0; f < d->nf; f++) {
		if (!file_ok(r, d->f[f].path, md))
			continue;
		size_t nrem = 0, nadd = 0, first = (size_t)-1;
		for (size_t i = 0; i < d->n; i++) {
			if (d->l[i].file != (int)f || !line_hits(r, &d->l[i], md))
				continue;
			size_t k = count_on(r, &d->l[i], md);
			if (d->l[i].side == '-') {
				nrem += k;
				if (first == (size_t)-1 && k)
					first = i;
			} else {
				nadd += k;
			}
		}
		if (nrem > nadd && first != (size_t)-1) {
			char detail[64];
			snprintf(detail, sizeof(detail), "%zu removed, %zu added", nrem, nadd);
			add_found(c, r, ri, d, first, detail);
		}
	}
}

static int cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;
	if (x->pos != y->pos)
		return x->pos < y->pos ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

int lint_diff(const struct lint_set *ls, const char *text, size_t len, struct lint_findings *out,
	      struct err *e)
{
	struct diff d = {0};
	struct collector c = {0};
	pcre2_match_data *md = pcre2_match_data_create(32, NULL);
	if (!md)
		return err_set(e, ERR_NOMEM, "lint: out of memory for match data");
	diff_parse(text, len, &d);
	mark_moved(&d);
	for (size_t ri = 0; ls && ri < ls->n; ri++) {
		const struct rule *r = &ls->v[ri];
		if (r->kind == LK_MATCH)
			run_match(r, ri, &d, md, &c);
		else if (r->kind == LK_INCREASE)
			run_increase(r, ri, &d, md, &c);
		else
			run_fewer(r, ri, &d, md, &c);
	}
	pcre2_match_data_free(md);
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), cmp_found);
	out->v = xrealloc(out->v, (out->n + c.n + 1) * sizeof(*out->v));
	for (size_t i = 0; i < c.n; i++)
		out->v[out->n++] = c.v[i].f;
	free(c.v);
	diff_release(&d);
	return 0;
}

void lint_findings_release(struct lint_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].lint);
		free(f->v[i].trap);
		free(f->v[i].file);
		free(f->v[i].text);
		free(f->v[i].message);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
}
