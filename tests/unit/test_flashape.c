/* Unit tests for flashape: an FLA op's benchmark shapes read from the
 * registry's text (a named dict, a literal, comments, values that are no
 * plain number, names that lie about their values), the words of a Target
 * shaped like a shape name, and a shape spelled as its dimensions; and the
 * loop reading an op's own shape name in the Target by its values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scratch.h"

#include "core/contract.h"
#include "core/flashape.h"
#include "core/loop_impl.h"

#include <stdlib.h>
#include <string.h>

static const char registry[] =
	"SHAPE_CONFIGS = {\n"
	"    'B4_T2048_H16_D128':  {'B': 4,  'T': 2048,  'H': 16, 'D': 128},\n"
	"    # a comment, then a value that is no plain number\n"
	"    \"B8_T1024_H8_D64\":    {\"B\": 8, 'T': 1024, 'H': 8 * 1, 'D': 64},\n"
	"}\n"
	"x = _nsa_shapes  # a use, not the definition\n"
	"_nsa_shapes = {\n"
	"    'B1_T8K_H1_HQ32_D128_S16':  {'B': 1, 'T': 8192, 'H': 1, 'HQ': 32, 'D': 128, 'S': 16},\n"
	"    'L32_B1_T8K_D2K': {'L': 64, 'B': 1, 'T': 8192, 'H': 1, 'D': 8192},\n"
	"    'odd': dict(B=1),\n"
	"}\n";

static void a_named_dict_is_read(void **state)
{
	struct fla_shape *v;
	size_t n = flashape_parse(registry, "SHAPE_CONFIGS", &v);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "B4_T2048_H16_D128");
	assert_int_equal(v[0].B, 4);
	assert_int_equal(v[0].T, 2048);
	assert_int_equal(v[0].H, 16);
	assert_int_equal(v[0].D, 128);
	assert_int_equal(v[0].L, -1);
	assert_string_equal(v[1].name, "B8_T1024_H8_D64");
	assert_int_equal(v[1].H, -1); /* 8 * 1: not a plain number */
	assert_int_equal(v[1].D, 64);
	flashape_free(v, n);

	n = flashape_parse(registry, "_nsa_shapes", &v);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].name, "B1_T8K_H1_HQ32_D128_S16");
	assert_int_equal(v[0].H, 1); /* HQ is no dimension of the table */
	assert_int_equal(v[0].D, 128);
	/* the values, not what the name says */
	assert_int_equal(v[1].L, 64);
	assert_int_equal(v[1].D, 8192);
	assert_string_equal(v[2].name, "odd");
	assert_int_equal(v[2].B, -1);
	flashape_free(v, n);

	assert_int_equal(flashape_parse(registry, "_nsa", &v), 0);
	assert_null(v);
	assert_int_equal(flashape_parse(NULL, "SHAPE_CONFIGS", &v), 0);
}

static void a_literal_is_read(void **state)
{
	struct fla_shape *v;
	size_t n = flashape_parse("", "{'a_b': {'B': 2, 'T': 64, 'H': 4, 'D': 32, 'L': 3}}", &v);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].name, "a_b");
	char *d = flashape_dims(&v[0]);
	assert_string_equal(d, "B=2 T=64 H=4 D=32 L=3");
	free(d);
	flashape_free(v, n);
}

static void shape_names_in_a_target(void **state)
{
	char **w;
	size_t n = flashape_names_in("fwd B4_T4096_H64_D128 and b4_t4096_h64_d128, L8_B1_T8K_D2K; "
				     "B4_T4096_H64_D128_X9 >= 1.2x on H100_SXM5 with fp8_bf16 "
				     "chunk_gla B4-T2048-H16-D64 T_ B1_",
				     &w);
	assert_int_equal(n, 4);
	assert_string_equal(w[0], "B4_T4096_H64_D128");
	assert_string_equal(w[1], "b4_t4096_h64_d128");
	assert_string_equal(w[2], "L8_B1_T8K_D2K");
	assert_string_equal(w[3], "B4_T4096_H64_D128_X9");
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
	assert_int_equal(flashape_names_in("every shape >= 1.2x", &w), 0);
	assert_int_equal(flashape_names_in(NULL, &w), 0);
}

static void the_loop_reads_an_op_shape_name_by_its_values(void **state)
{
	char dir[64];
	scratch_make(dir, "flashape");
	sh("sh %s/tests/fixtures/make_fla_tree.sh %s/fla >/dev/null", root(), dir);
	char *repo = xasprintf("%s/fla", dir);
	struct loop_init_opts o = {.op = "parallel_ds"};
	struct err e = {0};
	assert_int_equal(loop_init(repo, &o, NULL, &e), 0);
	struct loop *l;
	assert_int_equal(loop_open(repo, "parallel_ds", 0, &l, &e), 0);
	const char *names[] = {"target"};
	const char *values[] = {"fwd L32_B1_T8K_D2K and B1_T8K_H1_HQ32_D128_S16 >= 1.2x"};
	assert_int_equal(loop_contract_set(l, names, values, 1, &e), 0);
	assert_int_equal(loop_load_contract(l, &e), 0);
	const struct contract *c = loop_contract_get(l);
	assert_string_equal(c->v[CF_TARGET], values[0]);
	/* the name says L32 and D2K: the benchmark runs L=64, D=8192 */
	assert_string_equal(contract_target_text(c),
			    "fwd B=1 T=8192 H=1 D=8192 L=64 and B=1 T=8192 H=1 D=128 >= 1.2x");
	struct contract_shape *sh;
	size_t n = contract_target_shapes(contract_target_text(c), &sh);
	assert_int_equal(n, 2);
	assert_string_equal(sh[0].mode, "fwd");
	assert_int_equal(sh[0].L, 64);
	assert_int_equal(sh[1].D, 128);
	assert_int_equal(sh[1].L, -1);
	contract_shapes_free(sh, n);
	loop_contract_put(c);
	loop_close(l);
	free(repo);
	scratch_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_named_dict_is_read),
		cmocka_unit_test(a_literal_is_read),
		cmocka_unit_test(shape_names_in_a_target),
		cmocka_unit_test(the_loop_reads_an_op_shape_name_by_its_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
