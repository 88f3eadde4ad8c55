/* Unit tests for gatecfg: which files configure a pytest gate (a
 * pyproject.toml only with pytest's table, setup.cfg's [tool:pytest],
 * tox.ini's [pytest], any pytest.ini and conftest.py) and which of them
 * pytest reads for a test, on a tree written here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "scratch.h"

#include "core/gatecfg.h"

#include <stdlib.h>

static char dir[64];

static int setup(void **state)
{
	scratch_make(dir, "gatecfg");
	sh("cd %s && mkdir -p tests/ops other"
	   " && printf '[project]\\nname = \"x\"\\n\\n  [tool.pytest.ini_options]  # pytest\\n"
	   "addopts = \"-q\"\\n' >pyproject.toml"
	   " && printf '[metadata]\\nname = x\\n' >setup.cfg"
	   " && printf '[tox]\\n[pytest]\\naddopts = -q\\n' >tests/tox.ini"
	   " && printf '[pytest]\\n' >other/pytest.ini"
	   " && printf 'import pytest\\n' >tests/conftest.py"
	   " && printf 'import pytest\\n' >tests/ops/conftest.py"
	   " && printf '[tool.pytest.ini_options.more]\\n' >other/pyproject.toml"
	   " && printf '[tool:pytest]\\n' >other/setup.cfg"
	   " && printf 'def test_x():\\n    pass\\n' >tests/ops/test_x.py",
	   dir);
	return 0;
}

static int teardown(void **state)
{
	return scratch_remove(dir);
}

static void what_configures_pytest(void **state)
{
	assert_string_equal(gatecfg_pytest_section(dir, "pyproject.toml"),
			    "[tool.pytest.ini_options]");
	assert_string_equal(gatecfg_pytest_section(dir, "tests/tox.ini"), "[pytest]");
	assert_string_equal(gatecfg_pytest_section(dir, "other/pytest.ini"), "pytest.ini");
	assert_string_equal(gatecfg_pytest_section(dir, "other/setup.cfg"), "[tool:pytest]");
	assert_string_equal(gatecfg_pytest_section(dir, "tests/conftest.py"), "conftest.py");
	/* a setup.cfg without pytest's section, a sub-table only, a missing
	 * file, a folder, another file */
	assert_null(gatecfg_pytest_section(dir, "setup.cfg"));
	assert_null(gatecfg_pytest_section(dir, "other/pyproject.toml"));
	assert_null(gatecfg_pytest_section(dir, "tox.ini"));
	assert_null(gatecfg_pytest_section(dir, "tests"));
	assert_null(gatecfg_pytest_section(dir, "tests/ops/test_x.py"));
}

static void the_files_pytest_reads_for_a_test(void **state)
{
	char **v = NULL;
	size_t n = gatecfg_pytest_files(dir, "tests/ops/test_x.py", &v);
	assert_int_equal(n, 4);
	assert_string_equal(v[0], "pyproject.toml");
	assert_string_equal(v[1], "tests/tox.ini");
	assert_string_equal(v[2], "tests/conftest.py");
	assert_string_equal(v[3], "tests/ops/conftest.py");
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	/* a test at the root reads the root's alone */
	n = gatecfg_pytest_files(dir, "test_top.py", &v);
	assert_int_equal(n, 1);
	assert_string_equal(v[0], "pyproject.toml");
	free(v[0]);
	free(v);
}

static void which_gates_are_pytest(void **state)
{
	assert_true(gatecfg_is_pytest_gate(dir, "tests/ops/test_x.py", "./verify.sh"));
	assert_true(gatecfg_is_pytest_gate(dir, "t/kernel_test.py", NULL));
	assert_true(gatecfg_is_pytest_gate(dir, "check.sh", "python -m pytest -x check.sh"));
	assert_false(gatecfg_is_pytest_gate(dir, "tests/check.sh", "./tests/check.sh"));
	assert_false(gatecfg_is_pytest_gate(dir, "test_.py", NULL));
	sh("cd %s && mkdir -p benchmarks/ops && : >benchmarks/ops/registry.py", dir);
	assert_true(gatecfg_is_pytest_gate(dir, "tests/check.sh", "./tests/check.sh"));
	sh("rm -r %s/benchmarks", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(what_configures_pytest),
		cmocka_unit_test(the_files_pytest_reads_for_a_test),
		cmocka_unit_test(which_gates_are_pytest),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
