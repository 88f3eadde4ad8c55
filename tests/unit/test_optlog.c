/* Unit tests for optlog: rendering OPT_LOG.md and reading it back,
 * hand-written logs included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/optlog.h"
#include "core/sb.h"
#include "core/rules.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct log_row mkrow(int iter, const char *dir, enum gate_verdict g, enum gate_scope s,
			    double bench, double vs, enum row_status st)
{
	struct log_row r = {.iter = iter,
			    .direction = xstrdup(dir),
			    .gate_v = g,
			    .scope = s,
			    .bench_ms = bench,
			    .vs_best = vs,
			    .status = st};
	return r;
}

static void sample_doc(struct optlog_doc *d)
{
	struct log_row r;

	memset(d, 0, sizeof(*d));
	d->op = xstrdup("chunk_gla");
	d->env = xstrdup("NVIDIA H200 | CUDA 12.4 | PyTorch 2.5.1 | Triton 3.1.0 | opt-a[1a2b3c4]");
	d->baseline = xstrdup("0.973 ms (main[ce250a9])");
	d->target = xstrdup("1.3x geomean over 4 shapes");
	r = mkrow(0, "baseline", GATE_PASS, SCOPE_FULL, 0.973, NAN, RS_BASE);
	optlog_doc_add_row(d, &r);
	r = mkrow(1, "tile BT=64 | fuse gate", GATE_PASS, SCOPE_FULL, 0.8567, 0.1195, RS_KEEP);
	r.vs_confirm = true; /* its confirm sized it: marked */
	optlog_doc_add_row(d, &r);
	r = mkrow(2, "drop the `a|b` mask\nand recompute", GATE_FAIL, SCOPE_SUBSET, NAN, NAN, RS_REVERT);
	optlog_doc_add_row(d, &r);
	r = mkrow(3, "back\\slash \\| pipe", GATE_PASS, SCOPE_FULL, 0.89, -0.0389, RS_DROP);
	optlog_doc_add_row(d, &r);
}

static const char sample_text[] =
	"# Optimization log \xe2\x80\x94 chunk_gla\n"
	"\n"
	"Env: NVIDIA H200 | CUDA 12.4 | PyTorch 2.5.1 | Triton 3.1.0 | opt-a[1a2b3c4]\n"
	"Baseline (main): 0.973 ms (main[ce250a9])\n"
	"Target: 1.3x geomean over 4 shapes\n"
	"\n"
	"## Summary\n"
	"\n"
	"Bench (median ms) is the geomean, over the shapes, of each shape's median time in the iteration's own verify run (the column keeps the name FLA's log template gives it). vs best is the time saved against the best (the baseline or the last keep, the one `optloop status` shows; a keep marked (full gate failed) passed a subset gate only and a full gate failed its kernel since: it is not the best): by the verify's verdict, which weighs every run of the best kernel, so it need not match the two Bench cells to the digit; marked (confirm) when the iteration's confirm sized it (best and candidate interleaved in one session, the figure every report uses).\n"
	"\n"
	"| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |\n"
	"|---|---|---|---|---|---|\n"
	"| 0 | baseline | pass | 0.973 | \xe2\x80\x94 | base |\n"
	"| 1 | tile BT=64 \\| fuse gate | pass | 0.857 | +12% (confirm) | keep |\n"
	"| 2 | drop the `a\\|b` mask<br>and recompute | FAIL (-k) | \xe2\x80\x94 | \xe2\x80\x94 | revert |\n"
	"| 3 | back\\slash \\\\\\| pipe | pass | 0.890 | -3.9% | drop |\n";


static void render_writes_the_template_shape_exactly(void **state)
{
	struct optlog_doc d;
	struct sb out = SB_INIT;

	sample_doc(&d);
	optlog_render(&d, &out);
	assert_string_equal(out.buf, sample_text);
	sb_release(&out);
	optlog_doc_release(&d);
}

/* The start-up check: only the exact text optlog_render writes is "same". */
static void render_same_accepts_only_the_exact_text(void **state)
{
	struct optlog_doc d;
	char text[sizeof(sample_text) + 8];
	size_t len = strlen(sample_text);

	sample_doc(&d);
	memcpy(text, sample_text, len + 1);
	assert_true(optlog_render_same(&d, text, len));
	/* one byte changed, in the header and in the last row */
	text[2] = 'o';
	assert_false(optlog_render_same(&d, text, len));
	text[2] = sample_text[2];
	text[len - 3] = 'x';
	assert_false(optlog_render_same(&d, text, len));
	text[len - 3] = sample_text[len - 3];
	/* cut short (in the header, mid-row, a whole row), or one byte more */
	assert_false(optlog_render_same(&d, text, 20));
	assert_false(optlog_render_same(&d, text, len - 1));
	assert_false(optlog_render_same(&d, text, len - strlen(strstr(sample_text, "| 3 |"))));
	text[len] = '\n';
	assert_false(optlog_render_same(&d, text, len + 1));
	/* a row fewer in the database than in the file */
	d.nrows--;
	assert_false(optlog_render_same(&d, sample_text, len));
	d.nrows++;
	optlog_doc_release(&d);
}

static void render_of_an_empty_log_matches_the_asset_template(void **state)
{
	struct optlog_doc d = {.op = "OP", .env = "ENV", .baseline = "BASE", .target = "TGT"};
	struct sb out = SB_INIT, tpl = SB_INIT, want = SB_INIT;
	struct err e = {0};
	const char *root = getenv("OPTLOOP_ROOT");
	char *path = fsutil_join(root ? root : ".", "assets/templates/OPT_LOG.md");

	assert_int_equal(fsutil_read_file(path, &tpl, &e), 0);
	/* Substitute the placeholders. */
	static const char *const ph[][2] = {
		{"{{op}}", "OP"}, {"{{env}}", "ENV"}, {"{{baseline}}", "BASE"}, {"{{target}}", "TGT"}};
	const char *p = tpl.buf;
	while (*p) {
		size_t i;
		for (i = 0; i < 4; i++)
			if (!strncmp(p, ph[i][0], strlen(ph[i][0])))
				break;
		if (i < 4) {
			sb_adds(&want, ph[i][1]);
			p += strlen(ph[i][0]);
		} else {
			sb_addc(&want, *p++);
		}
	}
	optlog_render(&d, &out);
	assert_string_equal(out.buf, want.buf);
	sb_release(&out);
	sb_release(&tpl);
	sb_release(&want);
	free(path);
}

static void render_then_parse_gives_the_same_rows(void **state)
{
	struct optlog_doc d, back;
	struct problems probs = {0};
	struct sb out = SB_INIT, again = SB_INIT;
	struct err e = {0};

	sample_doc(&d);
	optlog_render(&d, &out);
	assert_int_equal(optlog_parse(out.buf, out.len, &back, &probs, &e), 0);
	assert_int_equal(probs.n, 0);
	assert_string_equal(back.op, "chunk_gla");
	assert_string_equal(back.env, d.env);
	assert_string_equal(back.baseline, d.baseline);
	assert_string_equal(back.target, d.target);
	assert_int_equal(back.nrows, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(back.rows[i].iter, d.rows[i].iter);
		assert_string_equal(back.rows[i].direction, d.rows[i].direction);
		assert_int_equal(back.rows[i].gate_v, d.rows[i].gate_v);
		assert_int_equal(back.rows[i].scope, d.rows[i].scope);
		assert_int_equal(back.rows[i].status, d.rows[i].status);
		assert_int_equal(back.rows[i].lineno, 13 + (int)i);
		/* the confirm's mark is read back: the row says where vs best came from */
		assert_int_equal(back.rows[i].vs_confirm, d.rows[i].vs_confirm);
	}
	assert_true(back.rows[1].vs_confirm);
	assert_true(isnan(back.rows[2].bench_ms));
	assert_float_equal(back.rows[1].bench_ms, 0.857, 1e-12);
	assert_float_equal(back.rows[1].vs_best, 0.12, 1e-12);
	assert_float_equal(back.rows[3].vs_best, -0.039, 1e-12);
	/* And rendering what was read gives the same bytes. */
	optlog_render(&back, &again);
	assert_string_equal(again.buf, out.buf);
	sb_release(&out);
	sb_release(&again);
	optlog_doc_release(&d);
	optlog_doc_release(&back);
	problems_release(&probs);
}

static void escaping_round_trips_awkward_directions(void **state)
{
	static const char *const dirs[] = {
		"a|b", "a\\|b", "a\\\\|b", "ends with \\", "\\", "|", "||", "x\\\\y",
		"two\nlines", "crlf\r\nline", "lone\rcr", "tab\there", "`code | span` and \\`tick", "<b>html</b>",
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct optlog_doc d = {0}, back;
		struct problems probs = {0};
		struct sb out = SB_INIT;
		struct log_row r = mkrow(1, dirs[i], GATE_PASS, SCOPE_FULL, 1.0, NAN, RS_KEEP);

		optlog_doc_add_row(&d, &r);
		optlog_render(&d, &out);
		assert_int_equal(optlog_parse(out.buf, out.len, &back, &probs, NULL), 0);
		assert_int_equal(probs.n, 0);
		assert_int_equal(back.nrows, 1);
		if (strstr(dirs[i], "\r\n"))
			assert_string_equal(back.rows[0].direction, "crlf\nline");
		else if (strchr(dirs[i], '\r')) /* a lone CR is a line break both ways */
			assert_string_equal(back.rows[0].direction, "lone\ncr");
		else
			assert_string_equal(back.rows[0].direction, dirs[i]);
		sb_release(&out);
		optlog_doc_release(&d);
		optlog_doc_release(&back);
	}
}

static void cell_formats(void **state)
{
	struct sb s = SB_INIT;
	static const struct {
		double v;
		const char *want;
	} bench[] = {{0.973, "0.973"}, {12.3456, "12.346"}, {0.0123, "0.0123"}, {NAN, "\xe2\x80\x94"},
		     {-1, "\xe2\x80\x94"}, {1500, "1500.000"}, {0.1, "0.100"}};
	static const struct {
		double v;
		const char *want;
	} vs[] = {{0.12, "+12%"},  {-0.04, "-4%"},  {0.026, "+2.6%"}, {-0.0389, "-3.9%"},
		  {0.0, "0%"},     {-0.0004, "0%"}, {0.1234, "+12%"}, {NAN, "\xe2\x80\x94"},
		  {0.0999, "+10%"}, {-2.5, "-250%"}};

	for (size_t i = 0; i < sizeof(bench) / sizeof(bench[0]); i++) {
		sb_reset(&s);
		optlog_fmt_bench(bench[i].v, &s);
		assert_string_equal(s.buf, bench[i].want);
	}
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		sb_reset(&s);
		optlog_fmt_vs_best(vs[i].v, &s);
		assert_string_equal(s.buf, vs[i].want);
	}
	sb_reset(&s);
	optlog_fmt_gate(GATE_PASS, SCOPE_SUBSET, &s);
	assert_string_equal(s.buf, "pass (-k)");
	sb_reset(&s);
	optlog_fmt_gate(GATE_FAIL, SCOPE_FULL, &s);
	assert_string_equal(s.buf, "FAIL");
	sb_reset(&s);
	optlog_fmt_gate(GATE_INCOMPLETE, SCOPE_UNKNOWN, &s);
	assert_string_equal(s.buf, "incomplete");
	sb_reset(&s);
	optlog_fmt_gate(GATE_NONE, SCOPE_UNKNOWN, &s);
	assert_string_equal(s.buf, "\xe2\x80\x94");
	sb_release(&s);
}

static void numbers_ignore_the_locale(void **state)
{
	struct sb s = SB_INIT;
	double v;

	if (!setlocale(LC_NUMERIC, "de_DE.UTF-8") && !setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
		/* No comma-decimal locale installed: check the C locale only. */
		setlocale(LC_NUMERIC, "C");
	}
	optlog_fmt_bench(0.973, &s);
	assert_string_equal(s.buf, "0.973");
	sb_reset(&s);
	optlog_fmt_vs_best(0.026, &s);
	assert_string_equal(s.buf, "+2.6%");
	assert_int_equal(optlog_parse_bench("0.973", &v), 0);
	assert_float_equal(v, 0.973, 0);
	setlocale(LC_NUMERIC, "C");
	sb_release(&s);
}

static void vs_best_is_computed_against_the_one_best(void **state)
{
	/* the best is the baseline or the last keep whose gate passed: a
	 * reverted row never becomes it, a keep with a failed gate neither */
	struct log_row r[6] = {
		{.iter = 0, .bench_ms = 1.0, .status = RS_BASE},
		{.iter = 1, .bench_ms = 0.9, .status = RS_KEEP},
		{.iter = 2, .bench_ms = 0.8, .status = RS_REVERT},
		{.iter = 3, .bench_ms = NAN, .status = RS_DROP},
		{.iter = 4, .bench_ms = 0.7, .status = RS_KEEP, .gate_v = GATE_FAIL},
		{.iter = 5, .bench_ms = 0.99, .status = RS_KEEP},
	};
	optlog_compute_vs_best(r, 6);
	assert_true(isnan(r[0].vs_best));
	assert_float_equal(r[1].vs_best, 0.1, 1e-12);
	assert_float_equal(r[2].vs_best, (0.9 - 0.8) / 0.9, 1e-12); /* reverted: not the new best */
	assert_true(isnan(r[3].vs_best));
	assert_float_equal(r[4].vs_best, (0.9 - 0.7) / 0.9, 1e-12);
	assert_float_equal(r[5].vs_best, (0.9 - 0.99) / 0.9, 1e-12); /* the failed keep is not it */
	assert_float_equal(optlog_best_before(r, 5), 0.9, 0);
	/* the last keep is the best, also when an earlier one was faster */
	assert_float_equal(optlog_best_before(r, 6), 0.99, 0);
	assert_ptr_equal(log_rows_best(r, 6), &r[5]);
	assert_null(log_rows_best(r, 0));
	assert_true(isnan(optlog_best_before(r, 0)));
	assert_true(isnan(optlog_vs_best(0, 1)));
}

/* ---- the importer on hand-written logs ---- */

struct parsed {
	struct optlog_doc d;
	struct problems p;
	int rc;
};

static void parse_str(const char *text, struct parsed *out)
{
	struct err e = {0};
	memset(out, 0, sizeof(*out));
	out->rc = optlog_parse(text, strlen(text), &out->d, &out->p, &e);
}

static void parsed_release(struct parsed *x)
{
	optlog_doc_release(&x->d);
	problems_release(&x->p);
}

/* A problem on this line whose message contains needle. */
static bool has_problem(const struct parsed *x, int line, const char *needle)
{
	for (size_t i = 0; i < x->p.n; i++)
		if (x->p.v[i].lineno == line && strstr(x->p.v[i].msg, needle))
			return true;
	return false;
}

static void reordered_and_extra_columns_match_by_name(void **state)
{
	struct parsed x;
	parse_str("# Optimization log - chunk_gdn\n\n"
		  "## Summary\n\n"
		  "| Status | Bench (ms) | Notes | iteration | Commit | GATE | What changed | Axis | VS. BEST |\n"
		  "|:--|--:|---|---|---|:-:|---|---|---|\n"
		  "| KEEP | 0.91 ms | fast | 1 | abc1234 | Passed | fuse loads | memory | +5% |\n"
		  "| Base | 0.96 | | 0 | | pass | baseline | | — |\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_string_equal(x.d.op, "chunk_gdn");
	assert_int_equal(x.d.nrows, 2);
	assert_int_equal(x.d.rows[0].iter, 1);
	assert_int_equal(x.d.rows[0].status, RS_KEEP);
	assert_float_equal(x.d.rows[0].bench_ms, 0.91, 1e-12);
	assert_float_equal(x.d.rows[0].vs_best, 0.05, 1e-12);
	assert_int_equal(x.d.rows[0].gate_v, GATE_PASS);
	assert_string_equal(x.d.rows[0].direction, "fuse loads");
	assert_string_equal(x.d.rows[0].commit, "abc1234");
	assert_string_equal(x.d.rows[0].axis, "memory");
	assert_int_equal(x.d.rows[1].status, RS_BASE);
	assert_null(x.d.rows[1].commit);
	/* The Notes column is kept with its row, not dropped. */
	assert_string_equal(x.d.rows[0].notes, "fast");
	assert_null(x.d.rows[1].notes);
	assert_int_equal(x.p.n, 0);
	parsed_release(&x);
}

static void missing_vs_best_column_is_computed(void **state)
{
	struct parsed x;
	parse_str("## Summary\n"
		  "| Iter | Direction | Gate | Bench (median ms) | Status |\n"
		  "|---|---|---|---|---|\n"
		  "| 0 | baseline | pass | 1.000 | base |\n"
		  "| 1 | a | pass | 0.800 | keep |\n"
		  "| 2 | b | pass | 0.900 | revert |\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.p.n, 0);
	assert_int_equal(x.d.nrows, 3);
	assert_true(isnan(x.d.rows[0].vs_best));
	assert_float_equal(x.d.rows[1].vs_best, 0.2, 1e-12);
	assert_float_equal(x.d.rows[2].vs_best, -0.125, 1e-12);
	parsed_release(&x);
}

static void dash_bench_and_case_insensitive_status(void **state)
{
	struct parsed x;
	parse_str("## Summary\n\n"
		  "| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 1 | x | FAIL | \xe2\x80\x94 | \xe2\x80\x94 | Revert |\n"
		  "| 2 | y | fail | - | - | DROP |\n"
		  "| 3 | z | error | n/a | | dropped |\n"
		  "| 4 | w | timed out | \xe2\x80\x93 | \xe2\x88\x92" "4% | **floor** |\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.p.n, 0);
	assert_int_equal(x.d.nrows, 4);
	for (int i = 0; i < 4; i++)
		assert_true(isnan(x.d.rows[i].bench_ms));
	assert_int_equal(x.d.rows[0].status, RS_REVERT);
	assert_int_equal(x.d.rows[1].status, RS_DROP);
	assert_int_equal(x.d.rows[2].status, RS_DROP);
	assert_int_equal(x.d.rows[3].status, RS_FLOOR);
	assert_int_equal(x.d.rows[0].gate_v, GATE_FAIL);
	assert_int_equal(x.d.rows[2].gate_v, GATE_ERROR);
	assert_int_equal(x.d.rows[3].gate_v, GATE_INCOMPLETE);
	assert_float_equal(x.d.rows[3].vs_best, -0.04, 1e-12);
	parsed_release(&x);
}

static void pipes_in_code_spans_and_escapes(void **state)
{
	struct parsed x;
	parse_str("## Summary\n\n"
		  "| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 1 | use `x | y` in the mask | pass | 1.0 | — | keep |\n"
		  "| 2 | escaped a \\| b | pass | 1.0 | — | keep |\n"
		  "| 3 | ``double `tick | pipe`` here | pass | 1.0 | — | keep |\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.p.n, 0);
	assert_int_equal(x.d.nrows, 3);
	assert_string_equal(x.d.rows[0].direction, "use `x | y` in the mask");
	assert_string_equal(x.d.rows[1].direction, "escaped a | b");
	assert_string_equal(x.d.rows[2].direction, "``double `tick | pipe`` here");
	parsed_release(&x);
}

static void stray_backtick_does_not_swallow_cells(void **state)
{
	struct parsed x;
	parse_str("## Summary\n\n"
		  "| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 1 | quote ` opens | pass | 1.0 | — | keep ` |\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.d.nrows, 1);
	assert_string_equal(x.d.rows[0].direction, "quote ` opens");
	assert_int_equal(x.d.rows[0].gate_v, GATE_PASS);
	parsed_release(&x);
}

static void unescaped_pipe_in_direction_is_recovered_and_reported(void **state)
{
	struct parsed x;
	parse_str("## Summary\n\n"
		  "| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 1 | split a|b tiles | pass | 1.0 | — | keep |\n",
		  &x);
	assert_int_equal(x.d.nrows, 1);
	assert_string_equal(x.d.rows[0].direction, "split a|b tiles");
	assert_int_equal(x.d.rows[0].gate_v, GATE_PASS);
	assert_float_equal(x.d.rows[0].bench_ms, 1.0, 0);
	assert_true(has_problem(&x, 5, "extra '|'"));
	parsed_release(&x);
	/* Found by fuzzing: an empty extra cell left a trailing space behind. */
	parse_str("| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 1 | a | b |  | pass | 1.0 | — | keep |\n",
		  &x);
	assert_int_equal(x.d.nrows, 1);
	assert_string_equal(x.d.rows[0].direction, "a | b |");
	parsed_release(&x);
	/* A NUL byte in a cell is replaced, never an early end of the text. */
	static const char nul[] = "| Iter | Direction |\n|---|---|\n| 1 | a\0b |\n";
	struct err e = {0};
	memset(&x, 0, sizeof(x));
	assert_int_equal(optlog_parse(nul, sizeof(nul) - 1, &x.d, &x.p, &e), 0);
	assert_string_equal(x.d.rows[0].direction, "a\xef\xbf\xbd" "b");
	parsed_release(&x);
}

static void crlf_line_ends(void **state)
{
	struct parsed x;
	parse_str("# Optimization log \xe2\x80\x94 op1\r\n\r\nEnv: gpu\r\n\r\n## Summary\r\n\r\n"
		  "| Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |\r\n"
		  "|---|---|---|---|---|---|\r\n"
		  "| 0 | baseline | pass | 0.973 | \xe2\x80\x94 | base |\r\n"
		  "| 1 | faster | pass | 0.900 | +7.5% | keep |\r\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.p.n, 0);
	assert_string_equal(x.d.op, "op1");
	assert_string_equal(x.d.env, "gpu");
	assert_int_equal(x.d.nrows, 2);
	assert_string_equal(x.d.rows[1].direction, "faster");
	assert_int_equal(x.d.rows[1].status, RS_KEEP);
	assert_int_equal(x.d.rows[1].lineno, 10);
	parsed_release(&x);
}

static void malformed_cells_are_reported_with_line_numbers(void **state)
{
	struct parsed x;
	parse_str("# Optimization log — op\n\n## Summary\n\n"
		  "| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 0 | base | pass | 1.0 | — | base |\n"   /* 7 */
		  "| one | x | pass | 1.0 | — | keep |\n"   /* 8: skipped */
		  "| 2 | x | maybe | fast | 12 pct | kept? |\n" /* 9 */
		  "| 3 | short |\n"                          /* 10 */
		  "| | | | | | |\n"                          /* 11 */
		  "| 2 | dup | pass | 1.0 | — | drop |\n",   /* 12 */
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.d.nrows, 4);
	assert_true(has_problem(&x, 8, "Iter cell 'one'"));
	assert_true(has_problem(&x, 9, "Gate cell 'maybe'"));
	assert_true(has_problem(&x, 9, "Bench cell 'fast'"));
	assert_true(has_problem(&x, 9, "vs best cell '12 pct'"));
	assert_true(has_problem(&x, 9, "Status cell 'kept?'") == false); /* "kept" is a keep */
	assert_int_equal(x.d.rows[1].status, RS_KEEP);
	assert_true(has_problem(&x, 10, "2 cells for 6 columns"));
	assert_true(has_problem(&x, 11, "empty table row"));
	assert_true(has_problem(&x, 12, "iteration 2 appears again (first on line 9)"));
	assert_int_equal(x.d.rows[2].iter, 3);
	assert_int_equal(x.d.rows[2].gate_v, GATE_NONE);
	assert_true(isnan(x.d.rows[2].bench_ms));
	parsed_release(&x);
}

static void unknown_status_word_is_reported(void **state)
{
	struct parsed x;
	parse_str("| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 0 | a | pass | 1 | — | shipped |\n"
		  "| 1 | b | pass | 1 | — | |\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.d.nrows, 2);
	assert_int_equal(x.d.rows[0].status, RS_NONE);
	assert_true(has_problem(&x, 3, "Status cell 'shipped'"));
	assert_true(has_problem(&x, 4, "Status cell ''"));
	parsed_release(&x);
}

static void no_table_at_all_is_an_error(void **state)
{
	struct parsed x;
	struct err e = {0};
	const char *t = "# Optimization log — op\n\nJust prose | with a pipe.\n\n## Summary\n\nnothing\n";

	memset(&x, 0, sizeof(x));
	assert_int_equal(optlog_parse(t, strlen(t), &x.d, &x.p, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "no summary table"));
	parsed_release(&x);
	parse_str("", &x);
	assert_int_equal(x.rc, ERR_FAIL);
	parsed_release(&x);
}

static void summary_table_is_chosen_over_other_tables(void **state)
{
	struct parsed x;
	parse_str("# Optimization log — op\n\n"
		  "## Shapes\n\n| B | T |\n|---|---|\n| 8 | 4096 |\n\n"
		  "```\n| Iter | Direction |\n|---|---|\n| 99 | inside a fence |\n```\n\n"
		  "## Summary\n\n"
		  "| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 0 | baseline | pass | 1 | — | base |\n"
		  "\n"
		  "Target: not a header line, it comes after the table but still counts\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.d.nrows, 1);
	assert_int_equal(x.d.rows[0].iter, 0);
	assert_int_equal(x.d.table_lineno, 17);
	parsed_release(&x);
}

static void a_stray_fence_does_not_hide_the_table(void **state)
{
	struct parsed x;
	parse_str("# Optimization log — op\n\n```python\nnot closed\n\n## Summary\n\n"
		  "| Iter | Direction | Gate | Bench | vs best | Status |\n"
		  "|---|---|---|---|---|---|\n"
		  "| 0 | baseline | pass | 1 | — | base |\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.d.nrows, 1);
	parsed_release(&x);
}

static void table_without_leading_pipes_and_header_variants(void **state)
{
	struct parsed x;
	parse_str("# Optimisation log: my_op\n"
		  "- **Env:** H200\n"
		  "**Baseline (main)**: 1.0 ms\n"
		  "Target: —\n\n"
		  "## Summary\n"
		  "Iter | Change | Correctness | Median ms | Decision\n"
		  "--- | --- | --- | --- | ---\n"
		  "#0 | baseline | ok | 1.0 | baseline\n"
		  "1 (confirm) | retry | \xe2\x9c\x85 | **0.95** | keep\n",
		  &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.p.n, 0);
	assert_string_equal(x.d.op, "my_op");
	assert_string_equal(x.d.env, "H200");
	assert_string_equal(x.d.baseline, "1.0 ms");
	assert_null(x.d.target);
	assert_int_equal(x.d.nrows, 2);
	assert_int_equal(x.d.rows[0].status, RS_BASE);
	assert_int_equal(x.d.rows[1].iter, 1);
	assert_int_equal(x.d.rows[1].gate_v, GATE_PASS);
	assert_float_equal(x.d.rows[1].bench_ms, 0.95, 1e-12);
	assert_float_equal(x.d.rows[1].vs_best, 0.05, 1e-12);
	parsed_release(&x);
}

static void missing_columns_are_reported_once(void **state)
{
	struct parsed x;
	parse_str("| Direction | Bench |\n|---|---|\n| a | 1.0 |\n| b | 0.9 |\n", &x);
	assert_int_equal(x.rc, ERR_FAIL); /* no Iter column and no Summary heading */
	parsed_release(&x);
	parse_str("## Summary\n| Direction | Bench |\n|---|---|\n| a | 1.0 |\n| b | 0.9 |\n", &x);
	assert_int_equal(x.rc, 0);
	assert_int_equal(x.d.nrows, 2);
	assert_int_equal(x.d.rows[1].iter, 1);
	assert_true(has_problem(&x, 2, "no Iter column"));
	assert_true(has_problem(&x, 2, "no Gate column"));
	assert_true(has_problem(&x, 2, "no Status column"));
	parsed_release(&x);
}

static void cell_parsers(void **state)
{
	double v;
	enum gate_verdict g;
	enum gate_scope s;
	enum row_status st;

	assert_int_equal(optlog_parse_bench("0.973 ms", &v), 0);
	assert_float_equal(v, 0.973, 0);
	assert_int_equal(optlog_parse_bench("0.97 (\xc2\xb1" "0.01)", &v), 0);
	assert_float_equal(v, 0.97, 0);
	assert_int_equal(optlog_parse_bench("`.5`", &v), 0);
	assert_float_equal(v, 0.5, 0);
	assert_int_equal(optlog_parse_bench("fast", &v), ERR_FAIL);
	assert_true(isnan(v));
	assert_int_equal(optlog_parse_bench("1.2.3", &v), ERR_FAIL);
	assert_int_equal(optlog_parse_vs_best("+12%", &v), 0);
	assert_float_equal(v, 0.12, 1e-15);
	assert_int_equal(optlog_parse_vs_best("-4 %", &v), 0);
	assert_float_equal(v, -0.04, 1e-15);
	assert_int_equal(optlog_parse_vs_best("0%", &v), 0);
	assert_false(signbit(v));
	assert_int_equal(optlog_parse_vs_best("1.2x", &v), ERR_FAIL);
	assert_int_equal(optlog_parse_gate("pass (-k test_chunk and T63)", &g, &s), 0);
	assert_int_equal(g, GATE_PASS);
	assert_int_equal(s, SCOPE_SUBSET);
	assert_int_equal(optlog_parse_gate("GATE FAILED", &g, &s), 0);
	assert_int_equal(g, GATE_FAIL);
	assert_int_equal(s, SCOPE_FULL);
	assert_int_equal(optlog_parse_gate("unverified", &g, &s), 0);
	assert_int_equal(g, GATE_UNVERIFIED);
	assert_int_equal(optlog_parse_gate("\xe2\x80\x94", &g, &s), 0);
	assert_int_equal(g, GATE_NONE);
	assert_int_equal(optlog_parse_gate("broken?", &g, &s), 0);
	assert_int_equal(g, GATE_ERROR);
	assert_int_equal(optlog_parse_gate("looks fine", &g, &s), ERR_FAIL);
	assert_int_equal(optlog_parse_status("Reverted (slower)", &st), 0);
	assert_int_equal(st, RS_REVERT);
	assert_int_equal(optlog_parse_status("keepers", &st), ERR_FAIL);
}

static void add_row_grows_a_caller_built_array(void **state)
{
	struct optlog_doc d = {0};
	d.rows = xcalloc(1, sizeof(*d.rows));
	d.rows[0] = mkrow(0, "first", GATE_PASS, SCOPE_FULL, 1, NAN, RS_BASE);
	d.nrows = 1; /* cap left 0: sized by the caller */
	for (int i = 1; i < 100; i++) {
		struct log_row r = mkrow(i, "next", GATE_PASS, SCOPE_FULL, 1, NAN, RS_KEEP);
		optlog_doc_add_row(&d, &r);
		assert_null(r.direction); /* ownership moved */
	}
	assert_int_equal(d.nrows, 100);
	assert_string_equal(d.rows[0].direction, "first");
	assert_int_equal(d.rows[99].iter, 99);
	optlog_doc_release(&d);
	assert_null(d.rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(render_writes_the_template_shape_exactly),
		cmocka_unit_test(render_same_accepts_only_the_exact_text),
		cmocka_unit_test(render_of_an_empty_log_matches_the_asset_template),
		cmocka_unit_test(render_then_parse_gives_the_same_rows),
		cmocka_unit_test(escaping_round_trips_awkward_directions),
		cmocka_unit_test(cell_formats),
		cmocka_unit_test(numbers_ignore_the_locale),
		cmocka_unit_test(vs_best_is_computed_against_the_one_best),
		cmocka_unit_test(reordered_and_extra_columns_match_by_name),
		cmocka_unit_test(missing_vs_best_column_is_computed),
		cmocka_unit_test(dash_bench_and_case_insensitive_status),
		cmocka_unit_test(pipes_in_code_spans_and_escapes),
		cmocka_unit_test(stray_backtick_does_not_swallow_cells),
		cmocka_unit_test(unescaped_pipe_in_direction_is_recovered_and_reported),
		cmocka_unit_test(crlf_line_ends),
		cmocka_unit_test(malformed_cells_are_reported_with_line_numbers),
		cmocka_unit_test(unknown_status_word_is_reported),
		cmocka_unit_test(no_table_at_all_is_an_error),
		cmocka_unit_test(summary_table_is_chosen_over_other_tables),
		cmocka_unit_test(a_stray_fence_does_not_hide_the_table),
		cmocka_unit_test(table_without_leading_pipes_and_header_variants),
		cmocka_unit_test(missing_columns_are_reported_once),
		cmocka_unit_test(cell_parsers),
		cmocka_unit_test(add_row_grows_a_caller_built_array),
	};
	return cmocka_run_group_tests_name("optlog", tests, NULL, NULL);
}
