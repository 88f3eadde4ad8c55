/* Unit tests for dispatch: dispatch.md tables read and written, evidence
 * citations, and the row checks that need no database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/dispatch.h"
#include "core/err.h"
#include "core/sb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *doc_text =
	"# Dispatch for chunk_gla\n"
	"\n"
	"Short sequences go to the fused path.\n"
	"\n"
	"| Bucket condition | Entry point chosen | Baseline ms | Candidate ms | Speedup | Why this path |\n"
	"|---|:---|---:|---|---|---|\n"
	"| T <= 64 | fused_fwd | 0.120 | 0.080 ms | 1.50x | one launch instead of three (iters 3, 5) |\n"
	"| T > 64 \\| varlen | chunk_fwd | 0.973 | 0.802 | — | chunked state passing (iter 7) |\n"
	"| D = 256 | chunk_fwd | 1.2 | 1.1 | 1.09× | no evidence here |\n"
	"\n"
	"Notes after the table.\n";

static void table_is_read_with_evidence_from_the_why_cell(void **state)
{
	struct dispatch_doc d;
	struct problems p;
	assert_int_equal(dispatch_parse(doc_text, strlen(doc_text), &d, &p, NULL), 0);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.v[0].bucket, "T <= 64");
	assert_string_equal(d.v[0].entry, "fused_fwd");
	assert_true(fabs(d.v[0].base_ms - 0.120) < 1e-9);
	assert_true(fabs(d.v[0].cand_ms - 0.080) < 1e-9);
	assert_true(fabs(d.v[0].speedup - 1.5) < 1e-9);
	assert_string_equal(d.v[0].why, "one launch instead of three");
	assert_string_equal(d.v[0].evidence, "3,5");
	assert_string_equal(d.v[1].bucket, "T > 64 | varlen");
	assert_true(isnan(d.v[1].speedup));
	assert_string_equal(d.v[1].evidence, "7");
	assert_null(d.v[2].evidence);
	assert_true(fabs(d.v[2].speedup - 1.09) < 1e-9);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0].lineno, 9);
	assert_non_null(strstr(p.v[0].msg, "cites no iterations"));
	assert_string_equal(d.preamble, "# Dispatch for chunk_gla\n\nShort sequences go to the fused path.");
	assert_string_equal(d.after, "Notes after the table.");
	dispatch_doc_release(&d);
	problems_release(&p);
}

static void render_reads_back_the_same_rows(void **state)
{
	struct dispatch_doc d, b;
	struct sb r = SB_INIT, r2 = SB_INIT;
	dispatch_parse(doc_text, strlen(doc_text), &d, NULL, NULL);
	dispatch_render(&d, &r);
	assert_non_null(strstr(r.buf, "| Bucket condition | Entry point chosen | Baseline ms | "
				      "Candidate ms | Speedup | Why this path |\n|---|"));
	assert_non_null(strstr(r.buf, "| T <= 64 | fused_fwd | 0.120 | 0.080 | 1.50x | one launch "
				      "instead of three (iters 3, 5) |"));
	assert_non_null(strstr(r.buf, "| T > 64 \\| varlen | chunk_fwd | 0.973 | 0.802 | — |"));
	dispatch_parse(r.buf, r.len, &b, NULL, NULL);
	assert_int_equal(b.n, d.n);
	for (size_t i = 0; i < d.n; i++) {
		assert_string_equal(b.v[i].bucket, d.v[i].bucket);
		assert_string_equal(b.v[i].why, d.v[i].why);
		if (d.v[i].evidence)
			assert_string_equal(b.v[i].evidence, d.v[i].evidence);
	}
	dispatch_render(&b, &r2);
	assert_string_equal(r.buf, r2.buf);
	dispatch_doc_release(&d);
	dispatch_doc_release(&b);
	sb_release(&r);
	sb_release(&r2);
}

static void columns_are_found_by_name_and_an_evidence_column_is_read(void **state)
{
	const char *t = "| Entry point chosen | Bucket condition | Why this path | Evidence |\n"
			"| --- | --- | --- | --- |\n"
			"| small_fwd | B*T < 4096 | fewer blocks | 2-4, 9 |\n";
	struct dispatch_doc d;
	assert_int_equal(dispatch_parse(t, strlen(t), &d, NULL, NULL), 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].entry, "small_fwd");
	assert_string_equal(d.v[0].bucket, "B*T < 4096");
	assert_string_equal(d.v[0].evidence, "2,3,4,9");
	assert_true(isnan(d.v[0].base_ms));
	dispatch_doc_release(&d);
}

static void files_without_a_table_are_empty_documents(void **state)
{
	const char *cases[] = {"", "# Dispatch\n\nnothing yet\n", "| a | b |\n|---|---|\n| 1 | 2 |\n",
			       "| Bucket condition | Entry point chosen |\nno separator\n"};
	for (size_t i = 0; i < 4; i++) {
		struct dispatch_doc d;
		struct problems p;
		assert_int_equal(dispatch_parse(cases[i], strlen(cases[i]), &d, &p, NULL), 0);
		assert_int_equal(d.n, 0);
		if (i == 3)
			assert_int_equal(p.n, 1);
		dispatch_doc_release(&d);
		problems_release(&p);
	}
}

static void bad_numbers_are_reported(void **state)
{
	const char *t = "| Bucket condition | Entry point chosen | Baseline ms | Candidate ms | Speedup | Why this path |\n"
			"|---|---|---|---|---|---|\n"
			"| T<=64 | f | fast | 0.1 | 2x | because (iter 1) |\n";
	struct dispatch_doc d;
	struct problems p;
	dispatch_parse(t, strlen(t), &d, &p, NULL);
	assert_int_equal(d.n, 1);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.v[0].lineno, 3);
	assert_non_null(strstr(p.v[0].msg, "cannot be read"));
	dispatch_doc_release(&d);
	problems_release(&p);
}

static void evidence_lists_are_normalised(void **state)
{
	int *v;
	size_t n;
	struct err e = {0};
	assert_int_equal(dispatch_evidence_parse("iters 5, 3 and #3", &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_int_equal(v[0], 3);
	assert_int_equal(v[1], 5);
	free(v);
	assert_int_equal(dispatch_evidence_parse("0-2", &v, &n, &e), 0);
	assert_int_equal(n, 3);
	free(v);
	assert_int_equal(dispatch_evidence_parse("", &v, &n, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "no evidence cited"));
	assert_int_equal(dispatch_evidence_parse("trust me", &v, &n, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "'trust' is not an iteration"));
	assert_int_equal(dispatch_evidence_parse("5-3", &v, &n, &e), ERR_USAGE);
	assert_int_equal(dispatch_evidence_parse("3/5", &v, &n, &e), ERR_USAGE);
}

static void row_check_refuses_rows_without_evidence(void **state)
{
	struct dispatch_row r = {.bucket = "T <= 64", .entry = "fused", .base_ms = 0.2,
				 .cand_ms = 0.1, .speedup = NAN, .why = "w", .evidence = NULL};
	struct err e = {0};
	assert_int_equal(dispatch_row_check(&r, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "dispatch row refused: no evidence cited"));
	r.evidence = "3";
	assert_int_equal(dispatch_row_check(&r, &e), 0);
	r.entry = " ";
	assert_int_equal(dispatch_row_check(&r, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "no entry point"));
	r.entry = "fused";
	r.cand_ms = -1;
	assert_int_equal(dispatch_row_check(&r, &e), ERR_USAGE);

	struct dispatch_doc d = {0};
	r.cand_ms = 0.1;
	r.evidence = "5, 3";
	dispatch_doc_add(&d, &r);
	assert_true(fabs(d.v[0].speedup - 2.0) < 1e-9);
	assert_string_equal(d.v[0].evidence, "3,5");
	dispatch_doc_release(&d);
}

static struct parse_row shape(const char *mode, long B, long T, long H, long D)
{
	return (struct parse_row){.mode = (char *)mode, .B = B, .T = T, .H = H, .D = D, .L = -1,
				  .op = "chunk_gla"};
}

static void buckets_are_tests_on_shapes(void **state)
{
	(void)state;
	struct dispatch_bucket b;
	struct err e = {0};
	struct parse_row short_one = shape("fwd", 4, 512, 16, 64), long_one = shape("fwd", 4, 4096, 16, 128);

	assert_int_equal(dispatch_bucket_parse("T <= 1024", &b, &e), 0);
	assert_true(dispatch_bucket_matches(&b, &short_one));
	assert_false(dispatch_bucket_matches(&b, &long_one));
	dispatch_bucket_release(&b);
	/* all conditions hold; unicode comparisons read too */
	assert_int_equal(dispatch_bucket_parse("T \xe2\x89\xa5 2048 and D = 128", &b, &e), 0);
	assert_false(dispatch_bucket_matches(&b, &short_one));
	assert_true(dispatch_bucket_matches(&b, &long_one));
	dispatch_bucket_release(&b);
	assert_int_equal(dispatch_bucket_parse("D=64 and T<1024", &b, &e), 0);
	assert_true(dispatch_bucket_matches(&b, &short_one));
	dispatch_bucket_release(&b);
	/* only equalities: the shapes named, any of which */
	assert_int_equal(dispatch_bucket_parse("B4_T4096_H16_D128 or T=512", &b, &e), 0);
	assert_int_equal(b.nshapes, 2);
	assert_true(dispatch_bucket_matches(&b, &short_one));
	assert_true(dispatch_bucket_matches(&b, &long_one));
	struct parse_row other = shape("fwd", 8, 2048, 16, 64);
	assert_false(dispatch_bucket_matches(&b, &other));
	dispatch_bucket_release(&b);
	/* words are no bucket */
	assert_int_equal(dispatch_bucket_parse("the short ones", &b, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "cannot read the bucket 'the short ones' as shapes"));
	dispatch_bucket_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_is_read_with_evidence_from_the_why_cell),
		cmocka_unit_test(render_reads_back_the_same_rows),
		cmocka_unit_test(columns_are_found_by_name_and_an_evidence_column_is_read),
		cmocka_unit_test(files_without_a_table_are_empty_documents),
		cmocka_unit_test(bad_numbers_are_reported),
		cmocka_unit_test(evidence_lists_are_normalised),
		cmocka_unit_test(row_check_refuses_rows_without_evidence),
		cmocka_unit_test(buckets_are_tests_on_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
