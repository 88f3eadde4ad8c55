/*
 * pyscan: a Python file's tokens, logical lines, module-level names,
 * imports and the names a range of lines uses.
 */
#include "core/pyscan.h"
#include "core/sb.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void collect(void *ctx, const char *name, size_t n, const char *attr, size_t an)
{
	struct sb *s = ctx;
	sb_addf(s, "%s%.*s", s->len ? " " : "", (int)n, name);
	if (attr)
		sb_addf(s, ".%.*s", (int)an, attr);
}

/* The names lines [a, b) use, space-separated. */
static char *uses(const struct py_file *f, unsigned a, unsigned b)
{
	struct sb s = SB_INIT;
	py_refs(f, a, b, collect, &s);
	return s.buf ? sb_detach(&s) : xstrdup("");
}

static void strings_and_comments_are_no_code(void **state)
{
	(void)state;
	const char *text = "x = f\"from fla.ops import chunk_h {y}\"  # import z\n"
			   "s = '''\nimport q\n'''\n"
			   "t = r'\\'' + b\"a\\\"b\"\n";
	struct py_file f;
	py_scan(text, &f);
	assert_int_equal(f.nimp, 0);
	assert_int_equal(f.nline, 3);
	assert_int_equal(f.ndef, 3);
	assert_string_equal(f.def[0].name, "x");
	assert_string_equal(f.def[1].name, "s");
	assert_string_equal(f.def[2].name, "t");
	py_file_release(&f);
}

static void imports_wherever_they_stand(void **state)
{
	(void)state;
	const char *text = "from .chunk import (\n    chunk_a,  # the op\n    chunk_b as b,\n)\n"
			   "import fla.ops.x as X, os\n"
			   "from ..utils import *\n"
			   "def f():\n    from fla.ops.late import late_fn\n    return late_fn()\n";
	struct py_file f;
	py_scan(text, &f);
	assert_int_equal(f.nimp, 6);
	assert_string_equal(f.imp[0].module, ".chunk");
	assert_string_equal(f.imp[0].name, "chunk_a");
	assert_null(f.imp[0].alias);
	assert_string_equal(f.imp[1].name, "chunk_b");
	assert_string_equal(f.imp[1].alias, "b");
	assert_string_equal(f.imp[2].module, "fla.ops.x");
	assert_null(f.imp[2].name);
	assert_string_equal(f.imp[2].alias, "X");
	assert_string_equal(f.imp[3].module, "os");
	assert_string_equal(f.imp[4].module, "..utils");
	assert_string_equal(f.imp[4].name, "*");
	assert_false(f.imp[4].in_def);
	assert_string_equal(f.imp[5].name, "late_fn");
	assert_true(f.imp[5].in_def);
	py_file_release(&f);
}

static void module_level_names_with_their_lines(void **state)
{
	(void)state;
	const char *text = "import triton\n"
			   "BT = 64\n"
			   "@triton.autotune(\n    configs=[1, 2],\n    key=['BT'],\n)\n@triton.jit\n"
			   "def k(x, BT: int):\n    y = x\n    return y\n"
			   "if HAS_TL:\n    def fast(x):\n        return k(x)\nelse:\n    fast = None\n"
			   "class Fn(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
			   "        return helper(x)\n"
			   "a, (b, c) = 1, (2, 3)\n"
			   "obj.attr = 4\n";
	struct py_file f;
	py_scan(text, &f);
	const char *names[] = {"BT", "k", "fast", "fast", "Fn", "a", "b", "c"};
	assert_int_equal(f.ndef, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(f.def[i].name, names[i]);
	/* k: its two decorators and its body */
	assert_int_equal(f.def[1].kind, PD_DEF);
	assert_int_equal(f.def[1].line1 - f.def[1].line0, 5);
	char *u = uses(&f, f.def[1].line0, f.def[1].line1);
	assert_string_equal(u, "triton.autotune triton.jit x BT int y x y");
	free(u);
	/* the class: its methods, not the keyword arguments of a call */
	assert_int_equal(f.def[4].kind, PD_CLASS);
	u = uses(&f, f.def[4].line0, f.def[4].line1);
	assert_string_equal(u, "torch.autograd staticmethod ctx x helper x");
	free(u);
	assert_int_equal(py_def_find(&f, "fast", 0), 2);
	assert_int_equal(py_def_find(&f, "fast", 3), 3);
	assert_int_equal(py_def_find(&f, "obj", 0), -1);
	/* top-level code: the constants and the if, not the defs or imports */
	assert_false(f.line[0].module);
	assert_true(f.line[1].module);
	py_file_release(&f);
}

static void call_arguments(void **state)
{
	(void)state;
	struct py_file f;
	py_scan("assert_close('o', ref.float(), f(a, b)[0], ratio=0.1)\n", &f);
	unsigned a, b;
	assert_true(py_call_arg(&f, 1, 1, &a, &b));
	assert_true(py_tok_is(&f.tok[a], "ref"));
	assert_int_equal(b - a, 5);
	assert_true(py_call_arg(&f, 1, 2, &a, &b));
	assert_true(py_tok_is(&f.tok[a], "f"));
	assert_true(py_call_arg(&f, 1, 3, &a, &b));
	assert_false(py_call_arg(&f, 1, 4, &a, &b));
	py_file_release(&f);
}

static void kernel_code_or_plain_utility(void **state)
{
	(void)state;
	struct py_file f;
	py_scan("@triton.jit\ndef add_kernel(x):\n    pass\n\ndef add(x):\n"
		"    add_kernel[(x.shape[0],)](x)\n",
		&f);
	assert_true(py_is_kernel_code(&f));
	py_file_release(&f);
	py_scan("@triton.jit\ndef exp(x):\n    return tl.exp(x)\n", &f);
	assert_false(py_is_kernel_code(&f)); /* math inlined into others' kernels */
	py_file_release(&f);
	py_scan("class Normalize(torch.autograd.Function):\n    pass\n", &f);
	assert_true(py_is_kernel_code(&f));
	py_file_release(&f);
	py_scan("def tensor_cache(fn):\n    cache = {}\n    return cache[fn](1)\n", &f);
	assert_false(py_is_kernel_code(&f)); /* a subscript call of no jit def */
	py_file_release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_and_comments_are_no_code),
		cmocka_unit_test(imports_wherever_they_stand),
		cmocka_unit_test(module_level_names_with_their_lines),
		cmocka_unit_test(call_arguments),
		cmocka_unit_test(kernel_code_or_plain_utility),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
