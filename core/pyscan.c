/*
 * pyscan — the shape of a Python file without Python.  See pyscan.h.
 */
#include "core/pyscan.h"

#include "core/sb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool name_start(unsigned char c)
{
	return isalpha(c) || c == '_' || c >= 0x80;
}

static bool name_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c >= 0x80;
}

bool py_tok_is(const struct py_tok *t, const char *s)
{
	size_t n = strlen(s);
	return t->len == n && !memcmp(t->s, s, n);
}

static void push_tok(struct py_file *f, size_t *cap, const char *s, size_t len, int kind)
{
	if (f->ntok == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		f->tok = xrealloc(f->tok, *cap * sizeof(*f->tok));
	}
	f->tok[f->ntok++] = (struct py_tok){s, (unsigned)len, (unsigned char)kind};
}

/* The end of the string literal whose quote is at p. */
static const char *string_end(const char *p)
{
	char q = *p;
	bool triple = p[1] == q && p[2] == q;
	p += triple ? 3 : 1;
	while (*p) {
		if (*p == '\\' && p[1]) {
			p += 2;
			continue;
		}
		if (*p == q && (!triple || (p[1] == q && p[2] == q)))
			return p + (triple ? 3 : 1);
		if (*p == '\n' && !triple)
			return p; /* unterminated: the line ends it */
		p++;
	}
	return p;
}

/* A string prefix: r, b, u, f and their pairs, any case. */
static bool string_prefix(const char *s, size_t n)
{
	if (n > 2)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("rRbBuUfF", s[i]))
			return false;
	return true;
}

static size_t op_len(const char *p)
{
	if (p[0] == '-' && p[1] == '>')
		return 2;
	if ((p[0] == '*' || p[0] == '/' || p[0] == '<' || p[0] == '>') && p[1] == p[0])
		return p[2] == '=' ? 3 : 2;
	if (p[1] == '=' && strchr("=!<>:+-*/%&|^@", p[0]))
		return 2;
	return 1;
}

static void tokenize(const char *text, struct py_file *f)
{
	size_t cap = 0, lcap = 0;
	int depth = 0;
	bool at_start = true;
	unsigned indent = 0;
	const char *p = text;
	struct py_line cur = {0};
	bool open = false;

	while (*p) {
		if (at_start) {
			indent = 0;
			while (*p == ' ' || *p == '\t' || *p == '\f') {
				indent = *p == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
				p++;
			}
			at_start = false;
		}
		unsigned char c = (unsigned char)*p;
		if (c == '#') {
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (c == '\\' && (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n'))) {
			p += p[1] == '\n' ? 2 : 3;
			continue;
		}
		if (c == '\n') {
			p++;
			if (depth > 0)
				continue;
			if (open) {
				cur.ntok = (unsigned)f->ntok - cur.first;
				if (f->nline == lcap) {
					lcap = lcap ? lcap * 2 : 64;
					f->line = xrealloc(f->line, lcap * sizeof(*f->line));
				}
				f->line[f->nline++] = cur;
				open = false;
			}
			at_start = true;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
			p++;
			continue;
		}
		if (!open) {
			cur = (struct py_line){.first = (unsigned)f->ntok, .indent = indent};
			open = true;
		}
		const char *a = p;
		if (name_start(c)) {
			while (name_char((unsigned char)*p))
				p++;
			if ((*p == '\'' || *p == '"') && string_prefix(a, (size_t)(p - a))) {
				p = string_end(p);
				push_tok(f, &cap, a, (size_t)(p - a), PT_STR);
			} else {
				push_tok(f, &cap, a, (size_t)(p - a), PT_NAME);
			}
		} else if (c == '\'' || c == '"') {
			p = string_end(p);
			push_tok(f, &cap, a, (size_t)(p - a), PT_STR);
		} else if (isdigit(c) || (c == '.' && isdigit((unsigned char)p[1]))) {
			while (name_char((unsigned char)*p) || *p == '.' ||
			       ((*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E')))
				p++;
			push_tok(f, &cap, a, (size_t)(p - a), PT_NUM);
		} else {
			size_t n = op_len(p);
			if (c == '(' || c == '[' || c == '{')
				depth++;
			else if ((c == ')' || c == ']' || c == '}') && depth > 0)
				depth--;
			p += n;
			push_tok(f, &cap, a, n, PT_OP);
		}
	}
	if (open) {
		cur.ntok = (unsigned)f->ntok - cur.first;
		f->line = xrealloc(f->line, (f->nline + 1) * sizeof(*f->line));
		f->line[f->nline++] = cur;
	}
}

/* ---- imports ---- */

static char *dotted(const struct py_file *f, unsigned *i, unsigned end)
{
	struct sb s = SB_INIT;
	while (*i < end) {
		const struct py_tok *t = &f->tok[*i];
		if (t->kind == PT_NAME && !py_tok_is(t, "import") && !py_tok_is(t, "as"))
			sb_add(&s, t->s, t->len);
		else if (t->kind == PT_OP && t->s[0] == '.')
			sb_add(&s, t->s, t->len); /* "." or a run of them */
		else
			break;
		(*i)++;
	}
	return s.len ? sb_detach(&s) : (sb_release(&s), NULL);
}

static void add_import(struct py_file *f, char *module, char *name, char *alias, bool in_def)
{
	f->imp = xrealloc(f->imp, (f->nimp + 1) * sizeof(*f->imp));
	f->imp[f->nimp++] = (struct py_import){module, name, alias, in_def};
}

static char *tok_dup(const struct py_tok *t)
{
	return xstrndup(t->s, t->len);
}

/* One import statement, the tokens [i, end). */
static void read_import(struct py_file *f, unsigned i, unsigned end, bool in_def)
{
	if (py_tok_is(&f->tok[i], "from")) {
		i++;
		char *mod = dotted(f, &i, end);
		if (!mod || i >= end || !py_tok_is(&f->tok[i], "import")) {
			free(mod);
			return;
		}
		for (i++; i < end; i++) {
			const struct py_tok *t = &f->tok[i];
			if (t->kind == PT_OP && t->s[0] == '*') {
				add_import(f, xstrdup(mod), xstrdup("*"), NULL, in_def);
				continue;
			}
			if (t->kind != PT_NAME)
				continue;
			char *alias = NULL;
			if (i + 2 < end && py_tok_is(&f->tok[i + 1], "as") &&
			    f->tok[i + 2].kind == PT_NAME)
				alias = tok_dup(&f->tok[i + 2]);
			add_import(f, xstrdup(mod), tok_dup(t), alias, in_def);
			if (alias)
				i += 2;
		}
		free(mod);
		return;
	}
	for (i++; i < end; i++) { /* import a.b as c, d */
		char *mod = dotted(f, &i, end);
		if (!mod)
			continue;
		char *alias = NULL;
		if (i + 1 < end && py_tok_is(&f->tok[i], "as") && f->tok[i + 1].kind == PT_NAME) {
			alias = tok_dup(&f->tok[i + 1]);
			i += 2;
		}
		add_import(f, mod, NULL, alias, in_def);
	}
}

/* ---- module-level names ---- */

static const char *const keywords[] = {
	"False", "None",   "True",    "and",      "as",     "assert", "async", "await",
	"break", "class",  "continue", "def",     "del",    "elif",   "else",  "except",
	"finally", "for",  "from",    "global",   "if",     "import", "in",    "is",
	"lambda", "nonlocal", "not",  "or",       "pass",   "raise",  "return", "try",
	"while", "with",   "yield",   "self",     "cls",
};

static bool keyword(const struct py_tok *t)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(*keywords); i++)
		if (py_tok_is(t, keywords[i]))
			return true;
	return false;
}


static void add_def(struct py_file *f, const struct py_tok *t, unsigned line0, int kind)
{
	f->def = xrealloc(f->def, (f->ndef + 1) * sizeof(*f->def));
	f->def[f->ndef++] = (struct py_def){tok_dup(t), line0, line0 + 1, (unsigned char)kind};
}

unsigned py_assign_at(const struct py_file *f, unsigned l, bool augmented)
{
	const struct py_line *ln = &f->line[l];
	int depth = 0;
	for (unsigned i = ln->first; i < ln->first + ln->ntok; i++) {
		const struct py_tok *t = &f->tok[i];
		if (t->kind != PT_OP)
			continue;
		if (strchr("([{", t->s[0]))
			depth++;
		else if (strchr(")]}", t->s[0]))
			depth--;
		else if (!depth && (py_tok_is(t, "=") ||
				    (augmented && t->s[t->len - 1] == '=' &&
				     !(t->len == 2 && strchr("=!<>:", t->s[0])))))
			return i;
	}
	return 0;
}

/* "a = ...", "a, b = ...", "a: T = ...": the names assigned, as defs of
 * line l; false when the line assigns nothing plain (x.y = ..., x[0] = ...,
 * a statement). */
static bool read_assign(struct py_file *f, unsigned l)
{
	const struct py_line *ln = &f->line[l];
	unsigned first = ln->first, eq = 0;
	if (f->tok[first].kind != PT_NAME && !py_tok_is(&f->tok[first], "(") &&
	    !py_tok_is(&f->tok[first], "["))
		return false;
	if (ln->ntok > 2 && f->tok[first].kind == PT_NAME && py_tok_is(&f->tok[first + 1], ":"))
		eq = first + 1; /* an annotation: "a: T = ..." */
	else
		eq = py_assign_at(f, l, false);
	if (!eq)
		return false;
	for (unsigned i = first; i < eq; i++) {
		const struct py_tok *t = &f->tok[i];
		if ((t->kind == PT_NAME && !keyword(t)) ||
		    (t->kind == PT_OP && t->len == 1 && strchr(",()[]*", t->s[0])))
			continue;
		return false;
	}
	size_t before = f->ndef;
	for (unsigned i = first; i < eq; i++)
		if (f->tok[i].kind == PT_NAME)
			add_def(f, &f->tok[i], l, PD_ASSIGN);
	return f->ndef > before;
}

static bool starts_block(const struct py_file *f, const struct py_line *ln)
{
	const struct py_tok *last = &f->tok[ln->first + ln->ntok - 1];
	return last->kind == PT_OP && py_tok_is(last, ":");
}

struct scope {
	unsigned indent;
	int def; /* the module-level def it opened, -1 for a nested def, -2 a plain block */
};

static void structure(struct py_file *f)
{
	struct scope *st = xcalloc(f->nline + 1, sizeof(*st));
	size_t nst = 0, indef = 0; /* open defs and classes */
	int decorated = -1;        /* the first decorator line before a def */

	for (unsigned l = 0; l < f->nline; l++) {
		struct py_line *ln = &f->line[l];
		while (nst && st[nst - 1].indent >= ln->indent) {
			nst--;
			if (st[nst].def != -2)
				indef--;
			if (st[nst].def >= 0)
				f->def[st[nst].def].line1 = l;
		}
		unsigned i = ln->first, end = ln->first + ln->ntok;
		const struct py_tok *t = &f->tok[i];
		if (py_tok_is(t, "async") && i + 1 < end)
			t = &f->tok[++i];
		if (py_tok_is(t, "from") || py_tok_is(t, "import")) {
			read_import(f, i, end, indef > 0);
			continue;
		}
		if (t->kind == PT_OP && t->s[0] == '@') {
			if (decorated < 0)
				decorated = (int)l;
			continue;
		}
		bool def = py_tok_is(t, "def") || py_tok_is(t, "class");
		if (def && i + 1 < end && f->tok[i + 1].kind == PT_NAME) {
			int at = -1;
			if (!indef) {
				add_def(f, &f->tok[i + 1], decorated >= 0 ? (unsigned)decorated : l,
					py_tok_is(t, "def") ? PD_DEF : PD_CLASS);
				at = (int)f->ndef - 1;
				f->def[at].line1 = f->nline;
			}
			st[nst++] = (struct scope){ln->indent, at};
			indef++;
			decorated = -1;
			continue;
		}
		decorated = -1;
		if (!indef) {
			ln->module = true;
			read_assign(f, l);
		}
		if (starts_block(f, ln))
			st[nst++] = (struct scope){ln->indent, -2};
	}
	free(st);
}

void py_scan(const char *text, struct py_file *out)
{
	memset(out, 0, sizeof(*out));
	tokenize(text ? text : "", out);
	structure(out);
}

void py_file_release(struct py_file *f)
{
	for (size_t i = 0; i < f->ndef; i++)
		free(f->def[i].name);
	for (size_t i = 0; i < f->nimp; i++) {
		free(f->imp[i].module);
		free(f->imp[i].name);
		free(f->imp[i].alias);
	}
	free(f->def);
	free(f->imp);
	free(f->tok);
	free(f->line);
	memset(f, 0, sizeof(*f));
}

int py_def_find(const struct py_file *f, const char *name, int from)
{
	for (size_t i = from > 0 ? (size_t)from : 0; i < f->ndef; i++)
		if (!strcmp(f->def[i].name, name))
			return (int)i;
	return -1;
}

void py_refs_tokens(const struct py_file *f, unsigned first, unsigned end, py_ref_fn fn,
		    void *ctx)
{
	int depth = 0;
	for (unsigned i = first; i < end && i < f->ntok; i++) {
		const struct py_tok *t = &f->tok[i];
		if (t->kind == PT_OP) {
			if (strchr("([{", t->s[0]))
				depth++;
			else if (strchr(")]}", t->s[0]))
				depth--;
			continue;
		}
		if (t->kind != PT_NAME || keyword(t))
			continue;
		const struct py_tok *prev = i > first ? &f->tok[i - 1] : NULL;
		const struct py_tok *next = i + 1 < end ? &f->tok[i + 1] : NULL;
		if (prev && prev->kind == PT_OP && py_tok_is(prev, "."))
			continue; /* an attribute */
		if (prev && (py_tok_is(prev, "def") || py_tok_is(prev, "class")))
			continue; /* its own name */
		if (depth > 0 && next && py_tok_is(next, "="))
			continue; /* a keyword argument */
		const struct py_tok *attr = NULL;
		if (next && py_tok_is(next, ".") && i + 2 < end && f->tok[i + 2].kind == PT_NAME)
			attr = &f->tok[i + 2];
		fn(ctx, t->s, t->len, attr ? attr->s : NULL, attr ? attr->len : 0);
	}
}

void py_refs(const struct py_file *f, unsigned a, unsigned b, py_ref_fn fn, void *ctx)
{
	for (unsigned l = a; l < b && l < f->nline; l++)
		py_refs_tokens(f, f->line[l].first, f->line[l].first + f->line[l].ntok, fn, ctx);
}

unsigned py_block_end(const struct py_file *f, unsigned l)
{
	unsigned e = l + 1;
	while (e < f->nline && f->line[e].indent > f->line[l].indent)
		e++;
	return e;
}

bool py_call_arg(const struct py_file *f, unsigned open, unsigned k, unsigned *first,
		 unsigned *end)
{
	int depth = 0;
	unsigned arg = 0, start = open + 1;
	for (unsigned i = open; i < f->ntok; i++) {
		const struct py_tok *t = &f->tok[i];
		if (t->kind != PT_OP)
			continue;
		if (strchr("([{", t->s[0])) {
			depth++;
		} else if (strchr(")]}", t->s[0])) {
			if (--depth == 0) {
				if (arg == k && i > start) {
					*first = start, *end = i;
					return true;
				}
				return false;
			}
		} else if (depth == 1 && t->s[0] == ',') {
			if (arg == k) {
				*first = start, *end = i;
				return true;
			}
			arg++;
			start = i + 1;
		}
	}
	return false;
}

/* Whether def d is decorated with something named *jit* (triton.jit,
 * tilelang.jit) or autotune/heuristics over one. */
static bool jit_def(const struct py_file *f, const struct py_def *d)
{
	for (unsigned l = d->line0; l < d->line1 && l < f->nline; l++) {
		const struct py_line *ln = &f->line[l];
		const struct py_tok *t = &f->tok[ln->first];
		if (!(t->kind == PT_OP && t->s[0] == '@'))
			return false;
		for (unsigned i = ln->first; i < ln->first + ln->ntok; i++)
			if (py_tok_is(&f->tok[i], "jit") || py_tok_is(&f->tok[i], "autotune"))
				return true;
	}
	return false;
}

bool py_is_kernel_code(const struct py_file *f)
{
	for (size_t k = 0; k < f->ndef; k++) {
		const struct py_def *d = &f->def[k];
		if (d->kind == PD_CLASS) {
			/* class X(torch.autograd.Function) / (Function) */
			const struct py_line *ln = &f->line[d->line0];
			for (unsigned l = d->line0; l < d->line1; l++) {
				ln = &f->line[l];
				if (!(f->tok[ln->first].kind == PT_OP && f->tok[ln->first].s[0] == '@'))
					break;
			}
			for (unsigned i = ln->first; i < ln->first + ln->ntok; i++)
				if (py_tok_is(&f->tok[i], "Function"))
					return true;
		}
	}
	/* NAME[grid](...) with NAME a jit def of the file */
	for (size_t i = 0; i + 1 < f->ntok; i++) {
		const struct py_tok *t = &f->tok[i];
		if (t->kind != PT_NAME || !py_tok_is(&f->tok[i + 1], "["))
			continue;
		int depth = 0;
		size_t j = i + 1;
		for (; j < f->ntok; j++) {
			const struct py_tok *u = &f->tok[j];
			if (u->kind == PT_OP && strchr("([{", u->s[0]))
				depth++;
			else if (u->kind == PT_OP && strchr(")]}", u->s[0]) && --depth == 0)
				break;
		}
		if (j + 1 >= f->ntok || !py_tok_is(&f->tok[j + 1], "("))
			continue;
		for (size_t k = 0; k < f->ndef; k++)
			if (f->def[k].kind == PD_DEF && f->def[k].name[0] == t->s[0] &&
			    py_tok_is(t, f->def[k].name) && jit_def(f, &f->def[k]))
				return true;
	}
	return false;
}
