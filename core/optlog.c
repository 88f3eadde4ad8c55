/*
 * optlog — render OPT_LOG.md and read it back (see optlog.h for the shape
 * and the escaping rules).
 *
 * Numbers are formatted and parsed by hand rather than with printf/strtod:
 * both follow LC_NUMERIC, which a program embedding the core may set from
 * the environment, so a German locale would otherwise write "0,973" into
 * the log.  (optloop's own front-end sets only LC_CTYPE.)
 */
#include "core/optlog.h"
#include "core/mdtable.h"
#include "core/err.h"
#include "core/sb.h"
#include "core/rules.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DASH "\xe2\x80\x94" /* U+2014, the "nothing here" cell */

/* ------------------------------------------------------------------ */
/* Lifecycle                                                           */

void optlog_doc_release(struct optlog_doc *d)
{
	if (!d)
		return;
	free(d->op);
	free(d->env);
	free(d->baseline);
	free(d->target);
	for (size_t i = 0; i < d->nrows; i++)
		log_row_release(&d->rows[i]);
	free(d->rows);
	for (size_t i = 0; i < d->nevents; i++)
		optlog_event_release(&d->events[i]);
	free(d->events);
	memset(d, 0, sizeof(*d));
}

void optlog_doc_add_row(struct optlog_doc *d, struct log_row *row)
{
	if (d->nrows >= d->cap) {
		d->cap = d->nrows < 8 ? 16 : d->nrows * 2;
		d->rows = xrealloc(d->rows, d->cap * sizeof(*d->rows));
	}
	d->rows[d->nrows++] = *row;
	memset(row, 0, sizeof(*row));
}

__attribute__((format(printf, 3, 4))) static void problem(struct problems *p, int lineno,
							   const char *fmt, ...)
{
	va_list ap;
	struct sb s = SB_INIT;

	if (!p)
		return;
	va_start(ap, fmt);
	sb_vaddf(&s, fmt, ap);
	va_end(ap);
	if ((p->n & (p->n - 1)) == 0)
		p->v = xrealloc(p->v, (p->n ? p->n * 2 : 8) * sizeof(*p->v));
	p->v[p->n].lineno = lineno;
	p->v[p->n].msg = sb_detach(&s);
	p->n++;
}

/* ------------------------------------------------------------------ */
/* Numbers without the locale                                          */

/* Decimal digits of v, zero-padded to at least width. */
static void add_uint(struct sb *out, unsigned long long v, int width)
{
	char buf[24];
	int n = 0;
	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n < width && n < (int)sizeof(buf))
		buf[n++] = '0';
	sb_grow(out, (size_t)n);
	while (n)
		out->buf[out->len++] = buf[--n];
	out->buf[out->len] = '\0';
}

static void add_fixed(struct sb *out, double v, int decimals)
{
	static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
	unsigned long long scaled = (unsigned long long)llround(v * p10[decimals]);
	unsigned long long ip = scaled / (unsigned long long)p10[decimals];
	unsigned long long fp = scaled % (unsigned long long)p10[decimals];

	add_uint(out, ip, 1);
	if (decimals > 0) {
		sb_addc(out, '.');
		add_uint(out, fp, decimals);
	}
}

void optlog_fmt_bench(double ms, struct sb *out)
{
	int d = 3;

	if (!isfinite(ms) || ms < 0) {
		sb_adds(out, DASH);
		return;
	}
	if (ms >= 1e15) { /* absurd, but never overflow the integer path */
		sb_addf(out, "%.0f", ms);
		return;
	}
	/* Three decimals, or three significant digits below 0.1 ms. */
	for (double lim = 0.1; ms > 0 && ms < lim && d < 9; lim /= 10)
		d++;
	add_fixed(out, ms, d);
}

void optlog_fmt_vs_best(double frac, struct sb *out)
{
	double pct;
	long long t;

	if (!isfinite(frac)) {
		sb_adds(out, DASH);
		return;
	}
	pct = frac * 100.0;
	if (fabs(pct) > 1e12) {
		sb_adds(out, pct > 0 ? "+inf%" : "-inf%");
		return;
	}
	/* Whole percents from 10 % up; one decimal below, where the 3 % win
	 * threshold lives, dropping a trailing ".0". */
	if (fabs(pct) >= 9.95) {
		t = llround(pct);
		sb_addc(out, t > 0 ? '+' : '-');
		add_uint(out, (unsigned long long)(t < 0 ? -t : t), 1);
		sb_addc(out, '%');
		return;
	}
	t = llround(pct * 10);
	if (t == 0) {
		sb_adds(out, "0%");
		return;
	}
	sb_adds(out, t > 0 ? "+" : "-");
	if (t < 0)
		t = -t;
	add_uint(out, (unsigned long long)(t / 10), 1);
	if (t % 10) {
		sb_addc(out, '.');
		add_uint(out, (unsigned long long)(t % 10), 1);
	}
	sb_addc(out, '%');
}

void optlog_fmt_gate(enum gate_verdict g, enum gate_scope s, struct sb *out)
{
	switch (g) {
	case GATE_PASS:
		sb_adds(out, "pass");
		break;
	case GATE_FAIL:
		sb_adds(out, "FAIL");
		break;
	case GATE_ERROR:
		sb_adds(out, "ERROR");
		break;
	case GATE_INCOMPLETE:
		sb_adds(out, "incomplete");
		break;
	case GATE_UNVERIFIED:
		sb_adds(out, "unverified");
		break;
	case GATE_NONE:
	default:
		sb_adds(out, DASH);
		return;
	}
	if (s == SCOPE_SUBSET)
		sb_adds(out, " (-k)");
}

double optlog_vs_best(double best_ms, double new_ms)
{
	if (!isfinite(best_ms) || !isfinite(new_ms) || best_ms <= 0 || new_ms < 0)
		return NAN;
	return (best_ms - new_ms) / best_ms;
}

double optlog_best_before(const struct log_row *rows, size_t i)
{
	const struct log_row *b = log_rows_best(rows, i);
	return b ? b->bench_ms : NAN;
}

void optlog_compute_vs_best(struct log_row *rows, size_t n)
{
	const struct log_row *best = NULL; /* log_rows_best(rows, i), kept as i grows */

	for (size_t i = 0; i < n; i++) {
		rows[i].vs_best = optlog_vs_best(best ? best->bench_ms : NAN, rows[i].bench_ms);
		if (log_row_can_be_best(&rows[i]))
			best = &rows[i];
	}
}

/* ------------------------------------------------------------------ */
/* Render                                                              */

/* A header value stays on its line: line breaks become spaces. */
static void add_header_value(struct sb *out, const char *v)
{
	if (!v || !*v) {
		sb_adds(out, DASH);
		return;
	}
	for (const char *p = v; *p; p++)
		sb_addc(out, (*p == '\n' || *p == '\r') ? ' ' : *p);
}

void optlog_render_row(const struct log_row *r, struct sb *out)
{
	sb_adds(out, "| ");
	if (r->iter < 0)
		sb_addc(out, '-');
	add_uint(out, (unsigned long long)(r->iter < 0 ? -(long long)r->iter : r->iter), 1);
	sb_adds(out, " | ");
	md_escape_cell(r->direction, out);
	sb_adds(out, " | ");
	if (r->gate_v == GATE_NONE && r->gate && *r->gate)
		md_escape_cell(r->gate, out);
	else
		optlog_fmt_gate(r->gate_v, r->scope, out);
	sb_adds(out, " | ");
	optlog_fmt_bench(r->bench_ms, out);
	sb_adds(out, " | ");
	optlog_fmt_vs_best(r->vs_best, out);
	if (r->vs_confirm && isfinite(r->vs_best))
		sb_adds(out, " " OPTLOG_CONFIRM_MARK);
	sb_adds(out, " | ");
	sb_adds(out, r->status == RS_NONE ? DASH : row_status_name(r->status));
	if (r->status == RS_KEEP && r->unconfirmed)
		sb_adds(out, " (unconfirmed)");
	if (r->status == RS_KEEP && r->full_gate_failed)
		sb_adds(out, " (full gate failed)");
	sb_adds(out, " |\n");
}

/* What a reader of the file alone needs to read the table: where each
 * column's number comes from.  Above the table, so that a row appended at
 * the end of the file by hand still joins it. */
static const char legend[] =
	"Bench (median ms) is the geomean, over the shapes, of each shape's median time in the "
	"iteration's own verify run (the column keeps the name FLA's log template gives it). vs "
	"best is the time saved against the best (the baseline or the last keep, the one "
	"`optloop status` shows; a keep marked (full gate failed) passed a subset gate only and "
	"a full gate failed its kernel since: it is not the best): by the verify's verdict, which weighs every run of the best "
	"kernel, so it need not match the two Bench cells to the digit; marked " OPTLOG_CONFIRM_MARK
	" when the iteration's confirm sized it (best and candidate interleaved in one session, "
	"the figure every report uses).\n\n";

static const char table_head[] =
	"| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |\n"
	"|---|---|---|---|---|---|\n";

static void render_head(const struct optlog_doc *d, struct sb *out)
{
	sb_adds(out, "# Optimization log " DASH " ");
	add_header_value(out, d->op);
	sb_adds(out, "\n\nEnv: ");
	add_header_value(out, d->env);
	sb_adds(out, "\nBaseline (main): ");
	add_header_value(out, d->baseline);
	sb_adds(out, "\nTarget: ");
	add_header_value(out, d->target);
	sb_adds(out, "\n\n## Summary\n\n");
	sb_adds(out, legend);
	sb_adds(out, table_head);
}

void optlog_render_head(const struct optlog_doc *d, struct sb *out)
{
	render_head(d, out);
}

size_t optlog_head_len(const char *text, size_t len)
{
	/* the header values are one line each, so the first blank line
	 * before "## Summary" is the one render_head writes after Target */
	static const char mark[] = "\n\n## Summary\n\n";
	struct optlog_doc none;
	struct sb head = SB_INIT;
	size_t at = 0;

	memset(&none, 0, sizeof(none));
	render_head(&none, &head);
	const char *tail = strstr(head.buf, mark);
	size_t tl = head.len - (size_t)(tail - head.buf);
	const char *p = NULL;
	for (const char *q = text; !p && q && (size_t)(text + len - q) >= sizeof(mark) - 1;) {
		if (!memcmp(q, mark, sizeof(mark) - 1))
			p = q;
		else
			q = memchr(q + 1, '\n', (size_t)(text + len - q - 1));
	}
	if (p && (size_t)(text + len - p) >= tl && !memcmp(p, tail, tl))
		at = (size_t)(p - text) + tl;
	sb_release(&head);
	return at;
}

void optlog_render(const struct optlog_doc *d, struct sb *out)
{
	render_head(d, out);
	for (size_t i = 0; i < d->nrows; i++)
		optlog_render_row(&d->rows[i], out);
	optlog_render_events(d, out);
}

bool optlog_render_same(const struct optlog_doc *d, const char *text, size_t len)
{
	struct sb part = SB_INIT;
	size_t at;
	bool same;

	sb_init(&part);
	render_head(d, &part);
	same = part.len <= len && !memcmp(text, part.buf, part.len);
	at = part.len;
	for (size_t i = 0; same && i < d->nrows; i++) {
		sb_reset(&part);
		optlog_render_row(&d->rows[i], &part);
		same = part.len <= len - at && !memcmp(text + at, part.buf, part.len);
		at += part.len;
	}
	sb_reset(&part);
	optlog_render_events(d, &part);
	if (same && part.len) {
		same = part.len <= len - at && !memcmp(text + at, part.buf, part.len);
		at += part.len;
	}
	sb_release(&part);
	return same && at == len;
}

/* ------------------------------------------------------------------ */
/* Small text helpers for the reader                                   */

static bool span_blank(struct md_span x)
{
	return md_span_trim(x).n == 0;
}

static bool starts_ci(struct md_span x, const char *lit)
{
	size_t n = strlen(lit);
	return x.n >= n && strncasecmp(x.s, lit, n) == 0;
}

/* Strip emphasis and code marks wrapped around a whole cell. */
static struct md_span strip_marks(struct md_span x)
{
	static const char *const marks[] = {"**", "__", "~~", "*", "_", "`"};
	bool again = true;

	x = md_span_trim(x);
	/* Most cells start with a letter, digit or dash: nothing to strip. */
	if (x.n == 0 || !strchr("*_~`", x.s[0]))
		return x;
	while (again) {
		again = false;
		for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
			size_t m = strlen(marks[i]);
			if (x.n >= 2 * m && !memcmp(x.s, marks[i], m) &&
			    !memcmp(x.s + x.n - m, marks[i], m)) {
				x.s += m;
				x.n -= 2 * m;
				x = md_span_trim(x);
				again = true;
			}
		}
	}
	return x;
}

/* The cell means "nothing here". */
static bool none_word(struct md_span x)
{
	static const char *const w[] = {"",  DASH, "\xe2\x80\x93", "-", "--", "---", "n/a",
					"na", "none", "?",  "n.a.", "null", "nan"};
	x = strip_marks(x);
	if (x.n > 4 || (x.n && isdigit((unsigned char)x.s[0])))
		return false;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (x.n == strlen(w[i]) && strncasecmp(x.s, w[i], x.n) == 0)
			return true;
	return false;
}

/* Unsigned decimal "12", "0.973", ".5" at *p; advances *p.  false when no
 * digit.  Exact to the last bit for up to 15 significant digits. */
static bool read_decimal(const char **p, const char *end, double *out)
{
	static const double p10[] = {1,    1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *s = *p;
	uint64_t mant = 0;
	int digits = 0, frac = 0, dropped = 0;

	while (s < end && isdigit((unsigned char)*s)) {
		if (digits < 18)
			mant = mant * 10 + (uint64_t)(*s - '0'), digits += (mant != 0);
		else
			dropped++;
		s++;
	}
	bool had_int = s > *p;
	if (s < end && *s == '.' && s + 1 < end && isdigit((unsigned char)s[1])) {
		s++;
		while (s < end && isdigit((unsigned char)*s)) {
			if (digits < 18 && frac < 22) {
				mant = mant * 10 + (uint64_t)(*s - '0');
				digits += (mant != 0);
				frac++;
			}
			s++;
		}
	} else if (!had_int) {
		return false;
	}
	double v = (double)mant;
	if (dropped)
		v *= pow(10, dropped);
	*out = frac ? v / p10[frac] : v;
	*p = s;
	return true;
}

int optlog_parse_bench(const char *cell, double *ms)
{
	struct md_span x = strip_marks((struct md_span){cell, strlen(cell)});
	const char *p = x.s, *end = x.s + x.n;
	double v;

	*ms = NAN;
	if (none_word(x))
		return 0;
	if (!read_decimal(&p, end, &v))
		return ERR_FAIL;
	p = md_skip_ws(p, end);
	if (end - p >= 2 && strncasecmp(p, "ms", 2) == 0)
		p = md_skip_ws(p + 2, end);
	/* A trailing note in parentheses or brackets ("0.97 (±0.01)") is fine. */
	if (p < end && *p != '(' && *p != '[')
		return ERR_FAIL;
	*ms = v;
	return 0;
}

int optlog_parse_vs_best(const char *cell, double *frac)
{
	struct md_span x = strip_marks((struct md_span){cell, strlen(cell)});
	const char *p = x.s, *end = x.s + x.n;
	double v, sign = 1;

	*frac = NAN;
	if (none_word(x))
		return 0;
	if (p < end && (*p == '+' || *p == '-')) {
		sign = *p == '-' ? -1 : 1;
		p++;
	} else if (end - p >= 3 && (!memcmp(p, "\xe2\x88\x92", 3) || !memcmp(p, "\xe2\x80\x93", 3))) {
		sign = -1; /* U+2212 minus, U+2013 en dash */
		p += 3;
	}
	p = md_skip_ws(p, end);
	if (!read_decimal(&p, end, &v))
		return ERR_FAIL;
	p = md_skip_ws(p, end);
	if (p < end && *p == '%')
		p = md_skip_ws(p + 1, end);
	if (p < end && *p != '(' && *p != '[')
		return ERR_FAIL;
	*frac = sign * v / 100.0;
	if (*frac == 0)
		*frac = 0; /* no "-0" */
	return 0;
}

/* Lower-case ASCII copy of a span, NUL-terminated, into buf (truncated). */
static void lower_copy(struct md_span x, char *buf, size_t cap)
{
	size_t n = x.n < cap - 1 ? x.n : cap - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)x.s[i]);
	buf[n] = '\0';
}

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

int optlog_parse_gate(const char *cell, enum gate_verdict *g, enum gate_scope *s)
{
	struct md_span x = strip_marks((struct md_span){cell, strlen(cell)});
	char b[256];

	*g = GATE_NONE;
	*s = SCOPE_UNKNOWN;
	/* The forms optlog_render writes, first. */
	if (x.n == 4 && !memcmp(x.s, "pass", 4)) {
		*g = GATE_PASS, *s = SCOPE_FULL;
		return 0;
	}
	if (x.n == 4 && !memcmp(x.s, "FAIL", 4)) {
		*g = GATE_FAIL, *s = SCOPE_FULL;
		return 0;
	}
	if (none_word(x))
		return 0;
	lower_copy(x, b, sizeof(b));
	if (strstr(b, "incomplete") || strstr(b, "timeout") || strstr(b, "timed out") ||
	    strstr(b, "killed") || strstr(b, "cancel"))
		*g = GATE_INCOMPLETE;
	else if (strstr(b, "unverified") || strstr(b, "skipped") || strstr(b, "no gate") ||
		 strstr(b, "not run"))
		*g = GATE_UNVERIFIED;
	else if (strstr(b, "error") || strstr(b, "broke") || strstr(b, "crash"))
		*g = GATE_ERROR;
	else if (strstr(b, "fail") || strstr(b, "\xe2\x9d\x8c") /* ❌ */ ||
		 strstr(b, "\xe2\x9c\x97") /* ✗ */)
		*g = GATE_FAIL;
	else if (strstr(b, "pass") || has_word(b, "ok") || has_word(b, "green") ||
		 strstr(b, "\xe2\x9c\x85") /* ✅ */ || strstr(b, "\xe2\x9c\x93") /* ✓ */)
		*g = GATE_PASS;
	else
		return ERR_FAIL;
	if (strstr(b, "-k") || strstr(b, "subset"))
		*s = SCOPE_SUBSET;
	else if (*g == GATE_PASS || *g == GATE_FAIL)
		*s = SCOPE_FULL; /* the log marks subset runs; unmarked means full */
	return 0;
}

int optlog_parse_status(const char *cell, enum row_status *st)
{
	static const struct {
		const char *w;
		enum row_status s;
	} syn[] = {
		{"base", RS_BASE},     {"baseline", RS_BASE},  {"keep", RS_KEEP},
		{"kept", RS_KEEP},     {"revert", RS_REVERT}, {"reverted", RS_REVERT},
		{"drop", RS_DROP},     {"dropped", RS_DROP},  {"floor", RS_FLOOR},
	};
	struct md_span x = strip_marks((struct md_span){cell, strlen(cell)});
	size_t n = 0;

	*st = RS_NONE;
	while (n < x.n && isalpha((unsigned char)x.s[n]))
		n++;
	if (n == 0)
		return ERR_FAIL;
	for (size_t i = 0; i < sizeof(syn) / sizeof(syn[0]); i++)
		if (strlen(syn[i].w) == n && strncasecmp(x.s, syn[i].w, n) == 0) {
			*st = syn[i].s;
			return 0;
		}
	return ERR_FAIL;
}

/* ------------------------------------------------------------------ */
/* Table rows                                                          */

enum col {
	C_NONE = -1, C_ITER, C_DIR, C_GATE, C_BENCH, C_VS, C_STATUS, C_AXIS, C_COMMIT, C_NOTES, C_N
};

static const char *const col_label[C_N] = {
	[C_ITER] = "Iter",      [C_DIR] = "Direction", [C_GATE] = "Gate",
	[C_BENCH] = "Bench",    [C_VS] = "vs best",    [C_STATUS] = "Status",
	[C_AXIS] = "Axis",      [C_COMMIT] = "Commit",     [C_NOTES] = "Notes",
};

/* Which column a header cell names; tolerant of wording ("Bench (ms)",
 * "Median ms", "Iteration", "#", "Decision"). */
static enum col col_kind(struct md_span h)
{
	char raw[128], b[128];
	size_t n = 0;
	char *u = md_unescape_cell(strip_marks(h));

	lower_copy((struct md_span){u, strlen(u)}, raw, sizeof(raw));
	free(u);
	for (const char *p = raw; *p && n < sizeof(b) - 1; p++)
		if (*p != '*' && *p != '_' && *p != '`')
			b[n++] = *p;
	b[n] = '\0';
	if (strstr(b, "best"))
		return C_VS;
	if (!strcmp(b, "#") || !strcmp(b, "n") || !strcmp(b, "no") || !strcmp(b, "no.") ||
	    !strcmp(b, "it") || !strncmp(b, "iter", 4) || !strcmp(b, "step"))
		return C_ITER;
	if (strstr(b, "status") || strstr(b, "decision") || strstr(b, "verdict") ||
	    strstr(b, "outcome") || strstr(b, "action"))
		return C_STATUS;
	if (strstr(b, "gate") || strstr(b, "correct") || has_word(b, "test") || has_word(b, "tests"))
		return C_GATE;
	if (strstr(b, "bench") || strstr(b, "median") || strstr(b, "latency") ||
	    strstr(b, "runtime") || has_word(b, "ms") || has_word(b, "time"))
		return C_BENCH;
	if (strstr(b, "direction") || strstr(b, "change") || strstr(b, "idea") ||
	    strstr(b, "description") || strstr(b, "hypothesis") || has_word(b, "what"))
		return C_DIR;
	if (strstr(b, "axis"))
		return C_AXIS;
	if (strstr(b, "commit") || has_word(b, "sha") || has_word(b, "hash"))
		return C_COMMIT;
	if (strstr(b, "note") || strstr(b, "comment") || strstr(b, "remark") ||
	    strstr(b, "detail") || strstr(b, "shape"))
		return C_NOTES;
	return C_NONE;
}

/* "3", "#3", "3 (confirm)" -> 3. */
static bool parse_iter(struct md_span x, int *out)
{
	const char *p, *end;
	long v = 0;

	x = strip_marks(x);
	p = x.s;
	end = x.s + x.n;
	if (p < end && *p == '#')
		p++;
	if (p == end || !isdigit((unsigned char)*p))
		return false;
	while (p < end && isdigit((unsigned char)*p)) {
		v = v * 10 + (*p++ - '0');
		if (v > 100000000)
			return false;
	}
	if (p < end && *p != ' ' && *p != '\t')
		return false;
	*out = (int)v;
	return true;
}

/* ------------------------------------------------------------------ */
/* Lines                                                               */

struct lines {
	const char *p, *end;
	int lineno;
};

/* Next line without its line end (LF, CRLF or a lone CR at the end). */
static bool next_line(struct lines *L, struct md_span *out)
{
	if (L->p >= L->end)
		return false;
	const char *nl = memchr(L->p, '\n', (size_t)(L->end - L->p));
	const char *e = nl ? nl : L->end;
	out->s = L->p;
	out->n = (size_t)(e - L->p);
	if (out->n && out->s[out->n - 1] == '\r')
		out->n--;
	L->p = nl ? nl + 1 : L->end;
	L->lineno++;
	return true;
}

static bool peek_line(const struct lines *L, struct md_span *out)
{
	struct lines c = *L;
	return next_line(&c, out);
}

/* "```" or "~~~" fence opener/closer (up to three spaces of indent). */
static bool is_fence(struct md_span line)
{
	struct md_span x = line;
	size_t ind = 0;
	while (ind < x.n && ind < 4 && x.s[ind] == ' ')
		ind++;
	if (ind > 3 || x.n - ind < 3)
		return false;
	return !memcmp(x.s + ind, "```", 3) || !memcmp(x.s + ind, "~~~", 3);
}

/* A fence line further on: the fence opened here is closed.  One never
 * closed is plain text, so a stray ``` cannot hide the summary table. */
static bool fence_closes(struct lines L)
{
	struct md_span x;
	while (next_line(&L, &x))
		if (is_fence(x))
			return true;
	return false;
}

/* ATX heading level (1-6) and its text, 0 when not a heading. */
static int heading(struct md_span line, struct md_span *text)
{
	size_t i = 0, lvl = 0;
	while (i < line.n && i < 3 && line.s[i] == ' ')
		i++;
	while (i < line.n && line.s[i] == '#' && lvl < 7)
		i++, lvl++;
	if (lvl == 0 || lvl > 6 || (i < line.n && line.s[i] != ' ' && line.s[i] != '\t'))
		return 0;
	struct md_span t = md_span_trim((struct md_span){line.s + i, line.n - i});
	/* Closing #s are decoration. */
	while (t.n && t.s[t.n - 1] == '#')
		t.n--;
	*text = md_span_trim(t);
	return (int)lvl;
}

static bool contains_ci(struct md_span x, const char *lit)
{
	size_t n = strlen(lit);
	for (size_t i = 0; i + n <= x.n; i++)
		if (strncasecmp(x.s + i, lit, n) == 0)
			return true;
	return false;
}

static char *header_value(struct md_span v)
{
	v = strip_marks(v);
	struct sb out = SB_INIT;

	if (none_word(v))
		return NULL;
	/* Header values are not escaped; only a NUL needs replacing. */
	for (const char *p = v.s, *end = v.s + v.n; p < end; p++) {
		if (*p)
			sb_addc(&out, *p);
		else
			sb_adds(&out, "\xef\xbf\xbd");
	}
	return sb_detach(&out);
}

/* "Env: ...", "- **Baseline (main):** ...", "Target: ..." */
static void header_line(struct md_span line, struct optlog_doc *d)
{
	struct md_span x = md_span_trim(line);
	const char *colon;
	char key[64];
	size_t kn = 0;

	if (x.n >= 2 && (x.s[0] == '-' || x.s[0] == '*' || x.s[0] == '+') && x.s[1] == ' ')
		x = md_span_trim((struct md_span){x.s + 2, x.n - 2});
	colon = memchr(x.s, ':', x.n);
	if (!colon || colon - x.s > 40)
		return;
	for (const char *p = x.s; p < colon && kn < sizeof(key) - 1; p++) {
		if (*p == '(')
			break;
		if (*p != '*' && *p != '_')
			key[kn++] = (char)tolower((unsigned char)*p);
	}
	while (kn && key[kn - 1] == ' ')
		kn--;
	key[kn] = '\0';
	struct md_span v = {colon + 1, (size_t)(x.s + x.n - colon - 1)};
	v = md_span_trim(v);
	if (v.n >= 2 && (!memcmp(v.s, "**", 2) || !memcmp(v.s, "__", 2)))
		v = md_span_trim((struct md_span){v.s + 2, v.n - 2});
	char **slot = NULL;
	if (!strcmp(key, "env") || !strcmp(key, "environment") || !strcmp(key, "machine"))
		slot = &d->env;
	else if (!strcmp(key, "baseline"))
		slot = &d->baseline;
	else if (!strcmp(key, "target"))
		slot = &d->target;
	if (slot && !*slot)
		*slot = header_value(v);
}

/* "Optimization log — op" (also -, –, :) -> op. */
static void title_line(struct md_span t, struct optlog_doc *d)
{
	static const char *const heads[] = {"optimization log", "optimisation log", "opt log"};
	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		if (!starts_ci(t, heads[i]))
			continue;
		size_t k = strlen(heads[i]);
		struct md_span r = md_span_trim((struct md_span){t.s + k, t.n - k});
		if (r.n >= 3 && (!memcmp(r.s, DASH, 3) || !memcmp(r.s, "\xe2\x80\x93", 3)))
			r = (struct md_span){r.s + 3, r.n - 3};
		else if (r.n && (r.s[0] == '-' || r.s[0] == ':'))
			r = (struct md_span){r.s + 1, r.n - 1};
		else if (r.n && !strncasecmp(r.s, "for ", 4))
			r = (struct md_span){r.s + 4, r.n - 4};
		d->op = header_value(r);
		return;
	}
}

struct table_at {
	const char *at; /* start of the header line */
	int lineno;
	size_t nbody; /* body lines, to size the rows array once */
	bool under_summary, has_iter;
};

/* ------------------------------------------------------------------ */
/* The row reader                                                      */

struct reader {
	struct optlog_doc *d;
	struct problems *probs;
	size_t ncols;
	int idx[C_N]; /* column index per kind, -1 when absent */
	struct md_cells cells;
	struct md_cells alt;
	struct sb tmp; /* one unescaped cell, reused row after row */
	int position; /* row count, for logs without an Iter column */
};

static char *cell_text(const struct reader *R, const struct md_cells *c, enum col k)
{
	int i = R->idx[k];
	if (i < 0 || (size_t)i >= c->n)
		return NULL;
	return md_unescape_cell(c->v[i]);
}

/* Unescaped cell k in the reader's scratch buffer (valid until the next
 * call), or NULL when the row has no such cell. */
static const char *cell_tmp(struct reader *R, const struct md_cells *c, enum col k)
{
	int i = R->idx[k];
	if (i < 0 || (size_t)i >= c->n)
		return NULL;
	sb_reset(&R->tmp);
	md_unescape_into(c->v[i], &R->tmp);
	return sb_str(&R->tmp);
}

static void read_row(struct reader *R, struct md_span line, int lineno)
{
	struct md_cells *c = &R->cells;
	struct log_row row = {.bench_ms = NAN, .vs_best = NAN, .lineno = lineno};
	const char *t;

	md_split_row(line, true, c);
	if (c->n != R->ncols) {
		/* A stray backtick can swallow separators: try without code spans. */
		md_split_row(line, false, &R->alt);
		if (R->alt.n == R->ncols) {
			struct md_cells tmp = *c;
			*c = R->alt;
			R->alt = tmp;
		}
	}
	bool all_blank = true;
	for (size_t i = 0; i < c->n; i++)
		all_blank = all_blank && c->v[i].n == 0;
	if (all_blank) {
		problem(R->probs, lineno, "empty table row skipped");
		return;
	}
	if (c->n > R->ncols && R->idx[C_DIR] >= 0) {
		/* Unescaped pipes in the direction: give the extra cells to it. */
		size_t extra = c->n - R->ncols, di = (size_t)R->idx[C_DIR];
		const char *s = c->v[di].s, *e = c->v[di + extra].s + c->v[di + extra].n;
		c->v[di] = md_span_trim((struct md_span){s, (size_t)(e - s)});
		memmove(&c->v[di + 1], &c->v[di + 1 + extra],
			(c->n - di - 1 - extra) * sizeof(c->v[0]));
		c->n -= extra;
		problem(R->probs, lineno,
			"row has %zu cells for %zu columns: the extra '|' was read as part of the "
			"direction (write it as \\| to be explicit)",
			c->n + extra, R->ncols);
	} else if (c->n > R->ncols) {
		problem(R->probs, lineno, "row has %zu cells for %zu columns: cells after the %zuth ignored",
			c->n, R->ncols, R->ncols);
	} else if (c->n < R->ncols) {
		problem(R->probs, lineno, "row has %zu cells for %zu columns: the missing ones read as empty",
			c->n, R->ncols);
	}

	if (R->idx[C_ITER] >= 0) {
		int i = R->idx[C_ITER];
		struct md_span it = (size_t)i < c->n ? c->v[i] : (struct md_span){"", 0};
		if (!parse_iter(it, &row.iter)) {
			problem(R->probs, lineno,
				"row skipped: Iter cell '%.*s' is not an iteration number", (int)it.n,
				it.s);
			return;
		}
	} else {
		row.iter = R->position;
	}
	R->position++;

	row.direction = cell_text(R, c, C_DIR);
	if (!row.direction)
		row.direction = xstrdup("");

	if ((row.gate = cell_text(R, c, C_GATE)) &&
	    optlog_parse_gate(row.gate, &row.gate_v, &row.scope) < 0)
		problem(R->probs, lineno,
			"Gate cell '%s' is not a gate result (pass, FAIL, ERROR, incomplete, "
			"pass (-k), or —)",
			row.gate);
	if ((t = cell_tmp(R, c, C_BENCH)) && optlog_parse_bench(t, &row.bench_ms) < 0)
		problem(R->probs, lineno,
			"Bench cell '%s' is not a time in ms (write e.g. 0.973, or — when there is none)",
			t);
	if ((t = cell_tmp(R, c, C_VS)))
		row.vs_confirm = strstr(t, OPTLOG_CONFIRM_MARK) != NULL;
	if (t && optlog_parse_vs_best(t, &row.vs_best) < 0)
		problem(R->probs, lineno,
			"vs best cell '%s' is not a signed percent (write e.g. +12%%, -4%%, or —)", t);
	if ((t = cell_tmp(R, c, C_STATUS)) && optlog_parse_status(t, &row.status) < 0)
		problem(R->probs, lineno,
			"Status cell '%s' is not one of base, keep, revert, drop, floor", t);
	else if (t && row.status == RS_KEEP && strstr(t, "unconfirmed"))
		row.unconfirmed = xstrdup("marked unconfirmed in OPT_LOG.md");
	row.axis = cell_text(R, c, C_AXIS);
	row.commit = cell_text(R, c, C_COMMIT);
	row.notes = cell_text(R, c, C_NOTES);
	if (row.notes && !*row.notes) {
		free(row.notes);
		row.notes = NULL;
	}
	if (row.axis && !*row.axis) {
		free(row.axis);
		row.axis = NULL;
	}
	if (row.commit && !*row.commit) {
		free(row.commit);
		row.commit = NULL;
	}
	optlog_doc_add_row(R->d, &row);
}

static void read_header(struct reader *R, struct md_span line, int lineno)
{
	struct md_cells *c = &R->cells;

	md_split_row(line, true, c);
	R->ncols = c->n;
	for (int k = 0; k < C_N; k++)
		R->idx[k] = -1;
	for (size_t i = 0; i < c->n; i++) {
		enum col k = col_kind(c->v[i]);
		if (k != C_NONE && R->idx[k] < 0) {
			R->idx[k] = (int)i;
		} else if (k != C_NONE) {
			problem(R->probs, lineno, "column '%.*s' repeats the %s column; its cells are ignored",
				(int)c->v[i].n, c->v[i].s, col_label[k]);
		} else {
			problem(R->probs, lineno, "column '%.*s' is not one optloop reads; its cells are ignored",
				(int)c->v[i].n, c->v[i].s);
		}
	}
	if (R->idx[C_ITER] < 0)
		problem(R->probs, lineno, "the table has no Iter column: rows are numbered from 0 in order");
	static const enum col needed[] = {C_DIR, C_GATE, C_BENCH, C_STATUS};
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++)
		if (R->idx[needed[i]] < 0)
			problem(R->probs, lineno, "the table has no %s column: every row's %s is unknown",
				col_label[needed[i]], col_label[needed[i]]);
}

/* ------------------------------------------------------------------ */
/* Lines between rows                                                  */

/* Whether line reads as a body row of a table of ncols columns whose Iter
 * column is iter_idx (-1: none): not followed by a delimiter row (that is
 * the head of a table of its own), and either as many cells or an
 * iteration number where the Iter cell is. */
static bool row_like(struct md_span line, const struct lines *after, size_t ncols, int iter_idx,
		     struct md_cells *tmp, int *iter)
{
	struct md_span next;
	int it = -1;
	if (span_blank(line) || !md_has_pipe(line) || heading(line, &next) ||
	    (peek_line(after, &next) && md_is_delim_row(next, tmp)))
		return false;
	md_split_row(line, true, tmp);
	bool counted = tmp->n == ncols;
	bool numbered = iter_idx >= 0 && (size_t)iter_idx < tmp->n &&
			parse_iter(tmp->v[iter_idx], &it);
	if (iter)
		*iter = it;
	return counted || numbered;
}

/* After the body of a table, at L: the number of lines before more rows
 * of the same table (a blank line, a comment or a line of text a person
 * left between rows), else 0.  A heading, a fence or a table of its own
 * ends the table for good. */
static int rows_go_on(struct lines L, size_t ncols, int iter_idx, struct md_cells *tmp)
{
	struct md_span x;
	int skipped = 0;
	while (next_line(&L, &x)) {
		if (!span_blank(x) && md_has_pipe(x))
			return skipped && row_like(x, &L, ncols, iter_idx, tmp, NULL) ? skipped : 0;
		if (heading(x, &(struct md_span){0}) || is_fence(x))
			return 0;
		skipped++;
	}
	return 0;
}

/* Skip the body of a table at L (the header and delimiter rows read):
 * rows up to a blank line or a line without a pipe. */
static size_t skip_body(struct lines *L)
{
	struct md_span x;
	size_t n = 0;
	while (peek_line(L, &x) && !span_blank(x) && md_has_pipe(x))
		next_line(L, &x), n++;
	return n;
}

/* Rows that look like the summary table's but stand apart from it (below
 * a heading, a fence or another table): never read, so each is named. */
static void rows_apart(struct lines L, const struct reader *R, int end_line, struct md_cells *tmp,
		       struct problems *probs)
{
	struct md_span x, next;
	bool in_fence = false;
	while (next_line(&L, &x)) {
		if (is_fence(x) && (in_fence || fence_closes(L))) {
			in_fence = !in_fence;
			continue;
		}
		if (in_fence || span_blank(x) || !md_has_pipe(x))
			continue;
		if (peek_line(&L, &next) && md_is_delim_row(next, tmp)) {
			next_line(&L, &next); /* a table of its own */
			skip_body(&L);
			continue;
		}
		int it = -1;
		if (R->idx[C_ITER] >= 0 && row_like(x, &L, R->ncols, R->idx[C_ITER], tmp, &it) && it >= 0)
			problem(probs, L.lineno,
				"this line looks like a row of the summary table (iteration %d) but "
				"stands apart from it (the table ends on line %d), so it was not read: "
				"move it into the table",
				it, end_line);
	}
}

/* The line x inside the summary table, before more of its rows. */
static void stray_line(struct md_span x, int lineno, struct problems *probs)
{
	if (span_blank(x))
		problem(probs, lineno,
			"a blank line inside the summary table (Markdown ends a table there); the "
			"rows after it were read as rows of the table: remove the line, so that "
			"other Markdown readers see them too");
	else
		problem(probs, lineno,
			"'%.*s%s' is not a table row but stands inside the summary table; the rows "
			"after it were read as rows of the table: move the line above or below the "
			"table, so that other Markdown readers see them too",
			(int)(x.n > 60 ? 60 : x.n), x.s, x.n > 60 ? "..." : "");
}

static int cmp_iter(const void *a, const void *b)
{
	const struct log_row *x = *(struct log_row *const *)a, *y = *(struct log_row *const *)b;
	if (x->iter != y->iter)
		return x->iter < y->iter ? -1 : 1;
	return x->lineno < y->lineno ? -1 : x->lineno > y->lineno;
}

static void check_duplicates(struct optlog_doc *d, struct problems *probs)
{
	struct log_row **v;

	if (d->nrows < 2 || !probs)
		return;
	/* The usual case, rows in increasing order, needs no sort. */
	size_t k = 1;
	while (k < d->nrows && d->rows[k].iter > d->rows[k - 1].iter)
		k++;
	if (k == d->nrows)
		return;
	v = xmalloc(d->nrows * sizeof(*v));
	for (size_t i = 0; i < d->nrows; i++)
		v[i] = &d->rows[i];
	qsort(v, d->nrows, sizeof(*v), cmp_iter);
	for (size_t i = 1; i < d->nrows; i++)
		if (v[i]->iter == v[i - 1]->iter)
			problem(probs, v[i]->lineno, "iteration %d appears again (first on line %d)",
				v[i]->iter, v[i - 1]->lineno);
	free(v);
}

int optlog_parse(const char *text, size_t len, struct optlog_doc *d,
		 struct problems *probs, struct err *e)
{
	struct lines L = {text, text + len, 0};
	struct md_span line, next, ht;
	struct table_at chosen = {0}, first_iter = {0};
	struct md_cells tmp = {0};
	bool in_fence = false, under_summary = false, title_seen = false, in_events = false;

	memset(d, 0, sizeof(*d));
	/* Pass 1: header lines, and where each table starts. */
	while (next_line(&L, &line)) {
		if (is_fence(line) && (in_fence || fence_closes(L))) {
			in_fence = !in_fence;
			continue;
		}
		if (in_fence)
			continue;
		int lvl = heading(line, &ht);
		if (lvl) {
			in_events = lvl == 3 && ht.n == strlen(OPTLOG_EVENTS_HEADING) - 4 &&
				    !memcmp(ht.s, OPTLOG_EVENTS_HEADING + 4, ht.n);
			under_summary = contains_ci(ht, "summary");
			if (lvl == 1 && !title_seen) {
				title_seen = true;
				title_line(ht, d);
			}
			continue;
		}
		if (md_has_pipe(line) && peek_line(&L, &next) && md_is_delim_row(next, &tmp)) {
			struct table_at t = {.at = line.s, .lineno = L.lineno, .under_summary = under_summary};
			md_split_row(line, true, &tmp);
			for (size_t i = 0; i < tmp.n; i++)
				t.has_iter = t.has_iter || col_kind(tmp.v[i]) == C_ITER;
			if (t.under_summary && !chosen.at)
				chosen = t;
			if (t.has_iter && !first_iter.at)
				first_iter = t;
			int iter_idx = -1;
			for (size_t i = 0; i < tmp.n && iter_idx < 0; i++)
				if (col_kind(tmp.v[i]) == C_ITER)
					iter_idx = (int)i;
			size_t ncols = tmp.n;
			next_line(&L, &next);
			/* Skip the body: it ends at a blank line or a line without a
			 * pipe, unless more rows of it follow such lines. */
			size_t nbody = skip_body(&L);
			for (int k; (k = rows_go_on(L, ncols, iter_idx, &tmp)) > 0;) {
				while (k--)
					next_line(&L, &next);
				nbody += skip_body(&L);
			}
			if (chosen.at == t.at)
				chosen.nbody = nbody;
			if (first_iter.at == t.at)
				first_iter.nbody = nbody;
			continue;
		}
		struct optlog_event ev;
		if (in_events && optlog_event_parse(line.s, line.n, &ev)) {
			if ((d->nevents & (d->nevents - 1)) == 0)
				d->events = xrealloc(d->events, (d->nevents ? d->nevents * 2 : 4) *
								sizeof(*d->events));
			d->events[d->nevents++] = ev;
			continue;
		}
		header_line(line, d);
	}
	free(tmp.v);
	if (!chosen.at)
		chosen = first_iter;
	if (!chosen.at)
		return err_set(e, ERR_FAIL,
			       "no summary table found: expected a '## Summary' heading followed by a "
			       "table whose header starts '| Iter | Direction (one line) | Gate | ...'");

	/* Pass 2: the chosen table's rows. */
	struct reader R = {.d = d, .probs = probs};
	L = (struct lines){chosen.at, text + len, chosen.lineno - 1};
	d->table_lineno = chosen.lineno;
	if (chosen.nbody) {
		d->cap = chosen.nbody;
		d->rows = xmalloc(d->cap * sizeof(*d->rows));
	}
	next_line(&L, &line);
	read_header(&R, line, L.lineno);
	next_line(&L, &line); /* delimiter row */
	for (;;) {
		while (peek_line(&L, &next) && !span_blank(next) && md_has_pipe(next)) {
			next_line(&L, &line);
			read_row(&R, line, L.lineno);
		}
		int k = rows_go_on(L, R.ncols, R.idx[C_ITER], &R.alt);
		if (k == 0)
			break;
		d->table_strays += k;
		while (k--) {
			next_line(&L, &line);
			stray_line(line, L.lineno, probs);
		}
	}
	d->table_start = (size_t)(chosen.at - text);
	d->table_end = (size_t)(L.p - text);
	d->table_end_line = L.lineno;
	rows_apart(L, &R, L.lineno, &R.alt, probs);
	free(R.cells.v);
	free(R.alt.v);
	sb_release(&R.tmp);
	if (R.idx[C_VS] < 0)
		optlog_compute_vs_best(d->rows, d->nrows);
	check_duplicates(d, probs);
	return 0;
}

/* ------------------------------------------------------------------ */
/* A hand-edited file merged with the rendering                        */

/* The lines of the rendered head the database owns, by their start. */
static const char *const owned_lines[] = {"# Optimization log " DASH " ", "Env: ",
					  "Baseline (main): ", "Target: "};
static const char *const owned_names[] = {"the title", "the Env line", "the Baseline line",
					  "the Target line"};
#define LEGEND_START "Bench (median ms) is the geomean, over the shapes, of each shape's"
/* how an earlier optloop began the legend: still this optloop's paragraph */
#define LEGEND_START_OLD "Bench is the median of the iteration's own verify run"

static bool legend_at(struct md_span x)
{
	return (x.n >= strlen(LEGEND_START) && !memcmp(x.s, LEGEND_START, strlen(LEGEND_START))) ||
	       (x.n >= strlen(LEGEND_START_OLD) &&
		!memcmp(x.s, LEGEND_START_OLD, strlen(LEGEND_START_OLD)));
}

/* One more item of a "; "-separated list. */
static void list_add(struct sb *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void list_add(struct sb *l, const char *fmt, ...)
{
	va_list ap;
	if (!l)
		return;
	if (l->len)
		sb_adds(l, "; ");
	va_start(ap, fmt);
	sb_vaddf(l, fmt, ap);
	va_end(ap);
}

/* The line of the rendered head that starts with lit ("" when none), with
 * its newline. */
static struct md_span head_line(const struct sb *head, const char *lit)
{
	size_t n = strlen(lit);
	for (const char *p = head->buf; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t ln = nl ? (size_t)(nl - p) + 1 : strlen(p);
		if (ln >= n && !memcmp(p, lit, n))
			return (struct md_span){p, ln};
		p = nl ? nl + 1 : NULL;
	}
	return (struct md_span){"", 0};
}

/* The text above the table, its owned lines and the legend the
 * database's: to out; whether anything else differs from the rendered
 * head (text a person added above the table). */
static bool merge_above(const struct optlog_doc *d, struct md_span above, struct sb *out,
			struct sb *replaced)
{
	struct sb head = SB_INIT;
	bool seen[4] = {false};
	size_t start = out->len;
	render_head(d, &head);
	head.len -= sizeof(table_head) - 1;
	head.buf[head.len] = '\0';
	struct lines L = {above.s, above.s + above.n, 0};
	struct md_span x;
	while (next_line(&L, &x)) {
		size_t full = (size_t)(L.p - x.s); /* with its line end */
		bool done = false;
		for (size_t k = 0; k < 4 && !done; k++) {
			size_t n = strlen(owned_lines[k]);
			if (seen[k] || x.n < n || memcmp(x.s, owned_lines[k], n))
				continue;
			struct md_span h = head_line(&head, owned_lines[k]);
			if (h.n != full || memcmp(h.s, x.s, full))
				list_add(replaced, "%s", owned_names[k]);
			sb_add(out, h.s, h.n);
			seen[k] = done = true;
		}
		if (!done && legend_at(x)) {
			/* the legend paragraph: this optloop's, whatever wrote it */
			while (peek_line(&L, &x) && !span_blank(x))
				next_line(&L, &x);
			const char *lg = strstr(head.buf, LEGEND_START);
			sb_add(out, lg, strlen(lg) - 1); /* it ends in a blank line */
			done = true;
		}
		if (!done)
			sb_add(out, x.s, full);
	}
	bool added = out->len - start != head.len || memcmp(out->buf + start, head.buf, head.len);
	sb_release(&head);
	return added;
}

struct file_row {
	int iter, lineno;
	struct md_span *cells; /* ncols of them, into the text */
};

static int cmp_file_row(const void *a, const void *b)
{
	const struct file_row *x = a, *y = b;
	return x->iter < y->iter ? -1 : x->iter > y->iter;
}

/* The file's rows, each with as many cells as the header (*rows, sorted
 * by iteration; the caller frees each cells array and the array), or
 * ERR_FAIL with e saying which row optloop could not carry over. */
static int file_rows(const char *text, const struct optlog_doc *pd, size_t ncols, int iter_idx,
		     struct file_row **rows, size_t *n, struct err *e)
{
	struct lines L = {text + pd->table_start, text + pd->table_end, pd->table_lineno - 1};
	struct md_span x;
	struct md_cells c = {0};
	int rc = 0;
	*rows = xcalloc(pd->nrows + 1, sizeof(**rows));
	*n = 0;
	next_line(&L, &x);
	next_line(&L, &x);
	while (rc == 0 && next_line(&L, &x)) {
		md_split_row(x, true, &c);
		if (c.n != ncols)
			md_split_row(x, false, &c);
		struct file_row r = {.lineno = L.lineno};
		if (c.n != ncols)
			rc = err_set(e, ERR_FAIL, "line %d has %zu cells for %zu columns", L.lineno, c.n,
				     ncols);
		else if (!parse_iter(c.v[iter_idx], &r.iter))
			rc = err_set(e, ERR_FAIL, "line %d's Iter cell is not an iteration number",
				     L.lineno);
		else if (*n >= pd->nrows + 1)
			rc = err_set(e, ERR_FAIL, "line %d is a row optloop did not read", L.lineno);
		if (rc == 0) {
			r.cells = xmalloc(ncols * sizeof(*r.cells));
			memcpy(r.cells, c.v, ncols * sizeof(*r.cells));
			(*rows)[(*n)++] = r;
		}
	}
	free(c.v);
	qsort(*rows, *n, sizeof(**rows), cmp_file_row);
	for (size_t i = 1; rc == 0 && i < *n; i++)
		if ((*rows)[i].iter == (*rows)[i - 1].iter)
			rc = err_set(e, ERR_FAIL, "iteration %d has two rows (lines %d and %d)",
				     (*rows)[i].iter, (*rows)[i - 1].lineno, (*rows)[i].lineno);
	return rc;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static const struct file_row *file_row_of(const struct file_row *v, size_t n, int iter)
{
	struct file_row key = {.iter = iter};
	return bsearch(&key, v, n, sizeof(*v), cmp_file_row);
}

static bool span_is(struct md_span a, struct md_span b)
{
	return a.n == b.n && !memcmp(a.s, b.s, a.n);
}

/* Row r as rendered, its Direction cell the file's (fr: the file's row,
 * or NULL), the extra columns' cells after it; what differs in the judged
 * cells to replaced, an edited Direction to kept. */
static void merge_row(const struct log_row *r, const struct file_row *fr, const int *std,
		      const int *extra, size_t nextra, struct sb *out, struct sb *kept,
		      struct sb *replaced)
{
	static const enum col judged[] = {C_GATE, C_BENCH, C_VS, C_STATUS};
	struct log_row bare = *r;
	struct sb line = SB_INIT;
	struct md_cells c = {0};
	bare.direction = "";
	optlog_render_row(&bare, &line);
	/* "| <iter> | " comes before the (empty) Direction */
	size_t at = (size_t)(strstr(line.buf + 2, " | ") - line.buf) + 3;
	md_split_row((struct md_span){line.buf, line.len - 1}, true, &c);
	sb_add(out, line.buf, at);
	if (fr && std[C_DIR] >= 0) {
		struct md_span dir = fr->cells[std[C_DIR]];
		char *was = md_unescape_cell(dir);
		if (strcmp(was, r->direction ? r->direction : ""))
			list_add(kept, "row %d's Direction", r->iter);
		free(was);
		sb_add(out, dir.s, dir.n);
	} else {
		md_escape_cell(r->direction, out);
	}
	sb_add(out, line.buf + at, line.len - at - 1);
	for (size_t k = 0; fr && k < sizeof(judged) / sizeof(judged[0]); k++) {
		int i = std[judged[k]];
		if (i < 0 || c.n <= (size_t)judged[k] || span_is(fr->cells[i], c.v[judged[k]]))
			continue;
		list_add(replaced, "row %d's %s reads %.*s where the database has %.*s", r->iter,
			 col_label[judged[k]], (int)fr->cells[i].n, fr->cells[i].s,
			 (int)c.v[judged[k]].n, c.v[judged[k]].s);
	}
	for (size_t k = 0; k < nextra; k++) {
		sb_addc(out, ' ');
		if (fr)
			sb_add(out, fr->cells[extra[k]].s, fr->cells[extra[k]].n);
		sb_adds(out, " |");
	}
	sb_addc(out, '\n');
	free(c.v);
	sb_release(&line);
}

/* Rows of d the file lacks, as "row 2" or "rows 2-4", to replaced. */
static void missing_rows(const struct optlog_doc *d, const struct file_row *v, size_t n,
			 struct sb *replaced)
{
	for (size_t i = 0; i < d->nrows;) {
		size_t j = i;
		if (file_row_of(v, n, d->rows[i].iter)) {
			i++;
			continue;
		}
		while (j + 1 < d->nrows && !file_row_of(v, n, d->rows[j + 1].iter))
			j++;
		if (j == i)
			list_add(replaced, "row %d is not in the file", d->rows[i].iter);
		else
			list_add(replaced, "rows %d-%d are not in the file", d->rows[i].iter,
				 d->rows[j].iter);
		i = j + 1;
	}
}

/* Whether span holds an ATX heading line. */
static bool has_heading(struct md_span x)
{
	struct lines L = {x.s, x.s + x.n, 0};
	struct md_span line, t;
	while (next_line(&L, &line))
		if (heading(line, &t))
			return true;
	return false;
}

/* The text after the table: d's re-assessments and stops first, in place
 * of the file's (what differs said in replaced), then what a person wrote
 * there, as it was (said in kept). */
static void merge_after(const struct optlog_doc *d, struct md_span after, struct sb *out,
			struct sb *kept, struct sb *replaced)
{
	struct sb want = SB_INIT, rest = SB_INIT;
	size_t es = 0, ee = 0;
	bool had = optlog_events_span(after.s, after.n, &es, &ee);
	optlog_render_events(d, &want);
	if (!had)
		es = ee = after.n;
	if (ee - es != want.len || memcmp(after.s + es, want.buf ? want.buf : "", want.len))
		list_add(replaced, had ? "the re-assessments and stops under the table"
				       : "the re-assessments and stops are not in the file");
	sb_add(out, want.buf ? want.buf : "", want.len);
	sb_add(&rest, after.s, es);
	sb_add(&rest, after.s + ee, after.n - ee);
	bool words = false;
	for (size_t i = 0; i < rest.len && !words; i++)
		words = !strchr(" \t\r\n", rest.buf[i]);
	if (words) {
		struct md_span x = {rest.buf, rest.len};
		list_add(kept, "%s after the table", has_heading(x) ? "a section" : "text");
		/* a list goes on into a line right under it */
		if (want.len && rest.buf[0] != '\n' && rest.buf[0] != '\r')
			sb_addc(out, '\n');
		sb_add(out, rest.buf, rest.len);
	}
	sb_release(&want);
	sb_release(&rest);
}

int optlog_merge(const struct optlog_doc *d, const char *text, size_t len, struct sb *out,
		 struct sb *kept, struct sb *replaced, struct err *e)
{
	struct optlog_doc pd;
	struct err pe = {0};
	struct md_cells hc = {0};
	struct file_row *fr = NULL;
	size_t nfr = 0, nextra = 0;
	int std[C_N], *extra = NULL, rc;
	struct sb body = SB_INIT, k = SB_INIT, r = SB_INIT;

	if ((rc = optlog_parse(text, len, &pd, NULL, &pe)) < 0) {
		optlog_doc_release(&pd);
		return err_set(e, ERR_FAIL, "%s", pe.msg);
	}
	if (pd.table_strays) {
		int ns = pd.table_strays;
		optlog_doc_release(&pd);
		return ns == 1 ? err_set(e, ERR_FAIL, "a line between its rows is not a table row")
			       : err_set(e, ERR_FAIL, "%d lines between its rows are not table rows", ns);
	}
	/* the columns: the six optloop renders, and the others a person added */
	struct lines L = {text + pd.table_start, text + pd.table_end, 0};
	struct md_span hl;
	next_line(&L, &hl);
	md_split_row(hl, true, &hc);
	extra = xmalloc((hc.n + 1) * sizeof(*extra));
	for (int i = 0; i < C_N; i++)
		std[i] = -1;
	for (size_t i = 0; i < hc.n; i++) {
		enum col kind = col_kind(hc.v[i]);
		if (kind >= C_ITER && kind <= C_STATUS && std[kind] < 0)
			std[kind] = (int)i;
		else
			extra[nextra++] = (int)i;
	}
	if (std[C_ITER] < 0)
		rc = err_set(e, ERR_FAIL, "its table has no Iter column");
	if (rc == 0)
		rc = file_rows(text, &pd, hc.n, std[C_ITER], &fr, &nfr, e);
	/* the database's iterations, sorted: one look-up per file row (a scan
	 * of every row for each was quadratic in the history) */
	int *known = xmalloc((d->nrows ? d->nrows : 1) * sizeof(*known));
	for (size_t j = 0; j < d->nrows; j++)
		known[j] = d->rows[j].iter;
	qsort(known, d->nrows, sizeof(*known), cmp_int);
	for (size_t i = 0; rc == 0 && i < nfr; i++) {
		if (!bsearch(&fr[i].iter, known, d->nrows, sizeof(*known), cmp_int))
			rc = err_set(e, ERR_FAIL, "its row for iteration %d (line %d) is not in the database",
				     fr[i].iter, fr[i].lineno);
	}
	free(known);
	if (rc == 0) {
		bool above = merge_above(d, (struct md_span){text, pd.table_start}, &body, &r);
		if (above)
			list_add(&k, "edited text above the table");
		if (nextra) {
			struct sb names = SB_INIT;
			for (size_t i = 0; i < nextra; i++)
				sb_addf(&names, "%s%.*s", i == 0 ? "" : i + 1 == nextra ? " and " : ", ",
					(int)hc.v[extra[i]].n, hc.v[extra[i]].s);
			list_add(&k, "%s %s", nextra == 1 ? "an extra column" : "extra columns", names.buf);
			sb_release(&names);
		}
		sb_add(&body, table_head, sizeof(table_head) - 1);
		/* the extra columns' header and delimiter cells */
		body.len -= strlen("|---|---|---|---|---|---|\n") + 1;
		for (size_t i = 0; i < nextra; i++)
			sb_addf(&body, " %.*s |", (int)hc.v[extra[i]].n, hc.v[extra[i]].s);
		sb_adds(&body, "\n|---|---|---|---|---|---|");
		for (size_t i = 0; i < nextra; i++)
			sb_adds(&body, "---|");
		sb_addc(&body, '\n');
		for (size_t i = 0; i < d->nrows; i++)
			merge_row(&d->rows[i], file_row_of(fr, nfr, d->rows[i].iter), std, extra, nextra,
				  &body, &k, &r);
		missing_rows(d, fr, nfr, &r);
		merge_after(d, (struct md_span){text + pd.table_end, len - pd.table_end}, &body, &k,
			    &r);
		if (out)
			sb_add(out, body.buf, body.len);
		if (kept)
			sb_add(kept, k.buf ? k.buf : "", k.len);
		if (replaced)
			sb_add(replaced, r.buf ? r.buf : "", r.len);
	}
	for (size_t i = 0; i < nfr; i++)
		free(fr[i].cells);
	free(fr);
	free(extra);
	free(hc.v);
	sb_release(&body);
	sb_release(&k);
	sb_release(&r);
	optlog_doc_release(&pd);
	return rc;
}
