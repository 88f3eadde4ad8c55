/*
 * probestep — the probe's commands through one long-lived Slurm step.  See
 * probestep.h.
 */
#define _GNU_SOURCE
#include "core/probestep.h"

#include "core/err.h"
#include "core/sb.h"
#include "core/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DONE "optloop-probe-done "
/* what of one command's output is kept (nvidia-smi's readings are a few
 * lines; of a flood, its end) */
#define MAX_OUTPUT (256 * 1024)

/* The step's shell: a command a line, its stdout, then its status on a
 * line of its own (after a newline, should the output not end in one). */
static const char loop[] = "while IFS= read -r c; do /bin/sh -c \"$c\" </dev/null 2>/dev/null; "
			   "printf '\\n" DONE "%d\\n' \"$?\"; done";

struct probestep {
	pid_t pid; /* srun (0: no step) */
	int in, out;
	char *job, *node;
	struct sb buf; /* read and not yet answered (MAX_OUTPUT at most) */
};

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct probestep *probestep_new(void)
{
	struct probestep *p = xcalloc(1, sizeof(*p));
	p->in = p->out = -1;
	sb_init(&p->buf);
	return p;
}

static bool same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* Wait for srun for up to wait_s; then stop its process group. */
static int reap(struct probestep *p, double wait_s)
{
	int status = 0;
	double until = mono() + wait_s;
	for (;;) {
		pid_t w = waitpid(p->pid, &status, WNOHANG);
		if (w == p->pid || (w < 0 && errno != EINTR))
			break;
		if (w == 0 && mono() >= until) {
			kill(-p->pid, SIGTERM);
			kill(p->pid, SIGTERM);
			usleep(200 * 1000);
			if (waitpid(p->pid, &status, WNOHANG) == 0) {
				kill(-p->pid, SIGKILL);
				kill(p->pid, SIGKILL);
				while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
					;
			}
			break;
		}
		usleep(2000);
	}
	return status;
}

/* End the step; its srun's wait status. */
static int stop(struct probestep *p, double wait_s)
{
	int status = 0;
	if (p->in >= 0)
		close(p->in);
	if (p->pid > 0)
		status = reap(p, wait_s);
	if (p->out >= 0)
		close(p->out);
	p->in = p->out = -1;
	p->pid = 0;
	free(p->job);
	free(p->node);
	p->job = p->node = NULL;
	sb_reset(&p->buf);
	return status;
}

void probestep_free(struct probestep *p)
{
	if (!p)
		return;
	stop(p, 1.0);
	sb_release(&p->buf);
	free(p);
}

static int start(struct probestep *p, const char *job, const char *node, struct err *e)
{
	struct sb cmd = SB_INIT;
	int in[2], out[2];
	slurm_probe_prefix(job, node, &cmd);
	sb_addc(&cmd, ' ');
	slurm_shell_quote(&cmd, loop);
	if (pipe2(in, O_CLOEXEC) < 0) {
		sb_release(&cmd);
		return err_set(e, ERR_IO, "probe: cannot create a pipe: %s", strerror(errno));
	}
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		sb_release(&cmd);
		return err_set(e, ERR_IO, "probe: cannot create a pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		int errno_ = errno;
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		sb_release(&cmd);
		return err_set(e, ERR_IO, "probe: cannot start a process: %s", strerror(errno_));
	}
	if (pid == 0) {
		/* its own group: a Ctrl-C at the terminal is optloop's to handle */
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* stderr away, as for a probe run here: srun's words never mix
		 * with the readings */
		int devnull = open("/dev/null", O_WRONLY);
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (devnull >= 0)
			dup2(devnull, 2);
		execl("/bin/sh", "sh", "-c", cmd.buf, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(in[0]);
	close(out[1]);
	sb_release(&cmd);
	p->pid = pid;
	p->in = in[1];
	p->out = out[0];
	p->job = xstrdup(job ? job : "");
	p->node = xstrdup(node ? node : "");
	sb_reset(&p->buf);
	return 0;
}

/* The answer in p->buf: its status, the output before it into out. */
static bool answered(struct probestep *p, struct sb *out, int *status)
{
	const char *b = sb_str(&p->buf);
	const char *d = NULL;
	for (const char *s = b; (s = strstr(s, DONE)); s++)
		if (s == b || s[-1] == '\n') {
			const char *nl = strchr(s, '\n');
			if (nl) {
				d = s;
				break;
			}
		}
	if (!d)
		return false;
	size_t n = (size_t)(d - b);
	if (n) /* the newline printed before the status line */
		n--;
	sb_add(out, b, n);
	*status = (atoi(d + strlen(DONE)) & 0xff) << 8;
	sb_reset(&p->buf);
	return true;
}

int probestep_capture(struct probestep *p, const char *job, const char *node, const char *cmd,
		      double timeout_s, struct sb *out, int *status, bool *timed_out,
		      struct err *e)
{
	*timed_out = false;
	*status = 0;
	if (strchr(cmd, '\n'))
		return err_set(e, ERR_USAGE, "probe: a probe command is one line ('%s')", cmd);
	/* a step that has ended, or one of another job or node, is replaced */
	if (p->pid > 0) {
		int st;
		if (waitpid(p->pid, &st, WNOHANG) != 0)
			p->pid = 0; /* ended (reaped now) */
		if (!p->pid || !same(p->job, job) || !same(p->node, node))
			stop(p, 1.0);
	}
	int rc;
	if (p->pid <= 0 && (rc = start(p, job, node, e)) < 0)
		return rc;

	struct sb line = SB_INIT;
	sb_adds(&line, cmd);
	sb_addc(&line, '\n');
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	ssize_t w = write(p->in, line.buf, line.len);
	signal(SIGPIPE, old);
	sb_release(&line);
	(void)w; /* a step that has ended says so below, by its end */

	double deadline = mono() + timeout_s;
	char buf[4096];
	for (;;) {
		if (answered(p, out, status))
			return 0;
		double left = deadline - mono();
		if (left <= 0) {
			*timed_out = true;
			sb_add(out, p->buf.buf, p->buf.len);
			stop(p, 0);
			return 0;
		}
		struct pollfd pfd = {.fd = p->out, .events = POLLIN};
		int r = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t n = read(p->out, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* the step ended before it answered: srun's status */
			sb_add(out, p->buf.buf, p->buf.len);
			*status = stop(p, 5.0);
			if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
				*status = 1 << 8; /* it answered nothing: never a reading */
			return 0;
		}
		sb_add(&p->buf, buf, (size_t)n);
		if (p->buf.len > MAX_OUTPUT) { /* a flood: its tail, where the answer ends */
			size_t drop = p->buf.len - MAX_OUTPUT;
			memmove(p->buf.buf, p->buf.buf + drop, MAX_OUTPUT + 1);
			p->buf.len = MAX_OUTPUT;
		}
	}
}
