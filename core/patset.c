/*
 * patset — load and compile named PCRE2 pattern sets (see patset.h and
 * assets/patterns/README.md for the file format).
 */
#include "core/patset.h"
#include "core/patset_impl.h"
#include "core/assets.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define PATSET_MAX_DEPTH 4

static const char *const role_names[ROLE_N] = {
	[ROLE_IGNORE] = "ignore",
	[ROLE_BANNER] = "banner",
	[ROLE_PASS] = "pass",
	[ROLE_FAIL] = "fail",
	[ROLE_MISSING] = "missing",
	[ROLE_NOGATE] = "nogate",
	[ROLE_CASE] = "case",
	[ROLE_DOTS] = "dots",
	[ROLE_PROGRESS] = "progress",
	[ROLE_SUMMARY] = "summary",
	[ROLE_ENV] = "env",
	[ROLE_TABLE_HEADER] = "table_header",
	[ROLE_TABLE_ROW] = "table_row",
	[ROLE_TABLE_RULE] = "table_rule",
	[ROLE_FIELD] = "field",
	[ROLE_WARNING] = "warning",
	[ROLE_TRACEBACK] = "traceback",
	[ROLE_STAGE] = "stage",
	[ROLE_ENV_DEVICE] = "env.device",
	[ROLE_ENV_BACKEND] = "env.backend",
	[ROLE_ENV_PYTORCH] = "env.pytorch",
	[ROLE_ENV_TRITON] = "env.triton",
	[ROLE_ENV_LABEL] = "env.label",
};

static const char *const group_names[G_N] = {
	[G_TEST] = "test",       [G_K] = "k",         [G_NAME] = "name",
	[G_OUTCOME] = "outcome", [G_PCT] = "pct",     [G_DOTS] = "dots",
	[G_COUNTS] = "counts",   [G_FIELDS] = "fields", [G_MODE] = "mode",
	[G_L] = "L",             [G_COLS] = "cols",   [G_DIMS] = "dims",
	[G_OP] = "op",           [G_VALS] = "vals",   [G_MSG] = "msg",
	[G_V] = "v",             [G_BRANCH] = "branch", [G_SHA] = "sha",
	[G_B] = "B",             [G_T] = "T",         [G_H] = "H",
	[G_D] = "D",             [G_BASE_MS] = "base_ms", [G_NEW_MS] = "new_ms",
	[G_SPEEDUP] = "speedup",   [G_STAGE] = "stage",
};

static int role_parse(const char *w, size_t n)
{
	for (int r = 0; r < ROLE_N; r++)
		if (strlen(role_names[r]) == n && !memcmp(role_names[r], w, n))
			return r;
	return -1;
}

struct patlist {
	struct pat *v;
	size_t n, cap;
};

static void patlist_push(struct patlist *l, const struct pat *p)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = *p;
}

static void pat_release(struct pat *p)
{
	pcre2_code_free(p->re);
	free(p->origin);
	free(p->src);
}

struct builder {
	struct patset *ps;
	struct patlist line, field;
	const char *extra_dir;
	int depth;
};

static int load_named(struct builder *b, const char *name, struct err *e);

static int compile_pattern(struct builder *b, enum pat_role role, const char *re, size_t relen,
			   const char *origin, int lineno, struct err *e)
{
	int ecode;
	PCRE2_SIZE eoff;
	struct pat p = {.role = role, .lineno = lineno};
	uint32_t ncap = 0;

	p.re = pcre2_compile((PCRE2_SPTR)re, relen, 0, &ecode, &eoff, NULL);
	if (!p.re) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(ecode, msg, sizeof(msg));
		return err_set(e, ERR_USAGE,
			       "%s:%d: the %s pattern does not compile: %s at offset %zu; fix the "
			       "regular expression (PCRE2 syntax)",
			       origin, lineno, role_names[role], (char *)msg, (size_t)eoff);
	}
	/* No JIT (SELinux, unusual CPUs) is slower but still correct. */
	p.jit = pcre2_jit_compile(p.re, PCRE2_JIT_COMPLETE) == 0;
	for (int g = 0; g < G_N; g++) {
		int n = pcre2_substring_number_from_name(p.re, (PCRE2_SPTR)group_names[g]);
		p.grp[g] = n > 0 ? n : -1;
	}
	pcre2_pattern_info(p.re, PCRE2_INFO_CAPTURECOUNT, &ncap);
	if (ncap + 1 > b->ps->max_pairs)
		b->ps->max_pairs = ncap + 1;
	p.origin = xstrdup(origin);
	p.src = xmalloc(relen + 1);
	memcpy(p.src, re, relen);
	p.src[relen] = 0;
	p.src_len = relen;
	{
		uint32_t opts = 0;
		pcre2_pattern_info(p.re, PCRE2_INFO_ALLOPTIONS, &opts);
		p.anchored = (opts & PCRE2_ANCHORED) != 0;
	}
	patlist_push(role >= ROLE_LINE_N ? &b->field : &b->line, &p);
	return 0;
}

static int directive(struct builder *b, const char *key, size_t klen, const char *val,
		     size_t vlen, const char *origin, int lineno, char **extends, struct err *e)
{
	struct patset *ps = b->ps;
	if (klen == 4 && !memcmp(key, "name", 4)) {
		if (b->depth == 0) {
			free(ps->name);
			ps->name = xstrndup(val, vlen);
		}
	} else if (klen == 11 && !memcmp(key, "description", 11)) {
		if (b->depth == 0) {
			free(ps->description);
			ps->description = xstrndup(val, vlen);
		}
	} else if (klen == 13 && !memcmp(key, "default_scope", 13)) {
		if (vlen == 4 && !memcmp(val, "full", 4))
			ps->default_scope = SCOPE_FULL;
		else if (vlen == 6 && !memcmp(val, "subset", 6))
			ps->default_scope = SCOPE_SUBSET;
		else
			return err_set(e, ERR_USAGE,
				       "%s:%d: @default_scope must be 'full' or 'subset', not '%.*s'",
				       origin, lineno, (int)vlen, val);
	} else if (klen == 7 && !memcmp(key, "extends", 7)) {
		if (*extends)
			return err_set(e, ERR_USAGE, "%s:%d: only one @extends per set", origin,
				       lineno);
		if (!vlen)
			return err_set(e, ERR_USAGE, "%s:%d: @extends needs a set name", origin,
				       lineno);
		*extends = xstrndup(val, vlen);
	} else {
		return err_set(e, ERR_USAGE,
			       "%s:%d: unknown directive @%.*s (known: @name, @description, "
			       "@default_scope, @extends)",
			       origin, lineno, (int)klen, key);
	}
	return 0;
}

static int parse_text(struct builder *b, const char *text, size_t len, const char *origin,
		      struct err *e)
{
	const char *p = text, *end = text + len;
	char *extends = NULL;
	int lineno = 0, rc = 0;

	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *s = p, *w, *we;
		lineno++;
		p = nl ? nl + 1 : end;
		while (le > s && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
			le--;
		while (s < le && (*s == ' ' || *s == '\t'))
			s++;
		if (s == le || *s == '#')
			continue;
		bool is_directive = *s == '@';
		w = s + is_directive;
		we = w;
		while (we < le && !isspace((unsigned char)*we))
			we++;
		s = we;
		while (s < le && (*s == ' ' || *s == '\t'))
			s++;
		if (is_directive) {
			rc = directive(b, w, (size_t)(we - w), s, (size_t)(le - s), origin, lineno,
				       &extends, e);
			continue;
		}
		int role = role_parse(w, (size_t)(we - w));
		if (role < 0) {
			rc = err_set(e, ERR_USAGE,
				     "%s:%d: unknown role '%.*s'; each line is 'ROLE REGEX' "
				     "(roles are listed in assets/patterns/README.md)",
				     origin, lineno, (int)(we - w), w);
			break;
		}
		if (s == le) {
			rc = err_set(e, ERR_USAGE, "%s:%d: role %s has no pattern after it", origin,
				     lineno, role_names[role]);
			break;
		}
		rc = compile_pattern(b, (enum pat_role)role, s, (size_t)(le - s), origin, lineno, e);
	}
	if (rc == 0 && extends) {
		if (b->depth >= PATSET_MAX_DEPTH)
			rc = err_set(e, ERR_USAGE,
				     "%s: @extends %s goes more than %d sets deep (a loop?)", origin,
				     extends, PATSET_MAX_DEPTH);
		else {
			b->depth++;
			rc = load_named(b, extends, e);
			b->depth--;
		}
	}
	free(extends);
	return rc;
}

/* Resolve a set name to a readable file: a path as given; else
 * extra_dir/<name>.pat, then assets/patterns/<name>.pat. */
static char *resolve(const char *name, const char *extra_dir, struct err *e)
{
	char *file, *p;
	struct err ae = {0};

	if (strchr(name, '/'))
		return fsutil_exists(name) ? xstrdup(name) : NULL;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' && *c != '.')
			return NULL;
	file = xasprintf("%s.pat", name);
	if (extra_dir) {
		p = fsutil_join(extra_dir, file);
		if (fsutil_exists(p)) {
			free(file);
			return p;
		}
		free(p);
	}
	p = fsutil_join("patterns", file);
	free(file);
	file = assets_path(p, &ae);
	free(p);
	if (file && fsutil_exists(file))
		return file;
	free(file);
	if (!assets_dir(NULL) && e)
		err_set(e, ERR_NOTFOUND, "%s", ae.msg);
	return NULL;
}

static int load_named(struct builder *b, const char *name, struct err *e)
{
	struct sb text = SB_INIT;
	struct err re = {0};
	char *path = resolve(name, b->extra_dir, &re);
	int rc;

	if (!path && re.code)
		return err_set(e, re.code, "no pattern set '%s': %s", name, re.msg);
	if (!path)
		return err_set(e, ERR_NOTFOUND,
			       "no pattern set '%s' (looked for %s.pat in %s%sthe shipped "
			       "assets/patterns/); pick a shipped set (fla, kernelbench) or add "
			       "the file",
			       name, name, b->extra_dir ? b->extra_dir : "",
			       b->extra_dir ? " and " : "");
	rc = fsutil_read_file(path, &text, e);
	if (rc == 0)
		rc = parse_text(b, text.buf, text.len, path, e);
	if (rc == 0 && b->depth == 0 && !b->ps->name) {
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		size_t n = strlen(base);
		if (n > 4 && !strcmp(base + n - 4, ".pat"))
			n -= 4;
		b->ps->name = xstrndup(base, n);
	}
	sb_release(&text);
	free(path);
	return rc;
}

/* The combined alternation (see patset_impl.h).  A pattern that is not
 * anchored gets a lazy ".*?" in front so that it is still tried at every
 * position before the next pattern is.  Sets with back-references keep the
 * one-pattern-at-a-time path: group numbers shift in a combination. */
/* Does the pattern keep its meaning inside "(?:...)(*MARK:n)"?  Not when it
 * ends inside \Q, an extended-mode comment or a start-of-pattern verb. */
static bool wraps_cleanly(const struct pat *p)
{
	struct sb src = SB_INIT;
	int ecode;
	PCRE2_SIZE eoff;
	uint32_t a = 0, b = 0;
	pcre2_code *re;

	sb_adds(&src, "(?:");
	sb_add(&src, p->src, p->src_len);
	sb_adds(&src, ")(*MARK:0)");
	re = pcre2_compile((PCRE2_SPTR)src.buf, src.len, 0, &ecode, &eoff, NULL);
	sb_release(&src);
	if (!re)
		return false;
	pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &a);
	pcre2_pattern_info(p->re, PCRE2_INFO_CAPTURECOUNT, &b);
	pcre2_code_free(re);
	return a == b;
}

static void build_combos(struct patset *ps)
{
	for (size_t i = 0; i < ps->nline; i++) {
		uint32_t br = 0;
		pcre2_pattern_info(ps->pats[i].re, PCRE2_INFO_BACKREFMAX, &br);
		if (br || !wraps_cleanly(&ps->pats[i]))
			return;
	}
	for (int t = 0; t < 2; t++) {
		struct sb src = SB_INIT;
		int ecode;
		PCRE2_SIZE eoff;
		uint32_t ncap = 0;

		uint32_t base = 0;
		for (size_t i = 0; i < ps->nline; i++) {
			struct pat *p = &ps->pats[i];
			uint32_t n = 0;
			if (!t && (p->role == ROLE_TABLE_ROW || p->role == ROLE_TABLE_RULE))
				continue;
			sb_addf(&src, "%s(?:%s(?:", src.len ? "|" : "", p->anchored ? "" : ".*?");
			sb_add(&src, p->src, p->src_len);
			sb_addf(&src, "))(*MARK:%zu)", i);
			/* Only non-capturing groups are added: the pattern's groups
			 * keep their order, shifted by the groups before them. */
			p->cbase[t] = base;
			pcre2_pattern_info(p->re, PCRE2_INFO_CAPTURECOUNT, &n);
			base += n;
		}
		ps->combo[t].re = pcre2_compile((PCRE2_SPTR)src.buf, src.len,
						PCRE2_ANCHORED | PCRE2_DUPNAMES, &ecode, &eoff, NULL);
		sb_release(&src);
		if (!ps->combo[t].re)
			goto fail;
		ps->combo[t].jit = pcre2_jit_compile(ps->combo[t].re, PCRE2_JIT_COMPLETE) == 0;
		pcre2_pattern_info(ps->combo[t].re, PCRE2_INFO_CAPTURECOUNT, &ncap);
		if (ncap != base) /* the groups did not line up: keep the safe path */
			goto fail;
		ps->combo[t].pairs = ncap + 1;
	}
	ps->combined = true;
	return;
fail:
	for (int t = 0; t < 2; t++) {
		pcre2_code_free(ps->combo[t].re);
		ps->combo[t].re = NULL;
	}
}

static int finish(struct builder *b, struct patset **out, struct err *e)
{
	struct patset *ps = b->ps;
	size_t n = b->line.n + b->field.n;

	if (b->line.n == 0) {
		for (size_t i = 0; i < b->field.n; i++)
			pat_release(&b->field.v[i]);
		free(b->field.v);
		free(b->line.v);
		patset_free(ps);
		return err_set(e, ERR_USAGE,
			       "pattern set has no line patterns; add at least one ROLE REGEX line");
	}
	ps->pats = xcalloc(n, sizeof(*ps->pats));
	memcpy(ps->pats, b->line.v, b->line.n * sizeof(*ps->pats));
	if (b->field.n)
		memcpy(ps->pats + b->line.n, b->field.v, b->field.n * sizeof(*ps->pats));
	ps->npats = n;
	ps->nline = b->line.n;
	ps->all_jit = true;
	for (size_t i = 0; i < n; i++)
		ps->all_jit &= ps->pats[i].jit;
	free(b->line.v);
	free(b->field.v);
	if (!ps->name)
		ps->name = xstrdup("unnamed");
	build_combos(ps);
	*out = ps;
	return 0;
}

static void builder_abort(struct builder *b)
{
	for (size_t i = 0; i < b->line.n; i++)
		pat_release(&b->line.v[i]);
	for (size_t i = 0; i < b->field.n; i++)
		pat_release(&b->field.v[i]);
	free(b->line.v);
	free(b->field.v);
	patset_free(b->ps);
}

int patset_load(const char *name, const char *extra_dir, struct patset **out, struct err *e)
{
	struct builder b = {.extra_dir = extra_dir};
	int rc;

	*out = NULL;
	b.ps = xcalloc(1, sizeof(*b.ps));
	rc = load_named(&b, name && *name ? name : "fla", e);
	if (rc) {
		builder_abort(&b);
		return rc;
	}
	return finish(&b, out, e);
}

int patset_load_text(const char *text, size_t len, const char *origin, const char *extra_dir,
		     struct patset **out, struct err *e)
{
	struct builder b = {.extra_dir = extra_dir};
	int rc;

	*out = NULL;
	b.ps = xcalloc(1, sizeof(*b.ps));
	rc = parse_text(&b, text, len, origin ? origin : "patterns", e);
	if (rc) {
		builder_abort(&b);
		return rc;
	}
	return finish(&b, out, e);
}

void patset_free(struct patset *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->npats; i++)
		pat_release(&ps->pats[i]);
	free(ps->pats);
	pcre2_code_free(ps->combo[0].re);
	pcre2_code_free(ps->combo[1].re);
	free(ps->name);
	free(ps->description);
	free(ps);
}

const char *patset_name(const struct patset *ps)
{
	return ps->name;
}

size_t patset_count(const struct patset *ps)
{
	return ps->nline;
}
