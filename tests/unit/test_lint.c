/* Unit tests for lint: each shipped rule on real diff text, positive and
 * negative, plus the diff reader and the rule-file reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/lint.h"
#include "core/sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct lint_set *shipped;

static int load_shipped(void **state)
{
	const char *root = getenv("OPTLOOP_ROOT");
	const char *files[] = {"assets/lints/python.lint", "assets/lints/c.lint"};
	struct err e = {0};
	shipped = lint_set_new();
	for (size_t i = 0; i < 2; i++) {
		char *p = fsutil_join(root ? root : ".", files[i]);
		struct sb t = SB_INIT;
		if (fsutil_read_file(p, &t, &e) < 0 ||
		    lint_set_add_text(shipped, t.buf, t.len, p, &e) < 0) {
			fprintf(stderr, "cannot load %s: %s\n", p, e.msg);
			return -1;
		}
		sb_release(&t);
		free(p);
	}
	return 0;
}

static int free_shipped(void **state)
{
	lint_set_free(shipped);
	return 0;
}

/* A one-file, one-hunk diff: before/after are the removed and added lines
 * ("" for none), each line ending in \n; two context lines around them. */
static char *mkdiff(const char *path, const char *before, const char *after)
{
	struct sb d = SB_INIT;
	int nb = 0, na = 0;
	for (const char *p = before; *p; p++)
		nb += *p == '\n';
	for (const char *p = after; *p; p++)
		na += *p == '\n';
	sb_addf(&d, "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n--- a/%s\n+++ b/%s\n",
		path, path, path, path);
	sb_addf(&d, "@@ -10,%d +10,%d @@ def kernel():\n     x = 1\n", nb + 2, na + 2);
	for (const char *p = before; *p;) {
		const char *nl = strchr(p, '\n');
		sb_addc(&d, '-');
		sb_add(&d, p, (size_t)(nl - p + 1));
		p = nl + 1;
	}
	for (const char *p = after; *p;) {
		const char *nl = strchr(p, '\n');
		sb_addc(&d, '+');
		sb_add(&d, p, (size_t)(nl - p + 1));
		p = nl + 1;
	}
	sb_adds(&d, "     return x\n");
	return sb_detach(&d);
}

/* Run the shipped set; return how many findings carry lint id `id`, and
 * copy the first one's message into msg, and its trap into *trap (until the
 * next call), when given. */
static int count_lint(const char *diff, const char *id, const char **trap, char *msg)
{
	struct lint_findings f = {0};
	struct err e = {0};
	assert_int_equal(lint_diff(shipped, diff, strlen(diff), &f, &e), 0);
	int n = 0;
	for (size_t i = 0; i < f.n; i++) {
		if (strcmp(f.v[i].lint, id))
			continue;
		if (n++ == 0) {
			if (msg)
				snprintf(msg, 512, "%s", f.v[i].message);
			if (trap) { /* kept past the findings' release */
				static char kept[64];
				snprintf(kept, sizeof(kept), "%s", f.v[i].trap);
				*trap = kept;
			}
		}
	}
	lint_findings_release(&f);
	return n;
}

static int hits(const char *path, const char *before, const char *after, const char *id)
{
	char *d = mkdiff(path, before, after);
	int n = count_lint(d, id, NULL, NULL);
	free(d);
	return n;
}

static void tf32_enabled_in_kernel_is_flagged(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("fla/ops/gla/chunk.py", "",
			 "torch.backends.cuda.matmul.allow_tf32 = True\n");
	assert_int_equal(count_lint(d, "tf32-enabled", &trap, NULL), 1);
	assert_string_equal(trap, "symmetric-flags");
	assert_int_equal(count_lint(d, "tf32-in-reference", NULL, NULL), 0);
	free(d);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "torch.set_float32_matmul_precision('high')\n",
			      "tf32-enabled"), 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "torch.backends.cuda.matmul.allow_tf32 = False\n",
			      "tf32-enabled"), 0);
	/* Turning it off is the removed side: not a finding. */
	assert_int_equal(hits("fla/ops/gla/chunk.py", "torch.backends.cuda.matmul.allow_tf32 = True\n",
			      "", "tf32-enabled"), 0);
}

static void tf32_in_reference_points_at_its_own_trap(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("tests/ops/test_gla.py", "",
			 "torch.backends.cuda.matmul.allow_tf32 = True\n");
	assert_int_equal(count_lint(d, "tf32-in-reference", &trap, NULL), 1);
	assert_string_equal(trap, "tf32-reference");
	assert_int_equal(count_lint(d, "tf32-enabled", NULL, NULL), 0);
	free(d);
	assert_int_equal(hits("fla/ops/gla/naive.py", "", "torch.backends.cudnn.allow_tf32 = True\n",
			      "tf32-in-reference"), 1);
}

static void input_precision_other_than_ieee_is_flagged(void **state)
{
	assert_int_equal(hits("fla/ops/gla/chunk.py", "b_o = tl.dot(b_q, b_k)\n",
			      "b_o = tl.dot(b_q, b_k, input_precision=\"tf32\")\n", "input-precision"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "b_o = tl.dot(b_q, b_k)\n",
			      "b_o = tl.dot(b_q, b_k, input_precision=\"ieee\")\n", "input-precision"),
			 0);
	assert_int_equal(hits("fla/ops/gla/chunk.py",
			      "b_o = tl.dot(b_q, b_k, input_precision=\"ieee\")\n",
			      "b_o = tl.dot(b_q, b_k)\n", "input-precision-ieee-removed"),
			 1);
	/* Reformatting a line that keeps ieee is not a removal. */
	assert_int_equal(hits("fla/ops/gla/chunk.py",
			      "b_o = tl.dot(b_q, b_k, input_precision=\"ieee\")\n",
			      "b_o = tl.dot(b_q,  b_k, input_precision=\"ieee\")\n",
			      "input-precision-ieee-removed"),
			 0);
}

static void lowered_accumulator_is_flagged(void **state)
{
	const char *b = "    b_h = tl.zeros([BK, BV], dtype=tl.float32)\n";
	const char *a = "    b_h = tl.zeros([BK, BV], dtype=tl.bfloat16)\n";
	assert_int_equal(hits("fla/ops/gla/chunk.py", b, a, "accumulator-lowered"), 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", b, a, "fp32-accumulator-removed"), 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", b, "accumulator-lowered"), 0);
	assert_int_equal(hits("fla/ops/gla/chunk.py", b,
			      "    b_h = tl.zeros([BK, BV], dtype=tl.float32)  # state\n",
			      "fp32-accumulator-removed"),
			 0);
	assert_int_equal(hits("kernel.c", "    double acc = 0.0;\n", "    float acc = 0.0f;\n",
			      "c-accumulator-lowered"),
			 1);
	assert_int_equal(hits("kernel.c", "    float acc = 0.0f;\n", "    double acc = 0.0;\n",
			      "c-accumulator-lowered"),
			 0);
}

static void loosened_tolerance_is_flagged_with_the_numbers(void **state)
{
	char msg[512];
	char *d = mkdiff("tests/ops/test_gla.py", "    assert_close('o', ref, tri, 0.004)\n",
			 "    assert_close('o', ref, tri, 0.04)\n");
	assert_int_equal(count_lint(d, "tolerance-loosened", NULL, msg), 1);
	assert_non_null(strstr(msg, "0.004 -> 0.04"));
	free(d);
	d = mkdiff("tests/test_k.py", "    torch.testing.assert_close(o, r, atol=1e-5, rtol=1e-5)\n",
		   "    torch.testing.assert_close(o, r, atol=1e-3, rtol=1e-5)\n");
	assert_int_equal(count_lint(d, "tolerance-loosened", NULL, msg), 1);
	assert_non_null(strstr(msg, "atol 1e-5 -> 1e-3"));
	assert_null(strstr(msg, "rtol"));
	free(d);
	/* A tolerance keyword that was not there before (defaults are tight). */
	d = mkdiff("tests/test_k.py", "    torch.testing.assert_close(o, r)\n",
		   "    torch.testing.assert_close(o, r, rtol=0.05)\n");
	assert_int_equal(count_lint(d, "tolerance-loosened", NULL, msg), 1);
	assert_non_null(strstr(msg, "rtol 0.05 added"));
	free(d);
	/* Tightening, and the variable name dh0 holding a digit, are not findings. */
	assert_int_equal(hits("tests/ops/test_gla.py", "    assert_close('dh0', ref_dh0, tri_dh0, 0.008)\n",
			      "    assert_close('dh0', ref_dh0, tri_dh0, 0.004)\n", "tolerance-loosened"),
			 0);
	/* The C test's tolerance macro. */
	assert_int_equal(hits("test_kernel.c", "#define TOL 1e-9\n", "#define TOL 1e-6\n",
			      "tolerance-loosened"),
			 1);
	assert_int_equal(hits("test_kernel.c", "#define TOL 1e-6\n", "#define TOL 1e-9\n",
			      "tolerance-loosened"),
			 0);
}

static void skip_markers_are_flagged_when_added(void **state)
{
	assert_int_equal(hits("tests/ops/test_gla.py", "", "@pytest.mark.skip(reason=\"flaky\")\n",
			      "skip-marker"),
			 1);
	assert_int_equal(hits("tests/ops/test_gla.py", "",
			      "@pytest.mark.skipif(T > 1024, reason=\"slow\")\n", "skip-marker"),
			 1);
	assert_int_equal(hits("tests/ops/test_gla.py", "", "@pytest.mark.xfail\n", "skip-marker"), 1);
	assert_int_equal(hits("tests/ops/test_gla.py", "@pytest.mark.skip(reason=\"flaky\")\n", "",
			      "skip-marker"),
			 0);
	assert_int_equal(hits("tests/ops/test_gla.py", "", "# we never skip cases here\n",
			      "skip-marker"),
			 0);
}

static void removed_parametrized_cases_are_flagged(void **state)
{
	assert_int_equal(hits("tests/ops/test_gla.py",
			      "@pytest.mark.parametrize(\"T\", [63, 500, 1024])\n",
			      "@pytest.mark.parametrize(\"T\", [63])\n", "parametrize-values-removed"),
			 1);
	assert_int_equal(hits("tests/ops/test_gla.py",
			      "@pytest.mark.parametrize(\"T\", [63, 500])\n",
			      "@pytest.mark.parametrize(\"T\", [63, 500, 1024])\n",
			      "parametrize-values-removed"),
			 0);
	assert_int_equal(hits("tests/ops/test_gla.py",
			      "            (1, 63, 1, 64, torch.float16),\n"
			      "            (2, 500, 4, 60, torch.float16),\n",
			      "            (1, 63, 1, 64, torch.float16),\n",
			      "parametrize-cases-removed"),
			 1);
	assert_int_equal(hits("tests/ops/test_gla.py",
			      "            (2, 500, 4, 60, torch.float16),\n",
			      "            (2, 500, 4, 64, torch.float16),\n",
			      "parametrize-cases-removed"),
			 0);
}

static void stride_products_without_int64_are_flagged(void **state)
{
	assert_int_equal(hits("fla/ops/gla/chunk.py", "",
			      "    p_x = x + tl.program_id(0) * stride_xm\n", "program-id-times-stride"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    o_x = pid * x.stride(0)\n",
			      "program-id-times-stride"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "",
			      "    p_x = x + tl.program_id(0).to(tl.int64) * stride_xm\n",
			      "program-id-times-stride"),
			 0);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "",
			      "    i_b = i_b.to(tl.int64); p = x + i_b * stride_b  # int64\n",
			      "program-id-times-stride"),
			 0);
	assert_int_equal(hits("src/kernel.c", "", "    int off = row * stride;\n", "c-index-int32"), 1);
	assert_int_equal(hits("src/kernel.c", "", "    size_t off = (size_t)row * stride;\n",
			      "c-index-int32"),
			 0);
}

static void module_level_caches_are_flagged(void **state)
{
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "_out_cache = {}\n", "module-tensor-cache"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "@functools.lru_cache(maxsize=None)\n",
			      "module-tensor-cache"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "_WS = torch.empty(1 << 20, device='cuda')\n",
			      "module-tensor-cache"),
			 1);
	/* Inside a function it is a local. */
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    cache = {}\n", "module-tensor-cache"), 0);
	assert_int_equal(hits("src/kernel.c", "", "static double *last_result;\n", "c-static-cache"), 1);
	assert_int_equal(hits("src/kernel.c", "", "static double scale(double x);\n", "c-static-cache"),
			 0);
}

static void vendor_delegation_is_flagged_in_the_kernel_only(void **state)
{
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    return torch.matmul(q, k.transpose(-1, -2))\n",
			      "vendor-delegation"),
			 1);
	assert_int_equal(hits("fla/ops/attn/parallel.py", "",
			      "    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n",
			      "vendor-delegation"),
			 1);
	assert_int_equal(hits("fla/ops/gla/naive.py", "", "    return torch.matmul(q, k)\n",
			      "vendor-delegation"),
			 0);
	assert_int_equal(hits("tests/ops/test_gla.py", "", "    ref = torch.matmul(q, k)\n",
			      "vendor-delegation"),
			 0);
}

static void fast_math_flags_are_flagged(void **state)
{
	assert_int_equal(hits("Makefile", "CFLAGS = -O2\n", "CFLAGS = -O2 -ffast-math\n", "fast-math"),
			 1);
	assert_int_equal(hits("kernel.c", "", "#pragma GCC optimize (\"Ofast\")\n", "fast-math"), 1);
	assert_int_equal(hits("Makefile", "CFLAGS = -O2 -ffast-math\n", "CFLAGS = -O2\n", "fast-math"),
			 0);
	assert_int_equal(hits("Makefile", "", "CFLAGS = -O3 -fno-fast-math\n", "fast-math"), 0);
}

/* A line only moved (reordered, or re-indented) wrote nothing new: no
 * finding, while the same line written anew is one. */
static void moved_lines_are_not_findings(void **state)
{
	assert_int_equal(hits("kernel.c", "#pragma GCC optimize (\"Ofast\")\nint a;\n",
			      "int a;\n#pragma GCC optimize (\"Ofast\")\n", "fast-math"),
			 0);
	assert_int_equal(hits("src/kernel.c", "static double *last_result;\n",
			      "    static double *last_result;\n", "c-static-cache"),
			 0);
	assert_int_equal(hits("kernel.c", "int a;\n", "int a;\n#pragma GCC optimize (\"Ofast\")\n",
			      "fast-math"),
			 1);
	(void)state;
}

static void diff_reader_tracks_files_hunks_and_line_numbers(void **state)
{
	const char *d =
		"diff --git a/fla/a.py b/fla/a.py\n"
		"index 1..2 100644\n"
		"--- a/fla/a.py\n"
		"+++ b/fla/a.py\n"
		"@@ -1,3 +1,3 @@\n"
		" import torch\n"
		"--- a removed line that looks like a header\n"
		"+torch.backends.cuda.matmul.allow_tf32 = True\n"
		" x = 1\n"
		"@@ -40,2 +40,3 @@ def f():\n"
		" a = 1\r\n"
		"+b = torch.matmul(a, a)\r\n"
		" c = 2\r\n"
		"\\ No newline at end of file\n"
		"diff --git a/fla/new.py b/fla/new.py\n"
		"new file mode 100644\n"
		"--- /dev/null\n"
		"+++ b/fla/new.py\n"
		"@@ -0,0 +1,2 @@\n"
		"+_cache = {}\n"
		"+y = 2\n";
	struct lint_findings f = {0};
	assert_int_equal(lint_diff(shipped, d, strlen(d), &f, NULL), 0);
	assert_int_equal(f.n, 3);
	assert_string_equal(f.v[0].lint, "tf32-enabled");
	assert_string_equal(f.v[0].file, "fla/a.py");
	assert_int_equal(f.v[0].line, 2);
	assert_int_equal(f.v[0].side, '+');
	assert_string_equal(f.v[1].lint, "vendor-delegation");
	assert_int_equal(f.v[1].line, 41);
	assert_string_equal(f.v[1].text, "b = torch.matmul(a, a)");
	assert_string_equal(f.v[2].lint, "module-tensor-cache");
	assert_string_equal(f.v[2].file, "fla/new.py");
	assert_int_equal(f.v[2].line, 1);
	lint_findings_release(&f);

	/* Text that is not a diff, and a truncated hunk, give no findings. */
	const char *junk = "allow_tf32 = True\n@@ -1,9 +1,9 @@\n+allow_tf32 = True";
	assert_int_equal(lint_diff(shipped, junk, strlen(junk), &f, NULL), 0);
	assert_int_equal(f.n, 0); /* no file name: the .py rules do not apply */
	lint_findings_release(&f);
	assert_int_equal(lint_diff(shipped, "", 0, &f, NULL), 0);
	assert_int_equal(f.n, 0);
	lint_findings_release(&f);
}

static void malformed_rule_files_are_refused_with_file_and_line(void **state)
{
	struct {
		const char *text, *want;
	} cases[] = {
		{"trap x\n", "x.lint:1: 'trap' before any 'lint ID' line"},
		{"lint a b\n", "x.lint:1: 'lint' needs an id"},
		{"lint a\ntrap t\nmatch (\nmessage m\n", "x.lint:3: pattern does not compile"},
		{"lint a\ntrap t\nmessage m\n", "x.lint:1: lint a has no 'match' line"},
		{"lint a\ntrap t\nmatch x\nmessage m\ncolour red\n", "x.lint:5: unknown key 'colour'"},
		{"lint a\ntrap t\nmatch x\nmessage m\nside left\n", "x.lint:5: side must be"},
		{"lint a\ntrap t\nkind increase\nmatch x\nvalue [0-9]+\nmessage m\n",
		 "needs a group named num"},
		{"lint a\ntrap t\nkind increase\nmatch x\nmessage m\n", "has no 'value' line"},
		{"lint a\ntrap\n", "x.lint:2: 'trap' has no value"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lint_set *ls = lint_set_new();
		struct err e = {0};
		assert_int_equal(lint_set_add_text(ls, cases[i].text, strlen(cases[i].text), "x.lint",
						   &e),
				 ERR_USAGE);
		if (!strstr(e.msg, cases[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, cases[i].want);
		lint_set_free(ls);
	}
}

static void later_rule_with_same_id_replaces_earlier(void **state)
{
	struct lint_set *ls = lint_set_new();
	const char *a = "# first\nlint a\ntrap t1\nmatch foo\nmessage m1\n\nlint b\ntrap t2\nmatch bar\nmessage m2\n";
	const char *b = "lint a\ntrap t3\nmatch (?!)\nmessage off\n";
	assert_int_equal(lint_set_add_text(ls, a, strlen(a), "a.lint", NULL), 0);
	assert_int_equal(lint_set_add_text(ls, b, strlen(b), "b.lint", NULL), 0);
	assert_int_equal(lint_set_count(ls), 2);
	char *d = mkdiff("x.py", "", "foo bar\n");
	struct lint_findings f = {0};
	assert_int_equal(lint_diff(ls, d, strlen(d), &f, NULL), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].lint, "b");
	lint_findings_release(&f);
	free(d);
	lint_set_free(ls);
}

static void lint_load_reads_assets_then_workspace_dir(void **state)
{
	char dir[] = "/tmp/optloop-lint.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cmd[512];
	const char *root = getenv("OPTLOOP_ROOT");
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/assets/patterns %s/assets/lints %s/ws && cp %s/assets/lints/*.lint "
		 "%s/assets/lints/ && printf 'lint vendor-delegation\\ntrap t\\nmatch (?!)\\n"
		 "message off\\nlint mine\\ntrap my-trap\\nmatch TODO_FAST\\nmessage no\\n' > "
		 "%s/ws/local.lint",
		 dir, dir, dir, root ? root : ".", dir, dir);
	assert_int_equal(system(cmd), 0);
	char *assets = fsutil_join(dir, "assets");
	setenv("OPTLOOP_ASSETS", assets, 1);
	char *ws = fsutil_join(dir, "ws");
	struct lint_set *ls = NULL;
	struct err e = {0};
	assert_int_equal(lint_load(ws, &ls, &e), 0);
	char *d = mkdiff("fla/ops/x/chunk.py", "", "    return torch.matmul(a, b)  # TODO_FAST\n");
	struct lint_findings f = {0};
	assert_int_equal(lint_diff(ls, d, strlen(d), &f, NULL), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.v[0].lint, "mine");
	assert_string_equal(f.v[0].trap, "my-trap");
	lint_findings_release(&f);
	lint_set_free(ls);
	free(d);
	free(ws);
	free(assets);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* The cheats that time less than the work: each flagged in the kernel, with
 * its own trap, and left alone in the tests, the reference and the harness. */
static void side_streams_and_threads_are_flagged(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("fla/ops/gla/chunk.py", "", "    s = torch.cuda.Stream()\n");
	assert_int_equal(count_lint(d, "side-stream", &trap, NULL), 1);
	assert_string_equal(trap, "side-stream");
	free(d);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    with torch.cuda.stream(side):\n",
			      "side-stream"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "",
			      "    t = threading.Thread(target=_bwd, args=(q, k))\n", "side-stream"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    torch.cuda.current_stream().synchronize()\n",
			      "side-stream"),
			 0);
	assert_int_equal(hits("benchmarks/ops/run.py", "", "    s = torch.cuda.Stream()\n",
			      "side-stream"),
			 0);
}

static void patched_timers_are_flagged(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("fla/ops/gla/__init__.py", "", "time.perf_counter = lambda: 0.0\n");
	assert_int_equal(count_lint(d, "patched-timer", &trap, NULL), 1);
	assert_string_equal(trap, "patched-timer");
	free(d);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "triton.testing.do_bench = _fast_bench\n",
			      "patched-timer"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "setattr(torch.cuda, 'synchronize', noop)\n",
			      "patched-timer"),
			 1);
	/* reading a timer, or comparing with one, is not replacing it */
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    t0 = time.perf_counter()\n",
			      "patched-timer"),
			 0);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    if time.time == clock:\n",
			      "patched-timer"),
			 0);
}

static void lazy_tensors_are_flagged(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("fla/ops/gla/chunk.py", "", "class Deferred(torch.Tensor):\n");
	assert_int_equal(count_lint(d, "lazy-tensor", &trap, NULL), 1);
	assert_string_equal(trap, "lazy-tensor");
	free(d);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "",
			      "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n",
			      "lazy-tensor"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    return o.as_subclass(Deferred)\n",
			      "lazy-tensor"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "class ChunkGLAFunction(torch.autograd.Function):\n",
			      "lazy-tensor"),
			 0);
}

static void caches_keyed_by_identity_are_flagged(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("fla/ops/gla/chunk.py", "", "    hit = _cache.get(q.data_ptr())\n");
	assert_int_equal(count_lint(d, "identity-cache", &trap, NULL), 1);
	assert_string_equal(trap, "tensor-cache");
	free(d);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    memo[id(k)] = o\n", "identity-cache"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    if q.data_ptr() in _seen:\n",
			      "identity-cache"),
			 1);
	/* a pointer read for a kernel argument is no cache */
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    ptr = q.data_ptr()\n", "identity-cache"),
			 0);
}

static void inputs_cast_down_at_the_entry_are_flagged(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("fla/ops/gla/chunk.py", "", "    q = q.half()\n");
	assert_int_equal(count_lint(d, "input-downcast", &trap, NULL), 1);
	assert_string_equal(trap, "input-downcast");
	free(d);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    k = k.to(torch.bfloat16)\n",
			      "input-downcast"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    v = v.to(dtype=torch.float8_e4m3fn)\n",
			      "input-downcast"),
			 1);
	/* up to fp32, or the output back to the input's dtype: not a downcast */
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    q = q.to(torch.float32)\n",
			      "input-downcast"),
			 0);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    o = o.to(q.dtype)\n", "input-downcast"),
			 0);
	assert_int_equal(hits("fla/ops/gla/naive.py", "", "    q = q.half()\n", "input-downcast"), 0);
}

static void outputs_aliasing_inputs_are_flagged(void **state)
{
	const char *trap = NULL;
	char *d = mkdiff("fla/ops/gla/chunk.py", "", "    q.copy_(o)\n");
	assert_int_equal(count_lint(d, "output-alias", &trap, NULL), 1);
	assert_string_equal(trap, "output-alias");
	free(d);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    return v, final_state\n", "output-alias"),
			 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    o = q\n", "output-alias"), 1);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    return o, final_state\n", "output-alias"),
			 0);
	assert_int_equal(hits("fla/ops/gla/chunk.py", "", "    o = q.new_empty(q.shape)\n",
			      "output-alias"),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tf32_enabled_in_kernel_is_flagged),
		cmocka_unit_test(tf32_in_reference_points_at_its_own_trap),
		cmocka_unit_test(input_precision_other_than_ieee_is_flagged),
		cmocka_unit_test(lowered_accumulator_is_flagged),
		cmocka_unit_test(loosened_tolerance_is_flagged_with_the_numbers),
		cmocka_unit_test(skip_markers_are_flagged_when_added),
		cmocka_unit_test(removed_parametrized_cases_are_flagged),
		cmocka_unit_test(stride_products_without_int64_are_flagged),
		cmocka_unit_test(module_level_caches_are_flagged),
		cmocka_unit_test(vendor_delegation_is_flagged_in_the_kernel_only),
		cmocka_unit_test(fast_math_flags_are_flagged),
		cmocka_unit_test(moved_lines_are_not_findings),
		cmocka_unit_test(diff_reader_tracks_files_hunks_and_line_numbers),
		cmocka_unit_test(malformed_rule_files_are_refused_with_file_and_line),
		cmocka_unit_test(later_rule_with_same_id_replaces_earlier),
		cmocka_unit_test(lint_load_reads_assets_then_workspace_dir),
		cmocka_unit_test(side_streams_and_threads_are_flagged),
		cmocka_unit_test(patched_timers_are_flagged),
		cmocka_unit_test(lazy_tensors_are_flagged),
		cmocka_unit_test(caches_keyed_by_identity_are_flagged),
		cmocka_unit_test(inputs_cast_down_at_the_entry_are_flagged),
		cmocka_unit_test(outputs_aliasing_inputs_are_flagged),
	};
	return cmocka_run_group_tests(tests, load_shipped, free_shipped);
}
