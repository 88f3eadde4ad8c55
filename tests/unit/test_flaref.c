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
#include "core/sb.h"

#include <stdlib.h>

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
	struct fla_tree *t = fla_tree_open(dir);
	char *f = fla_resolve(t, "fla.ops.pkg", "chunk_op");
	assert_string_equal(f, "fla/ops/pkg/chunk.py");
	free(f);
	/* __init__ alias -> subpackage __init__ -> relative ..ref -> a class */
	f = fla_resolve(t, "fla.ops.pkg", "frop");
	assert_string_equal(f, "fla/ops/pkg/ref.py");
	free(f);
	/* not exported: the def in one of the package's files */
	f = fla_resolve(t, "fla.ops.pkg", "naive_hidden");
	assert_string_equal(f, "fla/ops/pkg/zz_more.py");
	free(f);
	f = fla_resolve(t, "fla.ops.pkg.chunk", "chunk_op");
	assert_string_equal(f, "fla/ops/pkg/chunk.py");
	free(f);
	assert_null(fla_resolve(t, "fla.ops.pkg", "naive_nowhere"));
	assert_null(fla_resolve(t, "fla.ops.absent", "chunk_op"));
	fla_tree_close(t);
}

static void a_test_names_its_references(void **state)
{
	struct fla_scope s;
	struct err e = {0};
	struct fla_tree *t = fla_tree_open(dir);
	sh("cd %s && printf 'import torch\\nfrom fla.ops.pkg import (\\n    chunk_op,  # the op\\n"
	   "    frop as recurrent_reference,\\n)\\nfrom fla.ops.pkg import naive_hidden, naive_nowhere\\n"
	   "from fla.utils import assert_close\\n' >tests/test_pkg.py",
	   dir);
	assert_int_equal(fla_scope_read(t, "tests/test_pkg.py", "fla.ops.pkg", "chunk_op", &s, &e), 0);
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
	assert_int_equal(fla_scope_read(t, "tests/none.py", "fla.ops.pkg", "chunk_op", &s, &e),
			 ERR_NOTFOUND);
	fla_tree_close(t);
}

/* With comparisons, the references are what they check the op against:
 * each nested def a scope of its own (both assign o), the inputs both
 * sides take no reference, a name only the other side uses one. */
static void comparisons_name_the_references(void **state)
{
	struct fla_scope s;
	struct err e = {0};
	struct fla_tree *t = fla_tree_open(dir);
	sh("cd %s && printf '"
	   "from fla.ops.pkg import chunk_op, frop, naive_hidden\n"
	   "from fla.ops.pkg.zz_more import helper\n"
	   "from fla.utils import assert_close\n\n\n"
	   "def test_chunk():\n"
	   "    x = helper()\n\n"
	   "    def run_ref():\n        o = naive_hidden(x)\n        return o\n\n"
	   "    def run_tri():\n        o = chunk_op(x)\n        return o\n\n"
	   "    ref = run_ref()\n    tri = run_tri()\n"
	   "    assert_close(f\"o{1}\", ref, tri, 0.005)\n\n\n"
	   "def test_frop():\n    assert_close(\"o\", naive_hidden(1), frop(1), 0.005)\n"
	   "' >tests/test_cmp.py",
	   dir);
	assert_int_equal(fla_scope_read(t, "tests/test_cmp.py", "fla.ops.pkg", "chunk_op", &s, &e), 0);
	assert_true(s.compared);
	assert_int_equal(s.nrefs, 2);
	assert_string_equal(s.refs[0].name, "naive_hidden");
	assert_false(s.refs[0].input);
	assert_string_equal(s.refs[1].name, "helper");
	assert_true(s.refs[1].input);
	/* frop is checked too, but not against the op: no reference of it */
	bool frop_other = false;
	for (size_t i = 0; i < s.nothers; i++)
		frop_other |= !strcmp(s.others[i].name, "frop");
	assert_true(frop_other);
	fla_scope_release(&s);
	fla_tree_close(t);
}

static char *why_of(const struct fla_files *f, const char *path)
{
	struct sb why = SB_INIT;
	int at = fla_files_find(f, path);
	if (at >= 0)
		fla_files_why(f, (size_t)at, &why);
	return why.buf ? sb_detach(&why) : xstrdup("");
}

/* Walks that share a tree answer as walks on their own trees do, and the
 * tree reads each file once: a file removed after the first walk is still
 * what the second walk on that tree sees, and a new tree sees it gone. */
static void walks_share_one_reading_of_the_files(void **state)
{
	sh("cd %s && mkdir -p scripts"
	   " && printf 'from fla.ops.pkg import chunk_op\nimport fla.ops.pkg.ref as ref\n\n\n"
	   "def main():\n    chunk_op(ref.fused_recurrent_op)\n' >scripts/a.py"
	   " && printf 'from fla.ops.pkg.chunk import chunk_op\nfrom fla.ops.pkg import frop\n\n\n"
	   "def main():\n    return chunk_op(frop)\n' >scripts/b.py",
	   dir);
	struct fla_tree *shared = fla_tree_open(dir), *alone = fla_tree_open(dir);
	struct fla_files a = {0}, b = {0}, b_alone = {0};
	fla_walk(shared, "scripts/a.py", "seed a", &a);
	assert_int_equal(a.n, 3);
	char *w = why_of(&a, "fla/ops/pkg/chunk.py");
	assert_string_equal(w, "fla/ops/pkg/chunk.py (chunk_op) <- scripts/a.py (main): seed a");
	free(w);
	w = why_of(&a, "fla/ops/pkg/ref.py");
	assert_string_equal(w, "fla/ops/pkg/ref.py (fused_recurrent_op) <- scripts/a.py (main): seed a");
	free(w);

	fla_walk(shared, "scripts/b.py", "seed b", &b);
	fla_walk(alone, "scripts/b.py", "seed b", &b_alone);
	assert_int_equal(b.n, b_alone.n);
	for (size_t i = 0; i < b.n; i++) {
		assert_string_equal(b.v[i].path, b_alone.v[i].path);
		assert_int_equal(b.v[i].from, b_alone.v[i].from);
		assert_string_equal(b.v[i].via, b_alone.v[i].via);
	}
	fla_files_release(&b);
	fla_files_release(&b_alone);
	fla_tree_close(alone);

	sh("cd %s && mv fla/ops/pkg/chunk.py fla/ops/pkg/chunk.py.away", dir);
	fla_walk(shared, "scripts/b.py", "seed b", &b);
	assert_true(fla_files_find(&b, "fla/ops/pkg/chunk.py") >= 0);
	fla_files_release(&b);
	fla_tree_close(shared);
	struct fla_tree *fresh = fla_tree_open(dir);
	fla_walk(fresh, "scripts/b.py", "seed b", &b);
	assert_true(fla_files_find(&b, "fla/ops/pkg/chunk.py") < 0);
	fla_files_release(&b);
	fla_tree_close(fresh);
	sh("cd %s && mv fla/ops/pkg/chunk.py.away fla/ops/pkg/chunk.py", dir);
	fla_files_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reference_names),
		cmocka_unit_test(names_are_followed_to_their_def),
		cmocka_unit_test(a_test_names_its_references),
		cmocka_unit_test(comparisons_name_the_references),
		cmocka_unit_test(walks_share_one_reading_of_the_files),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
