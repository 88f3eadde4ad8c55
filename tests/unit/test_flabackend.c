/* Unit tests for flabackend: the backends a file's @dispatch names reach
 * (the backends package's folders and files, and what its registry
 * imports from elsewhere, relative imports too; _OPERATION_BACKEND_MODULES
 * moving a package), their attributes, the record that keeps them, and
 * when a machine would dispatch to them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scratch.h"

#include "core/flabackend.h"
#include "core/sb.h"

#include <stdlib.h>

static char dir[64];

static int setup(void **state)
{
	scratch_make(dir, "flabackend");
	sh("cd %s && mkdir -p fla/ops/backends fla/ops/common/backends/tilelang fla/ops/attn/backends"
	   " fla/mods/be/quick"
	   " && printf \"_OPERATION_BACKEND_MODULES = {\\n    'modules': 'fla.mods.be',\\n}\\n\""
	   " >fla/ops/backends/__init__.py"
	   " && printf \"from fla.ops.backends import dispatch\\n\\n@dispatch('common')\\ndef a(): pass\\n"
	   "@dispatch( \\\"attn\\\")\\ndef b(): pass\\n@dispatch('modules')\\ndef c(): pass\\n\""
	   " >fla/ops/k.py"
	   " && printf 'from fla.ops.backends import BackendRegistry\\n"
	   "from .tilelang import TileLangBackend\\n' >fla/ops/common/backends/__init__.py"
	   " && printf 'class T:\\n    backend_type = \"tilelang\"\\n    package_name = \"tilelang\"\\n"
	   "    env_var = \"FLA_TILELANG\"\\n    def is_enabled(cls):\\n        return IS_NVIDIA_HOPPER\\n'"
	   " >fla/ops/common/backends/tilelang/__init__.py"
	   " && : >fla/ops/common/backends/tilelang/bwd.py"
	   " && printf 'class I:\\n    backend_type = \"intracard_cp\"\\n    package_name = None\\n"
	   "    env_var = \"FLA_INTRACARD_CP\"\\n    default_enable = False\\n'"
	   " >fla/ops/common/backends/intracard.py"
	   " && printf 'from fla.ops.common.backends.tilelang import TileLangBackend\\n'"
	   " >fla/ops/attn/backends/__init__.py"
	   " && : >fla/mods/be/__init__.py"
	   " && printf 'class Q:\\n    backend_type = \"quick\"\\n    package_name = \"quickpkg\"\\n'"
	   " >fla/mods/be/quick/__init__.py",
	   dir);
	return 0;
}

static int teardown(void **state)
{
	return scratch_remove(dir);
}

static void dispatches_are_followed_to_their_backends(void **state)
{
	const char *files[] = {"fla/ops/k.py"};
	struct fla_backend *b;
	size_t n = flabackend_find(dir, files, 1, &b);
	assert_int_equal(n, 3);
	assert_string_equal(b[0].path, "fla/ops/common/backends/intracard.py");
	assert_string_equal(b[0].name, "intracard_cp");
	assert_null(b[0].package);
	assert_string_equal(b[0].env_var, "FLA_INTRACARD_CP");
	assert_false(b[0].default_on);
	assert_string_equal(b[0].registry, "fla/ops/common/backends/__init__.py");
	assert_string_equal(b[1].path, "fla/ops/common/backends/tilelang");
	assert_string_equal(b[1].package, "tilelang");
	assert_true(b[1].hopper);
	assert_true(b[1].default_on);
	assert_string_equal(b[1].dispatch, "common");
	assert_string_equal(b[1].by, "fla/ops/k.py");
	/* attn's registry imports the common tilelang backend: met once; the
	 * mapped 'modules' package has its own */
	assert_string_equal(b[2].path, "fla/mods/be/quick");
	assert_string_equal(b[2].dispatch, "modules");
	assert_null(b[2].env_var);

	struct sb rec = SB_INIT;
	flabackend_record(b, n, &rec);
	struct fla_backend *r;
	size_t m = flabackend_read(rec.buf, &r);
	assert_int_equal(m, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(r[i].path, b[i].path);
		assert_int_equal(r[i].hopper, b[i].hopper);
		assert_int_equal(r[i].default_on, b[i].default_on);
	}
	flabackend_free(r, m);
	sb_release(&rec);
	flabackend_free(b, n);

	const char *none[] = {"fla/ops/backends"};
	assert_int_equal(flabackend_find(dir, none, 1, &b), 0);
	assert_null(b);
}

static void when_a_machine_dispatches(void **state)
{
	struct fla_backend *b;
	size_t n = flabackend_read("fla/c/tilelang\ttilelang\ttilelang\tFLA_TILELANG\ton,hopper\n"
				   "fla/c/intracard.py\tintracard_cp\t\tFLA_INTRACARD_CP\toff\n"
				   "fla/c/triton_ascend\ttriton_ascend\t\t\ton,ascend\n"
				   "a line without its fields\n",
				   &b);
	assert_int_equal(n, 3);
	struct sb s = SB_INIT;
	flabackend_env_note(b, n, "NVIDIA H200", &s);
	assert_string_equal(s.buf, "may dispatch to fla/c/tilelang if tilelang is installed (this GPU "
				   "is Hopper, which its dispatch asks for; FLA_TILELANG=0 turns it "
				   "off); fla/c/intracard.py (only with FLA_INTRACARD_CP=1)");
	sb_reset(&s);
	flabackend_env_note(b, 1, "NVIDIA A100-SXM4-80GB", &s);
	assert_string_equal(s.buf, "may dispatch to fla/c/tilelang if tilelang is installed (its "
				   "dispatch asks for Hopper, which this GPU is not)");
	sb_reset(&s);
	flabackend_env_note(b + 2, 1, "NVIDIA A100-SXM4-80GB", &s);
	assert_int_equal(s.len, 0);
	flabackend_env_note(b + 2, 1, NULL, &s);
	assert_string_equal(s.buf, "may dispatch to fla/c/triton_ascend");
	sb_release(&s);
	flabackend_free(b, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dispatches_are_followed_to_their_backends),
		cmocka_unit_test(when_a_machine_dispatches),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
