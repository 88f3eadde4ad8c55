/* gatecfg — the files that configure a pytest gate (see gatecfg.h). */
#include "core/gatecfg.h"

#include "core/fsutil.h"
#include "core/sb.h"

#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Does text hold a line that is the table header head (blanks around it
 * allowed)? */
static bool has_table(const char *text, const char *head)
{
	size_t hl = strlen(head);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, head, hl) != 0)
			continue;
		const char *q = p + hl;
		while (*q == ' ' || *q == '\t' || *q == '\r')
			q++;
		if (!*q || *q == '\n' || *q == '#')
			return true;
	}
	return false;
}

const char *gatecfg_pytest_section(const char *repo, const char *path)
{
	static const struct {
		const char *file;
		const char *table; /* NULL: the whole file is pytest's */
	} cfg[] = {
		{"pytest.ini", NULL},
		{"conftest.py", NULL},
		{"pyproject.toml", "[tool.pytest.ini_options]"},
		{"pyproject.toml", "[tool.pytest]"},
		{"tox.ini", "[pytest]"},
		{"setup.cfg", "[tool:pytest]"},
	};
	const char *name = base_name(path);
	char *full = NULL;
	struct sb text = SB_INIT;
	bool read = false;
	const char *found = NULL;
	for (size_t i = 0; !found && i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		if (strcmp(name, cfg[i].file) != 0)
			continue;
		if (!full) {
			full = fsutil_join(repo, path);
			if (!fsutil_exists(full) || fsutil_is_dir(full))
				break;
		}
		if (!cfg[i].table) {
			found = cfg[i].file;
			break;
		}
		if (!read && fsutil_read_file(full, &text, NULL) < 0)
			break;
		read = true;
		if (has_table(text.buf ? text.buf : "", cfg[i].table))
			found = cfg[i].table;
	}
	free(full);
	sb_release(&text);
	return found;
}

bool gatecfg_is_pytest_gate(const char *repo, const char *test_file, const char *verify_cmd)
{
	char *reg = fsutil_join(repo, "benchmarks/ops/registry.py");
	bool fla = fsutil_exists(reg);
	free(reg);
	if (fla || (verify_cmd && strstr(verify_cmd, "pytest")))
		return true;
	if (!test_file)
		return false;
	const char *name = base_name(test_file);
	size_t n = strlen(name);
	return (!strncmp(name, "test_", 5) && n > 8 && !strcmp(name + n - 3, ".py")) ||
	       (n > 8 && !strcmp(name + n - 8, "_test.py"));
}

size_t gatecfg_pytest_files(const char *repo, const char *test_file, char ***out)
{
	static const char *const names[] = {"pytest.ini", "pyproject.toml", "tox.ini",
					    "setup.cfg", "conftest.py"};
	size_t n = 0;
	*out = NULL;
	const char *end = strrchr(test_file, '/');
	/* the folders from the root ("") down to the test's */
	for (size_t at = 0;;) {
		char *dir = xstrndup(test_file, at);
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			char *rel = at ? xasprintf("%s/%s", dir, names[i]) : xstrdup(names[i]);
			if (gatecfg_pytest_section(repo, rel)) {
				*out = xrealloc(*out, (n + 1) * sizeof(**out));
				(*out)[n++] = rel;
			} else {
				free(rel);
			}
		}
		free(dir);
		if (!end || test_file + at >= end)
			break;
		const char *next = strchr(test_file + at + (at ? 1 : 0), '/');
		at = (size_t)(next - test_file);
	}
	return n;
}
