/*
 * contract — docs/draft.md, the task contract (see contract.h for the
 * layout it reads).
 *
 * One scanner finds where each field lives (a section body, or the value
 * part of a "Key: value" line); parse reads values from those places and
 * set splices a new value into exactly that place, so the rest of the file
 * stays as the person wrote it.
 */
#include "core/contract.h"
#include "core/roofline.h"
#include "core/rules.h"
#include "core/slurm.h"
#include "core/assets.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "core/vis.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name, *heading, *help;
} fields[CF_ALL] = {
	[CF_OP] = {"op", "Op and entry point",
		   "the op's name and the function the benchmark calls"},
	[CF_TARGET] = {"target", "Target", "the shapes that matter and the speedup wanted"},
	[CF_LANGUAGES] = {"languages", "Allowed languages",
			  "what the kernel may be written in (e.g. Triton)"},
	[CF_VALIDATION] = {"validation", "Validation command",
			   "the command that runs the correctness gate and the benchmark"},
	[CF_BENCHMARK] = {"benchmark", "Benchmark command",
			  "how the harness compares with a ref: the validation command with --base main "
			  "where it times the ref beside the tree (confirm then pairs), else the "
			  "validation command"},
	[CF_PROMOTION] = {"promotion", "Promotion criteria",
			  "what a candidate must show before it is promoted"},
	[CF_FROZEN] = {"frozen", "Frozen scope",
		       "the files the loop must never change (the op's test, its naive reference)"},
	[CF_CAP] = {"cap", "Iteration cap", "stop after this many iterations"},
	[CF_THRESHOLD] = {"threshold", "Win threshold",
			  "the smallest speedup that counts as a win (default 3%)"},
	[CF_RUNNER] = {"runner", "Runner",
		       "where runs go: local (default), or slurm with salloc's options and "
		       "idle=DURATION"},
	[CF_PEAK] = {"peak", "Peak",
		     "the device's peaks for the roofline: a row of assets/peaks.tsv (H200) or "
		     "figures (bw=4.8e12 bf16=989.5e12); default: the probe's GPU"},
	[CF_COST] = {"cost", "Cost",
		     "the op's cost model for the roofline: family=NAME; dtype=bf16; chunk=64; or "
		     "bytes=FORMULA; flops=FORMULA (default: the op's row of assets/costs.tsv)"},
};

const char *contract_field_name(enum contract_field f)
{
	return (unsigned)f < CF_ALL ? fields[f].name : "";
}

const char *contract_field_heading(int f)
{
	return (unsigned)f < CF_ALL ? fields[f].heading : "";
}

int contract_field_parse(const char *name)
{
	static const struct {
		const char *alias;
		int f;
	} syn[] = {
		{"entry", CF_OP},          {"entry-point", CF_OP},     {"language", CF_LANGUAGES},
		{"lang", CF_LANGUAGES},    {"verify", CF_VALIDATION},  {"gate", CF_VALIDATION},
		{"bench", CF_BENCHMARK},   {"promote", CF_PROMOTION},  {"frozen-scope", CF_FROZEN},
		{"iteration-cap", CF_CAP}, {"max-iterations", CF_CAP}, {"win-threshold", CF_THRESHOLD},
	};
	if (!name)
		return -1;
	for (int f = 0; f < CF_ALL; f++)
		if (!strcasecmp(name, fields[f].name))
			return f;
	for (size_t i = 0; i < sizeof(syn) / sizeof(syn[0]); i++)
		if (!strcasecmp(name, syn[i].alias))
			return syn[i].f;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Text helpers                                                        */

static bool has_word(const char *hay, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = strstr(hay, w); p; p = strstr(p + 1, w)) {
		bool l = p == hay || !isalnum((unsigned char)p[-1]);
		bool r = !isalnum((unsigned char)p[n]);
		if (l && r)
			return true;
	}
	return false;
}

/* Which field a heading or a key names, by meaning; -1 for none. */
static int field_of(const char *s, size_t n)
{
	char b[128];
	size_t k = 0;

	for (size_t i = 0; i < n && k < sizeof(b) - 1; i++) {
		char ch = s[i];
		if (ch == '*' || ch == '_' || ch == '`' || ch == ':')
			continue;
		b[k++] = (char)tolower((unsigned char)ch);
	}
	b[k] = '\0';
	if (strstr(b, "threshold"))
		return CF_THRESHOLD;
	if (has_word(b, "runner") || has_word(b, "scheduler"))
		return CF_RUNNER;
	if (has_word(b, "peak") || has_word(b, "peaks"))
		return CF_PEAK;
	if (has_word(b, "cost") || has_word(b, "cost model"))
		return CF_COST;
	if (has_word(b, "cap") || strstr(b, "max iter") || strstr(b, "iteration limit") ||
	    strstr(b, "iteration budget"))
		return CF_CAP;
	if (strstr(b, "frozen") || strstr(b, "do not touch") || strstr(b, "read-only") ||
	    strstr(b, "readonly"))
		return CF_FROZEN;
	if (strstr(b, "promot"))
		return CF_PROMOTION;
	if (strstr(b, "bench"))
		return CF_BENCHMARK;
	if (strstr(b, "valid") || strstr(b, "verif") || has_word(b, "gate") || strstr(b, "correctness"))
		return CF_VALIDATION;
	if (strstr(b, "language"))
		return CF_LANGUAGES;
	if (has_word(b, "target") || has_word(b, "targets") || has_word(b, "goal"))
		return CF_TARGET;
	if (strstr(b, "entry point") || has_word(b, "op") || has_word(b, "operator") ||
	    has_word(b, "kernel"))
		return CF_OP;
	return -1;
}

struct line {
	size_t s, e, next; /* content [s,e) without the line end; next line at next */
};

static bool get_line(const char *t, size_t len, size_t at, struct line *l)
{
	if (at >= len)
		return false;
	const char *nl = memchr(t + at, '\n', len - at);
	l->s = at;
	l->next = nl ? (size_t)(nl - t) + 1 : len;
	l->e = nl ? (size_t)(nl - t) : len;
	if (l->e > l->s && t[l->e - 1] == '\r')
		l->e--;
	return true;
}

/* A fenced code block's opening line: its character and run length. */
struct fence {
	char ch;
	size_t k;
};

static bool fence_open(const char *s, size_t n, struct fence *f)
{
	size_t i = 0, k = 0;
	while (i < n && i < 4 && s[i] == ' ')
		i++;
	if (i > 3 || i >= n || (s[i] != '`' && s[i] != '~'))
		return false;
	while (i + k < n && s[i + k] == s[i])
		k++;
	if (k < 3)
		return false;
	if (s[i] == '`' && memchr(s + i + k, '`', n - i - k))
		return false; /* a backtick fence's info string has no backticks */
	f->ch = s[i];
	f->k = k;
	return true;
}

/* The line closes f: the same character, at least as many, nothing after. */
static bool fence_close(const char *s, size_t n, const struct fence *f)
{
	size_t i = 0, k = 0;
	while (i < n && i < 4 && s[i] == ' ')
		i++;
	if (i > 3)
		return false;
	while (i + k < n && s[i + k] == f->ch)
		k++;
	if (k < f->k)
		return false;
	for (i += k; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

/* Some line in t[from..len) closes f.  A fence never closed is plain text,
 * so a stray ``` cannot hide the rest of the file. */
static bool fence_closes(const char *t, size_t len, size_t from, const struct fence *f)
{
	struct line l;
	for (size_t at = from; get_line(t, len, at, &l); at = l.next)
		if (fence_close(t + l.s, l.e - l.s, f))
			return true;
	return false;
}

/* ATX heading: level and text span, 0 when not a heading. */
static int heading(const char *s, size_t n, size_t *ts, size_t *te)
{
	size_t i = 0, lvl = 0;
	while (i < n && i < 3 && s[i] == ' ')
		i++;
	while (i < n && s[i] == '#' && lvl < 7)
		i++, lvl++;
	if (lvl == 0 || lvl > 6 || (i < n && s[i] != ' ' && s[i] != '\t'))
		return 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	size_t e = n;
	while (e > i && (s[e - 1] == ' ' || s[e - 1] == '#' || s[e - 1] == '\t'))
		e--;
	*ts = i;
	*te = e;
	return (int)lvl;
}

static const char *find_n(const char *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(s + i, lit, k))
			return s + i;
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Where each field lives                                              */

enum form { F_ABSENT, F_SECTION, F_LINE };

struct loc {
	enum form form;
	size_t a, b; /* section body, or the value on a Key: value line */
	int again;   /* further sections or Key: lines of the same field */
};

/* "- **Key:** value" -> field and the value's span; -1 when not such a line. */
static int key_line(const char *t, struct line l, size_t *va, size_t *vb)
{
	size_t i = l.s, e = l.e;
	bool bold = false;

	while (i < e && (t[i] == ' ' || t[i] == '\t'))
		i++;
	if (i + 1 < e && (t[i] == '-' || t[i] == '*' || t[i] == '+') && t[i + 1] == ' ')
		i += 2;
	while (i < e && t[i] == ' ')
		i++;
	if (i + 1 < e && (!memcmp(t + i, "**", 2) || !memcmp(t + i, "__", 2))) {
		bold = true;
		i += 2;
	}
	const char *colon = memchr(t + i, ':', e - i);
	if (!colon || (size_t)(colon - (t + i)) > 40 || colon == t + i)
		return -1;
	for (const char *p = t + i; p < colon; p++)
		if (*p == '`' || *p == '|' || *p == '<' || *p == '[')
			return -1;
	int f = field_of(t + i, (size_t)(colon - (t + i)));
	if (f < 0)
		return -1;
	size_t v = (size_t)(colon - t) + 1;
	if (bold && v + 1 < e && (!memcmp(t + v, "**", 2) || !memcmp(t + v, "__", 2)))
		v += 2;
	while (v < e && (t[v] == ' ' || t[v] == '\t'))
		v++;
	size_t w = e;
	while (w > v && (t[w - 1] == ' ' || t[w - 1] == '\t'))
		w--;
	if (bold && w >= v + 2 && (!memcmp(t + w - 2, "**", 2) || !memcmp(t + w - 2, "__", 2)))
		w -= 2; /* "**Op: chunk_gla**" */
	*va = v;
	*vb = w;
	return f;
}

/* Where each field lives.  *dangling (may be NULL) gets a bit for each fence
 * character with an opener that is never closed (1 backtick, 2 tilde):
 * a new fenced block must not use that character, or it would close it. */
static void scan(const char *t, size_t len, struct loc loc[CF_ALL], unsigned *dangling)
{
	struct line l;
	struct fence fc = {0}, o;
	size_t at = 0;
	int cur = -1;
	bool in_fence = false, in_comment = false;

	if (dangling)
		*dangling = 0;

	memset(loc, 0, sizeof(struct loc) * CF_ALL);
	for (; get_line(t, len, at, &l); at = l.next) {
		const char *s = t + l.s;
		size_t n = l.e - l.s, hs, he;

		if (in_fence) {
			if (fence_close(s, n, &fc))
				in_fence = false;
			continue;
		}
		if (in_comment) {
			if (find_n(s, n, "-->"))
				in_comment = false;
			continue;
		}
		if (fence_open(s, n, &o)) {
			if (fence_closes(t, len, l.next, &o)) {
				fc = o;
				in_fence = true;
				continue;
			}
			if (dangling)
				*dangling |= o.ch == '`' ? 1 : 2;
		}
		/* A comment block starts a line; one never closed is plain text,
		 * so a forgotten "-->" cannot hide the rest of the contract. */
		size_t ind = 0;
		while (ind < n && ind < 3 && s[ind] == ' ')
			ind++;
		if (n - ind >= 4 && !memcmp(s + ind, "<!--", 4)) {
			const char *close = find_n(s + ind + 4, len - (l.s + ind + 4), "-->");
			if (close) {
				in_comment = close >= t + l.e;
				continue;
			}
		}
		int lvl = heading(s, n, &hs, &he);
		if (lvl) {
			if (cur >= 0) {
				loc[cur].b = l.s;
				cur = -1;
			}
			int f = lvl >= 2 ? field_of(s + hs, he - hs) : -1;
			if (f >= 0 && loc[f].form != F_ABSENT)
				loc[f].again++;
			if (f >= 0 && loc[f].form == F_ABSENT) {
				cur = f;
				loc[f].form = F_SECTION;
				loc[f].a = l.next;
				loc[f].b = len;
			}
			continue;
		}
		if (cur < 0) {
			size_t va, vb;
			int f = key_line(t, l, &va, &vb);
			if (f >= 0 && loc[f].form != F_ABSENT)
				loc[f].again++;
			if (f >= 0 && loc[f].form == F_ABSENT)
				loc[f] = (struct loc){F_LINE, va, vb, 0};
		}
	}
	if (cur >= 0)
		loc[cur].b = len;
}

/* ------------------------------------------------------------------ */
/* Reading values                                                      */

static bool placeholder(const char *v)
{
	static const char *const w[] = {"todo", "tbd", "...", "\xe2\x80\xa6", "-", "\xe2\x80\x94",
					"?",    "n/a", "none", "fill me in"};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcasecmp(v, w[i]))
			return true;
	return false;
}

/* Value text of a span: comments dropped, CRLF made LF, blank lines around
 * trimmed, one fenced block or one code span unwrapped; NULL when empty. */
static char *value_of(const char *t, size_t a, size_t b)
{
	struct sb s = SB_INIT, o = SB_INIT;
	struct line l;
	struct fence fc = {0}, fo;
	bool in_fence = false, in_comment = false;

	/* Comments go, except inside fenced blocks where they are text. */
	for (size_t at = a; at < b && get_line(t, b, at, &l); at = l.next) {
		size_t i = l.s;
		bool raw = false;
		if (in_fence) {
			in_fence = !fence_close(t + l.s, l.e - l.s, &fc);
			raw = true;
		} else if (!in_comment && fence_open(t + l.s, l.e - l.s, &fo) &&
			   fence_closes(t, b, l.next, &fo)) {
			fc = fo;
			in_fence = raw = true;
		}
		if (raw) {
			for (; i < l.e; i++)
				if (t[i]) /* a value is a C string: NUL bytes are dropped */
					sb_addc(&s, t[i]);
		}
		while (i < l.e) {
			if (in_comment) {
				const char *end = find_n(t + i, l.e - i, "-->");
				in_comment = !end;
				i = end ? (size_t)(end - t) + 3 : l.e;
			} else if (l.e - i >= 4 && !memcmp(t + i, "<!--", 4) &&
				   find_n(t + i + 4, b - i - 4, "-->")) {
				in_comment = true;
				i += 4;
			} else if (t[i++]) {
				sb_addc(&s, t[i - 1]);
			}
		}
		if (l.next > l.e)
			sb_addc(&s, '\n');
	}
	/* Blank lines at both ends go, and white space at the very end; lines
	 * inside stay as written (a fenced command may need its blanks). */
	const char *p = s.buf ? s.buf : "";
	const char *end = p + s.len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (o.len || q < le) {
			sb_add(&o, p, (size_t)(le - p));
			sb_addc(&o, '\n');
		}
		p = nl ? nl + 1 : end;
	}
	while (o.len && isspace((unsigned char)o.buf[o.len - 1]))
		o.buf[--o.len] = '\0';
	if (o.len && !memchr(o.buf, '\n', o.len))
		sb_trim(&o); /* one line: its indent is not part of it */
	sb_release(&s);

	/* One fenced block: its inside. */
	struct fence f1;
	const char *first_nl = o.len ? strchr(o.buf, '\n') : NULL;
	if (first_nl && fence_open(o.buf, (size_t)(first_nl - o.buf), &f1)) {
		const char *last_nl = strrchr(o.buf, '\n');
		const char *last = last_nl + 1;
		bool one = fence_close(last, strlen(last), &f1);
		/* Closed only by the last line, or it is not one block. */
		for (const char *q = first_nl + 1; one && q < last;) {
			const char *nl = strchr(q, '\n');
			if (fence_close(q, (size_t)(nl - q), &f1))
				one = false;
			q = nl + 1;
		}
		if (one) {
			char *inner = first_nl == last_nl
					      ? xstrdup("")
					      : xstrndup(first_nl + 1, (size_t)(last_nl - first_nl - 1));
			sb_reset(&o);
			sb_adds(&o, inner);
			free(inner);
		}
	}
	/* One code span on one line: its inside. */
	if (o.len >= 2 && o.buf[0] == '`' && !strchr(o.buf, '\n')) {
		size_t k = 0;
		while (k < o.len && o.buf[k] == '`')
			k++;
		if (o.len > 2 * k && !strncmp(o.buf + o.len - k, o.buf, k) &&
		    o.buf[o.len - k - 1] != '`' && !memchr(o.buf + k, '`', o.len - 2 * k)) {
			char *inner = xstrndup(o.buf + k, o.len - 2 * k);
			sb_reset(&o);
			sb_adds(&o, inner);
			sb_trim(&o);
			free(inner);
		}
	}
	if (o.len == 0 || placeholder(o.buf)) {
		sb_release(&o);
		return NULL;
	}
	return sb_detach(&o);
}

int contract_parse_cap(const char *s, int *cap)
{
	long v = 0;
	const char *p = s;

	*cap = 0;
	if (!s)
		return 0;
	while (*p == ' ')
		p++;
	if (!*p || placeholder(p))
		return 0;
	if (!isdigit((unsigned char)*p))
		return ERR_USAGE;
	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (*p++ - '0');
		if (v > 1000000)
			return ERR_USAGE;
	}
	if (*p && *p != ' ')
		return ERR_USAGE;
	if (v < 1)
		return ERR_USAGE;
	*cap = (int)v;
	return 0;
}

int contract_parse_threshold(const char *s, double *frac)
{
	const char *p = s;
	double v = 0, scale = 1;
	bool digits = false, pct;

	*frac = RULES_THRESHOLD;
	if (!s)
		return 0;
	while (*p == ' ')
		p++;
	if (!*p || placeholder(p))
		return 0;
	/* Hand-rolled: strtod follows the locale's decimal point. */
	while (isdigit((unsigned char)*p))
		v = v * 10 + (*p++ - '0'), digits = true;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			v += (*p - '0') * (scale /= 10), digits = true;
	while (*p == ' ')
		p++;
	pct = *p == '%';
	if (pct)
		p++;
	while (*p == ' ')
		p++;
	if (!digits || (*p && *p != '('))
		return ERR_USAGE;
	if (pct || v >= 1)
		v /= 100;
	if (!(v > 0 && v < 1))
		return ERR_USAGE;
	*frac = v;
	return 0;
}

const char *contract_target_text(const struct contract *c)
{
	return !c ? NULL : c->target_shapes ? c->target_shapes : c->v[CF_TARGET];
}

void contract_release(struct contract *c)
{
	if (!c)
		return;
	for (int f = 0; f < CF_NFIELDS; f++)
		free(c->v[f]);
	free(c->runner);
	free(c->peak);
	free(c->cost);
	free(c->target_shapes);
	memset(c, 0, sizeof(*c));
	c->threshold = RULES_THRESHOLD;
}

/* A command optloop runs must read as what runs: a carriage return, an
 * escape, another control character or a bidirectional one can make a
 * terminal show one command while the shell runs another.  Line breaks (a
 * multi-line script) and tabs stay; ERR_USAGE names the character and where
 * it is (vis_check). */
static int command_check(int f, const char *cmd, const char *where, struct err *e)
{
	char *name = xasprintf("contract: the %s command %s", fields[f].name, where);
	char *fix = xasprintf("write the command without it (optloop contract --set %s=...)",
			      fields[f].name);
	int rc = vis_check(name, cmd, "\t\n", "which a terminal would not show as it runs", fix, e);
	free(name);
	free(fix);
	return rc;
}

/* A command field must say one command and nothing else: a second section
 * (only the first would run) or prose beside a fenced block (all of it
 * would go to /bin/sh -c) is refused, naming what to keep. */
static int command_shape_check(int f, const struct loc *l, const char *v, struct err *e)
{
	if (l->again)
		return err_set(e, ERR_USAGE,
			       "contract: docs/draft.md gives the %s %d times, and optloop would run "
			       "only the first; delete all but one of them",
			       fields[f].heading, l->again + 1);
	struct fence fo;
	for (const char *p = v; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (fence_open(p, n, &fo))
			return err_set(e, ERR_USAGE,
				       "contract: the %s in docs/draft.md holds text beside its fenced "
				       "block, and all of it would run through /bin/sh -c; leave only "
				       "the command in the section (put notes in an HTML comment, "
				       "<!-- ... -->, or set it with optloop contract --set %s=...)",
				       fields[f].heading, fields[f].name);
		p = nl ? nl + 1 : p + n;
	}
	return 0;
}

/* A Cost: line that reads (core/roofline.h); NULL or empty is none. */
static int cost_check(const char *text, struct err *e)
{
	struct roofline_cost_spec spec;
	if (!text || !*text)
		return 0;
	int rc = roofline_cost_spec_parse(text, &spec, e);
	if (rc == 0)
		roofline_cost_spec_release(&spec);
	return rc;
}

int contract_parse(const char *text, size_t len, struct contract *c, struct err *e)
{
	struct loc loc[CF_ALL];
	char *cap = NULL, *thr = NULL;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->threshold = RULES_THRESHOLD;
	scan(text, len, loc, NULL);
	for (int f = 0; f < CF_NFIELDS; f++)
		if (loc[f].form != F_ABSENT)
			c->v[f] = value_of(text, loc[f].a, loc[f].b);
	if (loc[CF_CAP].form != F_ABSENT)
		cap = value_of(text, loc[CF_CAP].a, loc[CF_CAP].b);
	if (loc[CF_THRESHOLD].form != F_ABSENT)
		thr = value_of(text, loc[CF_THRESHOLD].a, loc[CF_THRESHOLD].b);
	if (loc[CF_RUNNER].form != F_ABSENT)
		c->runner = value_of(text, loc[CF_RUNNER].a, loc[CF_RUNNER].b);
	if (loc[CF_PEAK].form != F_ABSENT)
		c->peak = value_of(text, loc[CF_PEAK].a, loc[CF_PEAK].b);
	if (loc[CF_COST].form != F_ABSENT)
		c->cost = value_of(text, loc[CF_COST].a, loc[CF_COST].b);
	if (command_shape_check(CF_VALIDATION, &loc[CF_VALIDATION], c->v[CF_VALIDATION], e) < 0 ||
	    command_shape_check(CF_BENCHMARK, &loc[CF_BENCHMARK], c->v[CF_BENCHMARK], e) < 0) {
		free(cap);
		free(thr);
		return ERR_USAGE;
	}
	struct slurm_runner run;
	struct err re = {0};
	int rrc = slurm_runner_parse(c->runner, &run, &re);
	slurm_runner_release(&run);
	if (rrc < 0)
		rc = err_set(e, ERR_USAGE, "contract: %s (or set it with optloop contract --set "
					   "runner=...)",
			     re.msg);
	else if (cost_check(c->cost, &re) < 0)
		rc = err_set(e, ERR_USAGE, "contract: %s (or set it with optloop contract --set "
					   "cost=...)",
			     re.msg);
	else if (contract_parse_cap(cap, &c->cap) < 0)
		rc = err_set(e, ERR_USAGE,
			     "contract: the iteration cap '%s' is not a whole number of iterations "
			     "(write e.g. 20, or set it with optloop contract --set cap=20)",
			     cap);
	else if (contract_parse_threshold(thr, &c->threshold) < 0)
		rc = err_set(e, ERR_USAGE,
			     "contract: the win threshold '%s' is not a percentage between 0 and 100 "
			     "(write e.g. 3%%, or set it with optloop contract --set threshold=3%%)",
			     thr);
	else
		rc = command_check(CF_VALIDATION, c->v[CF_VALIDATION], "in docs/draft.md", e) < 0 ||
				     command_check(CF_BENCHMARK, c->v[CF_BENCHMARK], "in docs/draft.md",
						   e) < 0
			     ? ERR_USAGE
			     : 0;
	free(cap);
	free(thr);
	return rc;
}

int contract_missing(const struct contract *c, struct sb *why)
{
	int n = 0;

	for (int f = 0; f < CF_NFIELDS; f++) {
		if (c && c->v[f])
			continue;
		n++;
		if (why)
			sb_addf(why,
				"%s is missing: %s (fill the '## %s' section of docs/draft.md, or run "
				"optloop contract --set %s=...)\n",
				fields[f].heading, fields[f].help, fields[f].heading, fields[f].name);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Rewriting one field                                                 */

static void add_eol_text(struct sb *out, const char *v, const char *eol)
{
	for (const char *p = v; *p; p++) {
		if (*p == '\r' && p[1] == '\n')
			continue;
		if (*p == '\n')
			sb_adds(out, eol);
		else
			sb_addc(out, *p);
	}
}

/* Written as plain lines, would the value read back differently?  A line
 * that is a heading, a fence or a quote, a comment, or trailing blanks
 * (trimmed on reading) need a fenced block; plain lists do not. */
static bool needs_fence(const char *v)
{
	struct fence f;
	if (strstr(v, "<!--"))
		return true;
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, "\n"), i = 0;
		while (i < n && i < 3 && p[i] == ' ')
			i++;
		if (i < n && (p[i] == '#' || p[i] == '>'))
			return true;
		if (fence_open(p, n, &f) || (n && (p[n - 1] == ' ' || p[n - 1] == '\t')))
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* The value as the lines of a section body (without a final line end);
 * fenced with ch, longer than any run of ch inside the value. */
static void format_value(int f, const char *v, bool fenced, char ch, const char *eol,
			 struct sb *out)
{
	if (fenced || needs_fence(v)) {
		size_t run = 0, best = 0;
		for (const char *p = v; *p; p++) {
			run = *p == ch ? run + 1 : 0;
			if (run > best)
				best = run;
		}
		size_t k = best >= 3 ? best + 1 : 3;
		for (size_t i = 0; i < k; i++)
			sb_addc(out, ch);
		if (f == CF_VALIDATION || f == CF_BENCHMARK)
			sb_adds(out, "sh");
		sb_adds(out, eol);
		add_eol_text(out, v, eol);
		sb_adds(out, eol);
		for (size_t i = 0; i < k; i++)
			sb_addc(out, ch);
	} else {
		add_eol_text(out, v, eol);
	}
}

static void normalise_value(int f, const char *value, struct sb *v)
{
	sb_adds(v, value ? value : "");
	sb_trim(v);
	if (f == CF_THRESHOLD && v->len) {
		double t;
		if (contract_parse_threshold(v->buf, &t) == 0) {
			long long k = llround(t * 1000); /* tenths of a percent */
			sb_reset(v);
			if (k % 10)
				sb_addf(v, "%lld.%lld%%", k / 10, k % 10);
			else
				sb_addf(v, "%lld%%", k / 10);
		}
	}
}

int contract_set(const char *text, size_t len, const char *field, const char *value,
		 struct sb *out, struct err *e)
{
	struct loc loc[CF_ALL];
	struct sb v = SB_INIT;
	int f = contract_field_parse(field);
	const char *eol;
	const char *crlf = memchr(text, '\n', len);

	if (f < 0)
		return err_set(e, ERR_USAGE,
			       "contract: no field '%s' (fields: op, target, languages, validation, "
			       "benchmark, promotion, frozen, cap, threshold, runner, peak, cost)",
			       field ? field : "");
	normalise_value(f, value, &v);
	if ((f == CF_VALIDATION || f == CF_BENCHMARK) && command_check(f, v.buf, "given", e) < 0) {
		sb_release(&v);
		return ERR_USAGE;
	}
	if (f == CF_RUNNER && v.len) {
		struct slurm_runner run;
		int rc = slurm_runner_parse(v.buf, &run, e);
		slurm_runner_release(&run);
		if (rc < 0) {
			err_prefix(e, "contract: ");
			sb_release(&v);
			return rc;
		}
	}
	if (f == CF_COST && cost_check(v.buf, e) < 0) {
		err_prefix(e, "contract: ");
		sb_release(&v);
		return ERR_USAGE;
	}
	if (f == CF_CAP || f == CF_THRESHOLD) {
		int cap;
		double t;
		if ((f == CF_CAP && contract_parse_cap(v.buf, &cap) < 0) ||
		    (f == CF_THRESHOLD && contract_parse_threshold(v.buf, &t) < 0)) {
			int rc = err_set(e, ERR_USAGE,
					 f == CF_CAP ? "contract: cap '%s' is not a whole number of iterations (e.g. 20)"
						     : "contract: threshold '%s' is not a percentage between 0 and 100 (e.g. 3%%)",
					 v.buf);
			sb_release(&v);
			return rc;
		}
	}
	eol = crlf && crlf > text && crlf[-1] == '\r' ? "\r\n" : "\n";
	unsigned dangling;
	scan(text, len, loc, &dangling);
	struct loc L = loc[f];
	char ch = dangling & 1 ? '~' : '`';
	bool want_fence = f == CF_VALIDATION || f == CF_BENCHMARK || needs_fence(v.buf);
	if (dangling == 3 && v.len && (needs_fence(v.buf) || L.form == F_SECTION)) {
		sb_release(&v);
		return err_set(e, ERR_USAGE,
			       "contract: docs/draft.md has a ``` and a ~~~ fence that are never "
			       "closed, so a new value cannot be written safely; close them by hand");
	}

	if (L.form == F_LINE) {
		if (strchr(v.buf, '\n')) {
			sb_release(&v);
			return err_set(e, ERR_USAGE,
				       "contract: %s is written on one line ('%s: ...') in docs/draft.md, "
				       "so it takes a one-line value; give one line, or turn it into a "
				       "'## %s' section by hand",
				       fields[f].name, fields[f].heading, fields[f].heading);
		}
		sb_add(out, text, L.a);
		sb_add(out, v.buf, v.len);
		sb_add(out, text + L.b, len - L.b);
		sb_release(&v);
		return 0;
	}

	if (L.form == F_ABSENT) {
		sb_add(out, text, len);
		if (!v.len) {
			sb_release(&v);
			return 0;
		}
		if (len && text[len - 1] != '\n')
			sb_adds(out, eol);
		sb_addf(out, "%s## %s%s%s", len ? eol : "", fields[f].heading, eol, eol);
		format_value(f, v.buf, want_fence && dangling != 3, ch, eol, out);
		sb_adds(out, eol);
		sb_release(&v);
		return 0;
	}

	/* A section: find its value lines (not blank, not only a comment). */
	struct line l;
	size_t vstart = 0, vend = 0, after_comments = L.a;
	struct fence fc = {0}, fo;
	bool have = false, in_comment = false, in_fence = false, was_fenced = false;
	for (size_t at = L.a; at < L.b && get_line(text, L.b, at, &l); at = l.next) {
		const char *s = text + l.s;
		size_t n = l.e - l.s;
		bool content = false;

		if (in_fence) {
			content = true;
			in_fence = !fence_close(s, n, &fc);
		} else if (!in_comment && fence_open(s, n, &fo) &&
			   fence_closes(text, L.b, l.next, &fo)) {
			content = true;
			in_fence = true;
			fc = fo;
			if (!have)
				was_fenced = true;
		} else {
			/* Strip comment regions; anything left is content.  A value
			 * may share its first line with the end of a hint, or its
			 * last line with the start of one: cut there, not at the
			 * line, so no comment is left half-open. */
			bool comment_first = in_comment;
			size_t first = n, open_at = n;
			for (size_t i = 0; i < n;) {
				if (in_comment) {
					const char *c = find_n(s + i, n - i, "-->");
					if (!c) {
						i = n;
						break;
					}
					in_comment = false;
					i = (size_t)(c - s) + 3;
				} else if (n - i >= 4 && !memcmp(s + i, "<!--", 4) &&
					   find_n(s + i + 4, L.b - (l.s + i + 4), "-->")) {
					in_comment = true;
					open_at = i;
					if (first == n)
						comment_first = true;
					i += 4;
				} else {
					if (s[i] != ' ' && s[i] != '\t') {
						content = true;
						if (first == n)
							first = i;
					}
					i++;
				}
			}
			if (content) {
				if (!have)
					vstart = comment_first ? l.s + first : l.s;
				have = true;
				vend = in_comment ? l.s + open_at : l.next;
				continue;
			}
		}
		if (content) {
			if (!have)
				vstart = l.s;
			have = true;
			vend = l.next;
		} else if (!have && l.e > l.s) {
			after_comments = l.next; /* a hint line before any value */
		}
	}

	if (have) {
		bool fenced = was_fenced || needs_fence(v.buf);
		sb_add(out, text, vstart);
		if (v.len) {
			if (fenced && vstart > 0 && text[vstart - 1] != '\n')
				sb_adds(out, eol); /* a fence must start its line */
			format_value(f, v.buf, was_fenced, ch, eol, out);
			/* Keep the line end the old value had (none at EOF); a value
			 * cut before a comment gets one of its own. */
			if (text[vend - 1] == '\n' || vend < len)
				sb_adds(out, eol);
		}
		sb_add(out, text + vend, len - vend);
	} else {
		size_t ip = after_comments;
		sb_add(out, text, ip);
		if (v.len) {
			if (ip > 0 && text[ip - 1] != '\n')
				sb_adds(out, eol);
			sb_adds(out, eol);
			format_value(f, v.buf, want_fence, ch, eol, out);
			sb_adds(out, eol);
			/* Directly followed by a heading: keep a blank line before it. */
			if (ip < len && text[ip] != '\n' && text[ip] != '\r')
				sb_adds(out, eol);
		}
		sb_add(out, text + ip, len - ip);
	}
	sb_release(&v);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Template and lists                                                  */

/* The comments of field f's section in t, white space collapsed; NULL
 * when the section is not there or holds none. */
static char *hint_in(const char *t, size_t len, int f)
{
	struct loc loc[CF_ALL];
	struct sb h = SB_INIT;

	scan(t, len, loc, NULL);
	if (loc[f].form != F_SECTION)
		return NULL;
	size_t at = loc[f].a, b = loc[f].b;
	const char *open;
	while (at < b && (open = find_n(t + at, b - at, "<!--"))) {
		size_t s = (size_t)(open - t) + 4;
		const char *close = find_n(t + s, b - s, "-->");
		size_t e = close ? (size_t)(close - t) : b;
		for (size_t i = s; i < e; i++) {
			bool sp = isspace((unsigned char)t[i]);
			if (sp && (!h.len || h.buf[h.len - 1] == ' '))
				continue;
			sb_addc(&h, sp ? ' ' : t[i]);
		}
		if (h.len && h.buf[h.len - 1] != ' ')
			sb_addc(&h, ' ');
		at = close ? e + 3 : b;
	}
	while (h.len && h.buf[h.len - 1] == ' ')
		h.buf[--h.len] = '\0';
	if (!h.len) {
		sb_release(&h);
		return NULL;
	}
	return sb_detach(&h);
}

char *contract_hint(const char *text, size_t len, int field)
{
	struct sb tpl = SB_INIT;
	char *h;

	if (field < 0 || field >= CF_ALL)
		return NULL;
	if (text && (h = hint_in(text, len, field)))
		return h;
	if (contract_template(NULL, &tpl, NULL) < 0) {
		sb_release(&tpl);
		return NULL;
	}
	h = hint_in(tpl.buf, tpl.len, field);
	sb_release(&tpl);
	return h;
}

int contract_template(const struct contract *c, struct sb *out, struct err *e)
{
	struct sb tpl = SB_INIT, cur = SB_INIT, next = SB_INIT;
	char *path = assets_path("templates/draft.md", e);
	int rc;

	if (!path) {
		err_prefix(e, "contract template: ");
		return e && e->code ? e->code : ERR_NOTFOUND;
	}
	rc = fsutil_read_file(path, &tpl, e);
	free(path);
	if (rc < 0)
		return rc;
	/* The title names the op: the first word of the op field. */
	const char *op = c && c->v[CF_OP] ? c->v[CF_OP] : NULL;
	size_t opn = op ? strcspn(op, " \t\n") : 0;
	const char *mark = strstr(tpl.buf, "{{op}}");
	if (mark) {
		sb_add(&cur, tpl.buf, (size_t)(mark - tpl.buf));
		if (opn)
			sb_add(&cur, op, opn);
		else
			sb_adds(&cur, "new op");
		sb_adds(&cur, mark + 6);
	} else {
		sb_add(&cur, tpl.buf, tpl.len);
	}
	sb_release(&tpl);
	for (int f = 0; c && f < CF_ALL; f++) {
		char num[32];
		const char *v = NULL;
		if (f < CF_NFIELDS)
			v = c->v[f];
		else if (f == CF_CAP && c->cap > 0)
			v = (snprintf(num, sizeof(num), "%d", c->cap), num);
		else if (f == CF_RUNNER)
			v = c->runner;
		else if (f == CF_PEAK)
			v = c->peak;
		else if (f == CF_COST)
			v = c->cost;
		else if (f == CF_THRESHOLD && c->threshold > 0 &&
			 fabs(c->threshold - RULES_THRESHOLD) > 1e-12)
			v = (snprintf(num, sizeof(num), "%lld.%lld%%", llround(c->threshold * 1000) / 10,
				      llround(c->threshold * 1000) % 10), num);
		if (!v)
			continue;
		sb_reset(&next);
		rc = contract_set(cur.buf, cur.len, fields[f].name, v, &next, e);
		if (rc < 0)
			break;
		struct sb t = cur;
		cur = next;
		next = t;
	}
	if (rc >= 0)
		sb_add(out, cur.buf, cur.len);
	sb_release(&cur);
	sb_release(&next);
	return rc < 0 ? rc : 0;
}

size_t contract_list_items(const char *value, char ***items)
{
	size_t n = 0, cap = 0;
	const char *p = value ? value : "";

	*items = NULL;
	while (*p) {
		size_t k = strcspn(p, ",\n");
		const char *s = p, *e = p + k;
		while (s < e && isspace((unsigned char)*s))
			s++;
		if (e - s >= 2 && (*s == '-' || *s == '*' || *s == '+') && s[1] == ' ')
			s += 2;
		else if (s < e && isdigit((unsigned char)*s)) {
			const char *d = s;
			while (d < e && isdigit((unsigned char)*d))
				d++;
			if (e - d >= 2 && (*d == '.' || *d == ')') && d[1] == ' ')
				s = d + 2;
		}
		while (s < e && isspace((unsigned char)*s))
			s++;
		while (e > s && isspace((unsigned char)e[-1]))
			e--;
		while (e - s >= 2 && *s == '`' && e[-1] == '`')
			s++, e--;
		if (e > s) {
			if (n == cap)
				*items = xrealloc(*items, (cap = cap ? cap * 2 : 8) * sizeof(char *));
			(*items)[n++] = xstrndup(s, (size_t)(e - s));
		}
		p += k;
		if (*p)
			p++;
	}
	return n;
}

void contract_list_free(char **items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

/* ------------------------------------------------------------------ */
/* Target shapes                                                       */

#define NDIMS 5
static const char dim_letters[NDIMS + 1] = "BTHDL";

static bool word_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

/* A dimension starting at p: "B=8", "b = 8" or "B8".  *eq says which
 * spelling; *end is set past the number. */
/* The registry's spelling joins dimensions with underscores
 * (B4_T4096_H64_D128): an underscore between a number and a dimension
 * letter separates, as a dash does. */
static bool underscore_sep(const char *text, const char *u)
{
	return *u == '_' && u > text && isdigit((unsigned char)u[-1]) &&
	       strchr(dim_letters, u[1]) && u[1] && isdigit((unsigned char)u[2]);
}

static bool read_dim(const char *text, const char *p, int *idx, long *val, bool *eq,
		     const char **end)
{
	const char *l;
	if (!*p || (p > text && word_char(p[-1]) && !underscore_sep(text, p - 1)) ||
	    !(l = strchr(dim_letters, toupper((unsigned char)*p))))
		return false;
	const char *q = p + 1, *r = q;
	while (*r == ' ')
		r++;
	*eq = *r == '=';
	if (*eq) {
		for (r++; *r == ' ';)
			r++;
		q = r;
	} else if (!isupper((unsigned char)*p)) {
		return false;
	}
	if (!isdigit((unsigned char)*q))
		return false;
	char *e;
	errno = 0;
	long v = strtol(q, &e, 10);
	if (errno || v <= 0 || (word_char(*e) && !underscore_sep(text, e)) ||
	    (*e == '.' && isdigit((unsigned char)e[1])))
		return false;
	*idx = (int)(l - dim_letters);
	*val = v;
	*end = e;
	return true;
}

static const char *const mode_words[] = {"fwd", "bwd", "fwdbwd"};

/* A mode word starting at p; its length, 0 when none. */
static size_t read_mode(const char *text, const char *p)
{
	if (p > text && word_char(p[-1]))
		return 0;
	size_t n = 0;
	while (word_char(p[n]))
		n++;
	for (size_t i = 0; i < sizeof(mode_words) / sizeof(mode_words[0]); i++)
		if (strlen(mode_words[i]) == n && !strncasecmp(p, mode_words[i], n))
			return n;
	return 0;
}

struct shape_group {
	long d[NDIMS];
	int ndims;
	bool eq;           /* some dimension spelled with '=' */
	const char *start; /* where its first dimension begins */
	const char *end;   /* past its last dimension */
	const char *mode;  /* the mode word right before it, or NULL */
	size_t mode_len;
};

struct mode_ref {
	const char *p;
	size_t n;
	bool bound;
};

static bool only_chars(const char *a, const char *b, const char *set)
{
	for (; a < b; a++)
		if (!strchr(set, *a))
			return false;
	return true;
}

static void add_target(struct contract_shape **v, size_t *n, size_t *cap, const long *d,
		       const char *mode, size_t mode_len)
{
	for (size_t i = 0; i < *n; i++) {
		const struct contract_shape *s = &(*v)[i];
		bool same_mode = (!mode && !s->mode) ||
				 (mode && s->mode && strlen(s->mode) == mode_len &&
				  !strncasecmp(s->mode, mode, mode_len));
		if (same_mode && s->B == d[0] && s->T == d[1] && s->H == d[2] && s->D == d[3] &&
		    s->L == d[4])
			return;
	}
	if (*n == *cap)
		*v = xrealloc(*v, (*cap = *cap ? 2 * *cap : 4) * sizeof(**v));
	struct contract_shape *s = &(*v)[(*n)++];
	s->mode = NULL;
	if (mode) {
		s->mode = xstrndup(mode, mode_len);
		for (char *c = s->mode; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	s->B = d[0], s->T = d[1], s->H = d[2], s->D = d[3], s->L = d[4];
}

size_t contract_target_shapes(const char *target, struct contract_shape **out)
{
	struct shape_group *g = NULL;
	struct mode_ref *m = NULL;
	size_t ng = 0, gcap = 0, nm = 0, mcap = 0, n = 0, cap = 0;
	const char *text = target ? target : "";

	*out = NULL;
	for (const char *p = text; *p;) {
		int idx;
		long val;
		bool eq;
		const char *end;
		if (read_dim(text, p, &idx, &val, &eq, &end)) {
			struct shape_group *cur = ng ? &g[ng - 1] : NULL;
			if (!cur || cur->d[idx] >= 0 || !only_chars(cur->end, p, " \t,-_")) {
				if (ng == gcap)
					g = xrealloc(g, (gcap = gcap ? 2 * gcap : 4) * sizeof(*g));
				cur = &g[ng++];
				memset(cur, 0, sizeof(*cur));
				for (int k = 0; k < NDIMS; k++)
					cur->d[k] = -1;
				cur->start = p;
			}
			cur->d[idx] = val;
			cur->ndims++;
			cur->eq |= eq;
			cur->end = end;
			p = end;
			continue;
		}
		size_t k = read_mode(text, p);
		if (k) {
			if (nm == mcap)
				m = xrealloc(m, (mcap = mcap ? 2 * mcap : 4) * sizeof(*m));
			m[nm++] = (struct mode_ref){p, k, false};
			p += k;
			continue;
		}
		p++;
	}
	/* A mode word followed by nothing but blanks up to a shape is that
	 * shape's own. */
	for (size_t i = 0; i < nm; i++)
		for (size_t j = 0; j < ng; j++)
			if (g[j].start > m[i].p + m[i].n && only_chars(m[i].p + m[i].n, g[j].start, " \t")) {
				g[j].mode = m[i].p;
				g[j].mode_len = m[i].n;
				m[i].bound = true;
			}
	for (size_t j = 0; j < ng; j++) {
		if (!(g[j].eq || g[j].ndims >= 3))
			continue;
		if (g[j].mode) {
			add_target(out, &n, &cap, g[j].d, g[j].mode, g[j].mode_len);
			continue;
		}
		bool any = false;
		for (size_t i = 0; i < nm; i++)
			if (!m[i].bound) {
				add_target(out, &n, &cap, g[j].d, m[i].p, m[i].n);
				any = true;
			}
		if (!any)
			add_target(out, &n, &cap, g[j].d, NULL, 0);
	}
	free(g);
	free(m);
	if (!n) {
		free(*out);
		*out = NULL;
	}
	return n;
}

void contract_shapes_free(struct contract_shape *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].mode);
	free(v);
}

char *contract_shape_name(const struct contract_shape *s)
{
	struct sb k = SB_INIT;
	const long d[NDIMS] = {s->B, s->T, s->H, s->D, s->L};
	sb_init(&k);
	if (s->mode)
		sb_adds(&k, s->mode);
	for (int i = 0; i < NDIMS; i++)
		if (d[i] >= 0)
			sb_addf(&k, "%s%c=%ld", k.len ? " " : "", dim_letters[i], d[i]);
	return sb_detach(&k);
}

bool contract_shape_matches(const struct contract_shape *s, const char *key)
{
	if (!key)
		return false;
	size_t ml = strcspn(key, " ");
	if (s->mode && (strlen(s->mode) != ml || strncasecmp(s->mode, key, ml) != 0))
		return false;
	long d[NDIMS] = {-1, -1, -1, -1, -1};
	for (const char *p = key + ml; *p;) {
		int idx;
		long val;
		bool eq;
		const char *end;
		if (read_dim(key, p, &idx, &val, &eq, &end) && eq) {
			d[idx] = val;
			p = end;
		} else {
			p++;
		}
	}
	const long want[NDIMS] = {s->B, s->T, s->H, s->D, s->L};
	for (int i = 0; i < NDIMS; i++)
		if (want[i] >= 0 && want[i] != d[i])
			return false;
	return true;
}

/* ---- the speedup the Target asks for ---- */

int contract_target_speedup(const char *target, struct contract_target *t, struct err *e)
{
	static const char form[] = "write the factor and its scope, e.g. \"every shape >= 1.5x\", "
				   "\"1.2x geomean\" or \"3 % geomean speedup\"";
	memset(t, 0, sizeof(*t));
	if (!target || !*target)
		return err_set(e, ERR_FAIL, "the contract has no Target; %s", form);
	for (const char *p = target; *p; p++) {
		if (!isdigit((unsigned char)*p) || (p > target && (isalnum((unsigned char)p[-1]) ||
								    p[-1] == '.' || p[-1] == '=' ||
								    p[-1] == '-')))
			continue;
		char *end;
		double v = strtod(p, &end);
		const char *q = end;
		while (*q == ' ')
			q++;
		if ((*q == 'x' || *q == 'X') && !isalnum((unsigned char)q[1]))
			t->speedup = v;
		else if (!strncmp(q, "\xc3\x97", 2) || !strncasecmp(q, "times", 5))
			t->speedup = v;
		else if (*q == '%')
			t->speedup = 1 + v / 100;
		if (t->speedup > 0)
			break;
		p = end - 1;
	}
	if (t->speedup > 0 && !(t->speedup > 1))
		return err_set(e, ERR_FAIL,
			       "the contract's Target (\"%s\") asks for %.3gx, which is no speedup: "
			       "at 1x or below it a kernel no faster (or slower) than the baseline "
			       "would reach it; ask for more than 1x, e.g. \"every shape >= 1.05x\"",
			       target, t->speedup);
	if (!(t->speedup > 1))
		return err_set(e, ERR_FAIL,
			       "the contract's Target (\"%s\") names no speedup optloop can read; %s",
			       target, form);
	char *low = xstrdup(target);
	for (char *p = low; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	bool geo = has_word(low, "geomean") || strstr(low, "geometric mean");
	bool every = has_word(low, "every") || has_word(low, "each") || has_word(low, "all") ||
		     strstr(low, "per shape") || strstr(low, "per-shape");
	free(low);
	if (geo)
		t->scope = TARGET_GEOMEAN;
	else if (every)
		t->scope = TARGET_EVERY;
	else {
		struct contract_shape *sh;
		size_t n = contract_target_shapes(target, &sh);
		contract_shapes_free(sh, n);
		if (n == 0)
			return err_set(e, ERR_FAIL,
				       "the contract's Target (\"%s\") does not say whether every shape "
				       "or the geomean must reach %.3gx; %s",
				       target, t->speedup, form);
		t->scope = TARGET_EVERY;
	}
	return 0;
}
