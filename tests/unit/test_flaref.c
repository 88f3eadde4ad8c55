/* Unit tests for flaref: which imported names are references, and how a
 * name is followed to the file that defines it (module files, package
 * re-exports with aliases and relative imports, a def found in the
 * package's files, classes), on a tree written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scratch.h"

#include "core/flaref.h"

static char dir[64];

static int setup(void **state)
{
	scratch_make(dir, "flaref");
	sh("cd %s && mkdir -p fla/ops/pkg/sub tests"
	   " && printf 'from .chunk import chunk_op\\nfrom .sub import fused_recurrent_op as frop\\n'"
	   " >fla/ops/pkg/__init__.py"
	   " && printf 'def chunk_op(x):\\n    return x\\n' >fla/ops/pkg/chunk.py"
	   " && printf 'from ..ref import fused_recurrent_op\\n' >fla/ops/pkg/sub/__init__.py"
	   " && printf 'class fused_recurrent_op:\\n    pass\\n' >fla/ops/pkg/ref.py"
	   " && printf 'def helper():\\n    pass\\n\\ndef naive_hidden(x):\\n    return x\\n'"
	   " >fla/ops/pkg/zz_more.py",
	   dir);
	return 0;
}

static int teardown(void **state)
{
	return scratch_remove(dir);
}

static void reference_names(void **state)
{
	assert_true(fla_is_reference("naive_recurrent_gla", "chunk_gla"));
	assert_true(fla_is_reference("fused_recurrent_gla", "chunk_gla"));
	assert_true(fla_is_reference("k_update_ref", "chunk_rwkv7"));
	assert_true(fla_is_reference("channel_mixing_rwkv7_torch", "chunk_rwkv7"));
	assert_true(fla_is_reference("torch_addcmul_rwkv7", "chunk_rwkv7"));
	/* a recurrent op is not checked against another recurrent form */
	assert_false(fla_is_reference("fused_recurrent_hgrn", "fused_recurrent_hgrn"));
	assert_false(fla_is_reference("recurrent_x", "fused_recurrent_x"));
	assert_true(fla_is_reference("naive_recurrent_hgrn", "fused_recurrent_hgrn"));
	/* kernels and the op itself are not references */
	assert_false(fla_is_reference("chunk_gla", "chunk_gla"));
	assert_false(fla_is_reference("fused_gdn_gate", "chunk_gated_delta_rule"));
	assert_false(fla_is_reference("prepare_wy_repr_bwd", "chunk_gated_delta_rule"));
	assert_true(fla_is_naive("naive_attnres"));
	assert_false(fla_is_naive("fused_recurrent_hgrn"));
}

static void names_are_followed_to_their_def(void **state)
{
	char *f = fla_resolve(dir, "fla.ops.pkg", "chunk_op");
	assert_string_equal(f, "fla/ops/pkg/chunk.py");
	free(f);
	/* __init__ alias -> subpackage __init__ -> relative ..ref -> a class */
	f = fla_resolve(dir, "fla.ops.pkg", "frop");
	assert_string_equal(f, "fla/ops/pkg/ref.py");
	free(f);
	/* not exported: the def in one of the package's files */
	f = fla_resolve(dir, "fla.ops.pkg", "naive_hidden");
	assert_string_equal(f, "fla/ops/pkg/zz_more.py");
	free(f);
	f = fla_resolve(dir, "fla.ops.pkg.chunk", "chunk_op");
	assert_string_equal(f, "fla/ops/pkg/chunk.py");
	free(f);
	assert_null(fla_resolve(dir, "fla.ops.pkg", "naive_nowhere"));
	assert_null(fla_resolve(dir, "fla.ops.absent", "chunk_op"));
}

static void a_test_names_its_references(void **state)
{
	struct fla_scope s;
	struct err e = {0};
	sh("cd %s && printf 'import torch\\nfrom fla.ops.pkg import (\\n    chunk_op,  # the op\\n"
	   "    frop as recurrent_reference,\\n)\\nfrom fla.ops.pkg import naive_hidden, naive_nowhere\\n"
	   "from fla.utils import assert_close\\n' >tests/test_pkg.py",
	   dir);
	assert_int_equal(fla_scope_read(dir, "tests/test_pkg.py", "fla.ops.pkg", "chunk_op", &s, &e), 0);
	assert_true(s.op_imported);
	assert_string_equal(s.op_file, "fla/ops/pkg/chunk.py");
	/* frop is a reference by the name it is used under */
	assert_int_equal(s.nrefs, 3);
	assert_string_equal(s.refs[0].name, "frop");
	assert_string_equal(s.refs[0].file, "fla/ops/pkg/ref.py");
	assert_string_equal(s.refs[1].name, "naive_hidden");
	assert_string_equal(s.refs[1].file, "fla/ops/pkg/zz_more.py");
	assert_string_equal(s.refs[2].name, "naive_nowhere");
	assert_null(s.refs[2].file);
	fla_scope_release(&s);
	assert_int_equal(fla_scope_read(dir, "tests/none.py", "fla.ops.pkg", "chunk_op", &s, &e),
			 ERR_NOTFOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reference_names),
		cmocka_unit_test(names_are_followed_to_their_def),
		cmocka_unit_test(a_test_names_its_references),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
