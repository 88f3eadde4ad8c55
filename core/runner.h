/*
 * runner — the verify command as a child process.
 *
 * The command runs under /bin/sh -c (or as an argument vector, no shell) in
 * its own process group, with stdin
 * from /dev/null and stdout and stderr sharing one pipe (so their lines keep
 * the order the child wrote them, as a terminal would show them).  Every
 * byte is appended to the raw log as it arrives and handed to the data
 * callback (typically parser_feed).  The pipe is non-blocking: the TUI polls
 * runner_fds() in its own event loop and calls runner_pump(); the CLI calls
 * runner_run(), which loops until the end.
 *
 * Timeout and cancel send SIGTERM to the whole group, then SIGKILL after
 * the grace period.  When the command itself exits, anything it left behind
 * in its group is killed too, so a verify run never outlives its record.
 *
 * Memory bound: the runner holds one RUNNER_CHUNK read buffer and its own
 * small struct, whatever the child prints (100 MB, one 10 MB line, NULs,
 * invalid UTF-8, escape sequences); output goes to the log file and the
 * callback, never into memory that grows.  Together with a parser (see
 * PARSE_MEM_BOUND) a verify run stays under RUNNER_MEM_BOUND.
 */
#ifndef OPTLOOP_RUNNER_H
#define OPTLOOP_RUNNER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct runner;

#define RUNNER_CHUNK 65536
#define RUNNER_MEM_BOUND ((size_t)8 << 20)

struct runner_spec {
	const char *command;  /* run by /bin/sh -c */
	const char *const *argv; /* instead, when not NULL: argv[0] (looked up on
				  * PATH) with these words, no shell between;
				  * NULL-terminated */
	const char *cwd;      /* NULL: the current directory */
	const char *log_path; /* raw log, every byte as it arrives; NULL: none */
	double timeout_s;     /* 0: none */
	double grace_s;       /* SIGTERM -> SIGKILL; 0 means 5 */
	const char *tag;      /* given to the command and its children as the
			       * environment variable OPTLOOP_RUN (RUNNER_TAG_VAR),
			       * so processes a killed optloop left behind can be
			       * found (runner_kill_tagged); NULL: none */
	const volatile sig_atomic_t *stop; /* runner_run cancels the run once
					    * it is set (a signal handler's flag) */
};

#define RUNNER_TAG_VAR "OPTLOOP_RUN"

/* Stop every process of this user whose environment has OPTLOOP_RUN
 * starting with prefix (SIGTERM to each, SIGKILL to those left after
 * grace_s), except the caller.  Returns how many were found; pids (may be
 * NULL) receives the first one.  Linux: reads /proc/<pid>/environ. */
int runner_kill_tagged(const char *prefix, double grace_s, int *first_pid);

struct runner_outcome {
	int exit_status; /* -1 when killed by a signal, not finished, or reaped
			  * by someone else (a SIGCHLD handler that waits for all) */
	int signal;      /* the signal that ended it, 0 if none */
	bool timed_out, cancelled;
	double t_start, t_end; /* unix seconds */
	char *command, *cwd;   /* exactly as run (cwd made absolute; an argv
				* shell-quoted word by word) */
	unsigned long long bytes;
};

/* An exit status as a shell reports a child killed by signal N: 128 + N
 * (N from 1 to 64, the kernel's signals, real-time ones included). */
static inline bool runner_status_is_signal(int exit_status)
{
	return exit_status > 128 && exit_status <= 128 + 64;
}

/* Whether the run was stopped rather than finishing on its own: a signal
 * (also one the shell between us and the harness reports as 128 + N), the
 * timeout or a cancel.  Its gate can then not be a pass. */
static inline bool runner_outcome_killed(const struct runner_outcome *oc)
{
	return oc->signal != 0 || oc->timed_out || oc->cancelled ||
	       runner_status_is_signal(oc->exit_status);
}

/* Called with each block of output as it arrives (any size, any bytes). */
typedef void (*runner_data_fn)(void *ctx, const char *buf, size_t len);

/* Start the command.  On success *out owns the running child (runner_free
 * ends it if still running).  ERR_IO when the log cannot be created or the
 * child cannot be started, ERR_USAGE for an empty command, ERR_NOTFOUND when
 * cwd does not exist. */
int runner_start(const struct runner_spec *s, runner_data_fn fn, void *ctx, struct runner **out,
		 struct err *e);
/* The descriptors to poll for POLLIN; returns how many (0 once finished). */
int runner_fds(const struct runner *r, int fds[2]);
/* Read what is there (waiting up to timeout_ms, -1 forever, for something to
 * happen), enforce the timeout and the grace period, reap the child.
 * Returns 1 while running, 0 once finished, or ERR_IO when the raw log could
 * not be written (the run goes on; later calls stop writing the log). */
int runner_pump(struct runner *r, int timeout_ms, struct err *e);
/* Ask the run to stop: SIGTERM to the group now, SIGKILL after the grace
 * period (runner_pump enforces it).  Recorded as cancelled. */
void runner_cancel(struct runner *r);
/* How it ended (final once runner_pump returned 0); owned by the runner. */
const struct runner_outcome *runner_outcome(const struct runner *r);
/* The child's process id (also its process group), 0 once reaped. */
int runner_pid(const struct runner *r);
void runner_free(struct runner *r);

/* Blocking: start, pump to the end (cancelling once *s->stop is set), copy
 * the outcome to *out (release with runner_outcome_release).  Errors as runner_start; a log write failure
 * cancels the run and returns ERR_IO with the outcome still filled. */
int runner_run(const struct runner_spec *s, runner_data_fn fn, void *ctx,
	       struct runner_outcome *out, struct err *e);
void runner_outcome_release(struct runner_outcome *o);

#endif
