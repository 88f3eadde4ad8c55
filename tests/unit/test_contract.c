/* Unit tests for contract: reading docs/draft.md, rewriting one field,
 * explaining what is missing, and the template. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/contract.h"
#include "core/rules.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char full_doc[] =
	"# Task contract — chunk_gla\n"
	"\n"
	"<!-- hints: Target: this line is inside a comment and is not a field -->\n"
	"\n"
	"## Op and entry point\n"
	"\n"
	"<!-- required: the op -->\n"
	"chunk_gla — `fla.ops.gla.chunk_gla`\n"
	"\n"
	"## Target (shapes and speedup)\n"
	"\n"
	"B=8 T=4096 H=16 D=128, fwd and fwdbwd\n"
	"1.3x geomean over main\n"
	"\n"
	"## Allowed languages\n"
	"\n"
	"- Triton\n"
	"- CUDA\n"
	"\n"
	"## Validation command\n"
	"\n"
	"```sh\n"
	"python -m benchmarks.ops.verify --op chunk_gla\n"
	"```\n"
	"\n"
	"## Benchmark command\n"
	"\n"
	"`python -m benchmarks.ops.verify --op chunk_gla --base main`\n"
	"\n"
	"## Promotion criteria\n"
	"\n"
	"Full gate green; win beyond noise; profiler reading attached.\n"
	"\n"
	"## Frozen scope\n"
	"\n"
	"- tests/ops/test_gla.py\n"
	"- fla/ops/gla/naive.py\n"
	"\n"
	"## Iteration cap (optional)\n"
	"\n"
	"20\n"
	"\n"
	"## Win threshold\n"
	"\n"
	"5%\n";

static void parses_every_section(void **state)
{
	struct contract c;
	struct err e = {0};

	assert_int_equal(contract_parse(full_doc, strlen(full_doc), &c, &e), 0);
	assert_string_equal(c.v[CF_OP], "chunk_gla — `fla.ops.gla.chunk_gla`");
	assert_string_equal(c.v[CF_TARGET], "B=8 T=4096 H=16 D=128, fwd and fwdbwd\n1.3x geomean over main");
	assert_string_equal(c.v[CF_LANGUAGES], "- Triton\n- CUDA");
	assert_string_equal(c.v[CF_VALIDATION], "python -m benchmarks.ops.verify --op chunk_gla");
	assert_string_equal(c.v[CF_BENCHMARK], "python -m benchmarks.ops.verify --op chunk_gla --base main");
	assert_string_equal(c.v[CF_PROMOTION], "Full gate green; win beyond noise; profiler reading attached.");
	assert_string_equal(c.v[CF_FROZEN], "- tests/ops/test_gla.py\n- fla/ops/gla/naive.py");
	assert_int_equal(c.cap, 20);
	assert_float_equal(c.threshold, 0.05, 1e-12);
	assert_int_equal(contract_missing(&c, NULL), 0);
	contract_release(&c);
}

static void parses_key_value_lines_a_person_might_write(void **state)
{
	static const char doc[] =
		"# Contract\n\n"
		"- **Op:** chunk_gdn\n"
		"- **Target:** 1.2x on T=8192\n"
		"* Languages: Triton\n"
		"**Verify command**: python -m benchmarks.ops.verify --op chunk_gdn\n"
		"Bench: `python run.py --base main`\n"
		"Promotion: full gate + confirm run\n"
		"Frozen files: tests/ops/test_gdn.py, fla/ops/gated_delta_rule/naive.py\n"
		"Max iterations: 12\n"
		"Notes: this is not a field\n";
	struct contract c;

	assert_int_equal(contract_parse(doc, strlen(doc), &c, NULL), 0);
	assert_string_equal(c.v[CF_OP], "chunk_gdn");
	assert_string_equal(c.v[CF_TARGET], "1.2x on T=8192");
	assert_string_equal(c.v[CF_LANGUAGES], "Triton");
	assert_string_equal(c.v[CF_VALIDATION], "python -m benchmarks.ops.verify --op chunk_gdn");
	assert_string_equal(c.v[CF_BENCHMARK], "python run.py --base main");
	assert_string_equal(c.v[CF_PROMOTION], "full gate + confirm run");
	assert_string_equal(c.v[CF_FROZEN], "tests/ops/test_gdn.py, fla/ops/gated_delta_rule/naive.py");
	assert_int_equal(c.cap, 12);
	assert_float_equal(c.threshold, RULES_THRESHOLD, 0);
	contract_release(&c);
}

static void empty_sections_hints_and_placeholders_are_missing(void **state)
{
	static const char doc[] = "## Op and entry point\n\n<!-- the op\n     on two lines -->\n\n"
				  "## Target\nTODO\n"
				  "## Allowed languages\n\n```\n```\n"
				  "## Validation command\n...\n"
				  "## Benchmark command\n  \n"
				  "## Promotion criteria\nsomething\n";
	struct contract c;
	struct sb why = SB_INIT;

	assert_int_equal(contract_parse(doc, strlen(doc), &c, NULL), 0);
	for (int f = 0; f < CF_NFIELDS; f++)
		if (f != CF_PROMOTION)
			assert_null(c.v[f]);
	assert_int_equal(contract_missing(&c, &why), 6);
	/* One line each, naming the section and the command that sets it. */
	assert_non_null(strstr(why.buf, "Op and entry point is missing"));
	assert_non_null(strstr(why.buf, "optloop contract --set validation=..."));
	assert_non_null(strstr(why.buf, "'## Frozen scope' section"));
	assert_null(strstr(why.buf, "Promotion criteria is missing"));
	int lines = 0;
	for (const char *p = why.buf; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 6);
	sb_release(&why);
	contract_release(&c);
	assert_int_equal(contract_missing(NULL, NULL), CF_NFIELDS);
}

/* Found by fuzz_contract: NUL bytes in a value made it a non-NULL empty
 * (or cut) C string, counted as filled.  They are dropped: a value of NULs
 * only is missing. */
static void nul_bytes_in_values_are_dropped(void **state)
{
	static const char doc[] = "## Frozen scope\n\0\0\0\n"
				  "## Validation command\n./ve\0rify --op x\n"
				  "## Benchmark command\n```\n./bench\0\n```\n";
	struct contract c;

	assert_int_equal(contract_parse(doc, sizeof(doc) - 1, &c, NULL), 0);
	assert_null(c.v[CF_FROZEN]);
	assert_string_equal(c.v[CF_VALIDATION], "./verify --op x");
	assert_string_equal(c.v[CF_BENCHMARK], "./bench");
	contract_release(&c);
}

static void peak_and_cost_are_optional_and_a_bad_cost_is_a_usage_error(void **state)
{
	static const char doc[] = "Op: chunk_gla\nPeak: H100 SXM\n"
				  "Cost: family=gla; dtype=bf16; chunk=64\n";
	static const char bad[] = "Op: chunk_gla\nCost: bytes=B*Q\n";
	struct contract c;
	struct err e = {0};

	assert_int_equal(contract_parse(doc, strlen(doc), &c, &e), 0);
	assert_string_equal(c.peak, "H100 SXM");
	assert_string_equal(c.cost, "family=gla; dtype=bf16; chunk=64");
	assert_string_equal(c.v[CF_OP], "chunk_gla");
	contract_release(&c);
	assert_int_equal(contract_parse(bad, strlen(bad), &c, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "unknown variable \"Q\""));
	assert_non_null(strstr(e.msg, "--set cost="));
	contract_release(&c);
	struct sb out = SB_INIT;
	assert_int_equal(contract_set(doc, strlen(doc), "cost", "dtype=int4", &out, &e), ERR_USAGE);
	assert_int_equal(contract_set(doc, strlen(doc), "peak", "bw=5e12", &out, &e), 0);
	assert_non_null(strstr(out.buf, "Peak: bw=5e12"));
	sb_release(&out);
}

static void unreadable_cap_or_threshold_is_a_usage_error(void **state)
{
	static const char doc[] = "## Op\nx\n## Win threshold\nthree percent\n";
	struct contract c;
	struct err e = {0};

	assert_int_equal(contract_parse(doc, strlen(doc), &c, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "three percent"));
	assert_non_null(strstr(e.msg, "--set threshold=3%"));
	assert_string_equal(c.v[CF_OP], "x"); /* the rest is still read */
	contract_release(&c);

	int cap;
	double t;
	assert_int_equal(contract_parse_cap("20 iterations", &cap), 0);
	assert_int_equal(cap, 20);
	assert_int_equal(contract_parse_cap("0", &cap), ERR_USAGE);
	assert_int_equal(contract_parse_cap("-3", &cap), ERR_USAGE);
	assert_int_equal(contract_parse_cap("", &cap), 0);
	assert_int_equal(cap, 0);
	assert_int_equal(contract_parse_threshold("3%", &t), 0);
	assert_float_equal(t, 0.03, 1e-12);
	assert_int_equal(contract_parse_threshold("2.5 %", &t), 0);
	assert_float_equal(t, 0.025, 1e-12);
	assert_int_equal(contract_parse_threshold("0.04", &t), 0);
	assert_float_equal(t, 0.04, 1e-12);
	assert_int_equal(contract_parse_threshold("7", &t), 0);
	assert_float_equal(t, 0.07, 1e-12);
	assert_int_equal(contract_parse_threshold("150%", &t), ERR_USAGE);
	assert_int_equal(contract_parse_threshold("0", &t), ERR_USAGE);
}

/* A command section says one command: prose beside its fenced block would
 * run through /bin/sh -c, and of two sections only the first would run. */
static void command_sections_hold_one_command(void **state)
{
	static const char prose[] = "## Op\nx\n## Validation command\nRun this from the root:\n"
				    "```sh\n./verify --op x\n```\n## Target\n2x\n";
	static const char twice[] = "## Validation command\n./verify\n## Target\n2x\n"
				    "## Validation command\n./verify --op y\n";
	static const char key_twice[] = "- **Benchmark:** ./bench\n- **Benchmark:** ./bench2\n";
	static const char script[] = "## Validation command\n```sh\nset -e\n\n./verify\n```\n"
				     "<!-- notes go in a comment -->\n";
	struct contract c;
	struct err e = {0};

	assert_int_equal(contract_parse(prose, strlen(prose), &c, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "Validation command in docs/draft.md holds text beside its "
				      "fenced block"));
	assert_non_null(strstr(e.msg, "contract --set validation="));
	contract_release(&c);
	assert_int_equal(contract_parse(twice, strlen(twice), &c, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "gives the Validation command 2 times"));
	contract_release(&c);
	assert_int_equal(contract_parse(key_twice, strlen(key_twice), &c, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "gives the Benchmark command 2 times"));
	contract_release(&c);
	/* one fenced script, blank lines inside, a comment beside: fine */
	assert_int_equal(contract_parse(script, strlen(script), &c, &e), 0);
	assert_string_equal(c.v[CF_VALIDATION], "set -e\n\n./verify");
	contract_release(&c);
}

/* contract_set on doc, expecting exactly want. */
static void set_expect(const char *doc, const char *field, const char *value, const char *want)
{
	struct sb out = SB_INIT;
	struct err e = {0};

	assert_int_equal(contract_set(doc, strlen(doc), field, value, &out, &e), 0);
	assert_string_equal(out.buf, want);
	sb_release(&out);
}

static void set_replaces_a_value_and_keeps_everything_else(void **state)
{
	struct sb want = SB_INIT;
	const char *from = "Full gate green; win beyond noise; profiler reading attached.\n";
	const char *at = strstr(full_doc, from);

	sb_add(&want, full_doc, (size_t)(at - full_doc));
	sb_adds(&want, "Full gate and a confirm run\n");
	sb_adds(&want, at + strlen(from));
	set_expect(full_doc, "promotion", "Full gate and a confirm run", want.buf);

	/* A fenced command stays fenced. */
	sb_reset(&want);
	from = "```sh\npython -m benchmarks.ops.verify --op chunk_gla\n```\n";
	at = strstr(full_doc, from);
	sb_add(&want, full_doc, (size_t)(at - full_doc));
	sb_adds(&want, "```sh\n./verify.sh --fast\n```\n");
	sb_adds(&want, at + strlen(from));
	set_expect(full_doc, "validation", "./verify.sh --fast", want.buf);

	/* The threshold is written as a percentage, at the end of the file. */
	sb_reset(&want);
	sb_add(&want, full_doc, strlen(full_doc) - 3);
	sb_adds(&want, "4.5%\n");
	set_expect(full_doc, "threshold", "0.045", want.buf);
	sb_release(&want);
}

static void set_fills_an_empty_section_after_its_hint(void **state)
{
	set_expect("# C\n\n## Target\n\n<!-- hint -->\n\n## Allowed languages\n\nTriton\n", "target",
		   "1.3x", "# C\n\n## Target\n\n<!-- hint -->\n\n1.3x\n\n## Allowed languages\n\nTriton\n");
	/* A heading straight after a heading. */
	set_expect("## Target\n## Frozen scope\n", "target", "1.3x",
		   "## Target\n\n1.3x\n\n## Frozen scope\n");
	/* Commands go in a fenced block; no newline at the end of the file. */
	set_expect("## Benchmark command\n<!-- hint -->", "benchmark", "run.py --base main",
		   "## Benchmark command\n<!-- hint -->\n\n```sh\nrun.py --base main\n```\n");
}

static void set_adds_a_missing_field_as_a_section(void **state)
{
	set_expect("# C\n\n## Op\n\nx\n", "frozen", "tests/t.py",
		   "# C\n\n## Op\n\nx\n\n## Frozen scope\n\ntests/t.py\n");
	set_expect("", "cap", "10", "## Iteration cap\n\n10\n");
	set_expect("# C", "op", "y", "# C\n\n## Op and entry point\n\ny\n");
}

static void set_rewrites_a_key_value_line_in_place(void **state)
{
	set_expect("- **Op:** old_op\n- **Target:** 1.2x\n", "op", "new_op",
		   "- **Op:** new_op\n- **Target:** 1.2x\n");
	set_expect("Bench: `python run.py`  \nNext line\n", "benchmark", "python run.py --base main",
		   "Bench: python run.py --base main  \nNext line\n");
	struct sb out = SB_INIT;
	struct err e = {0};
	assert_int_equal(contract_set("Op: x\n", 6, "op", "two\nlines", &out, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "one line"));
	sb_release(&out);
}

static void set_keeps_crlf_line_ends(void **state)
{
	set_expect("## Target\r\n\r\nold\r\n\r\n## Op\r\n\r\nx\r\n", "target", "new\nvalue",
		   "## Target\r\n\r\nnew\r\nvalue\r\n\r\n## Op\r\n\r\nx\r\n");
	/* A line that would read as a heading is fenced. */
	set_expect("## Target\r\n\r\nold\r\n", "target", "# not a heading",
		   "## Target\r\n\r\n```\r\n# not a heading\r\n```\r\n");
	set_expect("## Op\r\n\r\nx\r\n", "languages", "Triton",
		   "## Op\r\n\r\nx\r\n\r\n## Allowed languages\r\n\r\nTriton\r\n");
}

static void set_then_parse_round_trips_awkward_values(void **state)
{
	static const char *const vals[] = {
		"# looks like a heading", "uses ```fences``` inside", "multi\nline\nvalue",
		"list:\n- a.py\n  > quoted\n```\ninside\n```", "trailing \nblank",
		"`wrapped in ticks`", "<!-- not a comment --> value",
	};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		struct sb out = SB_INIT;
		struct contract c;
		assert_int_equal(contract_set(full_doc, strlen(full_doc), "target", vals[i], &out, NULL), 0);
		assert_int_equal(contract_parse(out.buf, out.len, &c, NULL), 0);
		if (!strcmp(vals[i], "`wrapped in ticks`"))
			assert_string_equal(c.v[CF_TARGET], "wrapped in ticks");
		else
			assert_string_equal(c.v[CF_TARGET], vals[i]);
		/* The neighbours are untouched. */
		assert_string_equal(c.v[CF_LANGUAGES], "- Triton\n- CUDA");
		assert_int_equal(contract_missing(&c, NULL), 0);
		contract_release(&c);
		sb_release(&out);
	}
}

static void set_empty_value_clears_the_field(void **state)
{
	struct sb out = SB_INIT;
	struct contract c;

	assert_int_equal(contract_set(full_doc, strlen(full_doc), "frozen", "", &out, NULL), 0);
	assert_int_equal(contract_parse(out.buf, out.len, &c, NULL), 0);
	assert_null(c.v[CF_FROZEN]);
	assert_int_equal(contract_missing(&c, NULL), 1);
	assert_non_null(strstr(out.buf, "## Frozen scope\n\n\n## Iteration cap"));
	contract_release(&c);
	sb_release(&out);
}

static void set_refuses_unknown_fields_and_bad_numbers(void **state)
{
	struct sb out = SB_INIT;
	struct err e = {0};

	assert_int_equal(contract_set("", 0, "colour", "red", &out, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "no field 'colour'"));
	assert_int_equal(contract_set("", 0, "cap", "lots", &out, &e), ERR_USAGE);
	assert_int_equal(contract_set("", 0, "threshold", "200%", &out, &e), ERR_USAGE);
	assert_int_equal(out.len, 0);
	sb_release(&out);
}

static void unclosed_comment_is_text_and_hides_nothing(void **state)
{
	/* Found by fuzzing: an unclosed "<!--" swallowed every later section,
	 * so a field that was just set could not be read back. */
	static const char doc[] = "# C\n\n<!-- forgot to close\n\n## Target\n\n1.3x\n\n"
				  "| a | b <!-- c |\n";
	struct contract c;
	struct sb out = SB_INIT;

	assert_int_equal(contract_parse(doc, strlen(doc), &c, NULL), 0);
	assert_string_equal(c.v[CF_TARGET], "1.3x\n\n| a | b <!-- c |");
	contract_release(&c);
	assert_int_equal(contract_set(doc, strlen(doc), "validation", "./verify.sh", &out, NULL), 0);
	assert_int_equal(contract_parse(out.buf, out.len, &c, NULL), 0);
	assert_string_equal(c.v[CF_VALIDATION], "./verify.sh");
	contract_release(&c);
	sb_release(&out);
}

static void stray_fence_is_text_and_new_blocks_avoid_it(void **state)
{
	/* Found by fuzzing: a ``` that is never closed hid every later section,
	 * and the block contract_set appended then closed it. */
	static const char doc[] = "## Target\n\n```1.3x\n\n## Op\n\nchunk_gla\n";
	struct contract c;
	struct sb out = SB_INIT;
	struct err e = {0};

	assert_int_equal(contract_parse(doc, strlen(doc), &c, NULL), 0);
	assert_string_equal(c.v[CF_TARGET], "```1.3x");
	assert_string_equal(c.v[CF_OP], "chunk_gla");
	contract_release(&c);
	assert_int_equal(contract_set(doc, strlen(doc), "validation", "./verify.sh", &out, NULL), 0);
	assert_non_null(strstr(out.buf, "~~~sh\n./verify.sh\n~~~\n"));
	assert_int_equal(contract_parse(out.buf, out.len, &c, NULL), 0);
	assert_string_equal(c.v[CF_VALIDATION], "./verify.sh");
	assert_string_equal(c.v[CF_TARGET], "```1.3x");
	assert_string_equal(c.v[CF_OP], "chunk_gla");
	contract_release(&c);
	sb_release(&out);
	/* With both kinds left open there is no safe fence: refuse, say why. */
	static const char both[] = "## Target\n\n```a\n~~~b\n";
	assert_int_equal(contract_set(both, strlen(both), "frozen", "# x", &out, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "never closed"));
	sb_release(&out);
}

static void value_sharing_lines_with_comments_keeps_them_closed(void **state)
{
	/* Found by fuzzing: replacing whole lines cut a comment in half. */
	set_expect("## Target\n\n<!-- hint\n  more -->old <!-- note\n  end -->\n\n## Op\n\nx\n",
		   "target", "new",
		   "## Target\n\n<!-- hint\n  more -->new\n<!-- note\n  end -->\n\n## Op\n\nx\n");
	set_expect("## Target\n\n<!-- h -->old\n", "target", "# fenced",
		   "## Target\n\n<!-- h -->\n```\n# fenced\n```\n");
}

static void field_names_and_synonyms(void **state)
{
	assert_string_equal(contract_field_name(CF_VALIDATION), "validation");
	assert_string_equal(contract_field_name((enum contract_field)CF_THRESHOLD), "threshold");
	assert_string_equal(contract_field_heading(CF_FROZEN), "Frozen scope");
	assert_int_equal(contract_field_parse("Frozen"), CF_FROZEN);
	assert_int_equal(contract_field_parse("verify"), CF_VALIDATION);
	assert_int_equal(contract_field_parse("iteration-cap"), CF_CAP);
	assert_int_equal(contract_field_parse("nope"), -1);
	assert_int_equal(contract_field_parse(NULL), -1);
}

static void list_items_split_lines_commas_and_marks(void **state)
{
	char **v;
	size_t n = contract_list_items("- `tests/ops/test_gla.py`\n* fla/ops/gla/naive.py, extra.py\n\n1. last.py",
				       &v);
	assert_int_equal(n, 4);
	assert_string_equal(v[0], "tests/ops/test_gla.py");
	assert_string_equal(v[1], "fla/ops/gla/naive.py");
	assert_string_equal(v[2], "extra.py");
	assert_string_equal(v[3], "last.py");
	contract_list_free(v, n);
	assert_int_equal(contract_list_items(NULL, &v), 0);
	assert_null(v);
}

/* Names of the target shapes read from a Target text, one per line. */
static char *target_names(const char *target)
{
	struct contract_shape *v;
	size_t n = contract_target_shapes(target, &v);
	struct sb out = SB_INIT;
	sb_init(&out);
	for (size_t i = 0; i < n; i++) {
		char *name = contract_shape_name(&v[i]);
		sb_addf(&out, "%s\n", name);
		free(name);
	}
	contract_shapes_free(v, n);
	return sb_detach(&out);
}

static void expect_targets(const char *target, const char *want)
{
	char *got = target_names(target);
	assert_string_equal(got, want);
	free(got);
}

static void target_shapes_compact_spelling_with_a_mode(void **state)
{
	expect_targets("chunk_linear_attn fwd, shapes B8-T8192-H16-D64 and B16-T4096-H32-D64 (bf16), "
		       ">= 3 % geomean speedup",
		       "fwd B=8 T=8192 H=16 D=64\n"
		       "fwd B=16 T=4096 H=32 D=64\n");
}

static void target_shapes_key_value_spelling_times_each_mode(void **state)
{
	/* The template's example: every mode named applies to the shape. */
	expect_targets("B=8 T=4096 H=16 D=128, fwd and fwdbwd, 1.3x over main",
		       "fwd B=8 T=4096 H=16 D=128\n"
		       "fwdbwd B=8 T=4096 H=16 D=128\n");
	expect_targets("b = 2, t = 512, h = 4, d = 64", "B=2 T=512 H=4 D=64\n");
}

static void target_shapes_read_the_measured_shape_keys(void **state)
{
	/* The spelling optloop itself prints (measure_shape_key): the mode
	 * right before a shape belongs to that shape only. */
	expect_targets("- fwd B=4 T=2048 H=16 D=64 chunk_linear_attn\n"
		       "- fwdbwd B=1 T=8192 H=8 D=128 L=2 chunk_gla\n",
		       "fwd B=4 T=2048 H=16 D=64\n"
		       "fwdbwd B=1 T=8192 H=8 D=128 L=2\n");
	/* A mode not attached to a shape applies to the shapes without one. */
	expect_targets("bwd only: fwd B=1 T=64 H=1 D=16 and B=2 T=64 H=1 D=16",
		       "fwd B=1 T=64 H=1 D=16\n"
		       "bwd B=2 T=64 H=1 D=16\n");
}

static void target_shapes_split_on_a_repeated_dimension_and_dedupe(void **state)
{
	expect_targets("B=8 T=4096, B=16 T=2048; again B=8 T=4096 and T=1024",
		       "B=8 T=4096\n"
		       "B=16 T=2048\n"
		       "T=1024\n");
}

static void target_shapes_registry_spelling(void **state)
{
	/* FLA's SHAPE_CONFIGS keys, as written in registry.py */
	expect_targets("fwd B4_T4096_H64_D128 and B8_T1024_H8_D64, 1.2x geomean",
		       "fwd B=4 T=4096 H=64 D=128\n"
		       "B=8 T=1024 H=8 D=64\n");
	expect_targets("B1_T8192_H96_D128_L2", "B=1 T=8192 H=96 D=128 L=2\n");
	/* snake_case words with digits are no shapes */
	expect_targets("see run_B2_notes and attn_T4 tests", "");
}

static void target_without_shapes_names_none(void **state)
{
	/* GPU names and numbers are not shapes: compact spellings need three
	 * dimensions. */
	expect_targets("all three shapes, 1.2x", "");
	expect_targets("1.3x over main on H100, B200 and T4 (bf16); D64 heads", "");
	expect_targets("L40S and 3D tensors, T4.5 fwd", "");
	expect_targets(NULL, "");
	struct contract_shape *v = (void *)1;
	assert_int_equal(contract_target_shapes("", &v), 0);
	assert_null(v);
}

static void shape_matches_measured_keys(void **state)
{
	struct contract_shape *v;
	size_t n = contract_target_shapes("fwd B=4 T=2048 H=16 D=64 and T=512", &v);
	assert_int_equal(n, 2);
	assert_true(contract_shape_matches(&v[0], "fwd B=4 T=2048 H=16 D=64 chunk_linear_attn"));
	assert_true(contract_shape_matches(&v[0], "FWD B=4 T=2048 H=16 D=64"));
	assert_false(contract_shape_matches(&v[0], "fwdbwd B=4 T=2048 H=16 D=64 chunk_linear_attn"));
	assert_false(contract_shape_matches(&v[0], "fwd B=4 T=2048 H=16 D=128 chunk_linear_attn"));
	assert_false(contract_shape_matches(&v[0], "- B=4 T=2048 H=16 D=64"));
	assert_false(contract_shape_matches(&v[0], "fwd B=4 T=2048 H=16"));
	/* T=512 with no mode: any mode, any other dimension. */
	assert_true(contract_shape_matches(&v[1], "fwd B=2 T=512 H=4 D=64 chunk_linear_attn"));
	assert_true(contract_shape_matches(&v[1], "- B=2 T=512 H=4 D=64 L=3"));
	assert_false(contract_shape_matches(&v[1], "fwd B=2 T=5120 H=4 D=64"));
	assert_false(contract_shape_matches(&v[1], NULL));
	contract_shapes_free(v, n);
}

/* The template is found through the assets lookup, which wants a
 * patterns/ folder: build a scratch assets dir around the real templates. */
static char scratch[64];

static int assets_setup(void **state)
{
	const char *root = getenv("OPTLOOP_ROOT");
	char cwd[4096], *tpl, *link, *pat;

	strcpy(scratch, "/tmp/optloop-contract.XXXXXX");
	assert_non_null(mkdtemp(scratch));
	if (!root)
		root = getcwd(cwd, sizeof(cwd));
	tpl = fsutil_join(root, "assets/templates");
	link = fsutil_join(scratch, "templates");
	pat = fsutil_join(scratch, "patterns");
	assert_int_equal(symlink(tpl, link), 0);
	assert_int_equal(fsutil_mkdir_p(pat, NULL), 0);
	setenv("OPTLOOP_ASSETS", scratch, 1);
	free(tpl), free(link), free(pat);
	return 0;
}

static int assets_teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", scratch);
	return system(cmd);
}

static void template_fills_the_given_fields(void **state)
{
	struct contract in = {0}, back;
	struct sb out = SB_INIT;
	struct err e = {0};

	in.v[CF_OP] = "chunk_gdn — fla.ops.gated_delta_rule.chunk_gated_delta_rule";
	in.v[CF_VALIDATION] = "python -m benchmarks.ops.verify --op chunk_gdn";
	in.v[CF_FROZEN] = "tests/ops/test_gdn.py\nfla/ops/gated_delta_rule/naive.py";
	in.cap = 25;
	in.threshold = 0.05;
	assert_int_equal(contract_template(&in, &out, &e), 0);
	assert_int_equal(strncmp(out.buf, "# Task contract — chunk_gdn\n", 29), 0);
	assert_int_equal(contract_parse(out.buf, out.len, &back, &e), 0);
	assert_string_equal(back.v[CF_OP], in.v[CF_OP]);
	assert_string_equal(back.v[CF_VALIDATION], in.v[CF_VALIDATION]);
	assert_string_equal(back.v[CF_FROZEN], in.v[CF_FROZEN]);
	assert_null(back.v[CF_TARGET]);
	assert_int_equal(back.cap, 25);
	assert_float_equal(back.threshold, 0.05, 1e-12);
	assert_int_equal(contract_missing(&back, NULL), 4);
	/* The hints stay in the file for the person who fills the rest. */
	assert_non_null(strstr(out.buf, "<!-- required: the shapes that matter"));
	contract_release(&back);
	sb_release(&out);

	/* An empty template: every required field missing, nothing invented. */
	assert_int_equal(contract_template(NULL, &out, &e), 0);
	assert_int_equal(contract_parse(out.buf, out.len, &back, &e), 0);
	assert_int_equal(contract_missing(&back, NULL), CF_NFIELDS);
	assert_int_equal(back.cap, 0);
	assert_float_equal(back.threshold, RULES_THRESHOLD, 0);
	contract_release(&back);
	sb_release(&out);
}

/* A form asks for a field under the hint the file gives for it; the
 * template's when the file has none (a section written without one, or
 * no section at all). */
static void hint_comes_from_the_file_else_the_template(void **state)
{
	static const char doc[] =
		"## Op and entry point\n"
		"\n"
		"<!-- required: the op,\n"
		"     e.g. chunk_gla -->\n"
		"<!-- one more line -->\n"
		"\n"
		"## Allowed languages\n"
		"\n"
		"Triton\n";
	char *h = contract_hint(doc, strlen(doc), CF_OP);
	assert_string_equal(h, "required: the op, e.g. chunk_gla one more line");
	free(h);
	/* no comment in the file's section: the template's hint */
	h = contract_hint(doc, strlen(doc), CF_LANGUAGES);
	assert_string_equal(h, "required: what the kernel may be written in, e.g. Triton");
	free(h);
	/* no section at all */
	h = contract_hint(doc, strlen(doc), CF_TARGET);
	assert_non_null(h);
	assert_non_null(strstr(h, "e.g. B=8 T=4096 H=16 D=128"));
	free(h);
	h = contract_hint(NULL, 0, CF_THRESHOLD);
	assert_string_equal(h, "optional: the smallest speedup that counts as a win; 3% when empty");
	free(h);
	assert_null(contract_hint(doc, strlen(doc), CF_ALL));
}

static void target_speedup_reads_the_factor_and_its_scope(void **state)
{
	struct contract_target t;
	struct err e = {0};
	assert_int_equal(contract_target_speedup("every shape >= 1.5x", &t, &e), 0);
	assert_float_equal(t.speedup, 1.5, 1e-12);
	assert_int_equal(t.scope, TARGET_EVERY);
	/* shapes with digits are not the factor; named shapes mean every one */
	assert_int_equal(contract_target_speedup("B8-T8192-H16-D64 and B=8 T=4096 (bf16) 1.2\xc3\x97",
						 &t, &e),
			 0);
	assert_float_equal(t.speedup, 1.2, 1e-12);
	assert_int_equal(t.scope, TARGET_EVERY);
	assert_int_equal(contract_target_speedup("chunk_linear_attn fwd, shapes B8-T8192-H16-D64 and "
						 "B16-T4096-H32-D64 (bf16), >= 3 % geomean speedup",
						 &t, &e),
			 0);
	assert_float_equal(t.speedup, 1.03, 1e-12);
	assert_int_equal(t.scope, TARGET_GEOMEAN);
	assert_int_equal(contract_target_speedup("All three shapes, 2 times faster", &t, &e), 0);
	assert_float_equal(t.speedup, 2, 1e-12);
	/* what cannot be read is said, with the form that can */
	assert_int_equal(contract_target_speedup("make it faster", &t, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "names no speedup"));
	assert_non_null(strstr(e.msg, "every shape >= 1.5x"));
	assert_int_equal(contract_target_speedup("1.5x", &t, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "whether every shape or the geomean"));
	assert_int_equal(contract_target_speedup(NULL, &t, &e), ERR_FAIL);
	/* a factor of 1x or below is no speedup: said so, with the factor */
	assert_int_equal(contract_target_speedup("B4_T4096_H64_D128 >= 0.9x", &t, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "asks for 0.9x, which is no speedup"));
	assert_float_equal(t.speedup, 0.9, 1e-12);
	assert_int_equal(contract_target_speedup("every shape >= 1x", &t, &e), ERR_FAIL);
	assert_float_equal(t.speedup, 1, 1e-12);
	assert_int_equal(contract_target_speedup("1.5x", &t, &e), ERR_FAIL);
	assert_float_equal(t.speedup, 1.5, 1e-12); /* failed for its scope, not its factor */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_every_section),
		cmocka_unit_test(parses_key_value_lines_a_person_might_write),
		cmocka_unit_test(empty_sections_hints_and_placeholders_are_missing),
		cmocka_unit_test(nul_bytes_in_values_are_dropped),
		cmocka_unit_test(peak_and_cost_are_optional_and_a_bad_cost_is_a_usage_error),
		cmocka_unit_test(unreadable_cap_or_threshold_is_a_usage_error),
		cmocka_unit_test(command_sections_hold_one_command),
		cmocka_unit_test(set_replaces_a_value_and_keeps_everything_else),
		cmocka_unit_test(set_fills_an_empty_section_after_its_hint),
		cmocka_unit_test(set_adds_a_missing_field_as_a_section),
		cmocka_unit_test(set_rewrites_a_key_value_line_in_place),
		cmocka_unit_test(set_keeps_crlf_line_ends),
		cmocka_unit_test(set_then_parse_round_trips_awkward_values),
		cmocka_unit_test(set_empty_value_clears_the_field),
		cmocka_unit_test(set_refuses_unknown_fields_and_bad_numbers),
		cmocka_unit_test(unclosed_comment_is_text_and_hides_nothing),
		cmocka_unit_test(stray_fence_is_text_and_new_blocks_avoid_it),
		cmocka_unit_test(value_sharing_lines_with_comments_keeps_them_closed),
		cmocka_unit_test(field_names_and_synonyms),
		cmocka_unit_test(list_items_split_lines_commas_and_marks),
		cmocka_unit_test(target_shapes_compact_spelling_with_a_mode),
		cmocka_unit_test(target_shapes_key_value_spelling_times_each_mode),
		cmocka_unit_test(target_shapes_read_the_measured_shape_keys),
		cmocka_unit_test(target_shapes_split_on_a_repeated_dimension_and_dedupe),
		cmocka_unit_test(target_shapes_registry_spelling),
		cmocka_unit_test(target_without_shapes_names_none),
		cmocka_unit_test(shape_matches_measured_keys),
		cmocka_unit_test(target_speedup_reads_the_factor_and_its_scope),
		cmocka_unit_test(template_fills_the_given_fields),
		cmocka_unit_test(hint_comes_from_the_file_else_the_template),
	};
	return cmocka_run_group_tests_name("contract", tests, assets_setup, assets_teardown);
}
