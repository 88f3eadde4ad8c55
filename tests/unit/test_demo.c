/* Unit tests for core/demo: the spec matches the shipped project, and
 * demo_create makes a one-commit repository or refuses without side effects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/demo.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];

static int setup(void **state)
{
	char cwd[4096];
	strcpy(tmpdir, "/tmp/optloop-unit.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	/* The suite runs from the source root (tests/run.sh). */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	char *a = fsutil_join(cwd, "assets");
	setenv("OPTLOOP_ASSETS", a, 1);
	free(a);
	git_libgit2_init();
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	git_libgit2_shutdown();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static void assert_asset(const char *rel)
{
	char *p = xasprintf("assets/demo/%s", rel);
	if (!fsutil_exists(p))
		fail_msg("demo_spec names %s, which assets/demo lacks", rel);
	free(p);
}

static void spec_names_files_the_project_has(void **state)
{
	const struct demo_spec *s = demo_spec();
	struct sb item = SB_INIT;

	assert_string_equal(s->op, "chunk_linear_attn");
	assert_asset(s->kernel);
	assert_asset(s->test_file);
	assert_asset(s->naive);
	/* Every entry of the frozen list, and the verify script the commands run. */
	for (const char *p = s->frozen;; p++) {
		if (*p == ',' || !*p) {
			sb_trim(&item);
			assert_asset(sb_str(&item));
			sb_reset(&item);
			if (!*p)
				break;
		} else {
			sb_addc(&item, *p);
		}
	}
	sb_release(&item);
	assert_true(!strncmp(s->verify_cmd, "./verify --op chunk_linear_attn", 31));
	assert_true(!strncmp(s->bench_cmd, "./verify --op chunk_linear_attn --base ", 39));
	assert_non_null(s->target);
	assert_non_null(s->languages);
	assert_non_null(s->promotion);
}

static void create_makes_one_clean_commit(void **state)
{
	struct demo_result r;
	struct err e = {0};
	char *dir = fsutil_join(tmpdir, "new/nested");
	git_repository *repo;
	git_oid head;
	git_status_list *st;
	git_status_options so;
	char hex[41];

	assert_int_equal(demo_create(dir, &r, &e), 0);
	assert_non_null(r.dir);
	assert_int_equal(r.dir[0], '/');
	assert_int_equal(strlen(r.commit), 40);
	assert_false(r.identity_set); /* the test environment has an identity */
	assert_int_equal(git_repository_open(&repo, r.dir), 0);
	assert_int_equal(git_reference_name_to_id(&head, repo, "refs/heads/main"), 0);
	git_oid_tostr(hex, sizeof(hex), &head);
	assert_string_equal(hex, r.commit);
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED;
	assert_int_equal(git_status_list_new(&st, repo, &so), 0);
	assert_int_equal(git_status_list_entrycount(st), 0);
	git_status_list_free(st);
	git_repository_free(repo);
	demo_result_release(&r);
	assert_null(r.dir);
	free(dir);
}

static void create_refuses_a_non_empty_dir(void **state)
{
	struct demo_result r;
	struct err e = {0};
	char *dir = fsutil_join(tmpdir, "busy");
	char *file = fsutil_join(dir, "mine.txt");
	char *git = fsutil_join(dir, ".git");

	assert_int_equal(fsutil_mkdir_p(dir, &e), 0);
	assert_int_equal(fsutil_write_atomic(file, "x", 1, &e), 0);
	assert_int_equal(demo_create(dir, &r, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "is not empty"));
	assert_null(r.dir);
	assert_false(fsutil_exists(git));
	assert_true(fsutil_exists(file));
	free(dir);
	free(file);
	free(git);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spec_names_files_the_project_has),
		cmocka_unit_test(create_makes_one_clean_commit),
		cmocka_unit_test(create_refuses_a_non_empty_dir),
	};
	return cmocka_run_group_tests_name("demo", tests, setup, teardown);
}
