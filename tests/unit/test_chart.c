/* Unit tests for the chart series: which rows are points and which are
 * marks, the best so far from the one best rule, one shape's times, and the
 * Mermaid xychart block checked against Mermaid's own grammar (its lexer's
 * number and string tokens, every series as long as the x axis). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/chart.h"
#include "core/sb.h"
#include "core/rules.h"

#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

static struct log_row R(int iter, enum row_status st, enum gate_verdict g, double ms)
{
	return (struct log_row){.iter = iter, .status = st, .gate_v = g, .bench_ms = ms,
				.vs_best = NAN};
}

/* 0 base, 1 drop (faster, but dropped), 2 failed gate, 3 keep, 4 revert,
 * 5 keep slower than 3 (a keep is the best even when slower). */
static size_t sample_rows(struct log_row *r)
{
	r[0] = R(0, RS_BASE, GATE_PASS, 1.0);
	r[1] = R(1, RS_DROP, GATE_PASS, 0.9);
	r[2] = R(2, RS_DROP, GATE_FAIL, NAN);
	r[3] = R(3, RS_KEEP, GATE_PASS, 0.8);
	r[4] = R(4, RS_REVERT, GATE_PASS, 0.85);
	r[5] = R(5, RS_KEEP, GATE_PASS, 0.82);
	return 6;
}

static void only_rows_that_may_be_the_best_are_points(void **state)
{
	struct log_row rows[8];
	struct chart c;
	size_t n = sample_rows(rows);
	chart_build(rows, n, NULL, &c);
	assert_int_equal(c.n, n);
	enum chart_kind want[] = {CHART_BASE, CHART_DROPPED, CHART_FAILED,
				  CHART_KEEP, CHART_DROPPED, CHART_KEEP};
	bool point[] = {true, false, false, true, false, true};
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c.v[i].iter, rows[i].iter);
		assert_int_equal(c.v[i].kind, want[i]);
		assert_int_equal(c.v[i].point, point[i]);
	}
	assert_true(isnan(c.v[2].ms));
	chart_release(&c);
}

static void the_best_so_far_is_the_baseline_or_the_last_keep(void **state)
{
	struct log_row rows[8];
	struct chart c;
	size_t n = sample_rows(rows);
	chart_build(rows, n, NULL, &c);
	/* not the fastest time seen: the dropped 0.9 and the kept 0.8 before
	 * the slower keep do not stay the best */
	double want[] = {1.0, 1.0, 1.0, 0.8, 0.8, 0.82};
	for (size_t i = 0; i < n; i++) {
		assert_true(fabs(c.v[i].best_ms - want[i]) < 1e-12);
		assert_true(fabs(c.v[i].best_ms - log_rows_best(rows, i + 1)->bench_ms) < 1e-12);
	}
	assert_true(c.has_best);
	assert_int_equal(c.best_iter, 5);
	assert_true(fabs(c.best_ms - 0.82) < 1e-12);
	assert_true(isnan(c.band_lo) && isnan(c.band_hi));
	chart_release(&c);
}

static void a_failed_gate_is_a_mark_even_with_a_keep_status(void **state)
{
	struct log_row rows[2] = {R(0, RS_BASE, GATE_PASS, 1.0), R(1, RS_KEEP, GATE_INCOMPLETE, 0.5)};
	struct chart c;
	chart_build(rows, 2, NULL, &c);
	assert_int_equal(c.v[1].kind, CHART_FAILED);
	assert_false(c.v[1].point);
	assert_int_equal(c.best_iter, 0);
	chart_release(&c);
}

static void a_shape_charts_its_own_times_and_the_best_rows_time(void **state)
{
	struct log_row rows[8];
	struct chart c;
	size_t n = sample_rows(rows);
	/* iteration 3 did not measure this shape */
	double ms[] = {2.0, 1.8, NAN, NAN, 1.7, 1.6};
	chart_build(rows, n, ms, &c);
	assert_true(c.v[0].point);
	assert_false(c.v[3].point); /* a keep without the shape's number is a mark */
	assert_int_equal(c.v[3].kind, CHART_KEEP);
	assert_true(isnan(c.v[3].best_ms)); /* the best row (3) has no time here */
	assert_true(fabs(c.v[5].best_ms - 1.6) < 1e-12);
	assert_true(fabs(c.best_ms - 1.6) < 1e-12);
	chart_release(&c);
}

static void an_empty_log_has_no_items_and_no_best(void **state)
{
	struct chart c;
	chart_build(NULL, 0, NULL, &c);
	assert_int_equal(c.n, 0);
	assert_false(c.has_best);
	struct sb md = SB_INIT;
	sb_init(&md);
	chart_mermaid(&c, "op", &md);
	assert_null(strstr(md.buf, "```mermaid"));
	assert_non_null(strstr(md.buf, "No iteration has a bench number"));
	sb_release(&md);
	chart_release(&c);
}

/* ---- the Mermaid block against Mermaid's xychart grammar ---- */

static bool matches(const char *re, const char *s)
{
	regex_t r;
	assert_int_equal(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
	bool ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

/* NUMBER_WITH_DECIMAL of xychart.jison: [+-]?(?:\d+(?:\.\d+)?|\.\d+) */
#define NUM "[+-]?([0-9]+(\\.[0-9]+)?|\\.[0-9]+)"

/* The items of "[a, b, c]" after prefix; each must match item_re. */
static size_t list_items(const char *line, const char *prefix, const char *item_re, double *vals)
{
	size_t n = 0;
	assert_int_equal(strncmp(line, prefix, strlen(prefix)), 0);
	const char *p = line + strlen(prefix);
	assert_int_equal(*p, '[');
	p++;
	char *end = strchr(p, ']');
	assert_non_null(end);
	assert_string_equal(end, "]");
	char *body = strndup(p, (size_t)(end - p));
	for (char *save = NULL, *t = strtok_r(body, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		assert_true(matches(item_re, t));
		if (vals)
			vals[n] = strtod(t[0] == '"' ? t + 1 : t, NULL);
		n++;
	}
	free(body);
	return n;
}

struct block {
	size_t ncat, nbar, nline;
	double cat[CHART_MERMAID_BARS], bar[CHART_MERMAID_BARS], line[CHART_MERMAID_BARS], lo, hi;
	int last[CHART_MERMAID_BARS]; /* a bar's last iteration: its label's second number */
	char title[128];
};

/* Read the fenced block line by line as Mermaid's grammar has it. */
static void read_block(const char *md, struct block *b)
{
	memset(b, 0, sizeof(*b));
	const char *start = strstr(md, "```mermaid\n");
	assert_non_null(start);
	char *text = strdup(start + strlen("```mermaid\n"));
	char *close = strstr(text, "\n```\n");
	assert_non_null(close);
	*close = '\0';
	int k = 0;
	for (char *save = NULL, *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save), k++) {
		if (k == 0) {
			assert_string_equal(ln, "xychart-beta");
			continue;
		}
		assert_int_equal(strncmp(ln, "    ", 4), 0);
		ln += 4;
		if (!strncmp(ln, "title ", 6)) {
			assert_true(matches("^title \"[^\"]*\"$", ln));
			snprintf(b->title, sizeof(b->title), "%s", ln + 6);
		} else if (!strncmp(ln, "x-axis ", 7)) {
			b->ncat = list_items(ln, "x-axis \"iteration\" ", "^\"[0-9]+(-[0-9]+)?\"$",
					     b->cat);
			const char *p = strchr(ln, '[');
			for (size_t i = 0; i < b->ncat; i++) {
				p = strchr(p, '"') + 1;
				char *end;
				long first = strtol(p, &end, 10);
				b->last[i] = (int)(*end == '-' ? strtol(end + 1, &end, 10) : first);
				p = strchr(end, '"') + 1;
			}
		} else if (!strncmp(ln, "y-axis ", 7)) {
			assert_true(matches("^y-axis \"ms\" " NUM " --> " NUM "$", ln));
			assert_int_equal(sscanf(ln, "y-axis \"ms\" %lf --> %lf", &b->lo, &b->hi), 2);
		} else if (!strncmp(ln, "bar ", 4)) {
			b->nbar = list_items(ln, "bar ", "^" NUM "$", b->bar);
		} else if (!strncmp(ln, "line ", 5)) {
			b->nline = list_items(ln, "line ", "^" NUM "$", b->line);
		} else {
			fail_msg("a line Mermaid's xychart does not know: %s", ln);
		}
	}
	free(text);
}

static void the_mermaid_block_has_one_value_per_iteration_with_a_number(void **state)
{
	struct log_row rows[8];
	struct chart c;
	struct block b;
	size_t n = sample_rows(rows);
	chart_build(rows, n, NULL, &c);
	c.band_lo = 0.8, c.band_hi = 0.84;
	struct sb md = SB_INIT;
	sb_init(&md);
	chart_mermaid(&c, "chunk \"la\"", &md);
	read_block(md.buf, &b);
	assert_string_equal(b.title, "\"chunk la: bench per iteration\"");
	assert_int_equal(b.ncat, 5); /* iteration 2 has no number */
	assert_int_equal(b.nbar, b.ncat);
	assert_int_equal(b.nline, b.ncat);
	double cat[] = {0, 1, 3, 4, 5}, bar[] = {1.0, 0.9, 0.8, 0.85, 0.82},
	       line[] = {1.0, 1.0, 0.8, 0.8, 0.82};
	for (size_t i = 0; i < b.ncat; i++) {
		assert_true(cat[i] == b.cat[i]);
		assert_true(fabs(bar[i] - b.bar[i]) < 1e-9);
		assert_true(fabs(line[i] - b.line[i]) < 1e-9);
		assert_true(b.lo <= b.bar[i] && b.bar[i] <= b.hi);
	}
	assert_true(b.lo < 0.8 && b.hi > 1.0);
	assert_non_null(strstr(md.buf, "Left out, no bench number: iteration 2 (failed)"));
	assert_non_null(strstr(md.buf, "line: the best so far"));
	assert_non_null(strstr(md.buf, "best 0.82 ms at iteration 5, noise ±2.4 %"));
	sb_release(&md);
	chart_release(&c);
}

static void numbers_never_take_an_exponent(void **state)
{
	struct log_row rows[2] = {R(0, RS_BASE, GATE_PASS, 0.000012345), R(1, RS_KEEP, GATE_PASS, 0.00001)};
	struct chart c;
	struct block b;
	struct sb md = SB_INIT;
	sb_init(&md);
	chart_build(rows, 2, NULL, &c);
	chart_mermaid(&c, NULL, &md);
	read_block(md.buf, &b); /* the grammar's number token, checked item by item */
	assert_true(fabs(b.bar[0] - 0.000012345) / 0.000012345 < 1e-3);
	assert_true(b.lo < b.hi);
	sb_release(&md);
	chart_release(&c);

	rows[0].bench_ms = 12345.678, rows[1].bench_ms = 12345.678;
	sb_init(&md);
	chart_build(rows, 2, NULL, &c);
	chart_mermaid(&c, NULL, &md);
	read_block(md.buf, &b);
	assert_true(fabs(b.bar[0] - 12345.678) < 1);
	assert_true(b.lo < 12345 && b.hi > 12346); /* equal values still get an axis */
	sb_release(&md);
	chart_release(&c);
}

static void no_best_line_where_the_best_has_no_time(void **state)
{
	struct log_row rows[8];
	struct chart c;
	struct block b;
	size_t n = sample_rows(rows);
	double ms[] = {2.0, 1.8, NAN, NAN, 1.7, 1.6};
	chart_build(rows, n, ms, &c);
	struct sb md = SB_INIT;
	sb_init(&md);
	chart_mermaid(&c, NULL, &md);
	read_block(md.buf, &b);
	assert_int_equal(b.ncat, 4);
	assert_int_equal(b.nbar, 4);
	assert_int_equal(b.nline, 0); /* a gap in a line Mermaid cannot draw */
	assert_null(strstr(md.buf, "line: the best so far"));
	sb_release(&md);
	chart_release(&c);
}

/* 1,000 iterations, a failed gate every 10th: 901 with a number, past
 * the 200 bars Mermaid is given, so 5 to a bar, each the fastest of its
 * five, the line the best after the bar's last, the left-out list cut. */
static void a_long_history_is_binned(void **state)
{
	enum { N = 1000 };
	struct log_row *rows = calloc(N, sizeof(*rows));
	for (int i = 0; i < N; i++) {
		double ms = 10.0 - i * 0.001 + (i % 7) * 0.01;
		if (i == 0)
			rows[i] = R(0, RS_BASE, GATE_PASS, ms);
		else if (i % 10 == 0)
			rows[i] = R(i, RS_DROP, GATE_FAIL, NAN);
		else
			rows[i] = R(i, i % 100 == 1 ? RS_KEEP : RS_DROP, GATE_PASS, ms);
	}
	struct chart c;
	struct block b;
	struct sb md = SB_INIT;
	sb_init(&md);
	chart_build(rows, N, NULL, &c);
	chart_mermaid(&c, NULL, &md);
	read_block(md.buf, &b);
	assert_int_equal(b.ncat, 181); /* 901 / 5, the last bar of one */
	assert_int_equal(b.nbar, b.ncat);
	assert_int_equal(b.nline, b.ncat);
	/* each bar against the rows it stands for */
	size_t i = 0;
	for (size_t k = 0; k < b.ncat; k++) {
		while (!isfinite(c.v[i].ms))
			i++;
		assert_int_equal((int)b.cat[k], c.v[i].iter);
		double fastest = INFINITY, best = NAN;
		int in = 0, last = -1;
		for (; i < c.n && in < 5; i++) {
			if (!isfinite(c.v[i].ms))
				continue;
			fastest = fmin(fastest, c.v[i].ms);
			best = c.v[i].best_ms;
			last = c.v[i].iter;
			in++;
		}
		assert_int_equal(b.last[k], last);
		assert_true(fabs(b.bar[k] - fastest) < 1e-3);
		assert_true(fabs(b.line[k] - best) < 1e-3);
	}
	assert_non_null(strstr(md.buf, "of the 901 iterations with a number, 5 to a bar"));
	assert_non_null(strstr(md.buf, "Left out, no bench number: iteration 10 (failed)"));
	assert_non_null(strstr(md.buf, "200 (failed), and 79 more (OPT_LOG.md lists each)."));
	assert_null(strstr(md.buf, "210 (failed)"));
	sb_release(&md);
	chart_release(&c);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(only_rows_that_may_be_the_best_are_points),
		cmocka_unit_test(the_best_so_far_is_the_baseline_or_the_last_keep),
		cmocka_unit_test(a_failed_gate_is_a_mark_even_with_a_keep_status),
		cmocka_unit_test(a_shape_charts_its_own_times_and_the_best_rows_time),
		cmocka_unit_test(an_empty_log_has_no_items_and_no_best),
		cmocka_unit_test(the_mermaid_block_has_one_value_per_iteration_with_a_number),
		cmocka_unit_test(numbers_never_take_an_exponent),
		cmocka_unit_test(no_best_line_where_the_best_has_no_time),
		cmocka_unit_test(a_long_history_is_binned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
