/* Unit tests for the base helpers: err, sb, fsutil, fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <fcntl.h>
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
	assert_int_equal(err_exit_status(ERR_IO), 4);
	assert_int_equal(err_exit_status(ERR_NOMEM), 4);
	assert_int_equal(err_exit_status(ERR_NOTFOUND), 2);
	assert_int_equal(err_exit_status(ERR_NOTFILE), 2);
	assert_int_equal(err_exit_status(ERR_BUSY), 3);
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

/* A FIFO with no writer would block open() and read() for ever; the
 * checked reader refuses it at once, naming what it is. */
static void read_refuses_fifo_without_blocking(void **state)
{
	struct err e = {0};
	struct sb s = SB_INIT;
	char *p = fsutil_join(tmpdir, "fifo.md");
	int fd = -2;

	assert_int_equal(mkfifo(p, 0644), 0);
	alarm(10); /* a hang fails the test instead of the whole suite */
	assert_int_equal(fsutil_read_file(p, &s, &e), ERR_NOTFILE);
	alarm(0);
	assert_non_null(strstr(e.msg, p));
	assert_non_null(strstr(e.msg, "is a FIFO, not a regular file; replace it with a file"));
	assert_int_equal(s.len, 0);
	err_clear(&e);
	assert_int_equal(fsutil_open_read(p, FSUTIL_STDIN, &fd, &e), ERR_NOTFILE);
	assert_int_equal(fd, -1);
	unlink(p);
	free(p);
	sb_release(&s);
}

/* Links to endless devices: refused before a byte is read, with the link's
 * target in the message; a link to a regular file reads that file. */
static void read_refuses_links_to_devices_follows_links_to_files(void **state)
{
	struct err e = {0};
	struct sb s = SB_INIT;
	char *z = fsutil_join(tmpdir, "zero.md"), *u = fsutil_join(tmpdir, "urandom.md");
	char *f = fsutil_join(tmpdir, "real.md"), *l = fsutil_join(tmpdir, "link.md");

	assert_int_equal(symlink("/dev/zero", z), 0);
	assert_int_equal(symlink("/dev/urandom", u), 0);
	assert_int_equal(fsutil_read_file(z, &s, &e), ERR_NOTFILE);
	assert_non_null(strstr(e.msg, "is a symbolic link to /dev/zero, a character device, not a "
				      "regular file"));
	assert_int_equal(fsutil_read_file(u, &s, &e), ERR_NOTFILE);
	assert_non_null(strstr(e.msg, "/dev/urandom"));
	assert_int_equal(fsutil_read_file(tmpdir, &s, &e), ERR_NOTFILE);
	assert_non_null(strstr(e.msg, "is a directory, not a file"));
	assert_int_equal(s.len, 0);
	assert_int_equal(fsutil_write_atomic(f, "rows\n", 5, &e), 0);
	assert_int_equal(symlink(f, l), 0);
	assert_int_equal(fsutil_read_file(l, &s, &e), 0);
	assert_string_equal(s.buf, "rows\n");
	unlink(z), unlink(u), unlink(l), unlink(f);
	free(z), free(u), free(f), free(l);
	sb_release(&s);
}

/* Over the cap: refused from its size (a sparse file: no disk used), and
 * a stream that runs past the cap stops there. */
static void read_refuses_more_than_the_cap(void **state)
{
	struct err e = {0};
	struct sb s = SB_INIT;
	char *p = fsutil_join(tmpdir, "big.md");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)FSUTIL_READ_MAX + 1), 0);
	close(fd);
	assert_int_equal(fsutil_read_file(p, &s, &e), ERR_NOTFILE);
	assert_non_null(strstr(e.msg, "is 64 MiB, more than the 64 MiB optloop reads"));
	assert_int_equal(s.len, 0);
	/* exactly at the cap is fine */
	fd = open(p, O_WRONLY | O_TRUNC);
	assert_int_equal(ftruncate(fd, (off_t)FSUTIL_READ_MAX), 0);
	close(fd);
	assert_int_equal(fsutil_read_file(p, &s, &e), 0);
	assert_int_equal(s.len, FSUTIL_READ_MAX);
	sb_release(&s);
	/* /dev/zero as a stream (handed over as standard input) stops at the cap */
	fd = open("/dev/zero", O_RDONLY);
	assert_int_equal(fsutil_read_fd(fd, "standard input", &s, &e), ERR_NOTFILE);
	close(fd);
	assert_non_null(strstr(e.msg, "standard input holds more than the 64 MiB"));
	assert_int_equal(s.len, 0);
	unlink(p);
	free(p);
	sb_release(&s);
}

/* Standard input is read whatever it is ("-", or /dev/stdin opened again),
 * but only when the caller asks for it. */
static void read_input_takes_stdin_from_a_pipe(void **state)
{
	struct err e = {0};
	struct sb s = SB_INIT;
	int fds[2], saved = dup(0);

	for (int round = 0; round < 2; round++) {
		assert_int_equal(pipe(fds), 0);
		assert_int_equal(write(fds[1], "piped\n", 6), 6);
		close(fds[1]);
		dup2(fds[0], 0);
		close(fds[0]);
		sb_reset(&s);
		assert_int_equal(fsutil_read_input(round ? "/dev/stdin" : "-", &s, &e), 0);
		assert_string_equal(sb_str(&s), "piped\n");
	}
	assert_int_equal(pipe(fds), 0);
	close(fds[1]);
	dup2(fds[0], 0);
	close(fds[0]);
	assert_int_equal(fsutil_read_file("/dev/stdin", &s, &e), ERR_NOTFILE);
	assert_non_null(strstr(e.msg, "a FIFO, not a regular file"));
	dup2(saved, 0);
	close(saved);
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
		cmocka_unit_test(read_refuses_fifo_without_blocking),
		cmocka_unit_test(read_refuses_links_to_devices_follows_links_to_files),
		cmocka_unit_test(read_refuses_more_than_the_cap),
		cmocka_unit_test(read_input_takes_stdin_from_a_pipe),
		cmocka_unit_test(mkdir_p_and_copy_tree),
	};
	return cmocka_run_group_tests_name("base", tests, setup, teardown);
}
