/* Unit tests for the pattern sets and the streaming parser: every captured
 * FLA fixture with its recorded exit status, synthetic cases (fwdbwd groups,
 * L column, missing baseline cells, --no-gate, NPU env, CRLF, colour codes,
 * truncated last line), chunking, JSON, and the memory bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/patset_impl.h"
#include "core/sb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX "tests/fixtures/fla-h200/"
#define SYN "tests/fixtures/synthetic/"

static struct patset *fla, *kb;

static int setup(void **state)
{
	struct err e = {0};
	char cwd[4096];

	if (!getenv("OPTLOOP_ASSETS") && getcwd(cwd, sizeof(cwd) - 8)) {
		strcat(cwd, "/assets");
		setenv("OPTLOOP_ASSETS", cwd, 1);
	}
	if (patset_load(NULL, NULL, &fla, &e) || patset_load("kernelbench", NULL, &kb, &e)) {
		fprintf(stderr, "# %s\n", e.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	patset_free(fla);
	patset_free(kb);
	return 0;
}

static void read_fixture(const char *path, struct sb *out)
{
	struct err e = {0};
	sb_reset(out);
	if (fsutil_read_file(path, out, &e))
		fail_msg("%s", e.msg);
}

/* Feed text in chunks of `chunk` bytes (0: all at once). */
static void parse_text(const struct patset *ps, const char *text, size_t len, size_t chunk,
		       int exit_status, bool killed, struct parse_result *out)
{
	struct parser *p = parser_new(ps, NULL, NULL);
	if (!chunk)
		chunk = len ? len : 1;
	for (size_t i = 0; i < len; i += chunk)
		parser_feed(p, text + i, len - i < chunk ? len - i : chunk);
	parser_finish(p, exit_status, killed);
	parser_take_result(p, out);
	parser_free(p);
}

static char *result_json(const struct parse_result *r)
{
	json_t *j = parse_result_json(r);
	char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	return s;
}

static void parse_fixture(const struct patset *ps, const char *path, int exit_status, bool killed,
			  struct parse_result *out)
{
	struct sb t = SB_INIT;
	read_fixture(path, &t);
	parse_text(ps, t.buf, t.len, 0, exit_status, killed, out);
	sb_release(&t);
}

/* ---- the captured fixtures, driven by MANIFEST.tsv ---- */

static void check_fixture(const char *file, const struct parse_result *r)
{
	if (!strcmp(file, "verify-list.txt")) {
		assert_int_equal(r->gate, GATE_NONE);
		assert_int_equal(r->scope, SCOPE_UNKNOWN);
		assert_true(r->complete);
		assert_int_equal(r->nrows, 0);
		assert_null(r->env.raw);
	} else if (!strcmp(file, "verify-gate-fail-k.txt")) {
		assert_int_equal(r->gate, GATE_FAIL);
		assert_int_equal(r->scope, SCOPE_SUBSET);
		assert_string_equal(r->gate_k, "test_chunk and T63");
		assert_string_equal(r->gate_test, "tests/ops/test_linear_attn.py");
		assert_int_equal(r->pytest.failed, 1);
		assert_int_equal(r->pytest.passed, 0);
		assert_int_equal(r->pytest.deselected, 29);
		assert_int_equal(r->cases_failed, 1);
		assert_true(r->gate_line_fail);
		assert_int_equal(r->progress, 100);
		assert_int_equal(r->nrows, 0);
		assert_true(r->complete);
		assert_false(r->traceback); /* pytest's own failure report is no harness traceback */
		assert_int_equal(r->nwarnings, 0);
	} else if (!strcmp(file, "verify-gate-pass-k-bench-timeout.txt")) {
		assert_int_equal(r->gate, GATE_INCOMPLETE);
		assert_int_equal(r->scope, SCOPE_SUBSET);
		assert_true(r->gate_line_pass);
		assert_false(r->complete);
		assert_int_equal(r->pytest.passed, 1);
		assert_string_equal(r->env.device, "NVIDIA H200");
		assert_string_equal(r->env.backend, "CUDA 13.0");
		assert_string_equal(r->env.pytorch, "2.11.0+cu130");
		assert_string_equal(r->env.triton, "3.6.0");
		assert_string_equal(r->env.branch, "opt-a");
		assert_string_equal(r->env.sha, "35f8256");
		assert_int_equal(r->nrows, 0);
	} else if (!strcmp(file, "runpy-base-main.txt")) {
		assert_int_equal(r->gate, GATE_NONE);
		assert_true(r->complete);
		/* Two tables: the baseline's own one-column table, then the result. */
		assert_string_equal(r->col_base, "main[ce250a9]");
		assert_string_equal(r->col_new, "opt-a[35f8256]");
		assert_int_equal(r->nrows, 2);
		assert_string_equal(r->rows[0].mode, "fwd");
		assert_string_equal(r->rows[0].op, "chunk_linear_attn");
		assert_int_equal(r->rows[0].B, 4);
		assert_int_equal(r->rows[0].T, 2048);
		assert_int_equal(r->rows[0].H, 16);
		assert_int_equal(r->rows[0].D, 64);
		assert_int_equal(r->rows[0].L, -1);
		assert_float_equal(r->rows[0].base_ms, 0.973, 1e-9);
		assert_float_equal(r->rows[0].new_ms, 0.450, 1e-9);
		assert_float_equal(r->rows[0].speedup, 2.16, 1e-9);
		assert_int_equal(r->rows[1].B, 8);
		assert_float_equal(r->rows[1].new_ms, 0.447, 1e-9);
		assert_false(r->has_L);
		assert_string_equal(r->env.device, "NVIDIA H200");
		assert_null(r->env.triton);
	} else {
		fail_msg("fixture %s has no expectations here; add them", file);
	}
}

static void every_captured_fixture_with_its_exit_status(void **state)
{
	struct sb m = SB_INIT;
	int checked = 0;
	char *line, *save = NULL;

	read_fixture(FIX "MANIFEST.tsv", &m);
	for (line = strtok_r(m.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char file[256], status[128], how[64];
		char path[512];
		struct parse_result r, r1;
		bool killed;
		int code;

		if (sscanf(line, "%255[^\t]\t%127[^\t]\t%63[^\t]", file, status, how) != 3 ||
		    !strcmp(file, "file"))
			continue;
		if (strlen(file) < 4 || strcmp(file + strlen(file) - 4, ".txt"))
			continue; /* the json and csv files are not verify output */
		killed = !strcmp(how, "killed");
		code = killed ? -1 : atoi(status);
		snprintf(path, sizeof(path), FIX "%s", file);
		parse_fixture(fla, path, code, killed, &r);
		check_fixture(file, &r);

		/* The same bytes one at a time give the same result. */
		struct sb t = SB_INIT;
		read_fixture(path, &t);
		parse_text(fla, t.buf, t.len, 1, code, killed, &r1);
		char *a = result_json(&r), *b = result_json(&r1);
		assert_string_equal(a, b);
		free(a), free(b);
		sb_release(&t);
		parse_result_release(&r);
		parse_result_release(&r1);
		checked++;
	}
	assert_int_equal(checked, 4);
	sb_release(&m);
}

/* ---- synthetic cases ---- */

static void fwdbwd_groups_and_blank_shape_cells(void **state)
{
	struct parse_result r;
	parse_fixture(fla, SYN "fwdbwd-groups.txt", 0, false, &r);
	assert_int_equal(r.gate, GATE_PASS);
	assert_int_equal(r.scope, SCOPE_FULL);
	assert_int_equal(r.pytest.passed, 60);
	assert_int_equal(r.cases_passed, 60); /* dots counted as they came */
	assert_int_equal(r.nrows, 6);
	assert_string_equal(r.rows[0].mode, "fwd");
	assert_string_equal(r.rows[1].op, "fused_recurrent_gla");
	assert_int_equal(r.rows[1].B, 4); /* blank shape cells: the row above's shape */
	assert_int_equal(r.rows[1].T, 2048);
	assert_int_equal(r.rows[1].D, 64);
	assert_string_equal(r.rows[3].mode, "fwdbwd");
	assert_float_equal(r.rows[3].base_ms, 4.870, 1e-9);
	/* A missing baseline cell: no base, no speedup, the new number kept. */
	assert_true(isnan(r.rows[4].base_ms));
	assert_true(isnan(r.rows[4].speedup));
	assert_float_equal(r.rows[4].new_ms, 9.020, 1e-9);
	assert_int_equal(r.rows[5].H, 8);
	assert_string_equal(r.col_base, "main[ce250a9]");
	assert_string_equal(r.col_new, "opt-b[9d1e2f0]");
	parse_result_release(&r);
}

/* A shape the table lists twice: the same times count once; different
 * times leave the run without a table (no bench made of both). */
static void a_shape_listed_twice(void **state)
{
	static const char head[] =
		"  Machine: tiny | CPU sh 1\n"
		"================================================================================\n"
		"  fwd        B      T    H    D  op                            main[f3dad60](ms)\n"
		"          ----------------------------------------------------------------------\n";
	static const char row64[] =
		"             1     64    1   16  compute                                  2.099\n";
	static const char row64b[] =
		"             1     64    1   16  compute                                  9.000\n";
	static const char row128[] =
		"             1    128    1   16  compute                                  4.000\n";
	static const char foot[] =
		"================================================================================\n";
	struct parse_result r;
	char *same = xasprintf("%s%s%s%s%s", head, row64, row128, row64, foot);
	parse_text(fla, same, strlen(same), 5, 0, false, &r);
	assert_int_equal(r.nrows, 2);
	assert_int_equal(r.rows[0].T, 64);
	assert_int_equal(r.rows[1].T, 128);
	assert_float_equal(parse_bench_ms(&r), sqrt(2.099 * 4.0), 1e-9);
	assert_int_equal(r.nwarnings, 1);
	assert_non_null(strstr(r.warnings[0], "fwd B=1 T=64 H=1 D=16 compute more than once with "
					      "the same times; it counts once"));
	parse_result_release(&r);

	char *differ = xasprintf("%s%s%s%s%s", head, row64, row128, row64b, foot);
	parse_text(fla, differ, strlen(differ), 0, 0, false, &r);
	assert_int_equal(r.nrows, 0);
	assert_true(isnan(parse_bench_ms(&r)));
	assert_int_equal(r.nwarnings, 1);
	assert_non_null(strstr(r.warnings[0], "more than once with different times (2.099 and 9 "
					      "ms): this run has no bench"));
	parse_result_release(&r);

	/* a table printed again whole (run.py prints the baseline's first):
	 * the last one is the result, nothing is repeated within it */
	char *again = xasprintf("%s%s%s%s%s%s", head, row64, foot, head, row64b, foot);
	parse_text(fla, again, strlen(again), 3, 0, false, &r);
	assert_int_equal(r.nrows, 1);
	assert_float_equal(r.rows[0].new_ms, 9.0, 1e-9);
	assert_int_equal(r.nwarnings, 0);
	parse_result_release(&r);
	free(same);
	free(differ);
	free(again);
}

static void l_column_and_dash_cells(void **state)
{
	struct parse_result r;
	parse_fixture(fla, SYN "l-column.txt", 0, false, &r);
	assert_true(r.has_L);
	assert_int_equal(r.nrows, 3);
	assert_int_equal(r.rows[0].L, 4);
	assert_int_equal(r.rows[0].B, 2);
	assert_int_equal(r.rows[1].L, 8);
	assert_true(isnan(r.rows[1].base_ms));
	assert_int_equal(r.rows[2].L, -1);
	assert_int_equal(r.rows[2].T, 2048);
	assert_string_equal(r.gate_k, "L4 and (T512 or T1024)");
	assert_int_equal(r.gate, GATE_PASS);
	assert_int_equal(r.scope, SCOPE_SUBSET);
	assert_int_equal(r.cases_passed, 2);

	json_t *j = parse_result_json(&r);
	json_t *row = json_array_get(json_object_get(j, "rows"), 2);
	assert_true(json_is_null(json_object_get(row, "L")));
	assert_int_equal(json_integer_value(json_object_get(row, "B")), 1);
	row = json_array_get(json_object_get(j, "rows"), 1);
	assert_true(json_is_null(json_object_get(row, "base_ms")));
	assert_true(json_is_null(json_object_get(row, "speedup")));
	json_decref(j);
	parse_result_release(&r);
}

static void no_gate_is_unverified_with_warnings(void **state)
{
	struct parse_result r;
	parse_fixture(fla, SYN "no-gate.txt", 0, false, &r);
	assert_int_equal(r.gate, GATE_UNVERIFIED);
	assert_true(r.no_gate);
	assert_int_equal(r.nwarnings, 2);
	assert_non_null(strstr(r.warnings[0], "--no-gate"));
	assert_non_null(strstr(r.warnings[1], "Failed to benchmark at 'main'"));
	/* Without --base the table has one column: it is the new one. */
	assert_null(r.col_base);
	assert_string_equal(r.col_new, "opt-a[35f8256]");
	assert_int_equal(r.nrows, 1);
	assert_true(isnan(r.rows[0].base_ms));
	assert_float_equal(r.rows[0].new_ms, 0.450, 1e-9);
	parse_result_release(&r);
}

static void npu_environment_line(void **state)
{
	struct parse_result r;
	parse_fixture(fla, SYN "npu-env.txt", 0, false, &r);
	assert_string_equal(r.env.device, "Ascend910B2");
	assert_string_equal(r.env.backend, "NPU: CANN 8.1.RC1");
	assert_string_equal(r.env.pytorch, "2.6.0");
	assert_string_equal(r.env.triton, "3.2.0");
	assert_string_equal(r.env.branch, "npu-port");
	assert_string_equal(r.env.sha, "7c0ffee");
	/* The fuller verify line stays the raw one, not the table's shorter repeat. */
	assert_non_null(strstr(r.env.raw, "Triton 3.2.0"));
	parse_result_release(&r);
}

static void demo_project_machine_line(void **state)
{
	struct parse_result r;
	parse_fixture(fla, SYN "demo-gate-pass-k-base.txt", 0, false, &r);
	assert_string_equal(r.env.device, "AMD EPYC");
	assert_string_equal(r.env.backend, "CPU gcc 12.2.0");
	assert_string_equal(r.env.branch, "master");
	assert_string_equal(r.env.sha, "2f8028b");
	assert_null(r.env.pytorch);
	assert_int_equal(r.gate, GATE_PASS);
	assert_int_equal(r.scope, SCOPE_SUBSET);
	assert_int_equal(r.nrows, 3);
	assert_string_equal(r.col_base, "HEAD~1[41398b5]");
	assert_float_equal(r.rows[2].speedup, 0.54, 1e-9);
	parse_result_release(&r);

	parse_text(fla, "  Machine: Intel(R) Xeon(R) CPU @ 2.20GHz | CPU clang 14.0.6 | main[abc1234]\n",
		   77, 0, 0, false, &r);
	assert_string_equal(r.env.device, "Intel(R) Xeon(R) CPU @ 2.20GHz");
	assert_string_equal(r.env.backend, "CPU clang 14.0.6");
	assert_string_equal(r.env.sha, "abc1234");
	parse_result_release(&r);
}

static void crlf_line_ends_parse_the_same(void **state)
{
	struct sb t = SB_INIT, crlf = SB_INIT;
	struct parse_result a, b;

	read_fixture(SYN "fwdbwd-groups.txt", &t);
	for (size_t i = 0; i < t.len; i++) {
		if (t.buf[i] == '\n')
			sb_addc(&crlf, '\r');
		sb_addc(&crlf, t.buf[i]);
	}
	parse_text(fla, t.buf, t.len, 0, 0, false, &a);
	parse_text(fla, crlf.buf, crlf.len, 7, 0, false, &b);
	char *ja = result_json(&a), *jb = result_json(&b);
	assert_string_equal(ja, jb);
	assert_int_equal(b.nrows, 6);
	free(ja), free(jb);
	parse_result_release(&a);
	parse_result_release(&b);
	sb_release(&t);
	sb_release(&crlf);
}

static void colour_codes_in_pytest_output(void **state)
{
	static const char text[] =
		"\x1b[1m============================= test session starts ==============================\x1b[0m\n"
		"  Correctness gate: tests/ops/test_gla.py (full)\n"
		"tests/ops/test_gla.py \x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[31mF\x1b[0m\x1b[32m.\x1b[0m\x1b[32m     [ 80%]\x1b[0m\n"
		"tests/ops/test_gla.py::test_chunk[B2-T500] \x1b[32mPASSED\x1b[0m\x1b[32m    [100%]\x1b[0m\n"
		"\x1b]0;pytest\x07\x1b[31m========= \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m4 passed\x1b[0m\x1b[31m in 3.21s\x1b[0m\x1b[31m =========\x1b[0m\n"
		"\n  \x1b[31mGATE FAILED \xe2\x80\x94 correctness regressed.\x1b[0m\n";
	struct parse_result r;

	parse_text(fla, text, sizeof(text) - 1, 3, 1, false, &r);
	assert_int_equal(r.pytest.failed, 1);
	assert_int_equal(r.pytest.passed, 4);
	assert_int_equal(r.cases_failed, 1);
	assert_int_equal(r.cases_passed, 4);
	assert_int_equal(r.progress, 100);
	assert_true(r.gate_line_fail);
	assert_int_equal(r.gate, GATE_FAIL);
	assert_int_equal(r.scope, SCOPE_FULL);
	parse_result_release(&r);
}

static void truncated_last_line(void **state)
{
	struct sb t = SB_INIT;
	struct parse_result r;
	char *cut;

	read_fixture(SYN "fwdbwd-groups.txt", &t);
	/* Cut inside the last table row: the output ended mid-line. */
	cut = strstr(t.buf, "6.001");
	assert_non_null(cut);
	parse_text(fla, t.buf, (size_t)(cut - t.buf) + 3, 0, -1, false, &r);
	assert_true(r.truncated);
	assert_false(r.complete);
	assert_int_equal(r.nrows, 6); /* the partial row still counts as read */
	assert_float_equal(r.rows[5].base_ms, 6.0, 1e-9);
	assert_true(isnan(r.rows[5].new_ms));
	parse_result_release(&r);

	/* Cut inside the verdict line: no pass. */
	cut = strstr(t.buf, "GATE PASSED");
	parse_text(fla, t.buf, (size_t)(cut - t.buf) + 6, 0, -1, true, &r);
	assert_true(r.truncated);
	assert_false(r.gate_line_pass);
	assert_int_equal(r.gate, GATE_INCOMPLETE);
	parse_result_release(&r);
	sb_release(&t);
}

static void chunk_sizes_never_change_the_result(void **state)
{
	static const char *const files[] = {
		SYN "fwdbwd-groups.txt", SYN "l-column.txt",  SYN "no-gate.txt",
		SYN "npu-env.txt",       SYN "traceback.txt", SYN "demo-gate-pass-full.txt",
		FIX "runpy-base-main.txt",
	};
	static const size_t chunks[] = {1, 2, 3, 5, 64, 4096};
	struct sb t = SB_INIT;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct parse_result whole;
		char *jw;
		read_fixture(files[f], &t);
		parse_text(fla, t.buf, t.len, 0, 0, false, &whole);
		jw = result_json(&whole);
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			struct parse_result r;
			parse_text(fla, t.buf, t.len, chunks[c], 0, false, &r);
			char *j = result_json(&r);
			if (strcmp(j, jw))
				fail_msg("%s in %zu-byte chunks:\n%s\nwhole:\n%s", files[f], chunks[c], j, jw);
			free(j);
			parse_result_release(&r);
		}
		free(jw);
		parse_result_release(&whole);
	}
	sb_release(&t);
}

/* ---- verdict rules ---- */

static void verdict_combines_text_and_exit(void **state)
{
	static const char banner_full[] = "  Correctness gate: tests/ops/t.py (full)\n";
	static const char pass_text[] = "  Correctness gate: tests/ops/t.py (full)\n"
					"=== 3 passed in 1.00s ===\n\n  GATE PASSED.\n";
	static const char killed_fail[] = "  Correctness gate: tests/ops/t.py (full)\n"
					  "tests/ops/t.py::test_a[x] FAILED   [ 10%]\n"
					  "tests/ops/t.py::test_a[y] ";
	struct parse_result r;

	parse_text(fla, pass_text, strlen(pass_text), 0, 0, false, &r);
	assert_int_equal(r.gate, GATE_PASS);
	assert_true(r.complete);
	parse_result_release(&r);
	/* A pass line with a non-zero exit: the harness broke after the gate. */
	parse_text(fla, pass_text, strlen(pass_text), 0, 1, false, &r);
	assert_int_equal(r.gate, GATE_ERROR);
	parse_result_release(&r);
	/* Killed after a pass line: never a pass. */
	parse_text(fla, pass_text, strlen(pass_text), 0, -1, true, &r);
	assert_int_equal(r.gate, GATE_INCOMPLETE);
	assert_false(r.complete);
	parse_result_release(&r);
	/* A failed case stands even when the run is then killed. */
	parse_text(fla, killed_fail, strlen(killed_fail), 0, -1, true, &r);
	assert_int_equal(r.gate, GATE_FAIL);
	assert_int_equal(r.progress, 10);
	parse_result_release(&r);
	/* Banner and no verdict, exit 0: cut off before the verdict. */
	parse_text(fla, banner_full, strlen(banner_full), 0, 0, false, &r);
	assert_int_equal(r.gate, GATE_INCOMPLETE);
	parse_result_release(&r);
	/* Exit 2 with nothing else: the harness broke. */
	parse_text(fla, "usage: verify.py [-h]\n", 22, 0, 2, false, &r);
	assert_int_equal(r.gate, GATE_ERROR);
	parse_result_release(&r);
	/* Plain output, exit 0: no gate at all. */
	parse_text(fla, "hello\n", 6, 0, 0, false, &r);
	assert_int_equal(r.gate, GATE_NONE);
	parse_result_release(&r);
}

static void traceback_without_verdict_is_error(void **state)
{
	struct parse_result r;
	parse_fixture(fla, SYN "traceback.txt", 1, false, &r);
	assert_int_equal(r.gate, GATE_ERROR);
	assert_true(r.traceback);
	assert_string_equal(r.exception, "RuntimeError: CUDA error: out of memory");
	parse_result_release(&r);
	parse_fixture(fla, SYN "gate-not-found.txt", 2, false, &r);
	assert_int_equal(r.gate, GATE_ERROR);
	assert_true(r.gate_not_found);
	parse_result_release(&r);
}

static void kernelbench_set(void **state)
{
	struct parse_result r;
	parse_fixture(kb, SYN "kernelbench-pass.txt", 0, false, &r);
	assert_int_equal(r.gate, GATE_PASS);
	assert_int_equal(r.scope, SCOPE_FULL);
	assert_int_equal(r.nrows, 1);
	assert_float_equal(r.rows[0].new_ms, 0.0412, 1e-12);
	assert_float_equal(r.rows[0].base_ms, 0.0951, 1e-12);
	assert_float_equal(r.rows[0].speedup, 2.31, 1e-12);
	parse_result_release(&r);
	parse_fixture(kb, SYN "kernelbench-fail.txt", 0, false, &r);
	assert_int_equal(r.gate, GATE_FAIL);
	assert_int_equal(r.nwarnings, 1);
	parse_result_release(&r);
	/* A value the open result already has starts the next result. */
	static const char two[] = "RUNTIME: 1.5 ms\nSPEEDUP: 2x\nRUNTIME: 3.0 ms\nCORRECT: True\n";
	parse_text(kb, two, sizeof(two) - 1, 4, 0, false, &r);
	assert_int_equal(r.nrows, 2);
	assert_float_equal(r.rows[0].new_ms, 1.5, 1e-12);
	assert_float_equal(r.rows[0].speedup, 2.0, 1e-12);
	assert_float_equal(r.rows[1].new_ms, 3.0, 1e-12);
	assert_true(isnan(r.rows[1].speedup));
	parse_result_release(&r);
	/* The FLA set knows nothing of these lines. */
	parse_fixture(fla, SYN "kernelbench-pass.txt", 0, false, &r);
	assert_int_equal(r.gate, GATE_NONE);
	assert_int_equal(r.nrows, 0);
	parse_result_release(&r);
}

/* ---- events ---- */

struct evlog {
	struct sb kinds;
	int last_progress;
};

static void on_event(void *ctx, const struct parse_event *ev)
{
	struct evlog *l = ctx;
	assert_int_equal(ev->line[ev->len], '\0');
	sb_addf(&l->kinds, "%s,", parse_event_kind_name(ev->kind));
	if (ev->progress >= 0)
		l->last_progress = ev->progress;
}

static void events_name_each_line(void **state)
{
	static const char text[] = "  Correctness gate: t.py (-k T63)\n"
				   "t.py::test[a] PASSED    [ 50%]\n"
				   "PASSED      [100%]\n"
				   "==== 2 passed, 1 deselected in 0.50s ====\n"
				   "  GATE PASSED.\n"
				   "  Machine: H200 | CUDA 13.0 | PyTorch 2 | Triton 3 | b[abcdef1]\n"
				   "=====================\n"
				   "  fwd  B  T  H  D  op  b[abcdef1](ms)\n"
				   "     1  2  3  4  k  0.5\n"
				   "Failed to benchmark at 'main': boom\n"
				   "Traceback (most recent call last):\n"
				   "plain\n";
	struct evlog l = {SB_INIT, -1};
	struct parser *p = parser_new(fla, on_event, &l);

	parser_feed(p, text, sizeof(text) - 1);
	parser_finish(p, 0, false);
	assert_string_equal(l.kinds.buf,
			    "gate_banner,test_case,test_case,pytest_summary,gate_verdict,env,line,"
			    "table_header,table_row,warning,traceback,line,");
	assert_int_equal(l.last_progress, 100);
	assert_int_equal(parser_result(p)->nrows, 1);
	parser_free(p);
	sb_release(&l.kinds);
}

/* Progress rides on the line that shows it, whatever the line is; benchmark
 * phases come as stage events naming the phase. */
struct stagelog {
	struct sb seen; /* "kind:progress:stage;" per event with progress or stage */
};

static void on_stage_event(void *ctx, const struct parse_event *ev)
{
	struct stagelog *l = ctx;
	if (ev->progress >= 0 || ev->kind == PEV_STAGE)
		sb_addf(&l->seen, "%s:%d:%.*s;", parse_event_kind_name(ev->kind), ev->progress,
			(int)ev->stage_len, ev->stage ? ev->stage : "");
}

static void progress_and_stages_reach_the_listener(void **state)
{
	static const char text[] = "  Correctness gate: t.py (full)\n"
				   "t.py::test[a] PASSED    [ 33%]\n"
				   "t.py .F [ 66%]\n"
				   "PASSED      [100%]\n"
				   "  GATE PASSED.\n"
				   "  [chunk_linear_attn] Warming up 3 shape(s)...\n"
				   "  [chunk_linear_attn] Warmup done.\n"
				   "  Benchmarking at 'main' (via git worktree)...\n";
	struct stagelog l = {SB_INIT};
	struct parser *p = parser_new(fla, on_stage_event, &l);

	parser_feed(p, text, sizeof(text) - 1);
	parser_finish(p, 0, false);
	assert_string_equal(l.seen.buf, "test_case:33:;test_case:66:;test_case:100:;"
					"stage:-1:Warming up 3 shape(s)...;stage:-1:Warmup done;"
					"stage:-1:Benchmarking at 'main';");
	assert_int_equal(parser_result(p)->progress, 100);
	assert_string_equal(parser_result(p)->stage, "Benchmarking at 'main'");
	parser_free(p);
	sb_release(&l.seen);
}

/* ---- JSON ---- */

static void json_keys_and_round_trip(void **state)
{
	static const char *const files[] = {FIX "runpy-base-main.txt", SYN "l-column.txt",
					    FIX "verify-gate-pass-k-bench-timeout.txt"};
	for (size_t f = 0; f < 3; f++) {
		struct parse_result r, back;
		struct err e = {0};
		parse_fixture(fla, files[f], f == 2 ? -1 : 0, f == 2, &r);
		json_t *j = parse_result_json(&r);
		static const char *const keys[] = {"gate",   "gate_scope", "gate_k",  "complete",
						   "pytest", "env",        "columns", "rows",
						   "warnings"};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			assert_non_null(json_object_get(j, keys[k]));
		assert_int_equal(parse_result_from_json(j, &back, &e), 0);
		char *a = result_json(&r), *b = result_json(&back);
		assert_string_equal(a, b);
		free(a), free(b);
		json_decref(j);
		parse_result_release(&r);
		parse_result_release(&back);
	}
	struct parse_result bad;
	struct err e = {0};
	json_t *j = json_pack("{s:s}", "gate", "maybe");
	assert_int_equal(parse_result_from_json(j, &bad, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "maybe"));
	json_decref(j);
	parse_result_release(&bad);
}

static void json_scope_and_nulls(void **state)
{
	struct parse_result r;
	parse_fixture(fla, FIX "verify-gate-fail-k.txt", 1, false, &r);
	json_t *j = parse_result_json(&r);
	assert_string_equal(json_string_value(json_object_get(j, "gate")), "fail");
	assert_string_equal(json_string_value(json_object_get(j, "gate_scope")), "subset");
	assert_string_equal(json_string_value(json_object_get(j, "gate_k")), "test_chunk and T63");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "pytest"), "deselected")), 29);
	assert_true(json_is_null(json_object_get(json_object_get(j, "env"), "device")));
	assert_true(json_is_null(json_object_get(json_object_get(j, "columns"), "base")));
	assert_int_equal(json_array_size(json_object_get(j, "rows")), 0);
	json_decref(j);
	parse_result_release(&r);

	parse_fixture(fla, FIX "verify-list.txt", 0, false, &r);
	j = parse_result_json(&r);
	assert_true(json_is_null(json_object_get(j, "gate_scope")));
	assert_true(json_is_null(json_object_get(json_object_get(j, "pytest"), "passed")));
	json_decref(j);
	parse_result_release(&r);
}

/* ---- hostile input and the memory bound ---- */

static void hostile_input_stays_bounded(void **state)
{
	struct parser *p = parser_new(fla, NULL, NULL);
	char *buf = xmalloc(1 << 20);
	size_t max_mem = 0;

	/* A 10 MB line with no newline, with NULs and invalid UTF-8 in it. */
	for (size_t i = 0; i < (1 << 20); i++)
		buf[i] = (char)(i % 7 == 0 ? 0 : i % 5 == 0 ? 0xff : 'a' + i % 26);
	for (int i = 0; i < 10; i++)
		parser_feed(p, buf, 1 << 20);
	if (parser_mem(p) > max_mem)
		max_mem = parser_mem(p);
	parser_feed(p, "\n", 1);
	/* A table of 100000 rows: only PARSE_MAX_ROWS are kept. */
	static const char head[] = "  fwd  B  T  H  D  op  main[abc1234](ms) x[def5678](ms)  speedup\n";
	parser_feed(p, head, sizeof(head) - 1);
	for (int i = 0; i < 100000; i++) {
		char row[256];
		int n = snprintf(row, sizeof(row), "   %d 2048 16 64  op_with_a_long_name_%0150d  1.0 0.5 2.00x\n",
				 i, i);
		parser_feed(p, row, (size_t)n);
		if (i % 1000 == 0 && parser_mem(p) > max_mem)
			max_mem = parser_mem(p);
	}
	/* Escape sequences and 1000 distinct warnings. */
	for (int i = 0; i < 1000; i++) {
		char w[700];
		memset(w, 'w', sizeof(w));
		int n = snprintf(w, sizeof(w), "\x1b[31mFailed to benchmark at 'r%d': \xff\xfe\xc3", i);
		w[n] = 'w';
		w[sizeof(w) - 1] = '\n';
		parser_feed(p, w, sizeof(w));
	}
	if (parser_mem(p) > max_mem)
		max_mem = parser_mem(p);
	parser_finish(p, 0, false);
	const struct parse_result *r = parser_result(p);
	assert_int_equal(r->nrows, PARSE_MAX_ROWS);
	assert_int_equal(r->rows_dropped, 100000 - PARSE_MAX_ROWS);
	assert_true(strlen(r->rows[0].op) <= PARSE_CELL_MAX);
	assert_int_equal(r->nwarnings, PARSE_MAX_WARNINGS);
	assert_true(strlen(r->warnings[0]) <= PARSE_WARNING_MAX);
	assert_true(max_mem <= PARSE_MEM_BOUND);
	/* The JSON is valid UTF-8 whatever the bytes were. */
	json_t *j = parse_result_json(r);
	char *s = json_dumps(j, 0);
	assert_non_null(s);
	json_t *back = json_loads(s, 0, NULL);
	assert_non_null(back);
	json_decref(back);
	free(s);
	json_decref(j);
	parser_free(p);
	free(buf);
}

static void long_line_keeps_its_start(void **state)
{
	struct parser *p = parser_new(fla, NULL, NULL);
	struct sb t = SB_INIT;
	sb_adds(&t, "  GATE PASSED.");
	for (int i = 0; i < 200000; i++)
		sb_addc(&t, ' ');
	sb_adds(&t, "\n  Correctness gate: t.py (full)\n");
	parser_feed(p, t.buf, t.len);
	parser_finish(p, 0, false);
	assert_true(parser_result(p)->gate_line_pass);
	assert_int_equal(parser_result(p)->scope, SCOPE_FULL); /* the next line is read normally */
	assert_int_equal(parser_result(p)->gate, GATE_PASS);
	parser_free(p);
	sb_release(&t);
}

/* ---- pattern sets ---- */

static void patset_errors_name_the_line(void **state)
{
	struct patset *ps = NULL;
	struct err e = {0};
	static const char bad_role[] = "# x\n@name t\npass ^ok\nbogus ^x\n";
	static const char bad_re[] = "pass ^ok\nfail ^(unclosed\n";
	static const char bad_dir[] = "@colour red\npass ^ok\n";

	assert_int_equal(patset_load_text(bad_role, strlen(bad_role), "t.pat", NULL, &ps, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "t.pat:4"));
	assert_non_null(strstr(e.msg, "bogus"));
	assert_null(ps);
	assert_int_equal(patset_load_text(bad_re, strlen(bad_re), "t.pat", NULL, &ps, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "t.pat:2"));
	assert_non_null(strstr(e.msg, "does not compile"));
	assert_int_equal(patset_load_text(bad_dir, strlen(bad_dir), "t.pat", NULL, &ps, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "@colour"));
	assert_int_equal(patset_load("no-such-set", NULL, &ps, &e), ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "no-such-set"));
	assert_int_equal(patset_load("fla", NULL, &ps, &e), 0);
	assert_string_equal(patset_name(ps), "fla");
	assert_true(patset_count(ps) > 10);
	patset_free(ps);
}

static void workspace_set_extends_a_shipped_one(void **state)
{
	char dir[] = "/tmp/optloop-pat.XXXXXX";
	struct patset *ps = NULL;
	struct err e = {0};
	struct parse_result r;
	static const char mine[] = "@name mine\n@extends fla\n"
				   "warning ^NOTE: (?<msg>.*)$\n"
				   "pass ^ALL GOOD$\n";
	static const char text[] = "NOTE: clocks locked\nALL GOOD\n  Machine: X | CUDA 1 | PyTorch 2\n";

	assert_non_null(mkdtemp(dir));
	char *path = fsutil_join(dir, "mine.pat");
	assert_int_equal(fsutil_write_atomic(path, mine, strlen(mine), &e), 0);
	/* A workspace set named like a shipped one wins over it. */
	char *shadow = fsutil_join(dir, "kernelbench.pat");
	assert_int_equal(fsutil_write_atomic(shadow, "pass ^SHADOW$\n", 14, &e), 0);

	assert_int_equal(patset_load("mine", dir, &ps, &e), 0);
	assert_string_equal(patset_name(ps), "mine");
	parse_text(ps, text, strlen(text), 0, 0, false, &r);
	assert_int_equal(r.gate, GATE_PASS);
	assert_string_equal(r.warnings[0], "clocks locked");
	assert_string_equal(r.env.backend, "CUDA 1"); /* from the fla set it extends */
	parse_result_release(&r);
	patset_free(ps);

	assert_int_equal(patset_load("kernelbench", dir, &ps, &e), 0);
	assert_int_equal(patset_count(ps), 1);
	patset_free(ps);
	assert_int_equal(patset_load(path, NULL, &ps, &e), 0); /* a path works too */
	patset_free(ps);

	unlink(path);
	unlink(shadow);
	rmdir(dir);
	free(path);
	free(shadow);
}

/* Sets are matched through one combined alternation; a set with a
 * back-reference cannot be, and is matched one pattern at a time.  Both
 * paths must read every log the same way. */
static void combined_and_single_matching_agree(void **state)
{
	static const char *const files[] = {
		SYN "fwdbwd-groups.txt", SYN "l-column.txt", SYN "no-gate.txt", SYN "npu-env.txt",
		SYN "traceback.txt", SYN "demo-gate-pass-k-base.txt", FIX "runpy-base-main.txt",
		FIX "verify-gate-fail-k.txt", FIX "verify-gate-pass-k-bench-timeout.txt",
	};
	struct sb text = SB_INIT, t = SB_INIT;
	struct patset *single = NULL;
	struct err e = {0};
	char *path = NULL;

	path = fsutil_join(getenv("OPTLOOP_ASSETS"), "patterns/fla.pat");
	read_fixture(path, &text);
	sb_adds(&text, "\nignore ^(zz)\\1$\n"); /* a back-reference */
	assert_int_equal(patset_load_text(text.buf, text.len, "fla+backref", NULL, &single, &e), 0);
	assert_false(single->combined);
	assert_true(fla->combined);
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		struct parse_result a, b;
		read_fixture(files[f], &t);
		parse_text(fla, t.buf, t.len, 0, 0, false, &a);
		parse_text(single, t.buf, t.len, 0, 0, false, &b);
		char *ja = result_json(&a), *jb = result_json(&b);
		if (strcmp(ja, jb))
			fail_msg("%s: combined\n%s\nsingle\n%s", files[f], ja, jb);
		free(ja), free(jb);
		parse_result_release(&a);
		parse_result_release(&b);
	}
	patset_free(single);
	sb_release(&text);
	sb_release(&t);
	free(path);
}

/* Found by fuzz_patset: a NUL byte inside a pattern cut it short in the
 * combined alternation, so the group numbers of later patterns were off and
 * the parser read past the match data. */
static void patterns_with_nul_bytes_or_quoting(void **state)
{
	static const char nul[] = "warning ^W(?<msg>x)\0(?<v>y)\n"
				  "banner ^G (?<test>\\S+)\n"
				  "pass ^ok$\n";
	/* \Q runs to the end of the pattern: wrapped, it would swallow the rest. */
	static const char quote[] = "ignore ^q\\Q(\n"
				    "banner ^G (?<test>\\S+)\n"
				    "pass ^ok$\n";
	static const char *const texts[] = {nul, quote};
	static const size_t lens[] = {sizeof(nul) - 1, sizeof(quote) - 1};
	static const char log[] = "Wx\0y\nq(\nG t.py\nok\n";

	for (int i = 0; i < 2; i++) {
		struct patset *ps = NULL;
		struct err e = {0};
		struct parse_result r;
		assert_int_equal(patset_load_text(texts[i], lens[i], "odd.pat", NULL, &ps, &e), 0);
		assert_int_equal(patset_count(ps), 3);
		parse_text(ps, log, sizeof(log) - 1, 0, 0, false, &r);
		assert_string_equal(r.gate_test, "t.py");
		assert_int_equal(r.scope, SCOPE_FULL);
		assert_int_equal(r.gate, GATE_PASS);
		parse_result_release(&r);
		patset_free(ps);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_captured_fixture_with_its_exit_status),
		cmocka_unit_test(fwdbwd_groups_and_blank_shape_cells),
		cmocka_unit_test(a_shape_listed_twice),
		cmocka_unit_test(l_column_and_dash_cells),
		cmocka_unit_test(no_gate_is_unverified_with_warnings),
		cmocka_unit_test(npu_environment_line),
		cmocka_unit_test(demo_project_machine_line),
		cmocka_unit_test(crlf_line_ends_parse_the_same),
		cmocka_unit_test(colour_codes_in_pytest_output),
		cmocka_unit_test(truncated_last_line),
		cmocka_unit_test(chunk_sizes_never_change_the_result),
		cmocka_unit_test(verdict_combines_text_and_exit),
		cmocka_unit_test(traceback_without_verdict_is_error),
		cmocka_unit_test(kernelbench_set),
		cmocka_unit_test(events_name_each_line),
		cmocka_unit_test(progress_and_stages_reach_the_listener),
		cmocka_unit_test(json_keys_and_round_trip),
		cmocka_unit_test(json_scope_and_nulls),
		cmocka_unit_test(hostile_input_stays_bounded),
		cmocka_unit_test(long_line_keeps_its_start),
		cmocka_unit_test(patset_errors_name_the_line),
		cmocka_unit_test(workspace_set_extends_a_shipped_one),
		cmocka_unit_test(combined_and_single_matching_agree),
		cmocka_unit_test(patterns_with_nul_bytes_or_quoting),
	};
	return cmocka_run_group_tests_name("parse", tests, setup, teardown);
}
