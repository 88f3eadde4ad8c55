/*
 * optlog_events — the re-assessments and stops under OPT_LOG.md's table:
 * written and read back one line each (see optlog.h for the shape).
 *
 * The lines are optloop's own: a fixed heading and a fixed start of line
 * tell them from the rows (they have no pipe of their own) and from text a
 * person wrote after the table, which the merge keeps where it was.
 */
#include "core/optlog.h"
#include "core/sb.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define ITEM_START "- After iteration "
#define REASSESSED ": **re-assessed**"
#define STOPPED ": **stopped**"
#define AXES "; axes tried: "
#define NEXT "; next direction: "

/* A stop's reason in words, both ways. */
static const char *const reasons[][2] = {
	{"cap", "the iteration cap reached"},
	{"floor", "at a floor"},
	{"directions", "three or more directions tried"},
};
#define NREASONS (sizeof(reasons) / sizeof(reasons[0]))

/* v on one line (a line break would end the item). */
static void add_flat(struct sb *out, const char *v)
{
	for (const char *p = v; *p; p++)
		sb_addc(out, (*p == '\n' || *p == '\r') ? ' ' : *p);
}

static bool blank(const char *v)
{
	for (; v && *v; v++)
		if (!isspace((unsigned char)*v))
			return false;
	return true;
}

/* What follows "- After iteration N": the Markdown line's (md) or plain
 * words (no ": " before them, no bold). */
static void render_words(const struct optlog_event *ev, bool md, struct sb *out)
{
	if (!ev->stop) {
		sb_adds(out, md ? REASSESSED : "re-assessed");
		if (!blank(ev->detail)) {
			sb_adds(out, AXES);
			add_flat(out, ev->detail);
		}
		if (!blank(ev->what)) {
			sb_adds(out, NEXT);
			add_flat(out, ev->what);
		}
	} else {
		sb_adds(out, md ? STOPPED : "stopped");
		if (!blank(ev->what)) {
			const char *words = ev->what;
			for (size_t k = 0; k < NREASONS; k++)
				if (!strcmp(ev->what, reasons[k][0]))
					words = reasons[k][1];
			sb_adds(out, ", ");
			add_flat(out, words);
			if (!blank(ev->detail)) {
				sb_adds(out, ": ");
				add_flat(out, ev->detail);
			}
		}
	}
}

static void render_event(const struct optlog_event *ev, struct sb *out)
{
	sb_addf(out, ITEM_START "%d", ev->iter);
	render_words(ev, true, out);
	sb_addc(out, '\n');
}

void optlog_event_text(const struct optlog_event *ev, struct sb *out)
{
	render_words(ev, false, out);
}

void optlog_render_events(const struct optlog_doc *d, struct sb *out)
{
	if (!d->nevents)
		return;
	sb_adds(out, "\n" OPTLOG_EVENTS_HEADING "\n\n");
	for (size_t i = 0; i < d->nevents; i++)
		render_event(&d->events[i], out);
}

void optlog_event_release(struct optlog_event *ev)
{
	free(ev->what);
	free(ev->detail);
	memset(ev, 0, sizeof(*ev));
}

/* Whether [s, s+n) starts with lit; then s moves past it. */
static bool eat(const char **s, const char *end, const char *lit)
{
	size_t k = strlen(lit);
	if ((size_t)(end - *s) < k || memcmp(*s, lit, k))
		return false;
	*s += k;
	return true;
}

/* The first lit in [s, end), or NULL. */
static const char *find(const char *s, const char *end, const char *lit)
{
	size_t k = strlen(lit);
	for (const char *p = s; (size_t)(end - p) >= k; p++)
		if (!memcmp(p, lit, k))
			return p;
	return NULL;
}

static char *dup_span(const char *s, const char *end)
{
	return s < end ? xstrndup(s, (size_t)(end - s)) : NULL;
}

bool optlog_event_parse(const char *s, size_t n, struct optlog_event *ev)
{
	const char *end = s + n;
	long v = 0;
	memset(ev, 0, sizeof(*ev));
	while (end > s && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	if (!eat(&s, end, ITEM_START) || s == end || !isdigit((unsigned char)*s))
		return false;
	while (s < end && isdigit((unsigned char)*s) && v < 100000000)
		v = v * 10 + (*s++ - '0');
	ev->iter = (int)v;
	if (eat(&s, end, REASSESSED)) {
		const char *axes = NULL, *next = NULL;
		if (eat(&s, end, AXES)) {
			axes = s;
			next = find(s, end, NEXT);
			s = next ? next : end;
			ev->detail = dup_span(axes, s);
		}
		if (s < end && !eat(&s, end, NEXT))
			return false;
		ev->what = dup_span(s, end);
		return true;
	}
	if (!eat(&s, end, STOPPED))
		return false;
	ev->stop = true;
	if (s == end)
		return true;
	if (!eat(&s, end, ", "))
		return false;
	for (size_t k = 0; k < NREASONS; k++) {
		const char *q = s;
		if (eat(&q, end, reasons[k][1]) && (q == end || eat(&q, end, ": "))) {
			ev->what = xstrdup(reasons[k][0]);
			ev->detail = dup_span(q, end);
			return true;
		}
	}
	const char *colon = find(s, end, ": ");
	ev->what = dup_span(s, colon ? colon : end);
	ev->detail = colon ? dup_span(colon + 2, end) : NULL;
	return true;
}

/* Whether the line [p, e) is the heading (a CR before the LF allowed). */
static bool heading_line(const char *p, const char *e)
{
	size_t k = strlen(OPTLOG_EVENTS_HEADING);
	if (e > p && e[-1] == '\r')
		e--;
	return (size_t)(e - p) == k && !memcmp(p, OPTLOG_EVENTS_HEADING, k);
}

bool optlog_events_span(const char *text, size_t len, size_t *start, size_t *end)
{
	const char *p = text, *stop = text + len, *h = NULL;
	while (p < stop && !h) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		const char *e = nl ? nl : stop;
		if (heading_line(p, e))
			h = p;
		p = nl ? nl + 1 : stop;
	}
	if (!h)
		return false;
	/* the blank lines above the heading go with it */
	size_t s = (size_t)(h - text);
	while (s >= 1 && text[s - 1] == '\n' &&
	       (s == 1 || text[s - 2] == '\n' || (text[s - 2] == '\r' && (s == 2 || text[s - 3] == '\n'))))
		s -= (s >= 2 && text[s - 2] == '\r') ? 2 : 1;
	/* then blank lines and optloop's items, up to its last item */
	size_t last = (size_t)(p - text);
	while (p < stop) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		const char *e = nl ? nl : stop;
		struct optlog_event ev;
		bool empty = e == p || (e == p + 1 && *p == '\r');
		bool item = !empty && optlog_event_parse(p, (size_t)(e - p), &ev);
		if (item)
			optlog_event_release(&ev);
		if (!empty && !item)
			break;
		p = nl ? nl + 1 : stop;
		if (item)
			last = (size_t)(p - text);
	}
	*start = s;
	*end = last;
	return true;
}
