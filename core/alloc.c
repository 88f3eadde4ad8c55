/*
 * alloc — the workspace's Slurm allocation: request, reattach, use,
 * release.  See alloc.h.
 */
#include "core/alloc.h"

#include "core/err.h"
#include "core/probestep.h"
#include "core/runner.h"
#include "core/sb.h"
#include "core/store.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define QUERY_TIMEOUT_S 30.0

struct alloc {
	struct store *st;
	char *ws_dir;
	struct slurm_runner r;
	struct store_alloc rec; /* the recorded allocation (id 0: none yet) */
	bool ready;             /* granted and checked */
	enum slurm_cause last_cause; /* how the last step of this handle ended */
	struct runner *child;   /* salloc, or the wait for a pending job */
	bool granted_line;      /* salloc said Granted */
	char last[256];         /* salloc's last error line */
	struct sb line;         /* salloc's line being assembled */
	alloc_output_fn out;
	void *ctx;
	struct probestep *probe; /* the probe's step, once a probe ran */
};

static double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void say(struct alloc *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct alloc *a, const char *fmt, ...)
{
	if (!a->out)
		return;
	struct sb s = SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&s, fmt, ap);
	va_end(ap);
	sb_addc(&s, '\n');
	a->out(a->ctx, s.buf, s.len);
	sb_release(&s);
}

static void collect(void *ctx, const char *buf, size_t len)
{
	struct sb *s = ctx;
	if (s->len < 65536)
		sb_add(s, buf, len);
}

/* Run a short Slurm command, its output (both streams) into out; 124 when
 * it ran past timeout_s. */
static int capture_within(const char *cmd, double timeout_s, struct sb *out, int *status)
{
	struct runner_outcome oc;
	struct runner_spec spec = {.command = cmd, .timeout_s = timeout_s, .grace_s = 1};
	int rc = runner_run(&spec, collect, out, &oc, NULL);
	*status = rc < 0 ? -1 : oc.timed_out ? 124 : oc.exit_status;
	if (rc == 0)
		runner_outcome_release(&oc);
	return rc;
}

static int capture(const char *cmd, struct sb *out, int *status)
{
	return capture_within(cmd, QUERY_TIMEOUT_S, out, status);
}

void alloc_query(const char *job, struct slurm_job *out, struct sb *why)
{
	alloc_query_within(job, QUERY_TIMEOUT_S, out, why);
}

void alloc_query_within(const char *job, double timeout_s, struct slurm_job *out, struct sb *why)
{
	struct sb cmd = SB_INIT, text = SB_INIT;
	int status;
	sb_adds(&cmd, "squeue -h -j ");
	slurm_shell_quote(&cmd, job);
	sb_adds(&cmd, " -o '" SLURM_SQUEUE_FORMAT "'");
	if (capture_within(cmd.buf, timeout_s, &text, &status) < 0)
		status = -1;
	slurm_squeue_parse(sb_str(&text), status, out);
	if (status == 124) /* the controller did not answer: unknown, never gone */
		snprintf(out->reason, sizeof(out->reason), "squeue did not answer within %g s",
			 timeout_s);
	if (status != 0 && why)
		sb_adds(why, sb_str(&text));
	sb_release(&cmd);
	sb_release(&text);
}

static void scancel(const char *id)
{
	struct sb cmd = SB_INIT, text = SB_INIT;
	int status;
	sb_adds(&cmd, "scancel ");
	slurm_shell_quote(&cmd, id);
	capture(cmd.buf, &text, &status);
	sb_release(&cmd);
	sb_release(&text);
}

/* ---- the idle watch ---- */

static char *idle_path(const char *ws_dir, const char *job)
{
	return xasprintf("%s/slurm-%s.idle", ws_dir, job);
}

/* $1 the idle file (holds the watch's pid; its mtime is the last use), $2
 * the job, $3 the idle seconds.  A newer watch for the same job takes the
 * file over and this one leaves; so does one whose job is gone. */
static const char idle_watch[] =
	"f=$1 job=$2 idle=$3\n"
	"echo $$ >\"$f\" || exit 0\n"
	"while :; do\n"
	"  [ \"$(cat \"$f\" 2>/dev/null)\" = \"$$\" ] || exit 0\n"
	"  st=$(squeue -h -j \"$job\" -o %T 2>/dev/null) || exit 0\n"
	"  case \"$st\" in RUNNING|CONFIGURING|PENDING) ;; *) rm -f \"$f\"; exit 0 ;; esac\n"
	"  if squeue -h -s -j \"$job\" -o %i 2>/dev/null | grep -qv 'extern$'; then touch \"$f\"; fi\n"
	"  last=$(stat -c %Y \"$f\" 2>/dev/null) || exit 0\n"
	"  left=$((last + idle - $(date +%s)))\n"
	"  if [ \"$left\" -le 0 ]; then scancel \"$job\"; echo idle >\"$f\"; exit 0; fi\n"
	"  [ \"$left\" -gt 60 ] && left=60\n"
	"  sleep \"$left\"\n"
	"done\n";

static bool watch_alive(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	long pid = strtol(buf, NULL, 10);
	return pid > 1 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Start the idle watch for the job unless one is watching it already.  It
 * is detached (its own session, no descriptor of ours: never the store's
 * lock) and outlives this process. */
static void watch_start(struct alloc *a)
{
	if (a->r.idle_s <= 0 || !a->rec.job)
		return;
	char *path = idle_path(a->ws_dir, a->rec.job);
	if (watch_alive(path)) {
		free(path);
		return;
	}
	char idle[32];
	snprintf(idle, sizeof(idle), "%.0f", a->r.idle_s < 1 ? 1 : a->r.idle_s);
	pid_t pid = fork();
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		setsid();
		int fd = open("/dev/null", O_RDWR);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		for (int i = 3; i < 1024; i++)
			close(i);
		unsetenv(RUNNER_TAG_VAR);
		execl("/bin/sh", "sh", "-c", idle_watch, "optloop-idle-watch", path, a->rec.job, idle,
		      (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	free(path);
}

static void idle_touch(const char *ws_dir, const char *job)
{
	char *path = idle_path(ws_dir, job);
	utimensat(AT_FDCWD, path, NULL, 0);
	free(path);
}

/* Whether the idle watch cancelled the job (it leaves "idle" in its file). */
static bool idle_released(const char *ws_dir, const char *job)
{
	char buf[8] = "";
	char *path = idle_path(ws_dir, job);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 4 && !strncmp(buf, "idle", 4);
}

/* Why job is gone, in words (caller frees). */
static char *gone_why(const char *ws_dir, const char *job, const struct slurm_job *j)
{
	if (idle_released(ws_dir, job))
		return xasprintf("Slurm job %s was released after its idle time without a run "
				 "(Runner idle=)",
				 job);
	return xasprintf("Slurm job %s is %s", job, j->state[0] ? j->state : "no longer in the queue");
}

static void idle_forget(const char *ws_dir, const char *job)
{
	char *path = idle_path(ws_dir, job);
	unlink(path);
	free(path);
}

/* ---- the handle ---- */

static void forget(struct alloc *a, const char *why);

struct alloc *alloc_new(struct store *st, const char *ws_dir, const struct slurm_runner *r)
{
	struct alloc *a = xcalloc(1, sizeof(*a));
	a->st = st;
	a->ws_dir = xstrdup(ws_dir);
	a->r.slurm = r->slurm;
	a->r.idle_s = r->idle_s;
	a->r.canon = xstrdup(r->canon ? r->canon : "");
	a->r.args = xcalloc(r->nargs + 1, sizeof(char *));
	for (size_t i = 0; i < r->nargs; i++)
		a->r.args[i] = xstrdup(r->args[i]);
	a->r.nargs = r->nargs;
	sb_init(&a->line);
	return a;
}

void alloc_free(struct alloc *a)
{
	if (!a)
		return;
	if (a->child) {
		/* still waiting: the request goes with us (runner_free may kill
		 * salloc before it withdraws the job itself) */
		alloc_cancel_request(a);
		if (a->rec.job)
			scancel(a->rec.job);
		forget(a, "the optloop waiting for it ended");
	}
	runner_free(a->child);
	probestep_free(a->probe);
	slurm_runner_release(&a->r);
	store_alloc_release(&a->rec);
	sb_release(&a->line);
	free(a->ws_dir);
	free(a);
}

const char *alloc_job(const struct alloc *a)
{
	return a->rec.job;
}

const char *alloc_runner(const struct alloc *a)
{
	return a->r.canon;
}

const char *alloc_node(const struct alloc *a)
{
	return a->rec.node;
}

int alloc_probe_capture(void *alloc, const char *cmd, double timeout_s, struct sb *out,
			int *status, bool *timed_out, struct err *e)
{
	struct alloc *a = alloc;
	if (!a->probe)
		a->probe = probestep_new();
	return probestep_capture(a->probe, a->rec.job, a->rec.node, cmd, timeout_s, out, status,
				 timed_out, e);
}

bool alloc_waiting(const struct alloc *a)
{
	return a && a->child;
}

static void save(struct alloc *a)
{
	if (a->rec.id)
		store_alloc_update(a->st, &a->rec, NULL);
	else
		store_alloc_insert(a->st, &a->rec, NULL);
}

static void set_str(char **dst, const char *v)
{
	free(*dst);
	*dst = v && *v ? xstrdup(v) : NULL;
}

/* Mark the recorded allocation released with why. */
static void forget(struct alloc *a, const char *why)
{
	if (a->rec.job)
		idle_forget(a->ws_dir, a->rec.job);
	if (a->rec.id) {
		set_str(&a->rec.state, "released");
		set_str(&a->rec.why, why);
		a->rec.released = now();
		save(a);
	}
	store_alloc_release(&a->rec);
	a->ready = false;
	probestep_free(a->probe); /* its step went with the job */
	a->probe = NULL;
}

/* The job is running: note its node, start the idle watch. */
static void running(struct alloc *a, const struct slurm_job *j)
{
	char node[256];
	slurm_first_node(j->nodes, node, sizeof(node));
	set_str(&a->rec.node, node);
	set_str(&a->rec.state, "running");
	set_str(&a->rec.reason, NULL);
	if (a->rec.granted <= 0)
		a->rec.granted = now();
	a->rec.last_used = now();
	save(a);
	a->ready = true;
	watch_start(a);
}

static void salloc_line(struct alloc *a, const char *line)
{
	char job[24];
	enum slurm_salloc_event ev = slurm_salloc_line(line, job, sizeof(job));
	switch (ev) {
	case SALLOC_PENDING:
	case SALLOC_GRANTED:
		if (!a->rec.job || strcmp(a->rec.job, job)) {
			set_str(&a->rec.job, job);
			if (ev == SALLOC_PENDING)
				set_str(&a->rec.state, "pending");
			save(a);
		}
		if (ev == SALLOC_GRANTED)
			a->granted_line = true;
		break;
	case SALLOC_REVOKED:
	case SALLOC_ERROR:
		snprintf(a->last, sizeof(a->last), "%s", line);
		break;
	case SALLOC_OTHER:
		break;
	}
}

static void on_salloc(void *ctx, const char *buf, size_t len)
{
	struct alloc *a = ctx;
	if (a->out)
		a->out(a->ctx, buf, len);
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			salloc_line(a, sb_str(&a->line));
			sb_reset(&a->line);
		} else if (a->line.len < 1024) {
			sb_addc(&a->line, buf[i]);
		}
	}
}

static int start_child(struct alloc *a, const char *cmd, struct err *e)
{
	struct runner_spec spec = {.command = cmd, .grace_s = 5};
	int rc = runner_start(&spec, on_salloc, a, &a->child, e);
	if (rc < 0)
		return err_prefix(e, "Slurm: cannot start '%s': ", cmd);
	return 0;
}

/* Request a new allocation: salloc, recorded before it names a job. */
static int request(struct alloc *a, struct err *e)
{
	struct sb cmd = SB_INIT;
	store_alloc_release(&a->rec);
	a->rec.runner = xstrdup(a->r.canon);
	a->rec.state = xstrdup("requested");
	a->rec.requested = now();
	a->rec.pid = (int)getpid();
	save(a);
	a->granted_line = false;
	a->last[0] = '\0';
	sb_reset(&a->line);
	slurm_salloc_command(&a->r, &cmd);
	say(a, "optloop: requesting a Slurm allocation: %s", cmd.buf + 5 /* "exec " */);
	int rc = start_child(a, cmd.buf, e);
	sb_release(&cmd);
	if (rc < 0)
		forget(a, "salloc could not be started");
	return rc;
}

/* Wait for a pending job someone else requested (its salloc is not ours). */
static int wait_pending(struct alloc *a, struct err *e)
{
	struct sb cmd = SB_INIT;
	sb_adds(&cmd, "while s=$(squeue -h -j ");
	slurm_shell_quote(&cmd, a->rec.job);
	sb_adds(&cmd, " -o %T 2>/dev/null) && [ \"$s\" = PENDING ]; do sleep 2; done");
	a->granted_line = true; /* the job is known; squeue decides at the end */
	int rc = start_child(a, cmd.buf, e);
	sb_release(&cmd);
	return rc;
}

int alloc_begin(struct alloc *a, alloc_output_fn out, void *ctx, struct err *e)
{
	struct slurm_job j;
	struct sb why = SB_INIT;
	a->out = out;
	a->ctx = ctx;
	if (a->child)
		return 0;
	if (!a->rec.id) {
		if (store_alloc_current(a->st, &a->rec, NULL) < 0)
			memset(&a->rec, 0, sizeof(a->rec));
		else if (!a->rec.runner || strcmp(a->rec.runner, a->r.canon)) {
			/* made for another Runner value: give it back */
			if (a->rec.job)
				scancel(a->rec.job);
			say(a, "optloop: the Runner field changed: Slurm job %s released",
			    a->rec.job ? a->rec.job : "(none)");
			forget(a, "the contract's Runner field changed");
		} else if (a->rec.job) {
			say(a, "optloop: reattaching to Slurm job %s", a->rec.job);
		}
	}
	if (!a->rec.id || !a->rec.job)
		return request(a, e) < 0 ? ERR_HARNESS : 0;
	alloc_query(a->rec.job, &j, &why);
	int rc;
	switch (j.phase) {
	case SJ_RUNNING:
		running(a, &j);
		rc = 1;
		break;
	case SJ_PENDING:
		set_str(&a->rec.state, "pending");
		set_str(&a->rec.reason, j.reason);
		save(a);
		say(a, "optloop: Slurm job %s is pending (%s); waiting for it", a->rec.job,
		    j.reason[0] ? j.reason : "no reason given");
		rc = wait_pending(a, e) < 0 ? ERR_HARNESS : 0;
		break;
	case SJ_UNKNOWN:
		rc = err_set(e, ERR_HARNESS,
			     "Slurm: squeue cannot say whether job %s is still there: %s (check the "
			     "cluster with squeue, then run again)",
			     a->rec.job, j.reason);
		break;
	case SJ_HELD:
		rc = err_set(e, ERR_HARNESS,
			     "Slurm job %s is %s: it keeps its nodes but runs nothing, and optloop "
			     "asks for no second allocation beside it; resume it (scontrol resume "
			     "%s) or give it back (scancel %s, or optloop stop --release), then run "
			     "again",
			     a->rec.job, j.state, a->rec.job, a->rec.job);
		break;
	default: {
		char *was = gone_why(a->ws_dir, a->rec.job, &j);
		say(a, "optloop: %s; requesting a new allocation", was);
		forget(a, was);
		free(was);
		rc = request(a, e) < 0 ? ERR_HARNESS : 0;
		break;
	}
	}
	sb_release(&why);
	return rc;
}

int alloc_fds(const struct alloc *a, int fds[2])
{
	return a->child ? runner_fds(a->child, fds) : 0;
}

int alloc_pump(struct alloc *a, int timeout_ms, struct err *e)
{
	if (!a->child)
		return a->ready ? 0 : err_set(e, ERR_HARNESS, "Slurm: no allocation requested");
	int rc = runner_pump(a->child, timeout_ms, NULL);
	if (rc > 0)
		return 1;
	if (a->line.len) {
		salloc_line(a, sb_str(&a->line));
		sb_reset(&a->line);
	}
	const struct runner_outcome *oc = runner_outcome(a->child);
	bool cancelled = oc->cancelled;
	int status = oc->exit_status;
	runner_free(a->child);
	a->child = NULL;
	if (cancelled) {
		if (a->rec.job)
			scancel(a->rec.job);
		forget(a, "the request was cancelled while the job waited in the queue");
		return err_set(e, ERR_HARNESS,
			       "Slurm: the allocation request was cancelled before it was granted");
	}
	struct slurm_job j;
	struct sb why = SB_INIT;
	if (a->rec.job && a->granted_line)
		alloc_query(a->rec.job, &j, &why);
	else
		memset(&j, 0, sizeof(j));
	sb_release(&why);
	if (a->rec.job && a->granted_line && j.phase == SJ_RUNNING) {
		running(a, &j);
		say(a, "optloop: Slurm job %s granted on %s", a->rec.job,
		    a->rec.node ? a->rec.node : "(no node)");
		return 0;
	}
	char *msg;
	if (a->last[0])
		msg = xasprintf("salloc could not get an allocation: %s (fix the Runner field's "
				"options, or see sinfo for the partitions)",
				a->last);
	else if (a->rec.job)
		msg = xasprintf("Slurm job %s ended before a run could use it (%s)", a->rec.job,
				j.state[0] ? j.state : "no longer in the queue");
	else if (status == 127)
		msg = xasprintf("salloc was not found (install Slurm's client commands here, or "
				"set the contract's Runner to local)");
	else
		msg = xasprintf("salloc ended (exit %d) without granting an allocation", status);
	forget(a, msg);
	rc = err_set(e, ERR_HARNESS, "Slurm: %s", msg);
	free(msg);
	return rc;
}

void alloc_cancel_request(struct alloc *a)
{
	if (a->child)
		runner_cancel(a->child); /* salloc cancels a pending job on SIGTERM */
}

void alloc_touch(struct alloc *a)
{
	if (!a->rec.id || !a->rec.job)
		return;
	a->rec.last_used = now();
	store_alloc_update(a->st, &a->rec, NULL);
	idle_touch(a->ws_dir, a->rec.job);
}

void alloc_cancel_steps(struct alloc *a, const char *step)
{
	if (!a->rec.job)
		return;
	if (step && *step) {
		char *id = xasprintf("%s.%s", a->rec.job, step);
		scancel(id);
		free(id);
		return;
	}
	/* the step has not named itself yet: every step of the job is ours */
	struct sb cmd = SB_INIT, text = SB_INIT;
	int status;
	sb_adds(&cmd, "squeue -h -s -j ");
	slurm_shell_quote(&cmd, a->rec.job);
	sb_adds(&cmd, " -o %i");
	if (capture(cmd.buf, &text, &status) == 0 && status == 0) {
		char *save_p = NULL;
		for (char *t = strtok_r(text.buf, "\n", &save_p); t; t = strtok_r(NULL, "\n", &save_p))
			if (strchr(t, '.') && !strstr(t, ".extern") && !strstr(t, ".batch"))
				scancel(t);
	}
	sb_release(&cmd);
	sb_release(&text);
}

bool alloc_time_left(const struct alloc *a)
{
	double limit = a ? slurm_time_limit(&a->r) : -1;
	/* a minute's margin: Slurm ends a job at its limit only on its next check */
	return limit > 0 && a->rec.granted > 0 && now() - a->rec.granted < limit - 60;
}

enum slurm_cause alloc_last_cause(const struct alloc *a)
{
	return a ? a->last_cause : SC_OK;
}

void alloc_step_ended(struct alloc *a, enum slurm_cause cause, const char *why)
{
	a->last_cause = cause;
	switch (cause) {
	case SC_TIME_LIMIT:
	case SC_REVOKED:
	case SC_NODE_FAIL:
	case SC_PREEMPTED:
	case SC_GONE:
		if (a->rec.job)
			scancel(a->rec.job); /* whatever is left of it */
		forget(a, why);
		break;
	default:
		alloc_touch(a);
		break;
	}
}

/* ---- without a handle ---- */

int alloc_check_recorded(struct store *st, const char *ws_dir, bool write, struct slurm_job *job,
			 struct err *e)
{
	struct store_alloc rec;
	memset(job, 0, sizeof(*job));
	int rc = store_alloc_current(st, &rec, e);
	if (rc < 0)
		return rc;
	if (rec.job) {
		alloc_query(rec.job, job, NULL);
		if (write && (job->phase == SJ_GONE || job->phase == SJ_ENDING)) {
			free(rec.state);
			rec.state = xstrdup("released");
			free(rec.why);
			rec.why = gone_why(ws_dir, rec.job, job);
			rec.released = now();
			idle_forget(ws_dir, rec.job);
			store_alloc_update(st, &rec, NULL);
		}
	}
	store_alloc_release(&rec);
	return 0;
}

int alloc_release_recorded(struct store *st, const char *ws_dir, const char *why, bool *had,
			   struct err *e)
{
	struct store_alloc rec;
	if (had)
		*had = false;
	int rc = store_alloc_current(st, &rec, NULL);
	if (rc < 0)
		return 0;
	if (had)
		*had = true;
	if (rec.job) {
		scancel(rec.job);
		idle_forget(ws_dir, rec.job);
	}
	free(rec.state);
	rec.state = xstrdup("released");
	free(rec.why);
	rec.why = xstrdup(why);
	rec.released = now();
	rc = store_alloc_update(st, &rec, e);
	store_alloc_release(&rec);
	return rc;
}
