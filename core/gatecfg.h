/*
 * gatecfg — the files that configure a pytest gate.
 *
 * pytest reads its options before it collects a test: pytest.ini,
 * pyproject.toml's [tool.pytest.ini_options] (or [tool.pytest]), tox.ini's
 * [pytest], setup.cfg's [tool:pytest], and every conftest.py from the
 * repository's root down to the test's folder.  A change there can thin
 * the gate (an addopts with -k or --deselect, a conftest that skips) while
 * the harness still reports the run as "(full)", so each is frozen with the
 * gate test and can never become part of a kernel.
 */
#ifndef OPTLOOP_GATECFG_H
#define OPTLOOP_GATECFG_H

#include <stdbool.h>
#include <stddef.h>

/* What about repo/path configures pytest ("[tool.pytest.ini_options]",
 * "conftest.py", ...; a static string), or NULL when it configures nothing
 * (a pyproject.toml without a pytest table, a missing file).  path is
 * repository-relative. */
const char *gatecfg_pytest_section(const char *repo, const char *path);

/* Does the gate run pytest?  An FLA-shaped repository's verify does; else
 * a validation command naming pytest, or a test file named test_*.py or
 * *_test.py. */
bool gatecfg_is_pytest_gate(const char *repo, const char *test_file, const char *verify_cmd);

/* The files that configure pytest for test_file (repository-relative),
 * nearest folder last: for each folder from the root down to the test's,
 * its pytest.ini, pyproject.toml, tox.ini and setup.cfg that have pytest's
 * section, and its conftest.py.  *out is malloc'd, each path too (free
 * each and it).  Returns how many. */
size_t gatecfg_pytest_files(const char *repo, const char *test_file, char ***out);

#endif
