/*
 * alloc — the Slurm allocation a workspace's runs go through.
 *
 * One allocation serves the whole session, across optloop processes: it is
 * requested with salloc --no-shell when the first run needs it, its job id
 * is recorded in the store as soon as salloc names it (so `status` in any
 * process shows a pending allocation's queue reason), and every later run,
 * in this process or a restarted one, reattaches to it after checking with
 * squeue that it is still there.  One that is gone (its time limit, a
 * scancel, a failed node) is forgotten with the reason and a new one is
 * requested.
 *
 * Requesting never blocks: alloc_begin starts salloc as a child (or, for a
 * pending job another optloop requested, a child that waits for it to
 * start) and alloc_fds/alloc_pump drive it from the caller's event loop.
 *
 * Idle release: a small detached shell process per allocation (the idle
 * watch) cancels the job once nothing has used it for the Runner's idle
 * time.  Each use touches <workspace>/slurm-<job>.idle, which also holds
 * the watch's pid; a step going counts as use.
 */
#ifndef OPTLOOP_ALLOC_H
#define OPTLOOP_ALLOC_H

#include "core/slurm.h"

#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;
struct store;
struct alloc;

typedef void (*alloc_output_fn)(void *ctx, const char *buf, size_t len);

/* A handle on the workspace's allocation for runner r (copied).  ws_dir
 * holds the idle file.  Nothing is requested yet. */
struct alloc *alloc_new(struct store *st, const char *ws_dir, const struct slurm_runner *r);
void alloc_free(struct alloc *a); /* the allocation itself stays */

/* Make sure the allocation is there: 1 when it is (alloc_job/alloc_node
 * name it), 0 when it is being requested or waited for (poll alloc_fds,
 * call alloc_pump), ERR_HARNESS when salloc cannot be started.  out gets
 * salloc's lines and optloop's own about the wait (may be NULL). */
int alloc_begin(struct alloc *a, alloc_output_fn out, void *ctx, struct err *e);
int alloc_fds(const struct alloc *a, int fds[2]);
/* 1 still waiting, 0 granted, ERR_HARNESS when the request failed or was
 * cancelled (e says why: salloc's error, the job's end). */
int alloc_pump(struct alloc *a, int timeout_ms, struct err *e);
/* Stop waiting: salloc is stopped and a pending job cancelled. */
void alloc_cancel_request(struct alloc *a);
bool alloc_waiting(const struct alloc *a);

const char *alloc_job(const struct alloc *a);
const char *alloc_runner(const struct alloc *a); /* the Runner value, canonical */
const char *alloc_node(const struct alloc *a);

/* Run a GPU probe command on the allocation's node, through the handle's
 * probe step (core/probestep.h; started at the first, ended with the
 * handle): a probe_capture_fn, ctx the handle. */
int alloc_probe_capture(void *alloc, const char *cmd, double timeout_s, struct sb *out,
			int *status, bool *timed_out, struct err *e);

/* A run used the allocation now (start and end of every run). */
void alloc_touch(struct alloc *a);
/* scancel the step (job.step), or every step of the job when step is
 * NULL or empty. */
void alloc_cancel_steps(struct alloc *a, const char *step);
/* A step ended by cause: an allocation that is gone is forgotten, with
 * why, so the next run requests a new one. */
void alloc_step_ended(struct alloc *a, enum slurm_cause cause, const char *why);
/* How the last step this handle ran ended (SC_OK before any). */
enum slurm_cause alloc_last_cause(const struct alloc *a);
/* Had the allocation time left under its --time limit (less a minute)?
 * false when the limit is not known. */
bool alloc_time_left(const struct alloc *a);

/* Ask squeue about job (out->phase SJ_GONE when it is not in the queue or
 * squeue fails; why, when not NULL, gets squeue's error). */
void alloc_query(const char *job, struct slurm_job *out, struct sb *why);
/* The same, waiting at most timeout_s for squeue (a controller that does
 * not answer: SJ_UNKNOWN, saying so); what a reader such as status uses,
 * ALLOC_LOOK_S. */
void alloc_query_within(const char *job, double timeout_s, struct slurm_job *out, struct sb *why);
#define ALLOC_LOOK_S 5.0

/* Release the workspace's recorded allocation (scancel), recording why.
 * *had (may be NULL) says whether there was one.  Works without a handle,
 * from any process that can write the store. */
int alloc_release_recorded(struct store *st, const char *ws_dir, const char *why, bool *had,
			   struct err *e);

/* Forget (mark released) the recorded allocation when squeue says it is
 * gone; keeps it otherwise.  Fills *job with squeue's view.  ERR_NOTFOUND
 * when none is recorded. */
int alloc_check_recorded(struct store *st, const char *ws_dir, bool write, struct slurm_job *job,
			 struct err *e);

#endif
