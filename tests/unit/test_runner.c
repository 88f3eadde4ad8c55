/* Unit tests for the runner, with real child processes: exit status, raw
 * log, output order, timeout, grace escalation, cancel, process-group kill,
 * polling from an event loop, and hostile output (100 MB, a 10 MB line, NULs,
 * invalid UTF-8, escape sequences) within the memory bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/runner.h"
#include "core/sb.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[64];
static struct patset *fla;

static int setup(void **state)
{
	struct err e = {0};
	char cwd[4096];

	if (!getenv("OPTLOOP_ASSETS") && getcwd(cwd, sizeof(cwd) - 8)) {
		strcat(cwd, "/assets");
		setenv("OPTLOOP_ASSETS", cwd, 1);
	}
	strcpy(tmpdir, "/tmp/optloop-runner.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return patset_load("fla", NULL, &fla, &e);
}

static int teardown(void **state)
{
	char cmd[128];
	patset_free(fla);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void collect(void *ctx, const char *buf, size_t len)
{
	sb_add(ctx, buf, len);
}

static void feed(void *ctx, const char *buf, size_t len)
{
	parser_feed(ctx, buf, len);
}

/* Running, not merely a zombie waiting for whoever inherited it. */
static bool alive(pid_t pid)
{
	char path[64], buf[256];
	FILE *f;
	bool zombie = false;

	if (kill(pid, 0) < 0 && errno != EPERM)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		char *rp = strrchr(buf, ')');
		zombie = rp && (rp[2] == 'Z' || rp[2] == 'X');
	}
	fclose(f);
	return !zombie;
}

static void exit_status_output_and_log(void **state)
{
	struct runner_spec s = {.command = "echo out; echo err >&2; echo out2; exit 3"};
	struct runner_outcome o;
	struct sb got = SB_INIT, log = SB_INIT;
	struct err e = {0};
	char *logp = fsutil_join(tmpdir, "trace/iter-1.log");

	s.log_path = logp;
	s.cwd = tmpdir;
	assert_int_equal(runner_run(&s, collect, &got, &o, &e), 0);
	assert_int_equal(o.exit_status, 3);
	assert_int_equal(o.signal, 0);
	assert_false(o.timed_out);
	assert_false(o.cancelled);
	/* stdout and stderr share one pipe: the order the child wrote them. */
	assert_string_equal(got.buf, "out\nerr\nout2\n");
	assert_int_equal(o.bytes, 13);
	assert_int_equal(fsutil_read_file(logp, &log, &e), 0); /* trace/ created on demand */
	assert_string_equal(log.buf, got.buf);
	assert_string_equal(o.command, s.command);
	assert_string_equal(o.cwd, tmpdir);
	assert_true(o.t_end >= o.t_start && o.t_start > 1e9);
	runner_outcome_release(&o);
	sb_release(&got);
	sb_release(&log);
	free(logp);
}

static void start_errors(void **state)
{
	struct runner_spec s = {.command = "true", .cwd = "/nonexistent/dir"};
	struct runner_outcome o;
	struct err e = {0};

	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), ERR_NOTFOUND);
	assert_non_null(strstr(e.msg, "/nonexistent/dir"));
	s.cwd = NULL;
	s.command = "";
	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), ERR_USAGE);
	s.command = "true";
	s.log_path = "/proc/no/such/place/log";
	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), ERR_IO);
	/* A command that cannot be found is the shell's exit 127, not a start error. */
	s.log_path = NULL;
	s.command = "no-such-command-optloop";
	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), 0);
	assert_int_equal(o.exit_status, 127);
	runner_outcome_release(&o);
}

static void timeout_terminates_the_group(void **state)
{
	char *pidf = fsutil_join(tmpdir, "bg.pid");
	char *cmd = xasprintf("sleep 60 & echo $! > %s; wait", pidf);
	struct runner_spec s = {.command = cmd, .timeout_s = 0.3};
	struct runner_outcome o;
	struct err e = {0};
	struct sb pid = SB_INIT;
	double t0 = now_s();

	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), 0);
	assert_true(o.timed_out);
	assert_false(o.cancelled);
	assert_int_equal(o.exit_status, -1);
	assert_int_equal(o.signal, SIGTERM);
	assert_true(now_s() - t0 < 3.0);
	assert_int_equal(fsutil_read_file(pidf, &pid, &e), 0);
	pid_t bg = (pid_t)atoi(pid.buf);
	assert_true(bg > 0);
	/* The grandchild was in the group: it got the signal too. */
	for (int i = 0; i < 100 && alive(bg); i++)
		usleep(10000);
	assert_false(alive(bg));
	runner_outcome_release(&o);
	sb_release(&pid);
	free(cmd);
	free(pidf);
}

static void grace_period_escalates_to_sigkill(void **state)
{
	struct runner_spec s = {.command = "trap '' TERM; echo ready; while :; do sleep 0.05; done",
				.timeout_s = 0.3,
				.grace_s = 0.3};
	struct runner_outcome o;
	struct err e = {0};
	double t0 = now_s();

	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), 0);
	assert_true(o.timed_out);
	assert_int_equal(o.signal, SIGKILL);
	assert_true(now_s() - t0 >= 0.55);
	assert_true(now_s() - t0 < 4.0);
	runner_outcome_release(&o);
}

static void cancel_from_an_event_loop(void **state)
{
	struct runner_spec s = {.command = "echo '[ 10%]'; sleep 30"};
	struct runner *r;
	struct err e = {0};
	struct sb got = SB_INIT;
	int fds[2], rc;
	bool cancelled = false;
	double t0 = now_s();

	assert_int_equal(runner_start(&s, collect, &got, &r, &e), 0);
	assert_true(runner_pid(r) > 0);
	/* Poll the runner's descriptor as the TUI does; cancel once output came. */
	do {
		int n = runner_fds(r, fds);
		if (n) {
			struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
			poll(&pfd, 1, 100);
		}
		if (!cancelled && got.len) {
			assert_true(runner_pid(r) > 0); /* output seen while it runs */
			runner_cancel(r);
			cancelled = true;
		}
		rc = runner_pump(r, 0, &e);
	} while (rc == 1);
	assert_int_equal(rc, 0);
	assert_true(runner_outcome(r)->cancelled);
	assert_false(runner_outcome(r)->timed_out);
	assert_int_equal(runner_outcome(r)->signal, SIGTERM);
	assert_int_equal(runner_fds(r, fds), 0);
	assert_true(now_s() - t0 < 5.0);
	runner_free(r);
	sb_release(&got);
}

static void leftover_background_process_is_killed(void **state)
{
	/* The command exits at once but leaves a writer holding the pipe. */
	char *pidf = fsutil_join(tmpdir, "left.pid");
	char *cmd = xasprintf("sleep 60 & echo $! > %s; exit 0", pidf);
	struct runner_spec s = {.command = cmd};
	struct runner_outcome o;
	struct err e = {0};
	struct sb pid = SB_INIT;
	double t0 = now_s();

	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), 0);
	assert_int_equal(o.exit_status, 0);
	assert_true(now_s() - t0 < 5.0);
	assert_int_equal(fsutil_read_file(pidf, &pid, &e), 0);
	pid_t bg = (pid_t)atoi(pid.buf);
	for (int i = 0; i < 100 && alive(bg); i++)
		usleep(10000);
	assert_false(alive(bg));
	runner_outcome_release(&o);
	sb_release(&pid);
	free(cmd);
	free(pidf);
}

/* An argument vector runs with no shell between: a word that a shell
 * would expand reaches the program as it is, and nothing it names runs. */
static void argv_runs_without_a_shell(void **state)
{
	char *flag = fsutil_join(tmpdir, "PWNED");
	char *word = xasprintf("test_$(touch %s).py", flag);
	const char *argv[] = {"printf", "%s|", word, "a b", NULL};
	struct runner_spec s = {.argv = argv, .cwd = tmpdir};
	struct runner_outcome o;
	struct sb got = SB_INIT;
	struct err e = {0};

	assert_int_equal(runner_run(&s, collect, &got, &o, &e), 0);
	assert_int_equal(o.exit_status, 0);
	char *want = xasprintf("%s|a b|", word);
	assert_string_equal(got.buf, want);
	assert_false(fsutil_exists(flag));
	/* the outcome's command line, shell-quoted word by word */
	char *line = xasprintf("printf '%%s|' '%s' 'a b'", word);
	assert_string_equal(o.command, line);
	runner_outcome_release(&o);
	/* a program that is not there is a start error that names it */
	const char *none[] = {"no-such-program-optloop", NULL};
	s.argv = none;
	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), ERR_IO);
	assert_non_null(strstr(e.msg, "cannot start no-such-program-optloop"));
	sb_release(&got);
	free(line);
	free(want);
	free(word);
	free(flag);
}

static volatile sig_atomic_t stop_flag;

static void set_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* runner_run's stop flag (set by a signal handler, as the CLI's is) stops
 * the whole group: the command and what it started. */
static void stop_flag_stops_the_group(void **state)
{
	char *pidf = fsutil_join(tmpdir, "stop.pid");
	char *cmd = xasprintf("sleep 60 & echo $! > %s; wait", pidf);
	struct runner_spec s = {.command = cmd, .stop = &stop_flag};
	struct runner_outcome o;
	struct err e = {0};
	struct sb pid = SB_INIT;
	struct sigaction sa = {.sa_handler = set_stop}, old;
	double t0 = now_s();

	stop_flag = 0;
	sigaction(SIGALRM, &sa, &old);
	ualarm(300000, 0);
	assert_int_equal(runner_run(&s, NULL, NULL, &o, &e), 0);
	sigaction(SIGALRM, &old, NULL);
	assert_true(o.cancelled);
	assert_int_equal(o.signal, SIGTERM);
	assert_true(now_s() - t0 < 5.0);
	assert_int_equal(fsutil_read_file(pidf, &pid, &e), 0);
	pid_t bg = (pid_t)atoi(pid.buf);
	assert_true(bg > 0);
	for (int i = 0; i < 100 && alive(bg); i++)
		usleep(10000);
	assert_false(alive(bg));
	runner_outcome_release(&o);
	sb_release(&pid);
	free(cmd);
	free(pidf);
}

static void free_while_running_kills_it(void **state)
{
	struct runner_spec s = {.command = "sleep 30"};
	struct runner *r;
	struct err e = {0};
	pid_t pid;

	assert_int_equal(runner_start(&s, NULL, NULL, &r, &e), 0);
	pid = runner_pid(r);
	runner_free(r);
	assert_false(alive(pid));
}

static void escapes_nuls_and_invalid_utf8_reach_the_parser(void **state)
{
	struct runner_spec s = {
		.command = "printf '  Correctness gate: t.py (full)\\r\\n'; "
			   "printf 'a\\000b\\377\\376\\n'; "
			   "printf '\\033[32m=== 3 passed in 0.1s ===\\033[0m\\n'; "
			   "printf '\\033]0;title\\007  \\033[1mGATE PASSED.\\033[0m\\n'"};
	struct runner_outcome o;
	struct err e = {0};
	struct parser *p = parser_new(fla, NULL, NULL);

	assert_int_equal(runner_run(&s, feed, p, &o, &e), 0);
	parser_finish(p, o.exit_status, o.signal != 0);
	assert_int_equal(parser_result(p)->gate, GATE_PASS);
	assert_int_equal(parser_result(p)->scope, SCOPE_FULL);
	assert_int_equal(parser_result(p)->pytest.passed, 3);
	assert_int_equal(parser_result(p)->lines, 4);
	parser_free(p);
	runner_outcome_release(&o);
}

/* Run fn in a fresh child process and return how much its peak RSS grew. */
static long rss_growth_kb(void (*fn)(void))
{
	int pfd[2];
	long growth = -1;
	pid_t pid;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		struct rusage a, b;
		close(pfd[0]);
		getrusage(RUSAGE_SELF, &a);
		fn();
		getrusage(RUSAGE_SELF, &b);
		long g = b.ru_maxrss - a.ru_maxrss;
		ssize_t n = write(pfd[1], &g, sizeof(g));
		_exit(n == sizeof(g) ? 0 : 1);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &growth, sizeof(growth)), sizeof(growth));
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return growth;
}

static unsigned long long big_bytes;
static size_t big_parser_mem;
static const char *big_log;

static void run_hundred_mb(void)
{
	/* 100 MB of pytest-like lines, then a 10 MB line without newline. */
	struct runner_spec s = {
		.command = "yes 'tests/ops/test_gla.py::test_chunk[B1-T63] PASSED          [ 50%]' | "
			   "head -c 100000000; head -c 10000000 /dev/zero | tr '\\000' x",
		.log_path = big_log};
	struct runner_outcome o;
	struct err e = {0};
	struct parser *p = parser_new(fla, NULL, NULL);

	if (runner_run(&s, feed, p, &o, &e))
		_exit(2);
	parser_finish(p, o.exit_status, false);
	big_bytes = o.bytes;
	big_parser_mem = parser_mem(p);
	if (o.bytes != 110000000ULL || parser_result(p)->cases_passed < 1000000 ||
	    !parser_result(p)->truncated || parser_mem(p) > PARSE_MEM_BOUND)
		_exit(3);
	parser_free(p);
	runner_outcome_release(&o);
}

static void hundred_mb_of_output_in_bounded_memory(void **state)
{
	char *logp = fsutil_join(tmpdir, "big.log");
	struct stat st;
	long kb;

	big_log = logp;
	kb = rss_growth_kb(run_hundred_mb);
	assert_true(kb >= 0);
	printf("# 110 MB of output through runner and parser: peak RSS grew %ld KiB\n", kb);
#if defined(__SANITIZE_ADDRESS__)
	/* ASan's shadow and quarantine make RSS meaningless; the parser's own
	 * accounting was checked in the child. */
	(void)big_bytes;
	(void)big_parser_mem;
#else
	if ((size_t)kb * 1024 > RUNNER_MEM_BOUND)
		fail_msg("peak RSS grew by %ld KiB running 110 MB of output; bound is %zu KiB", kb,
			 RUNNER_MEM_BOUND / 1024);
#endif
	assert_int_equal(stat(logp, &st), 0);
	assert_int_equal(st.st_size, 110000000);
	unlink(logp);
	free(logp);
}

static void reap_all(int sig)
{
	int saved = errno;
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	errno = saved;
}

/* A front-end's SIGCHLD handler that reaps every child must not leave the
 * runner waiting forever. */
static void child_reaped_elsewhere_still_finishes(void **state)
{
	struct sigaction sa = {.sa_handler = reap_all}, old;
	struct runner_spec s = {.command = "echo hi; exit 5"};
	struct runner_outcome o;
	struct err e = {0};
	struct sb got = SB_INIT;
	double t0 = now_s();

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGCHLD, &sa, &old);
	assert_int_equal(runner_run(&s, collect, &got, &o, &e), 0);
	sigaction(SIGCHLD, &old, NULL);
	assert_string_equal(got.buf, "hi\n");
	assert_true(o.exit_status == 5 || o.exit_status == -1);
	assert_true(now_s() - t0 < 5.0);
	runner_outcome_release(&o);
	sb_release(&got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exit_status_output_and_log),
		cmocka_unit_test(start_errors),
		cmocka_unit_test(timeout_terminates_the_group),
		cmocka_unit_test(grace_period_escalates_to_sigkill),
		cmocka_unit_test(cancel_from_an_event_loop),
		cmocka_unit_test(leftover_background_process_is_killed),
		cmocka_unit_test(free_while_running_kills_it),
		cmocka_unit_test(argv_runs_without_a_shell),
		cmocka_unit_test(stop_flag_stops_the_group),
		cmocka_unit_test(escapes_nuls_and_invalid_utf8_reach_the_parser),
		cmocka_unit_test(child_reaped_elsewhere_still_finishes),
		cmocka_unit_test(hundred_mb_of_output_in_bounded_memory),
	};
	return cmocka_run_group_tests_name("runner", tests, setup, teardown);
}
