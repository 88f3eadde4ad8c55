/* Unit tests for gitshow: the stat and patch of a real commit in a real
 * repository made with git. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/gitshow.h"
#include "core/sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[64];
static char sha1[64], sha2[64];

static void sh(const char *fmt, const char *arg, char *out, size_t outlen)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), fmt, arg);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	if (out) {
		if (!fgets(out, (int)outlen, p))
			out[0] = 0;
		out[strcspn(out, "\n")] = 0;
	}
	assert_int_equal(pclose(p), 0);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/optloop-gitshow.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	const char *id = "-c user.name=t -c user.email=t@example.invalid";
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && git init -q -b main && printf 'a\\nb\\nc\\n' > k.c && git add k.c && "
		 "git %s commit -qm first && printf 'a\\nB\\nc\\nd\\n' > k.c && git %s commit -qam second",
		 dir, id, id);
	if (system(cmd) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void commit_patch_and_stat_against_parent(void **state)
{
	struct sb stat = SB_INIT, patch = SB_INIT;
	struct err e = {0};

	sh("git -C %s rev-parse HEAD", dir, sha2, sizeof(sha2));
	sb_init(&stat);
	sb_init(&patch);
	assert_int_equal(gitshow_commit(dir, sha2, &stat, &patch, &e), 0);
	assert_non_null(strstr(stat.buf, "k.c"));
	assert_non_null(strstr(stat.buf, "1 file changed, 2 insertions(+), 1 deletion(-)"));
	assert_non_null(strstr(patch.buf, "-b\n+B\n c\n+d\n"));
	assert_non_null(strstr(patch.buf, "--- a/k.c"));
	sb_release(&stat);
	sb_release(&patch);
}

static void root_commit_diffs_against_nothing(void **state)
{
	struct sb patch = SB_INIT;
	struct err e = {0};

	sh("git -C %s rev-parse HEAD~1", dir, sha1, sizeof(sha1));
	sb_init(&patch);
	/* An abbreviated id works too. */
	sha1[7] = 0;
	assert_int_equal(gitshow_commit(dir, sha1, NULL, &patch, &e), 0);
	assert_non_null(strstr(patch.buf, "+a\n+b\n+c\n"));
	sb_release(&patch);
}

static void missing_commit_is_notfound(void **state)
{
	struct err e = {0};

	assert_int_equal(gitshow_commit(dir, "0123456789abcdef0123456789abcdef01234567", NULL, NULL, &e),
			 ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "is not in the repository"));
	assert_int_equal(gitshow_commit("/nonexistent-dir-for-test", "HEAD", NULL, NULL, &e), ERR_IO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(commit_patch_and_stat_against_parent),
		cmocka_unit_test(root_commit_diffs_against_nothing),
		cmocka_unit_test(missing_commit_is_notfound),
	};
	return cmocka_run_group_tests_name("gitshow", tests, setup, teardown);
}
