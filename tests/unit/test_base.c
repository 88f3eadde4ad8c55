/* Unit tests for the base helpers: err, sb, fsutil, fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[64];

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/optloop-unit.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static void err_set_returns_code_and_formats(void **state)
{
	struct err e = {0};
	assert_int_equal(err_set(&e, ERR_REFUSED, "verify refused: %s", "row 4 missing"),
			 ERR_REFUSED);
	assert_string_equal(e.msg, "verify refused: row 4 missing");
	err_prefix(&e, "status: ");
	assert_string_equal(e.msg, "status: verify refused: row 4 missing");
	assert_int_equal(err_set(NULL, ERR_IO, "ignored"), ERR_IO);
}

static void err_exit_status_maps_codes(void **state)
{
	assert_int_equal(err_exit_status(ERR_OK), 0);
	assert_int_equal(err_exit_status(ERR_FAIL), 1);
	assert_int_equal(err_exit_status(ERR_USAGE), 2);
	assert_int_equal(err_exit_status(ERR_REFUSED), 3);
	assert_int_equal(err_exit_status(ERR_HARNESS), 4);
	assert_int_equal(err_exit_status(ERR_IO), 1);
}

static void sb_grows_and_formats(void **state)
{
	struct sb s = SB_INIT;
	assert_string_equal(sb_str(&s), "");
	for (int i = 0; i < 1000; i++)
		sb_addf(&s, "%d,", i);
	assert_true(s.len > 3000);
	assert_int_equal(strncmp(s.buf, "0,1,2,", 6), 0);
	assert_int_equal(s.buf[s.len], '\0');
	sb_reset(&s);
	sb_adds(&s, "  padded \t\n");
	sb_trim(&s);
	assert_string_equal(s.buf, "padded");
	char *d = sb_detach(&s);
	assert_string_equal(d, "padded");
	assert_null(s.buf);
	free(d);
	sb_release(&s);
}

static void join_does_not_double_slashes(void **state)
{
	char *p = fsutil_join("a/b/", "/c");
	assert_string_equal(p, "a/b/c");
	free(p);
	p = fsutil_join("", "c");
	assert_string_equal(p, "c");
	free(p);
}

static void atomic_write_replaces_whole_file(void **state)
{
	struct err e = {0};
	struct sb s = SB_INIT;
	char *p = fsutil_join(tmpdir, "f.md");

	assert_int_equal(fsutil_write_atomic(p, "old\n", 4, &e), 0);
	assert_int_equal(fsutil_write_atomic(p, "new contents\n", 13, &e), 0);
	assert_int_equal(fsutil_read_file(p, &s, &e), 0);
	assert_string_equal(s.buf, "new contents\n");
	sb_release(&s);
	free(p);
}

static void atomic_write_killed_before_rename_keeps_old(void **state)
{
	struct err e = {0};
	struct sb s = SB_INIT;
	char *p = fsutil_join(tmpdir, "g.md");
	pid_t pid;
	int status;

	assert_int_equal(fsutil_write_atomic(p, "old\n", 4, &e), 0);
	pid = fork();
	if (pid == 0) {
		setenv("OPTLOOP_FAULT", "fsutil.before_rename", 1);
		fsutil_write_atomic(p, "new\n", 4, NULL);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_int_equal(fsutil_read_file(p, &s, &e), 0);
	assert_string_equal(s.buf, "old\n");
	sb_release(&s);
	free(p);
}

static void read_missing_file_is_notfound(void **state)
{
	struct err e = {0};
	struct sb s = SB_INIT;
	assert_int_equal(fsutil_read_file("/nonexistent/optloop", &s, &e), ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "/nonexistent/optloop"));
	sb_release(&s);
}

static void mkdir_p_and_copy_tree(void **state)
{
	struct err e = {0};
	char *a = fsutil_join(tmpdir, "x/y/z");
	char *src = fsutil_join(tmpdir, "x");
	char *dst = fsutil_join(tmpdir, "copy");
	char *f = fsutil_join(tmpdir, "x/y/z/file.txt");
	char *g = fsutil_join(tmpdir, "copy/y/z/file.txt");
	struct sb s = SB_INIT;

	assert_int_equal(fsutil_mkdir_p(a, &e), 0);
	assert_true(fsutil_is_dir(a));
	assert_int_equal(fsutil_mkdir_p(a, &e), 0);
	assert_int_equal(fsutil_write_atomic(f, "hello", 5, &e), 0);
	assert_int_equal(fsutil_copy_tree(src, dst, &e), 0);
	assert_int_equal(fsutil_read_file(g, &s, &e), 0);
	assert_string_equal(s.buf, "hello");
	assert_int_equal(fsutil_copy_tree(src, dst, &e), ERR_IO);
	sb_release(&s);
	free(a), free(src), free(dst), free(f), free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(err_set_returns_code_and_formats),
		cmocka_unit_test(err_exit_status_maps_codes),
		cmocka_unit_test(sb_grows_and_formats),
		cmocka_unit_test(join_does_not_double_slashes),
		cmocka_unit_test(atomic_write_replaces_whole_file),
		cmocka_unit_test(atomic_write_killed_before_rename_keeps_old),
		cmocka_unit_test(read_missing_file_is_notfound),
		cmocka_unit_test(mkdir_p_and_copy_tree),
	};
	return cmocka_run_group_tests_name("base", tests, setup, teardown);
}
