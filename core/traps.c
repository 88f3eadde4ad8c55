/*
 * traps — read and write the TRAPS.md catalogue (see traps.h).
 *
 * A line-by-line reader: headings open entries, bold field markers open
 * fields, everything else is text for whatever is open (the preamble, an
 * entry's lead paragraph, or a field).  Code fences are read verbatim.
 * Writing escapes a value line that would read back as structure (a
 * heading, a field marker) with a leading backslash, which the reader
 * removes, so a catalogue survives any number of round trips.
 */
#include "core/traps.h"

#include "core/assets.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "core/vis.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum field { F_NONE = -1, F_FACT, F_WHY, F_HOW, F_ID, NFIELDS };

static const char *const field_label[] = {"Fact", "Why", "How to apply", "Id"};

char *traps_slug(const char *title)
{
	struct sb s = SB_INIT;
	bool dash = false;
	for (const char *p = title ? title : ""; *p && s.len < 48; p++) {
		unsigned char c = (unsigned char)*p;
		if (isalnum(c) && c < 128) {
			if (dash && s.len)
				sb_addc(&s, '-');
			dash = false;
			sb_addc(&s, (char)tolower(c));
		} else {
			dash = true;
		}
	}
	if (!s.len)
		sb_adds(&s, "trap");
	return sb_detach(&s);
}

/* ---- line classes --------------------------------------------------------- */

static int heading_level(const char *l)
{
	int n = 0;
	while (l[n] == '#')
		n++;
	if (n == 0 || n > 6 || (l[n] && l[n] != ' ' && l[n] != '\t'))
		return 0;
	return n;
}

static bool is_fence(const char *l)
{
	int sp = 0;
	while (l[sp] == ' ' && sp < 3)
		sp++;
	return !strncmp(l + sp, "```", 3) || !strncmp(l + sp, "~~~", 3);
}

/* A field marker line: "**Fact:** text", "**Fact**: text", "- **Why:** ...".
 * Returns the field and points *rest at the text after the marker. */
static enum field field_of(const char *l, const char **rest)
{
	const char *p = l;
	while (*p == ' ' || *p == '\t')
		p++;
	if ((*p == '-' || *p == '*' || *p == '+') && p[1] == ' ') {
		p += 2;
		while (*p == ' ' || *p == '\t')
			p++;
	}
	if (strncmp(p, "**", 2))
		return F_NONE;
	p += 2;
	const char *q = strstr(p, "**");
	if (!q || q == p)
		return F_NONE;
	size_t n = (size_t)(q - p);
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	bool colon = n && p[n - 1] == ':';
	if (colon)
		n--;
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	static const struct {
		const char *name;
		enum field f;
	} names[] = {
		{"fact", F_FACT},	{"why", F_WHY},	  {"how to apply", F_HOW},
		{"how to apply it", F_HOW}, {"how", F_HOW}, {"apply", F_HOW},
		{"id", F_ID},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i].name) == n && !strncasecmp(p, names[i].name, n)) {
			const char *r = q + 2;
			while (*r == ' ' || *r == '\t')
				r++;
			if (!colon && *r == ':') {
				r++;
				while (*r == ' ' || *r == '\t')
					r++;
			}
			*rest = r;
			return names[i].f;
		}
	}
	return F_NONE;
}

static bool structural(const char *l)
{
	const char *rest;
	return heading_level(l) > 0 || field_of(l, &rest) != F_NONE;
}

/* ---- parsing -------------------------------------------------------------- */

struct entry {
	bool active, headed;
	int lineno;
	struct sb title;
	char *id; /* from {#id} */
	struct sb lead;
	struct sb f[NFIELDS];
	bool has[NFIELDS];
	int field;
};

struct reader {
	struct traps_doc *d;
	struct problems *probs;
	size_t cap;
	struct entry cur;
};

static void problem(struct reader *r, int lineno, char *msg)
{
	if (!r->probs) {
		free(msg);
		return;
	}
	struct problems *p = r->probs;
	p->v = xrealloc(p->v, (p->n + 1) * sizeof(*p->v));
	p->v[p->n++] = (struct problem){lineno, msg};
}

/* Strip trailing blank lines and thematic breaks ("---" between entries is
 * decoration, not part of the last field), then surrounding space. */
static void tidy(struct sb *s)
{
	for (;;) {
		sb_trim(s);
		char *nl = strrchr(s->buf ? s->buf : "", '\n');
		const char *last = nl ? nl + 1 : sb_str(s);
		size_t n = strlen(last);
		if (n < 3 || (last[0] != '-' && last[0] != '*' && last[0] != '_'))
			return;
		for (size_t i = 0; i < n; i++)
			if (last[i] != last[0] && last[i] != ' ')
				return;
		s->len = (size_t)(last - s->buf);
		s->buf[s->len] = '\0';
	}
}

static char *derive_title(const char *src)
{
	struct sb t = SB_INIT;
	const char *p = src;
	while (*p && (isspace((unsigned char)*p) || *p == '#' || *p == '-' || *p == '>'))
		p++;
	for (; *p && *p != '\n' && t.len < 60; p++) {
		if (*p == '.' && (p[1] == ' ' || p[1] == '\n' || !p[1]))
			break;
		if (*p == '*' || *p == '`' || *p == '{' || *p == '}' || *p == '\r' || *p == '\t')
			continue;
		sb_addc(&t, *p);
	}
	if (t.len >= 60) {
		char *sp = strrchr(t.buf, ' ');
		if (sp && sp - t.buf > 20) {
			t.len = (size_t)(sp - t.buf);
			t.buf[t.len] = '\0';
		}
	}
	sb_trim(&t);
	while (t.len && strchr(",;:", t.buf[t.len - 1]))
		t.buf[--t.len] = '\0';
	sb_trim(&t);
	if (!t.len)
		sb_adds(&t, "Untitled trap");
	return sb_detach(&t);
}

static void clean_title(struct sb *t)
{
	size_t j = 0;
	for (size_t i = 0; i < t->len; i++)
		if (t->buf[i] != '{' && t->buf[i] != '}' && t->buf[i] != '\r' && t->buf[i] != '\t')
			t->buf[j++] = t->buf[i];
	t->len = j;
	if (t->buf)
		t->buf[j] = '\0';
	sb_trim(t);
}

static bool id_taken(const struct traps_doc *d, const char *id)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].id, id))
			return true;
	return false;
}

static char *unique_id(const struct traps_doc *d, char *id)
{
	if (!id_taken(d, id))
		return id;
	for (int k = 2;; k++) {
		char *c = xasprintf("%s-%d", id, k);
		if (!id_taken(d, c)) {
			free(id);
			return c;
		}
		free(c);
	}
}

static void entry_reset(struct entry *c)
{
	sb_release(&c->title);
	sb_release(&c->lead);
	for (int i = 0; i < NFIELDS; i++)
		sb_release(&c->f[i]);
	free(c->id);
	memset(c, 0, sizeof(*c));
	c->field = F_NONE;
}

static void finish(struct reader *r)
{
	struct entry *c = &r->cur;
	if (!c->active)
		return;
	tidy(&c->lead);
	for (int i = 0; i < NFIELDS; i++)
		tidy(&c->f[i]);
	bool any = c->lead.len || c->f[F_FACT].len || c->f[F_WHY].len || c->f[F_HOW].len;
	if (!any) {
		problem(r, c->lineno,
			xasprintf("%s%s%s has no Fact, Why or How to apply text; it is not a trap "
				  "and is dropped when the file is written back",
				  c->headed ? "heading '" : "entry", c->headed ? sb_str(&c->title) : "",
				  c->headed ? "'" : ""));
		entry_reset(c);
		return;
	}
	struct sb fact = SB_INIT;
	sb_adds(&fact, sb_str(&c->lead));
	if (c->lead.len && c->f[F_FACT].len)
		sb_adds(&fact, "\n\n");
	sb_adds(&fact, sb_str(&c->f[F_FACT]));

	struct trap t = {0};
	clean_title(&c->title);
	if (c->title.len) {
		t.title = xstrdup(c->title.buf);
	} else {
		t.title = derive_title(fact.len ? fact.buf
				       : c->f[F_WHY].len ? c->f[F_WHY].buf
							 : sb_str(&c->f[F_HOW]));
		if (!c->headed)
			problem(r, c->lineno,
				xasprintf("entry without its own heading; titled '%s' from its "
					  "text (add a '## Title' line to name it)",
					  t.title));
	}
	const char *want = c->f[F_ID].len ? c->f[F_ID].buf : c->id;
	t.id = unique_id(r->d, traps_slug(want ? want : t.title));
	t.fact = sb_detach(&fact);
	t.why = xstrdup(sb_str(&c->f[F_WHY]));
	t.how = xstrdup(sb_str(&c->f[F_HOW]));
	t.lineno = c->lineno;
	t.state = TRAP_UNCHECKED;
	const char *missing[3] = {!*t.fact ? "Fact" : NULL, !*t.why ? "Why" : NULL,
				  !*t.how ? "How to apply" : NULL};
	for (int i = 0; i < 3; i++)
		if (missing[i])
			problem(r, c->lineno,
				xasprintf("trap '%s' has no **%s:** (add it; every trap needs "
					  "Fact, Why and How to apply)",
					  t.title, missing[i]));
	if (r->d->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->d->v = xrealloc(r->d->v, r->cap * sizeof(*r->d->v));
	}
	r->d->v[r->d->n++] = t;
	entry_reset(c);
}

static void start(struct reader *r, int lineno, const char *title)
{
	finish(r);
	struct entry *c = &r->cur;
	entry_reset(c);
	c->active = true;
	c->lineno = lineno;
	if (title) {
		c->headed = true;
		sb_adds(&c->title, title);
		sb_trim(&c->title);
		/* "Title {#id}" */
		char *b = c->title.len ? strrchr(c->title.buf, '{') : NULL;
		if (b && b[1] == '#' && c->title.buf[c->title.len - 1] == '}') {
			c->id = xstrndup(b + 2, strlen(b + 2) - 1);
			*b = '\0';
			c->title.len = (size_t)(b - c->title.buf);
			sb_trim(&c->title);
		}
	}
}

/* Append one line; a newline goes before it unless s is still empty (the
 * preamble passes nl_always so its leading blank lines are kept). */
static void add_line(struct sb *s, const char *l, bool nl_always)
{
	if (nl_always || s->len)
		sb_addc(s, '\n');
	sb_adds(s, l);
}

int traps_parse(const char *text, size_t len, struct traps_doc *d, struct problems *probs,
		struct err *e)
{
	struct reader r = {.d = d, .probs = probs};
	struct sb pre = SB_INIT, line = SB_INIT;
	const char *p = text, *end = text + len;
	bool in_front = false, in_fence = false;
	int lineno = 0;

	memset(d, 0, sizeof(*d));
	if (probs)
		memset(probs, 0, sizeof(*probs));
	entry_reset(&r.cur);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		sb_reset(&line);
		sb_add(&line, p, n);
		p = nl ? nl + 1 : end;
		lineno++;
		/* Text stops at a NUL byte; CRs before the newline are line ends. */
		line.len = strlen(line.buf);
		while (line.len && line.buf[line.len - 1] == '\r')
			line.buf[--line.len] = '\0';
		const char *l = line.buf;
		struct entry *c = &r.cur;
		struct sb *sink = !c->active ? &pre : c->field != F_NONE ? &c->f[c->field] : &c->lead;

		bool pre_nl = lineno > 1;

		if (lineno == 1 && !strcmp(l, "---")) {
			in_front = true;
			add_line(&pre, l, pre_nl);
			continue;
		}
		if (in_front) {
			add_line(&pre, l, pre_nl);
			if (!strcmp(l, "---") || !strcmp(l, "..."))
				in_front = false;
			continue;
		}
		if (in_fence || is_fence(l)) {
			add_line(sink, l, sink == &pre && pre_nl);
			in_fence = in_fence ? !is_fence(l) : true;
			continue;
		}
		int lv = heading_level(l);
		if (lv) {
			if (lv == 1 && !c->active && d->n == 0) {
				add_line(&pre, l, pre_nl);
				continue;
			}
			const char *t = l + lv;
			start(&r, lineno, t);
			continue;
		}
		const char *rest;
		enum field f = field_of(l, &rest);
		if (f != F_NONE) {
			if (!c->active || c->has[f])
				start(&r, lineno, NULL);
			c->field = f;
			c->has[f] = true;
			sb_adds(&c->f[f], rest);
			continue;
		}
		if (sink != &pre && l[0] == '\\' && (structural(l + 1) || l[1] == '\\'))
			l++;
		add_line(sink, l, sink == &pre && pre_nl);
	}
	if (in_fence) { /* close what the file left open, so writing it back is stable */
		struct entry *c = &r.cur;
		add_line(!c->active ? &pre : c->field != F_NONE ? &c->f[c->field] : &c->lead, "```",
			 true);
	}
	finish(&r);
	/* Keep leading blank lines (they decide whether "---" opens front
	 * matter), drop trailing ones; only the blanks a heading may end with,
	 * so "##\v" does not turn into a heading when written back. */
	while (pre.len && strchr(" \t\r\n", pre.buf[pre.len - 1]))
		pre.buf[--pre.len] = '\0';
	d->preamble = sb_detach(&pre);
	if (!d->preamble)
		d->preamble = xstrdup("");
	entry_reset(&r.cur);
	sb_release(&line);
	(void)e;
	return 0;
}

/* ---- writing -------------------------------------------------------------- */

static bool starts_block(const char *l)
{
	const char *p = l;
	if ((*p == '-' || *p == '*' || *p == '+') && p[1] == ' ')
		return true;
	while (isdigit((unsigned char)*p))
		p++;
	if (p != l && (*p == '.' || *p == ')') && p[1] == ' ')
		return true;
	return is_fence(l);
}

static void render_value(struct sb *out, const char *label, const char *v)
{
	if (!v || !*v)
		return;
	sb_addf(out, "**%s:**", label);
	const char *p = v;
	const char *nl = strchr(p, '\n');
	struct sb first = SB_INIT;
	sb_add(&first, p, nl ? (size_t)(nl - p) : strlen(p));
	bool inline_first = !starts_block(first.buf);
	bool in_fence = false;
	if (inline_first) {
		sb_addf(out, " %s", first.buf);
		p = nl ? nl + 1 : p + strlen(p);
		if (!nl) {
			sb_adds(out, "\n\n");
			sb_release(&first);
			return;
		}
	}
	sb_release(&first);
	struct sb l = SB_INIT;
	for (;;) {
		nl = strchr(p, '\n');
		sb_reset(&l);
		sb_add(&l, p, nl ? (size_t)(nl - p) : strlen(p));
		sb_addc(out, '\n');
		if (in_fence || is_fence(l.buf)) {
			in_fence = in_fence ? !is_fence(l.buf) : true;
		} else if (structural(l.buf) || l.buf[0] == '\\') {
			sb_addc(out, '\\');
		}
		sb_adds(out, l.buf);
		if (!nl)
			break;
		p = nl + 1;
	}
	if (in_fence)
		sb_adds(out, "\n```");
	sb_adds(out, "\n\n");
	sb_release(&l);
}

void traps_render(const struct traps_doc *d, struct sb *out)
{
	if (d->preamble && *d->preamble)
		sb_addf(out, "%s\n\n", d->preamble);
	else
		sb_adds(out, "# Traps\n\n");
	for (size_t i = 0; i < d->n; i++) {
		const struct trap *t = &d->v[i];
		char *slug = traps_slug(t->title);
		sb_addf(out, "## %s", t->title && *t->title ? t->title : "Untitled trap");
		if (strcmp(slug, t->id))
			sb_addf(out, " {#%s}", t->id);
		sb_adds(out, "\n\n");
		free(slug);
		render_value(out, field_label[F_FACT], t->fact);
		render_value(out, field_label[F_WHY], t->why);
		render_value(out, field_label[F_HOW], t->how);
	}
	while (out->len >= 2 && out->buf[out->len - 1] == '\n' && out->buf[out->len - 2] == '\n')
		out->buf[--out->len] = '\0';
}

/* ---- catalogue operations ------------------------------------------------- */

struct trap *traps_find(const struct traps_doc *d, const char *id)
{
	for (size_t i = 0; id && i < d->n; i++)
		if (!strcmp(d->v[i].id, id))
			return &d->v[i];
	return NULL;
}

static bool blank(const char *s)
{
	if (!s)
		return true;
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

int traps_add(struct traps_doc *d, const char *title, const char *fact, const char *why,
	      const char *how, const char **id_out, struct err *e)
{
	struct sb miss = SB_INIT;
	const char *names[] = {"title", "Fact", "Why", "How to apply"};
	const char *vals[] = {title, fact, why, how};
	for (int i = 0; i < 4; i++)
		if (blank(vals[i]))
			sb_addf(&miss, "%s%s", miss.len ? ", " : "", names[i]);
	if (miss.len) {
		int rc = err_set(e, ERR_USAGE,
				 "trap not added: %s missing (a trap needs a title, the Fact, why it "
				 "happens, and how to apply it)",
				 miss.buf);
		sb_release(&miss);
		return rc;
	}
	sb_release(&miss);
	/* TRAPS.md is shown by every checklist: a control or bidirectional
	 * character would act on each terminal that shows it */
	const char *opts[] = {"--title", "--fact", "--why", "--how"};
	for (int i = 0; i < 4; i++) {
		char *name = xasprintf("trap not added: %s", opts[i]);
		int rc = vis_check(name, vals[i], "\t\n\r",
				   "which TRAPS.md would keep and a terminal showing it act on",
				   "give plain text", e);
		free(name);
		if (rc < 0)
			return rc;
	}
	struct sb t = SB_INIT;
	sb_adds(&t, title);
	for (size_t i = 0; i < t.len; i++)
		if (t.buf[i] == '\n' || t.buf[i] == '\r' || t.buf[i] == '\t')
			t.buf[i] = ' ';
	clean_title(&t);
	struct trap n = {0};
	n.title = sb_detach(&t);
	n.id = unique_id(d, traps_slug(n.title));
	struct sb v = SB_INIT;
	const char *src[3] = {fact, why, how};
	char **dst[3] = {&n.fact, &n.why, &n.how};
	for (int i = 0; i < 3; i++) {
		sb_reset(&v);
		sb_adds(&v, src[i]);
		tidy(&v);
		*dst[i] = xstrdup(v.buf);
	}
	sb_release(&v);
	d->v = xrealloc(d->v, (d->n + 1) * sizeof(*d->v));
	d->v[d->n++] = n;
	if (id_out)
		*id_out = d->v[d->n - 1].id;
	return 0;
}

int traps_seed(struct traps_doc *d, struct err *e)
{
	char *path = assets_path("TRAPS.md", e);
	if (!path)
		return ERR_NOTFOUND;
	struct sb text = SB_INIT;
	int rc = fsutil_read_file(path, &text, e);
	free(path);
	if (rc == 0)
		rc = traps_parse(text.buf, text.len, d, NULL, e);
	sb_release(&text);
	return rc;
}

void traps_doc_release(struct traps_doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		trap_release(&d->v[i]);
	free(d->v);
	free(d->preamble);
	memset(d, 0, sizeof(*d));
}

