/*
 * parse — the streaming reader of verify output (see parse.h).
 *
 * Bytes are cut into lines; each line is cleaned (escape sequences, carriage
 * returns, control bytes), tried against the pattern set's line patterns in
 * order, and the first match updates the result and names the event.  Table
 * rows and rules are only tried while a table is open: a header opens one, and
 * any line that is not part of a table closes it; a header after a closed table
 * starts a new result table, so the last table printed is the result.
 */
#include "core/parse.h"
#include "core/patset.h"
#include "core/patset_impl.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct parser {
	const struct patset *ps;
	parse_event_fn fn;
	void *ctx;
	pcre2_match_data *md;
	pcre2_match_data *md_combo;
	pcre2_match_data *gmd; /* where the last match's groups are */
	uint32_t gbase;        /* and the shift of their numbers */

	char *line; /* PARSE_LINE_MAX + 1 bytes */
	size_t len;
	bool overflow; /* the current line is longer than the buffer: rest dropped */
	bool partial;  /* bytes of an unterminated line are pending */
	bool finished;

	bool in_table;
	bool in_traceback;
	int ncols;          /* "(ms)" columns in the current table's header */
	char *mode;         /* mode of the current group */
	long last_dims[5];  /* L B T H D of the row above, for blank shape cells */
	bool have_last;
	size_t rows_cap;
	size_t env_fields;  /* fields of the env line kept in env.raw */
	bool field_row_open;

	struct parse_result r;
};

/* ---- result lifetime ---- */

void parse_result_init(struct parse_result *r)
{
	memset(r, 0, sizeof(*r));
	r->gate = GATE_NONE;
	r->scope = SCOPE_UNKNOWN;
	r->pytest.passed = r->pytest.failed = r->pytest.errors = -1;
	r->pytest.skipped = r->pytest.deselected = -1;
	r->progress = -1;
	r->exit_status = -1;
}

static void env_release(struct parse_env *v)
{
	free(v->raw);
	free(v->device);
	free(v->backend);
	free(v->pytorch);
	free(v->triton);
	free(v->branch);
	free(v->sha);
	memset(v, 0, sizeof(*v));
}

static void rows_clear(struct parse_result *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].mode);
		free(r->rows[i].op);
	}
	r->nrows = 0;
	r->rows_dropped = 0;
}

void parse_result_release(struct parse_result *r)
{
	if (!r)
		return;
	free(r->gate_test);
	free(r->gate_k);
	env_release(&r->env);
	free(r->col_base);
	free(r->col_new);
	rows_clear(r);
	free(r->rows);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r->exception);
	free(r->stage);
	parse_result_init(r);
}

const char *parse_scope_name(enum gate_scope s)
{
	return s == SCOPE_FULL ? "full" : s == SCOPE_SUBSET ? "subset" : NULL;
}

const char *parse_event_kind_name(enum parse_event_kind k)
{
	static const char *const n[] = {
		[PEV_LINE] = "line",
		[PEV_GATE_BANNER] = "gate_banner",
		[PEV_TEST_CASE] = "test_case",
		[PEV_PROGRESS] = "progress",
		[PEV_PYTEST_SUMMARY] = "pytest_summary",
		[PEV_GATE_VERDICT] = "gate_verdict",
		[PEV_ENV] = "env",
		[PEV_TABLE_HEADER] = "table_header",
		[PEV_TABLE_ROW] = "table_row",
		[PEV_WARNING] = "warning",
		[PEV_TRACEBACK] = "traceback",
		[PEV_STAGE] = "stage",
	};
	return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "?";
}

/* ---- parser lifetime ---- */

struct parser *parser_new(const struct patset *ps, parse_event_fn fn, void *ctx)
{
	struct parser *p = xcalloc(1, sizeof(*p));
	p->ps = ps;
	p->fn = fn;
	p->ctx = ctx;
	p->md = pcre2_match_data_create(ps->max_pairs ? ps->max_pairs : 1, NULL);
	if (!p->md)
		BUG("out of memory (pcre2 match data)");
	if (ps->combined) {
		uint32_t n = ps->combo[0].pairs > ps->combo[1].pairs ? ps->combo[0].pairs : ps->combo[1].pairs;
		p->md_combo = pcre2_match_data_create(n, NULL);
		if (!p->md_combo)
			BUG("out of memory (pcre2 match data)");
	}
	p->line = xmalloc(PARSE_LINE_MAX + 1);
	parse_result_init(&p->r);
	return p;
}

void parser_free(struct parser *p)
{
	if (!p)
		return;
	parse_result_release(&p->r);
	pcre2_match_data_free(p->md);
	pcre2_match_data_free(p->md_combo);
	free(p->line);
	free(p->mode);
	free(p);
}

const struct parse_result *parser_result(const struct parser *p)
{
	return &p->r;
}

void parser_take_result(struct parser *p, struct parse_result *out)
{
	*out = p->r;
	parse_result_init(&p->r);
	p->rows_cap = 0;
}

static size_t str_mem(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

size_t parser_mem(const struct parser *p)
{
	const struct parse_result *r = &p->r;
	size_t n = sizeof(*p) + PARSE_LINE_MAX + 1 + str_mem(p->mode);

	n += p->rows_cap * sizeof(struct parse_row);
	for (size_t i = 0; i < r->nrows; i++)
		n += str_mem(r->rows[i].mode) + str_mem(r->rows[i].op);
	n += PARSE_MAX_WARNINGS * sizeof(char *);
	for (size_t i = 0; i < r->nwarnings; i++)
		n += str_mem(r->warnings[i]);
	n += str_mem(r->gate_test) + str_mem(r->gate_k) + str_mem(r->col_base) +
	     str_mem(r->col_new) + str_mem(r->exception) + str_mem(r->stage);
	n += str_mem(r->env.raw) + str_mem(r->env.device) + str_mem(r->env.backend) +
	     str_mem(r->env.pytorch) + str_mem(r->env.triton) + str_mem(r->env.branch) +
	     str_mem(r->env.sha);
	return n;
}

/* ---- small helpers ---- */

static void set_str(char **dst, const char *s, size_t n, size_t max)
{
	free(*dst);
	*dst = xstrndup(s, n < max ? n : max);
}

/* Capture group g of the last match, or false when the pattern has no such
 * group or it did not take part. */
static bool group(const struct parser *p, const struct pat *pt, enum pat_group g,
		  const char *s, const char **out, size_t *n)
{
	int k = pt->grp[g];
	PCRE2_SIZE *ov;
	if (k < 0)
		return false;
	k += (int)p->gbase;
	ov = pcre2_get_ovector_pointer(p->gmd);
	if (ov[2 * k] == PCRE2_UNSET)
		return false;
	*out = s + ov[2 * k];
	*n = ov[2 * k + 1] - ov[2 * k];
	return true;
}

static int match(struct parser *p, const struct pat *pt, const char *s, size_t n)
{
	p->gmd = p->md;
	p->gbase = 0;
	if (pt->jit)
		return pcre2_jit_match(pt->re, (PCRE2_SPTR)s, n, 0, 0, p->md, NULL);
	return pcre2_match(pt->re, (PCRE2_SPTR)s, n, 0, 0, p->md, NULL);
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* strtol/strtod over a counted, non-terminated token. */
static bool tok_long(const char *s, size_t n, long *out)
{
	char buf[32], *end;
	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	*out = strtol(buf, &end, 10);
	return *end == 0 && errno == 0;
}

static bool tok_double(const char *s, size_t n, double *out)
{
	char buf[64], *end;
	if (n && (s[n - 1] == 'x' || s[n - 1] == 'X'))
		n--;
	if (!n || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	*out = strtod(buf, &end);
	return *end == 0;
}

static bool is_dash(const char *s, size_t n)
{
	return n == 1 && *s == '-';
}

/* Next whitespace-separated token of [*s, end). */
static bool next_tok(const char **s, const char *end, const char **t, size_t *n)
{
	const char *c = *s;
	while (c < end && (*c == ' ' || *c == '\t'))
		c++;
	if (c == end)
		return false;
	*t = c;
	while (c < end && *c != ' ' && *c != '\t')
		c++;
	*n = (size_t)(c - *t);
	*s = c;
	return true;
}

/* ---- line cleaning ---- */

/* Remove what a terminal would not show as text: CSI and OSC escape
 * sequences, other two-byte escapes, control bytes except tab; a carriage
 * return in the middle of a line means the text after it was drawn over the
 * text before it.  Works in place; returns the new length. */
static size_t clean_line(char *s, size_t n)
{
	size_t i, o = 0, start = 0;

	unsigned bad = 0;
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;

	while (n && s[n - 1] == '\r')
		n--;
	/* Most lines are clean: test eight bytes at a time for one below 0x20
	 * or equal to 0x7f (bit tricks), and look closer only when one is. */
	for (i = 0; i + 8 <= n; i += 8) {
		uint64_t x, d;
		memcpy(&x, s + i, 8);
		d = x ^ (ones * 0x7f);
		if ((((x - ones * 0x20) & ~x) | ((d - ones) & ~d)) & highs)
			break;
	}
	for (; i < n; i++) {
		unsigned c = (unsigned char)s[i];
		bad |= (unsigned)(c < 0x20) & (unsigned)(c != '\t');
		bad |= (unsigned)(c == 0x7f);
	}
	if (!bad)
		return n;
	for (i = n; i > 0; i--)
		if (s[i - 1] == '\r') {
			start = i;
			break;
		}
	for (i = start; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0x1b && i + 1 < n) {
			unsigned char k = (unsigned char)s[i + 1];
			if (k == '[') { /* CSI: parameters, intermediates, one final byte */
				i += 2;
				while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x40)
					i++;
				continue; /* i sits on the final byte, skipped by the loop */
			}
			if (k == ']') { /* OSC: up to BEL or ESC \ */
				i += 2;
				while (i < n && s[i] != 0x07 && !(s[i] == 0x1b && i + 1 < n && s[i + 1] == '\\'))
					i++;
				if (i < n && s[i] == 0x1b)
					i++;
				continue;
			}
			i++; /* two-byte escape */
			continue;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			continue;
		s[o++] = (char)c;
	}
	return o;
}

/* ---- result updates ---- */

static void add_warning(struct parser *p, const char *s, size_t n)
{
	struct parse_result *r = &p->r;
	trim(&s, &n);
	if (!n)
		return;
	if (n > PARSE_WARNING_MAX)
		n = PARSE_WARNING_MAX;
	for (size_t i = 0; i < r->nwarnings; i++)
		if (strlen(r->warnings[i]) == n && !memcmp(r->warnings[i], s, n))
			return;
	if (r->nwarnings >= PARSE_MAX_WARNINGS)
		return;
	if (!r->warnings)
		r->warnings = xcalloc(PARSE_MAX_WARNINGS, sizeof(char *));
	r->warnings[r->nwarnings++] = xstrndup(s, n);
}

static void count_outcome(struct parse_result *r, const char *o, size_t n)
{
	char c = n ? o[0] : 0;
	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	if (c == 'X' && n >= 2 && (o[1] == 'F' || o[1] == 'f'))
		r->cases_skipped++;
	else if (c == 'P' || c == 'X')
		r->cases_passed++;
	else if (c == 'F' || c == 'E')
		r->cases_failed++;
	else if (c == 'S')
		r->cases_skipped++;
}

static void count_dots(struct parse_result *r, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '.':
		case 'X':
			r->cases_passed++;
			break;
		case 'F':
		case 'E':
			r->cases_failed++;
			break;
		case 's':
		case 'x':
			r->cases_skipped++;
			break;
		}
	}
}

/* "1 failed, 29 deselected, 14 warnings" or "no tests ran". */
static void parse_counts(struct parse_result *r, const char *s, size_t n)
{
	const char *end = s + n, *t, *w;
	size_t tn, wn;
	long v;

	r->pytest.passed = r->pytest.failed = r->pytest.errors = 0;
	r->pytest.skipped = r->pytest.deselected = 0;
	while (next_tok(&s, end, &t, &tn) && next_tok(&s, end, &w, &wn)) {
		if (wn && w[wn - 1] == ',')
			wn--;
		if (!tok_long(t, tn, &v) || v < 0 || v > 1000000000L)
			continue;
#define IS(word) (wn == sizeof(word) - 1 && !memcmp(w, word, wn))
		if (IS("passed"))
			r->pytest.passed = (int)v;
		else if (IS("failed"))
			r->pytest.failed = (int)v;
		else if (IS("error") || IS("errors"))
			r->pytest.errors = (int)v;
		else if (IS("skipped"))
			r->pytest.skipped = (int)v;
		else if (IS("deselected"))
			r->pytest.deselected = (int)v;
#undef IS
	}
}

static void parse_env(struct parser *p, const char *s, size_t n)
{
	const struct patset *ps = p->ps;
	struct parse_env *env = &p->r.env;
	const char *end = s + n, *f = s;
	size_t nfields = 0;
	bool has_device_role = false;

	for (size_t i = ps->nline; i < ps->npats; i++)
		has_device_role |= ps->pats[i].role == ROLE_ENV_DEVICE;
	while (f <= end) {
		const char *bar = memchr(f, '|', (size_t)(end - f));
		const char *fe = bar ? bar : end;
		const char *v = f;
		size_t vn = (size_t)(fe - f);
		bool matched = false;

		trim(&v, &vn);
		f = fe + 1;
		if (!vn) {
			if (!bar)
				break;
			continue;
		}
		nfields++;
		for (size_t i = ps->nline; i < ps->npats && !matched; i++) {
			const struct pat *pt = &ps->pats[i];
			const char *g;
			size_t gn;
			if (match(p, pt, v, vn) < 0)
				continue;
			matched = true;
			if (pt->role == ROLE_ENV_LABEL) {
				if (group(p, pt, G_BRANCH, v, &g, &gn))
					set_str(&env->branch, g, gn, PARSE_CELL_MAX);
				if (group(p, pt, G_SHA, v, &g, &gn))
					set_str(&env->sha, g, gn, PARSE_CELL_MAX);
				continue;
			}
			if (!group(p, pt, G_V, v, &g, &gn)) {
				g = v;
				gn = vn;
			}
			char **dst = pt->role == ROLE_ENV_DEVICE    ? &env->device
				     : pt->role == ROLE_ENV_BACKEND ? &env->backend
				     : pt->role == ROLE_ENV_PYTORCH ? &env->pytorch
								    : &env->triton;
			set_str(dst, g, gn, PARSE_CELL_MAX);
		}
		if (!matched && nfields == 1 && !has_device_role)
			set_str(&env->device, v, vn, PARSE_CELL_MAX);
		if (!bar)
			break;
	}
	/* Keep the fullest line as raw: verify prints one with Triton and the
	 * branch, the table repeats a shorter one. */
	if (nfields >= p->env_fields) {
		p->env_fields = nfields;
		set_str(&env->raw, s, n, PARSE_LINE_MAX);
	}
}

static void parse_header(struct parser *p, const struct pat *pt, const char *s)
{
	struct parse_result *r = &p->r;
	const char *g, *t, *end;
	size_t gn, tn;
	int ncols = 0;

	if (!p->in_table) { /* a new table replaces the previous one */
		rows_clear(r);
		free(r->col_base);
		free(r->col_new);
		r->col_base = r->col_new = NULL;
		r->has_L = false;
	}
	p->in_table = true;
	p->have_last = false;
	free(p->mode);
	p->mode = group(p, pt, G_MODE, s, &g, &gn) ? xstrndup(g, gn < PARSE_CELL_MAX ? gn : PARSE_CELL_MAX)
						   : NULL;
	r->has_L = group(p, pt, G_L, s, &g, &gn);
	if (group(p, pt, G_COLS, s, &g, &gn)) {
		char *labels[2] = {NULL, NULL};
		end = g + gn;
		while (next_tok(&g, end, &t, &tn)) {
			if (tn > 4 && !memcmp(t + tn - 4, "(ms)", 4)) {
				if (ncols == 2) { /* keep the last two */
					free(labels[0]);
					labels[0] = labels[1];
					ncols = 1;
				}
				labels[ncols++] = xstrndup(t, (tn - 4) < PARSE_CELL_MAX ? tn - 4 : PARSE_CELL_MAX);
			}
		}
		free(r->col_base);
		free(r->col_new);
		r->col_base = ncols == 2 ? labels[0] : NULL;
		r->col_new = ncols == 2 ? labels[1] : labels[0];
	}
	p->ncols = ncols;
}

static struct parse_row *new_row(struct parser *p)
{
	struct parse_result *r = &p->r;
	struct parse_row *row;

	if (r->nrows >= PARSE_MAX_ROWS) {
		r->rows_dropped++;
		return NULL;
	}
	if (r->nrows == p->rows_cap) {
		p->rows_cap = p->rows_cap ? 2 * p->rows_cap : 16;
		r->rows = xrealloc(r->rows, p->rows_cap * sizeof(*r->rows));
	}
	row = &r->rows[r->nrows++];
	row->mode = row->op = NULL;
	row->B = row->T = row->H = row->D = row->L = -1;
	row->base_ms = row->new_ms = row->speedup = NAN;
	return row;
}

/* Named numeric groups (B, T, H, D, L, base_ms, new_ms, speedup) and the
 * mode and op strings: used by table_row and field patterns.  With dry set,
 * nothing is written and the result is how many of them row already has. */
static int named_fields(struct parser *p, const struct pat *pt, const char *s, struct parse_row *row,
			bool dry)
{
	static const enum pat_group lg[] = {G_B, G_T, G_H, G_D, G_L};
	static const enum pat_group dg[] = {G_BASE_MS, G_NEW_MS, G_SPEEDUP};
	const char *g;
	size_t gn;
	int set = 0, clash = 0;

	for (size_t i = 0; i < 5; i++) {
		long *dst = i == 0 ? &row->B : i == 1 ? &row->T : i == 2 ? &row->H : i == 3 ? &row->D : &row->L;
		long v;
		if (group(p, pt, lg[i], s, &g, &gn) && tok_long(g, gn, &v)) {
			clash += *dst != -1;
			if (!dry)
				*dst = v, set++;
		}
	}
	for (size_t i = 0; i < 3; i++) {
		double *dst = i == 0 ? &row->base_ms : i == 1 ? &row->new_ms : &row->speedup;
		double v;
		if (group(p, pt, dg[i], s, &g, &gn) && tok_double(g, gn, &v)) {
			clash += !isnan(*dst);
			if (!dry)
				*dst = v, set++;
		}
	}
	if (group(p, pt, G_OP, s, &g, &gn)) {
		clash += row->op != NULL;
		if (!dry)
			set_str(&row->op, g, gn, PARSE_CELL_MAX), set++;
	}
	if (group(p, pt, G_MODE, s, &g, &gn)) {
		clash += row->mode != NULL;
		if (!dry)
			set_str(&row->mode, g, gn, PARSE_CELL_MAX), set++;
	}
	return dry ? clash : set;
}

static void parse_row(struct parser *p, const struct pat *pt, const char *s)
{
	const char *g, *t, *end;
	size_t gn, tn;
	struct parse_row *row = new_row(p);
	long dims[5] = {-1, -1, -1, -1, -1}; /* L B T H D */
	const char *vt[3];
	size_t vn[3];
	int nd = 0, nv = 0;

	if (!row)
		return;
	if (p->mode)
		row->mode = xstrdup(p->mode);
	if (group(p, pt, G_DIMS, s, &g, &gn)) {
		long tmp[5];
		end = g + gn;
		while (nd < 5 && next_tok(&g, end, &t, &tn)) {
			long v;
			tmp[nd++] = is_dash(t, tn) || !tok_long(t, tn, &v) ? -1 : v;
		}
		if (nd == 5) {
			memcpy(dims, tmp, sizeof(dims));
		} else {
			for (int i = 0; i < nd && i < 4; i++)
				dims[1 + i] = tmp[i];
		}
		memcpy(p->last_dims, dims, sizeof(dims));
		p->have_last = true;
	} else if (p->have_last) {
		memcpy(dims, p->last_dims, sizeof(dims));
	}
	row->L = dims[0];
	row->B = dims[1];
	row->T = dims[2];
	row->H = dims[3];
	row->D = dims[4];
	if (group(p, pt, G_VALS, s, &g, &gn)) {
		end = g + gn;
		while (nv < 3 && next_tok(&g, end, &t, &tn)) {
			vt[nv] = t;
			vn[nv++] = tn;
		}
		double v[3] = {NAN, NAN, NAN};
		for (int i = 0; i < nv; i++)
			if (!is_dash(vt[i], vn[i]) && !tok_double(vt[i], vn[i], &v[i]))
				v[i] = NAN;
		if (p->ncols == 1 || (p->ncols == 0 && nv == 1)) {
			row->new_ms = v[0];
		} else {
			row->base_ms = v[0];
			row->new_ms = nv > 1 ? v[1] : NAN;
			row->speedup = nv > 2 ? v[2] : NAN;
		}
	}
	named_fields(p, pt, s, row, false);
}

/* A key/value result ("RUNTIME: 0.41 ms"): fields fill the open row; a field
 * that row already has starts the next one. */
static void parse_field(struct parser *p, const struct pat *pt, const char *s)
{
	struct parse_result *r = &p->r;
	struct parse_row *row = p->field_row_open && r->nrows ? &r->rows[r->nrows - 1] : NULL;

	if (!row || named_fields(p, pt, s, row, true) > 0) {
		if (!p->field_row_open)
			rows_clear(r); /* key/value results replace an earlier table */
		row = new_row(p);
		if (!row)
			return;
		p->field_row_open = true;
	}
	named_fields(p, pt, s, row, false);
}

/* ---- one line ---- */

static void handle_line(struct parser *p, char *s, size_t n)
{
	const struct patset *ps = p->ps;
	struct parse_result *r = &p->r;
	struct parse_event ev = {.kind = PEV_LINE, .line = s, .len = n, .progress = -1};
	const struct pat *hit = NULL;
	const char *g;
	size_t gn;

	r->lines++;
	if (p->in_traceback && n && s[0] != ' ' && s[0] != '\t') {
		p->in_traceback = false;
		set_str(&r->exception, s, n, PARSE_WARNING_MAX);
	}
	if (ps->combined) {
		const struct patcombo *c = &ps->combo[p->in_table];
		int rc = c->jit ? pcre2_jit_match(c->re, (PCRE2_SPTR)s, n, 0, 0, p->md_combo, NULL)
				: pcre2_match(c->re, (PCRE2_SPTR)s, n, 0, 0, p->md_combo, NULL);
		if (rc >= 0) {
			PCRE2_SPTR mark = pcre2_get_mark(p->md_combo);
			size_t i = mark ? (size_t)strtoul((const char *)mark, NULL, 10) : ps->nline;
			if (i < ps->nline) {
				hit = &ps->pats[i];
				p->gmd = p->md_combo;
				p->gbase = hit->cbase[p->in_table];
			}
		}
	} else {
		for (size_t i = 0; i < ps->nline; i++) {
			const struct pat *pt = &ps->pats[i];
			if (!p->in_table && (pt->role == ROLE_TABLE_ROW || pt->role == ROLE_TABLE_RULE))
				continue;
			if (match(p, pt, s, n) >= 0) {
				hit = pt;
				break;
			}
		}
	}
	if (p->in_table && (!hit || (hit->role != ROLE_TABLE_ROW && hit->role != ROLE_TABLE_RULE &&
				     hit->role != ROLE_TABLE_HEADER)))
		p->in_table = false;
	if (hit) {
		long pct;
		if (group(p, hit, G_PCT, s, &g, &gn) && tok_long(g, gn, &pct) && pct >= 0 && pct <= 100) {
			r->progress = (int)pct;
			ev.progress = (int)pct;
			ev.kind = PEV_PROGRESS;
		}
		switch (hit->role) {
		case ROLE_IGNORE:
		case ROLE_PROGRESS:
		case ROLE_TABLE_RULE:
			break;
		case ROLE_BANNER:
			ev.kind = PEV_GATE_BANNER;
			if (group(p, hit, G_TEST, s, &g, &gn))
				set_str(&r->gate_test, g, gn, PARSE_CELL_MAX * 4);
			free(r->gate_k);
			r->gate_k = NULL;
			if (group(p, hit, G_K, s, &g, &gn)) {
				r->scope = SCOPE_SUBSET;
				set_str(&r->gate_k, g, gn, PARSE_CELL_MAX * 4);
			} else {
				r->scope = SCOPE_FULL;
			}
			break;
		case ROLE_PASS:
			ev.kind = PEV_GATE_VERDICT;
			r->gate_line_pass = true;
			break;
		case ROLE_FAIL:
			ev.kind = PEV_GATE_VERDICT;
			r->gate_line_fail = true;
			break;
		case ROLE_MISSING:
			ev.kind = PEV_GATE_VERDICT;
			r->gate_not_found = true;
			break;
		case ROLE_NOGATE:
			ev.kind = PEV_WARNING;
			r->no_gate = true;
			if (group(p, hit, G_MSG, s, &g, &gn))
				add_warning(p, g, gn);
			else
				add_warning(p, s, n);
			break;
		case ROLE_CASE:
			ev.kind = PEV_TEST_CASE;
			if (group(p, hit, G_OUTCOME, s, &g, &gn))
				count_outcome(r, g, gn);
			break;
		case ROLE_DOTS:
			ev.kind = PEV_TEST_CASE;
			if (group(p, hit, G_DOTS, s, &g, &gn))
				count_dots(r, g, gn);
			break;
		case ROLE_SUMMARY:
			ev.kind = PEV_PYTEST_SUMMARY;
			if (group(p, hit, G_COUNTS, s, &g, &gn))
				parse_counts(r, g, gn);
			break;
		case ROLE_ENV:
			ev.kind = PEV_ENV;
			if (group(p, hit, G_FIELDS, s, &g, &gn))
				parse_env(p, g, gn);
			break;
		case ROLE_TABLE_HEADER:
			ev.kind = PEV_TABLE_HEADER;
			p->field_row_open = false;
			parse_header(p, hit, s);
			break;
		case ROLE_TABLE_ROW:
			ev.kind = PEV_TABLE_ROW;
			parse_row(p, hit, s);
			break;
		case ROLE_FIELD:
			ev.kind = PEV_TABLE_ROW;
			parse_field(p, hit, s);
			break;
		case ROLE_WARNING:
			ev.kind = PEV_WARNING;
			if (group(p, hit, G_MSG, s, &g, &gn))
				add_warning(p, g, gn);
			else
				add_warning(p, s, n);
			break;
		case ROLE_TRACEBACK:
			ev.kind = PEV_TRACEBACK;
			r->traceback = true;
			p->in_traceback = true;
			break;
		case ROLE_STAGE:
			ev.kind = PEV_STAGE;
			if (!group(p, hit, G_STAGE, s, &g, &gn)) {
				g = s;
				gn = n;
			}
			set_str(&r->stage, g, gn, PARSE_CELL_MAX);
			ev.stage = r->stage;
			ev.stage_len = strlen(r->stage);
			break;
		default:
			break;
		}
	}
	if (p->fn)
		p->fn(p->ctx, &ev);
}

static void flush_line(struct parser *p)
{
	size_t n = clean_line(p->line, p->len);
	p->line[n] = 0;
	handle_line(p, p->line, n);
	p->len = 0;
	p->overflow = false;
	p->partial = false;
}

static void append(struct parser *p, const char *s, size_t n)
{
	size_t room = PARSE_LINE_MAX - p->len;
	if (n > room) {
		n = room;
		p->overflow = true;
	}
	memcpy(p->line + p->len, s, n);
	p->len += n;
}

void parser_feed(struct parser *p, const char *buf, size_t len)
{
	const char *s = buf, *end = buf + len;

	if (p->finished || !len)
		return;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl) {
			append(p, s, (size_t)(end - s));
			p->partial = true;
			return;
		}
		append(p, s, (size_t)(nl - s));
		flush_line(p);
		s = nl + 1;
	}
}

/* ---- the verdict (DESIGN §4) ---- */

static enum gate_verdict decide(const struct parse_result *r)
{
	bool failed_case = r->cases_failed > 0 || r->pytest.failed > 0 || r->pytest.errors > 0;
	bool verdict_line = r->gate_line_pass || r->gate_line_fail || r->gate_not_found;
	bool gate_seen = verdict_line || r->scope != SCOPE_UNKNOWN || r->no_gate;
	int x = r->exit_status;

	/* A failure in the text stands, however the run ended. */
	if (r->gate_line_fail || failed_case)
		return GATE_FAIL;
	if (r->gate_not_found)
		return GATE_ERROR;
	if (r->killed)
		return GATE_INCOMPLETE;
	if (x == 2)
		return GATE_ERROR;
	if (r->traceback && !r->gate_line_pass)
		return GATE_ERROR;
	if (r->no_gate)
		return x > 0 ? GATE_ERROR : GATE_UNVERIFIED;
	if (r->gate_line_pass) {
		if (x == 0 || x == -1)
			return GATE_PASS;
		return GATE_ERROR; /* the gate passed, then the harness broke */
	}
	if (gate_seen) /* a banner, then no verdict */
		return x > 0 ? GATE_ERROR : GATE_INCOMPLETE;
	return x > 0 ? GATE_ERROR : GATE_NONE;
}

/* Rows without a shape (one result after another, as KernelBench prints
 * them) are results of their own, never repeats. */
static bool same_shape(const struct parse_row *a, const struct parse_row *b)
{
	bool shaped = (a->op && *a->op) || (a->mode && *a->mode) || a->B > 0 || a->T > 0 ||
		      a->H > 0 || a->D > 0;
	return shaped && a->B == b->B && a->T == b->T && a->H == b->H && a->D == b->D && a->L == b->L &&
	       !strcmp(a->mode ? a->mode : "", b->mode ? b->mode : "") &&
	       !strcmp(a->op ? a->op : "", b->op ? b->op : "");
}

static bool same_time(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* A shape the last table lists more than once.  The same times again are
 * the same row printed twice: it counts once.  Different times leave the
 * run without a table: which one the harness meant cannot be known, and a
 * bench made of both would count the shape twice. */
static void settle_repeats(struct parser *p)
{
	struct parse_result *r = &p->r;
	size_t kept = 0;
	bool conflict = false;
	char what[256] = "";
	for (size_t i = 0; i < r->nrows && !conflict; i++) {
		struct parse_row *row = &r->rows[i];
		size_t j = 0;
		while (j < kept && !same_shape(&r->rows[j], row))
			j++;
		if (j == kept) {
			r->rows[kept++] = *row;
			continue;
		}
		const struct parse_row *first = &r->rows[j];
		snprintf(what, sizeof(what), "%s B=%ld T=%ld H=%ld D=%ld %s", row->mode ? row->mode : "",
			 row->B, row->T, row->H, row->D, row->op ? row->op : "");
		if (!same_time(first->base_ms, row->base_ms) || !same_time(first->new_ms, row->new_ms)) {
			char msg[PARSE_WARNING_MAX];
			snprintf(msg, sizeof(msg),
				 "the result table lists %s more than once with different times "
				 "(%.4g and %.4g ms): this run has no bench, since which one is meant "
				 "cannot be known; make the benchmark print each shape once",
				 what, isnan(first->new_ms) ? first->base_ms : first->new_ms,
				 isnan(row->new_ms) ? row->base_ms : row->new_ms);
			add_warning(p, msg, strlen(msg));
			conflict = true;
			/* the rows not yet moved are released below */
			r->rows[kept++] = *row;
			for (size_t k = i + 1; k < r->nrows; k++)
				r->rows[kept++] = r->rows[k];
			break;
		}
		char msg[PARSE_WARNING_MAX];
		snprintf(msg, sizeof(msg),
			 "the result table lists %s more than once with the same times; it counts once",
			 what);
		add_warning(p, msg, strlen(msg));
		free(row->mode);
		free(row->op);
	}
	r->nrows = kept;
	if (conflict)
		rows_clear(r);
}

void parser_finish(struct parser *p, int exit_status, bool killed)
{
	struct parse_result *r = &p->r;

	if (!p->finished) {
		if (p->partial) {
			r->truncated = true;
			flush_line(p);
		}
		settle_repeats(p);
		p->finished = true;
	}
	r->exit_status = exit_status;
	r->killed = killed;
	if (r->scope == SCOPE_UNKNOWN && (r->gate_line_pass || r->gate_line_fail))
		r->scope = p->ps->default_scope;
	r->gate = decide(r);
	r->complete = !killed && (exit_status >= 0 || !r->truncated);
}

/* ---- whole files ---- */

bool parse_recognised(const struct parse_result *r)
{
	return r->gate != GATE_NONE || r->scope != SCOPE_UNKNOWN || r->env.raw || r->nrows ||
	       r->pytest.passed >= 0 || r->pytest.failed >= 0 || r->pytest.errors >= 0 ||
	       r->progress >= 0 || r->cases_passed || r->cases_failed || r->cases_skipped ||
	       r->traceback || r->gate_line_pass || r->gate_line_fail || r->gate_not_found ||
	       r->no_gate || r->exception;
}

static char *jstr(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

static long jlong(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

/* benchmarks/ops/run.py --json: {"machine_info": {...}, "results": [{op,
 * mode, B, T, H, D, median_ms, ...}]}. */
int parse_runpy_json(const char *text, size_t len, struct parse_result *out, struct err *e)
{
	json_t *j = json_loadb(text, len, 0, NULL);
	const json_t *res = j ? json_object_get(j, "results") : NULL;
	parse_result_init(out);
	if (!json_is_array(res)) {
		json_decref(j);
		return err_set(e, ERR_NOTFOUND, "not a run.py results file");
	}
	const json_t *mi = json_object_get(j, "machine_info");
	if (json_is_object(mi)) {
		struct parse_env *v = &out->env;
		v->device = jstr(mi, "gpu_name");
		char *cuda = jstr(mi, "cuda_version");
		v->backend = cuda ? xasprintf("CUDA %s", cuda) : jstr(mi, "device_platform");
		free(cuda);
		v->pytorch = jstr(mi, "pytorch_version");
		v->triton = jstr(mi, "triton_version");
		char *label = jstr(mi, "git_label");
		if (label) { /* "branch[sha]" */
			char *lb = strchr(label, '[');
			if (lb && label[strlen(label) - 1] == ']') {
				v->branch = xstrndup(label, (size_t)(lb - label));
				v->sha = xstrndup(lb + 1, strlen(lb + 1) - 1);
			} else {
				v->branch = xstrdup(label);
			}
		}
		struct sb raw = SB_INIT;
		sb_addf(&raw, "%s", v->device ? v->device : "?");
		if (v->backend)
			sb_addf(&raw, " | %s", v->backend);
		if (v->pytorch)
			sb_addf(&raw, " | PyTorch %s", v->pytorch);
		if (v->triton)
			sb_addf(&raw, " | Triton %s", v->triton);
		if (label)
			sb_addf(&raw, " | %s", label);
		v->raw = sb_detach(&raw);
		free(label);
	}
	size_t i;
	const json_t *row;
	json_array_foreach(res, i, row)
	{
		if (!json_is_object(row) || out->nrows >= PARSE_MAX_ROWS)
			continue;
		const json_t *med = json_object_get(row, "median_ms");
		out->rows = xrealloc(out->rows, (out->nrows + 1) * sizeof(*out->rows));
		struct parse_row *w = &out->rows[out->nrows++];
		w->mode = jstr(row, "mode");
		w->op = jstr(row, "op");
		w->B = jlong(row, "B");
		w->T = jlong(row, "T");
		w->H = jlong(row, "H");
		w->D = jlong(row, "D");
		w->L = jlong(row, "L");
		w->base_ms = NAN;
		w->new_ms = json_is_number(med) ? json_number_value(med) : NAN;
		w->speedup = NAN;
		if (w->L >= 0)
			out->has_L = true;
	}
	out->complete = true;
	out->runpy_json = true;
	out->col_new = xstrdup("median_ms");
	json_decref(j);
	return 0;
}

int parse_file(const struct patset *ps, const char *path, int exit_status, bool killed,
	       struct parse_result *out, struct err *e)
{
	char buf[1 << 16];
	struct parser *p;
	ssize_t n;
	bool is_stdin = !strcmp(path, "-");
	const char *name = is_stdin ? "standard input" : path;
	bool first = true, is_json = false;
	struct sb json = SB_INIT; /* a file that opens with '{' is kept whole */
	size_t total = 0;
	int fd, rc;

	parse_result_init(out);
	/* a regular file (or standard input), never a FIFO or a device */
	if ((rc = fsutil_open_read(path, FSUTIL_STDIN, &fd, e)) < 0)
		return rc == ERR_NOTFOUND ? err_set(e, ERR_NOTFOUND,
						    "cannot read %s: %s; check the path", path,
						    strerror(ENOENT))
					  : rc;
	p = parser_new(ps, NULL, NULL);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				/* standard input handed over non-blocking */
				struct pollfd pw = {.fd = fd, .events = POLLIN};
				poll(&pw, 1, -1);
				continue;
			}
			int en = errno;
			close(fd);
			parser_free(p);
			sb_release(&json);
			return err_set(e, ERR_IO, "cannot read %s: %s", name, strerror(en));
		}
		total += (size_t)n;
		if (total > FSUTIL_READ_MAX) {
			close(fd);
			parser_free(p);
			sb_release(&json);
			return err_set(e, ERR_NOTFILE,
				       "%s holds more than the %zu MiB optloop reads from one file; is "
				       "it a verify log? (save the run's output to a file and parse that)",
				       name, FSUTIL_READ_MAX >> 20);
		}
		if (first) {
			size_t k = 0;
			while (k < (size_t)n && isspace((unsigned char)buf[k]))
				k++;
			first = k == (size_t)n;
			is_json = k < (size_t)n && buf[k] == '{';
		}
		if (is_json && json.len < PARSE_JSON_MAX)
			sb_add(&json, buf, (size_t)n);
		parser_feed(p, buf, (size_t)n);
	}
	close(fd);
	if (is_json && json.len < PARSE_JSON_MAX &&
	    parse_runpy_json(json.buf, json.len, out, NULL) == 0) {
		sb_release(&json);
		parser_free(p);
		return 0;
	}
	parse_result_release(out);
	sb_release(&json);
	parser_finish(p, exit_status, killed);
	parser_take_result(p, out);
	parser_free(p);
	return 0;
}

/* ---- JSON ---- */

/* Strings from child output need not be UTF-8; jansson insists on it, so
 * invalid bytes become U+FFFD. */
static json_t *jtext(const char *s)
{
	struct sb b = SB_INIT;
	const unsigned char *c;
	json_t *j;

	if (!s)
		return json_null();
	c = (const unsigned char *)s;
	while (*c) {
		size_t len = 0;
		if (*c < 0x80)
			len = 1;
		else if ((*c & 0xe0) == 0xc0 && *c >= 0xc2)
			len = 2;
		else if ((*c & 0xf0) == 0xe0)
			len = 3;
		else if ((*c & 0xf8) == 0xf0 && *c <= 0xf4)
			len = 4;
		bool ok = len > 0;
		for (size_t i = 1; ok && i < len; i++)
			ok = (c[i] & 0xc0) == 0x80;
		if (ok && len == 3) {
			ok = !(c[0] == 0xe0 && c[1] < 0xa0) && !(c[0] == 0xed && c[1] >= 0xa0);
		} else if (ok && len == 4) {
			ok = !(c[0] == 0xf0 && c[1] < 0x90) && !(c[0] == 0xf4 && c[1] >= 0x90);
		}
		if (ok) {
			sb_add(&b, c, len);
			c += len;
		} else {
			sb_adds(&b, "\xef\xbf\xbd");
			c++;
		}
	}
	j = json_stringn(b.buf ? b.buf : "", b.len);
	sb_release(&b);
	return j ? j : json_null();
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *jint(long v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

json_t *parse_result_json(const struct parse_result *r)
{
	json_t *o = json_object(), *pt = json_object(), *env = json_object(), *cols = json_object();
	json_t *rows = json_array(), *warn = json_array();

	json_object_set_new(o, "gate", json_string(gate_verdict_name(r->gate)));
	if (r->runpy_json)
		json_object_set_new(o, "source", json_string("run.py --json results"));
	json_object_set_new(o, "gate_scope", r->scope == SCOPE_UNKNOWN ? json_null()
								   : json_string(parse_scope_name(r->scope)));
	json_object_set_new(o, "gate_k", jtext(r->gate_k));
	json_object_set_new(o, "gate_test", jtext(r->gate_test));
	json_object_set_new(o, "complete", json_boolean(r->complete));
	json_object_set_new(pt, "passed", jint(r->pytest.passed));
	json_object_set_new(pt, "failed", jint(r->pytest.failed));
	json_object_set_new(pt, "errors", jint(r->pytest.errors));
	json_object_set_new(pt, "skipped", jint(r->pytest.skipped));
	json_object_set_new(pt, "deselected", jint(r->pytest.deselected));
	json_object_set_new(o, "pytest", pt);
	json_object_set_new(env, "device", jtext(r->env.device));
	json_object_set_new(env, "backend", jtext(r->env.backend));
	json_object_set_new(env, "pytorch", jtext(r->env.pytorch));
	json_object_set_new(env, "triton", jtext(r->env.triton));
	json_object_set_new(env, "branch", jtext(r->env.branch));
	json_object_set_new(env, "sha", jtext(r->env.sha));
	json_object_set_new(env, "raw", jtext(r->env.raw));
	json_object_set_new(o, "env", env);
	json_object_set_new(cols, "base", jtext(r->col_base));
	json_object_set_new(cols, "new", jtext(r->col_new));
	json_object_set_new(o, "columns", cols);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct parse_row *w = &r->rows[i];
		json_t *row = json_object();
		json_object_set_new(row, "mode", jtext(w->mode));
		json_object_set_new(row, "B", jint(w->B));
		json_object_set_new(row, "T", jint(w->T));
		json_object_set_new(row, "H", jint(w->H));
		json_object_set_new(row, "D", jint(w->D));
		if (r->has_L)
			json_object_set_new(row, "L", jint(w->L));
		json_object_set_new(row, "op", jtext(w->op));
		json_object_set_new(row, "base_ms", jnum(w->base_ms));
		json_object_set_new(row, "new_ms", jnum(w->new_ms));
		json_object_set_new(row, "speedup", jnum(w->speedup));
		json_array_append_new(rows, row);
	}
	json_object_set_new(o, "rows", rows);
	for (size_t i = 0; i < r->nwarnings; i++)
		json_array_append_new(warn, jtext(r->warnings[i]));
	json_object_set_new(o, "warnings", warn);
	json_object_set_new(o, "progress", r->progress >= 0 ? json_integer(r->progress) : json_null());
	json_object_set_new(o, "cases", json_pack("{s:i, s:i, s:i}", "passed", r->cases_passed,
						  "failed", r->cases_failed, "skipped",
						  r->cases_skipped));
	json_object_set_new(o, "traceback", json_boolean(r->traceback));
	json_object_set_new(o, "exception", jtext(r->exception));
	json_object_set_new(o, "exit_status", json_integer(r->exit_status));
	json_object_set_new(o, "killed", json_boolean(r->killed));
	json_object_set_new(o, "truncated", json_boolean(r->truncated));
	json_object_set_new(o, "lines", json_integer((json_int_t)r->lines));
	json_object_set_new(o, "rows_dropped", json_integer((json_int_t)r->rows_dropped));
	json_object_set_new(o, "markers",
			    json_pack("{s:b, s:b, s:b, s:b}", "gate_passed", r->gate_line_pass,
				      "gate_failed", r->gate_line_fail, "gate_not_found",
				      r->gate_not_found, "no_gate", r->no_gate));
	return o;
}

static char *jget_str(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? xstrndup(json_string_value(v), json_string_length(v)) : NULL;
}

static long jget_long(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

static double jget_num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static bool jget_bool(const json_t *o, const char *k)
{
	return json_is_true(json_object_get(o, k));
}

int parse_result_from_json(const json_t *j, struct parse_result *out, struct err *e)
{
	const json_t *pt, *env, *cols, *rows, *warn, *cases, *mk;
	const char *gate;
	int g;

	parse_result_init(out);
	if (!json_is_object(j) || !json_is_string(json_object_get(j, "gate")))
		return err_set(e, ERR_USAGE, "not a parse result: expected an object with a 'gate' "
					     "string (from parse_result_json)");
	gate = json_string_value(json_object_get(j, "gate"));
	for (g = GATE_NONE; g <= GATE_UNVERIFIED; g++)
		if (!strcmp(gate_verdict_name((enum gate_verdict)g), gate))
			break;
	if (g > GATE_UNVERIFIED)
		return err_set(e, ERR_USAGE,
			       "not a parse result: gate '%s' is not one of pass, fail, error, "
			       "incomplete, unverified, none",
			       gate);
	out->gate = (enum gate_verdict)g;
	{
		const json_t *sc = json_object_get(j, "gate_scope");
		const char *s = json_is_string(sc) ? json_string_value(sc) : "";
		out->scope = !strcmp(s, "full") ? SCOPE_FULL : !strcmp(s, "subset") ? SCOPE_SUBSET : SCOPE_UNKNOWN;
	}
	out->gate_k = jget_str(j, "gate_k");
	out->gate_test = jget_str(j, "gate_test");
	out->complete = jget_bool(j, "complete");
	pt = json_object_get(j, "pytest");
	out->pytest.passed = (int)jget_long(pt, "passed");
	out->pytest.failed = (int)jget_long(pt, "failed");
	out->pytest.errors = (int)jget_long(pt, "errors");
	out->pytest.skipped = (int)jget_long(pt, "skipped");
	out->pytest.deselected = (int)jget_long(pt, "deselected");
	env = json_object_get(j, "env");
	out->env.device = jget_str(env, "device");
	out->env.backend = jget_str(env, "backend");
	out->env.pytorch = jget_str(env, "pytorch");
	out->env.triton = jget_str(env, "triton");
	out->env.branch = jget_str(env, "branch");
	out->env.sha = jget_str(env, "sha");
	out->env.raw = jget_str(env, "raw");
	cols = json_object_get(j, "columns");
	out->col_base = jget_str(cols, "base");
	out->col_new = jget_str(cols, "new");
	rows = json_object_get(j, "rows");
	if (json_is_array(rows) && json_array_size(rows)) {
		size_t n = json_array_size(rows);
		out->rows = xcalloc(n, sizeof(*out->rows));
		for (size_t i = 0; i < n; i++) {
			const json_t *w = json_array_get(rows, i);
			struct parse_row *row = &out->rows[out->nrows++];
			row->mode = jget_str(w, "mode");
			row->op = jget_str(w, "op");
			row->B = jget_long(w, "B");
			row->T = jget_long(w, "T");
			row->H = jget_long(w, "H");
			row->D = jget_long(w, "D");
			row->L = jget_long(w, "L");
			if (json_object_get(w, "L"))
				out->has_L = true;
			row->base_ms = jget_num(w, "base_ms");
			row->new_ms = jget_num(w, "new_ms");
			row->speedup = jget_num(w, "speedup");
		}
	}
	warn = json_object_get(j, "warnings");
	if (json_is_array(warn) && json_array_size(warn)) {
		size_t n = json_array_size(warn);
		out->warnings = xcalloc(n, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			const json_t *w = json_array_get(warn, i);
			if (json_is_string(w))
				out->warnings[out->nwarnings++] = xstrdup(json_string_value(w));
		}
	}
	out->progress = json_is_integer(json_object_get(j, "progress"))
				? (int)json_integer_value(json_object_get(j, "progress"))
				: -1;
	cases = json_object_get(j, "cases");
	out->cases_passed = (int)(jget_long(cases, "passed") > 0 ? jget_long(cases, "passed") : 0);
	out->cases_failed = (int)(jget_long(cases, "failed") > 0 ? jget_long(cases, "failed") : 0);
	out->cases_skipped = (int)(jget_long(cases, "skipped") > 0 ? jget_long(cases, "skipped") : 0);
	out->traceback = jget_bool(j, "traceback");
	out->exception = jget_str(j, "exception");
	out->exit_status = json_is_integer(json_object_get(j, "exit_status"))
				   ? (int)json_integer_value(json_object_get(j, "exit_status"))
				   : -1;
	out->killed = jget_bool(j, "killed");
	out->truncated = jget_bool(j, "truncated");
	out->lines = jget_long(j, "lines") > 0 ? (size_t)jget_long(j, "lines") : 0;
	out->rows_dropped = jget_long(j, "rows_dropped") > 0 ? (size_t)jget_long(j, "rows_dropped") : 0;
	mk = json_object_get(j, "markers");
	out->gate_line_pass = jget_bool(mk, "gate_passed");
	out->gate_line_fail = jget_bool(mk, "gate_failed");
	out->gate_not_found = jget_bool(mk, "gate_not_found");
	out->no_gate = jget_bool(mk, "no_gate");
	return 0;
}

double parse_bench_ms(const struct parse_result *r)
{
	double s = 0;
	int k = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		double v = isfinite(r->rows[i].new_ms) ? r->rows[i].new_ms : r->rows[i].base_ms;
		if (isfinite(v) && v > 0) {
			s += log(v);
			k++;
		}
	}
	return k ? exp(s / k) : NAN;
}
