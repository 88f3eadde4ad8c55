/*
 * runner — run the verify command as a child process group, stream its
 * output to the raw log and a callback, enforce timeout and cancel (see
 * runner.h for the contract and the memory bound).
 */
#define _GNU_SOURCE /* pipe2 */
#include "core/runner.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "core/vis.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Chunks read per runner_pump call, so a flood of output cannot starve the
 * caller's event loop. */
#define PUMP_MAX_READS 16
/* ...and at most this long, however fast each chunk is consumed: the TUI
 * calls runner_pump once per pass and a pass must stay well under 20 ms. */
#define PUMP_BUDGET_S 0.004
/* After the command exits, how long leftover writers may keep the pipe open. */
#define DRAIN_S 2.0

struct runner {
	pid_t pid; /* also the process group id; 0 once reaped */
	pid_t pgid;
	int fd;    /* read end of the output pipe, -1 at EOF */
	int logfd; /* -1 when no log, or after a write failure */
	bool log_failed;
	runner_data_fn fn;
	void *ctx;
	double deadline;  /* monotonic; 0: no timeout */
	double kill_at;   /* monotonic; 0: no SIGKILL scheduled */
	double drain_end; /* monotonic; set when the child was reaped with the pipe open */
	double grace_s;
	bool term_sent, kill_sent, finished;
	char *buf;
	struct runner_outcome out;
};

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void signal_group(struct runner *r, int sig)
{
	if (r->pgid > 0)
		kill(-r->pgid, sig);
}

static void write_errno_and_exit(int fd, int code)
{
	ssize_t n = write(fd, &code, sizeof(code));
	(void)n;
	_exit(127);
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child(const struct runner_spec *s, char *const *envp, int out_w, int err_w)
{
	int devnull;
	sigset_t none;

	setpgid(0, 0);
	/* Dispositions the parent ignores (SIGPIPE in a TUI) survive exec;
	 * the verify command gets the defaults. */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	devnull = open("/dev/null", O_RDONLY);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0)
		write_errno_and_exit(err_w, errno);
	if (s->cwd && chdir(s->cwd) < 0)
		write_errno_and_exit(err_w, errno);
	if (s->argv) {
		execvpe(s->argv[0], (char *const *)s->argv, envp);
	} else {
		char *const argv[] = {"sh", "-c", (char *)s->command, NULL};
		execve("/bin/sh", argv, envp);
	}
	write_errno_and_exit(err_w, errno);
}

static int open_log(const char *path, struct err *e)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int fd;

	if (slash && slash != dir) {
		*slash = 0;
		if (!fsutil_is_dir(dir) && fsutil_mkdir_p(dir, e) < 0) {
			free(dir);
			return -1;
		}
	}
	free(dir);
	/* never through a symbolic link: the output would land outside trace/ */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 && errno == ELOOP)
		err_set(e, ERR_IO,
			"the raw log %s is a symbolic link; optloop does not write through one "
			"(remove it and run again)",
			path);
	else if (fd < 0)
		err_set(e, ERR_IO, "cannot create the raw log %s: %s; check the workspace's trace/ folder",
			path, strerror(errno));
	return fd;
}

int runner_start(const struct runner_spec *s, runner_data_fn fn, void *ctx, struct runner **out,
		 struct err *e)
{
	int outp[2], errp[2], code = 0, logfd = -1;
	ssize_t n;
	pid_t pid;
	struct runner *r;
	char *cwd;

	*out = NULL;
	if (s->argv ? !s->argv[0] || !*s->argv[0] : !s->command || !*s->command)
		return err_set(e, ERR_USAGE, "no verify command to run; set the contract's validation command");
	/* what the messages call it */
	const char *what = s->argv ? s->argv[0] : "the verify command";
	if (s->cwd && !fsutil_is_dir(s->cwd))
		return err_set(e, ERR_NOTFOUND, "cannot run %s in %s: no such directory", what, s->cwd);
	cwd = s->cwd ? realpath(s->cwd, NULL) : getcwd(NULL, 0);
	if (!cwd)
		return err_set(e, ERR_IO, "cannot resolve the working directory: %s", strerror(errno));
	if (s->log_path && (logfd = open_log(s->log_path, e)) < 0) {
		free(cwd);
		return ERR_IO;
	}
	if (pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		int en = errno;
		free(cwd);
		if (logfd >= 0)
			close(logfd);
		return err_set(e, ERR_IO, "cannot create a pipe for %s: %s", what, strerror(en));
	}
	/* the environment, with the tag, made before fork: the child may only
	 * make async-signal-safe calls */
	extern char **environ;
	size_t nenv = 0;
	while (environ[nenv])
		nenv++;
	char **envp = xcalloc(nenv + 2, sizeof(*envp));
	char *tagvar = s->tag ? xasprintf("%s=%s", RUNNER_TAG_VAR, s->tag) : NULL;
	size_t k = 0;
	if (tagvar) /* first: /proc/<pid>/environ is read from its start */
		envp[k++] = tagvar;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], RUNNER_TAG_VAR "=", sizeof(RUNNER_TAG_VAR)))
			envp[k++] = environ[i];
	pid = fork();
	if (pid == 0) {
		close(outp[0]);
		close(errp[0]);
		child(s, envp, outp[1], errp[1]);
	}
	free(envp);
	free(tagvar);
	if (pid < 0) {
		int en = errno;
		close(outp[0]), close(outp[1]), close(errp[0]), close(errp[1]);
		free(cwd);
		if (logfd >= 0)
			close(logfd);
		return err_set(e, ERR_IO, "cannot start %s: fork: %s", what, strerror(en));
	}
	setpgid(pid, pid); /* also in the parent: no window where a signal misses the group */
	close(outp[1]);
	close(errp[1]);
	do
		n = read(errp[0], &code, sizeof(code));
	while (n < 0 && errno == EINTR);
	close(errp[0]);
	if (n == (ssize_t)sizeof(code)) { /* chdir or exec failed in the child */
		close(outp[0]);
		waitpid(pid, NULL, 0);
		free(cwd);
		if (logfd >= 0)
			close(logfd);
		return err_set(e, ERR_IO, "cannot start %s in %s: %s", what, s->cwd ? s->cwd : ".",
			       strerror(code));
	}
	fcntl(outp[0], F_SETFL, fcntl(outp[0], F_GETFL) | O_NONBLOCK);

	r = xcalloc(1, sizeof(*r));
	r->pid = r->pgid = pid;
	r->fd = outp[0];
	r->logfd = logfd;
	r->fn = fn;
	r->ctx = ctx;
	r->grace_s = s->grace_s > 0 ? s->grace_s : 5.0;
	r->deadline = s->timeout_s > 0 ? mono_now() + s->timeout_s : 0;
	r->buf = xmalloc(RUNNER_CHUNK);
	r->out.exit_status = -1;
	r->out.t_start = wall_now();
	if (s->argv) {
		struct sb words = SB_INIT;
		for (size_t i = 0; s->argv[i]; i++) {
			if (i)
				sb_addc(&words, ' ');
			vis_shell_word(s->argv[i], &words);
		}
		r->out.command = sb_detach(&words);
	} else {
		r->out.command = xstrdup(s->command);
	}
	r->out.cwd = cwd;
	*out = r;
	return 0;
}

int runner_fds(const struct runner *r, int fds[2])
{
	if (r->fd < 0)
		return 0;
	fds[0] = r->fd;
	return 1;
}

int runner_pid(const struct runner *r)
{
	return r->pid;
}

static void terminate(struct runner *r)
{
	if (r->term_sent)
		return;
	r->term_sent = true;
	signal_group(r, SIGTERM);
	r->kill_at = mono_now() + r->grace_s;
}

void runner_cancel(struct runner *r)
{
	if (r->finished || r->pid == 0)
		return;
	if (!r->term_sent && !r->out.timed_out)
		r->out.cancelled = true;
	terminate(r);
}

static int log_write(struct runner *r, const char *buf, size_t n, struct err *e)
{
	while (n && r->logfd >= 0) {
		ssize_t w = write(r->logfd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int en = w < 0 ? errno : ENOSPC;
			close(r->logfd);
			r->logfd = -1;
			r->log_failed = true;
			return err_set(e, ERR_IO, "cannot write the raw log: %s; free space or check the "
						  "trace/ folder (the run was not recorded in full)",
				       strerror(en));
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read what is available now.  Returns ERR_IO on a log failure (reading goes on). */
static int drain(struct runner *r, struct err *e)
{
	int rc = 0;
	double until = mono_now() + PUMP_BUDGET_S;
	for (int i = 0; i < PUMP_MAX_READS && r->fd >= 0; i++) {
		if (i > 0 && mono_now() > until)
			break;
		ssize_t n = read(r->fd, r->buf, RUNNER_CHUNK);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			n = 0; /* treat a read error as the end of output */
		}
		if (n == 0) {
			close(r->fd);
			r->fd = -1;
			break;
		}
		r->out.bytes += (unsigned long long)n;
		if (r->logfd >= 0 && log_write(r, r->buf, (size_t)n, e) < 0)
			rc = ERR_IO;
		if (r->fn)
			r->fn(r->ctx, r->buf, (size_t)n);
	}
	return rc;
}

static void reap(struct runner *r, bool block)
{
	int st;
	pid_t w;

	if (r->pid == 0)
		return;
	do
		w = waitpid(r->pid, &st, block ? 0 : WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w < 0 && errno == ECHILD) {
		/* Someone else reaped it (a SIGCHLD handler): the status is lost. */
		r->pid = 0;
		r->out.exit_status = -1;
		signal_group(r, SIGKILL);
		if (r->fd >= 0)
			r->drain_end = mono_now() + DRAIN_S;
		return;
	}
	if (w != r->pid)
		return;
	r->pid = 0;
	if (WIFEXITED(st)) {
		r->out.exit_status = WEXITSTATUS(st);
		r->out.signal = 0;
	} else if (WIFSIGNALED(st)) {
		r->out.exit_status = -1;
		r->out.signal = WTERMSIG(st);
	}
	/* Whatever the command left running in its group goes with it. */
	signal_group(r, SIGKILL);
	if (r->fd >= 0)
		r->drain_end = mono_now() + DRAIN_S;
}

static void finish(struct runner *r)
{
	if (r->fd >= 0) {
		close(r->fd);
		r->fd = -1;
	}
	if (r->logfd >= 0) {
		fdatasync(r->logfd);
		close(r->logfd);
		r->logfd = -1;
	}
	r->out.t_end = wall_now();
	r->finished = true;
}

static int ms_until(double t, double now)
{
	double ms = (t - now) * 1000.0;
	if (ms <= 0)
		return 0;
	return ms > INT_MAX ? INT_MAX : (int)ms + 1;
}

int runner_pump(struct runner *r, int timeout_ms, struct err *e)
{
	double now = mono_now();
	int wait = timeout_ms, rc = 0;

	if (r->finished)
		return 0;
	/* Never sleep past a deadline the runner must act on. */
	if (r->deadline && !r->term_sent) {
		int d = ms_until(r->deadline, now);
		wait = wait < 0 || d < wait ? d : wait;
	}
	if (r->kill_at && !r->kill_sent && r->pid) {
		int d = ms_until(r->kill_at, now);
		wait = wait < 0 || d < wait ? d : wait;
	}
	if (r->drain_end) {
		int d = ms_until(r->drain_end, now);
		wait = wait < 0 || d < wait ? d : wait;
	}
	/* The child's exit is not pollable here: look again at least every 50 ms. */
	if (r->pid && (wait < 0 || wait > 50))
		wait = 50;
	if (r->fd >= 0) {
		struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
		int pr = poll(&pfd, 1, wait);
		if (pr > 0)
			rc = drain(r, e);
	} else if (r->pid && wait > 0) {
		poll(NULL, 0, wait > 10 ? 10 : wait);
	}
	reap(r, false);

	now = mono_now();
	if (r->pid && r->deadline && !r->term_sent && now >= r->deadline) {
		r->out.timed_out = true;
		terminate(r);
	}
	if (r->pid && r->kill_at && !r->kill_sent && now >= r->kill_at) {
		r->kill_sent = true;
		signal_group(r, SIGKILL);
	}
	if (r->pid == 0 && r->fd >= 0 && r->drain_end && now >= r->drain_end) {
		/* A writer that left the group still holds the pipe: stop listening. */
		int rc2 = drain(r, e);
		rc = rc ? rc : rc2;
		close(r->fd);
		r->fd = -1;
	}
	if (r->pid == 0 && r->fd < 0)
		finish(r);
	if (rc)
		return rc;
	return r->finished ? 0 : 1;
}

const struct runner_outcome *runner_outcome(const struct runner *r)
{
	return &r->out;
}

void runner_free(struct runner *r)
{
	if (!r)
		return;
	if (r->pid) {
		signal_group(r, SIGKILL);
		reap(r, true);
	}
	if (r->fd >= 0)
		close(r->fd);
	if (r->logfd >= 0)
		close(r->logfd);
	free(r->buf);
	runner_outcome_release(&r->out);
	free(r);
}

void runner_outcome_release(struct runner_outcome *o)
{
	free(o->command);
	free(o->cwd);
	o->command = o->cwd = NULL;
}

int runner_run(const struct runner_spec *s, runner_data_fn fn, void *ctx,
	       struct runner_outcome *out, struct err *e)
{
	struct runner *r;
	int rc, first_err = 0;
	struct err le = {0};

	memset(out, 0, sizeof(*out));
	out->exit_status = -1;
	rc = runner_start(s, fn, ctx, &r, e);
	if (rc)
		return rc;
	while ((rc = runner_pump(r, -1, &le)) != 0) {
		if (s->stop && *s->stop)
			runner_cancel(r); /* once: the SIGKILL after the grace stays due */
		if (rc < 0 && !first_err) {
			first_err = rc;
			if (e)
				*e = le;
			runner_cancel(r);
		}
	}
	*out = r->out;
	out->command = xstrdup(r->out.command);
	out->cwd = xstrdup(r->out.cwd);
	runner_free(r);
	return first_err;
}

/* Does /proc/<pid>/environ hold RUNNER_TAG_VAR=prefix...? */
static bool tagged(pid_t pid, const char *prefix)
{
	char path[64], buf[65536];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	char *want = xasprintf("%s=%s", RUNNER_TAG_VAR, prefix);
	size_t wl = strlen(want);
	bool hit = false;
	for (char *p = buf; p < buf + n && !hit; p += strlen(p) + 1)
		hit = !strncmp(p, want, wl);
	free(want);
	return hit;
}

static size_t tagged_pids(const char *prefix, pid_t *out, size_t cap)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0;
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < cap) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 1 || pid == (long)getpid())
			continue;
		if (tagged((pid_t)pid, prefix))
			out[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

int runner_kill_tagged(const char *prefix, double grace_s, int *first_pid)
{
	pid_t pids[256];
	size_t n = tagged_pids(prefix, pids, 256);
	if (first_pid)
		*first_pid = n ? (int)pids[0] : 0;
	for (size_t i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (double waited = 0; n && waited < grace_s; waited += 0.05) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
		pid_t left[256];
		if (tagged_pids(prefix, left, 256) == 0)
			return (int)n;
	}
	pid_t left[256];
	size_t m = tagged_pids(prefix, left, 256);
	for (size_t i = 0; i < m; i++)
		kill(left[i], SIGKILL);
	return (int)n;
}
