/*
 * run — the one run engine: a measuring command (verify, noise, confirm) as
 * a child process whose every run is recorded.
 *
 * run_start inserts the run into the store as going (gate incomplete, so a
 * crash leaves it an attempt, never a result), takes the GPU probe before
 * it, and starts the command through the runner with its raw log; every
 * byte goes to the raw log, to a parser and to the caller's output
 * callback.  run_fds/run_pump drive it from an event loop, run_cancel asks
 * it to stop, and run_end waits for the end, settles how it ended, takes
 * the probe after it and records the run, its environment line and its
 * samples in one transaction together with what the caller adds.
 *
 * The rules, the same for every kind of run:
 *  - a run that was stopped (a signal, an exit status of 128 + N as a shell
 *    reports a killed child, the timeout, a cancel) is incomplete, unless a
 *    test case had already failed: then the failure stands;
 *  - a bench number only from a run whose gate passed, that had no gate or
 *    that skipped it (--no-gate, as noise and confirm run): never from a
 *    failed, broken or stopped one;
 *  - a raw-log write failure stops the run: the evidence would not be whole,
 *    so it is recorded incomplete and run_end returns the ERR_IO that says
 *    so;
 *  - a command that cannot be started is recorded as a harness error.
 *
 * Through Slurm (spec.alloc), the run first waits for the allocation (its
 * request's output goes to the output callback, not the parser); the probe
 * and the command then run as steps on the allocation's node.  A cancel or
 * the timeout cancels the step with scancel; a step that Slurm ended (time
 * limit, revoked allocation, failed node, a signal) is incomplete, its
 * cause recorded with the run (store_step) and the allocation forgotten
 * when it is gone.
 */
#ifndef OPTLOOP_RUN_H
#define OPTLOOP_RUN_H

#include "core/model.h"

#include <stdbool.h>
#include <stddef.h>

struct alloc;
struct err;
struct parse_event;
struct parse_result;
struct patset;
struct run;
struct store;
struct store_run;

typedef void (*run_output_fn)(void *ctx, const char *buf, size_t len);
typedef void (*run_event_fn)(void *ctx, const struct parse_event *ev);

struct run_spec {
	enum run_kind kind;
	int iter;
	const char *command;     /* run by /bin/sh -c */
	const char *cwd;
	const char *log_path;    /* the raw log; NULL: trace_dir/<kind>-<iter>-run<id>.log */
	const char *trace_dir;   /* created when missing */
	double timeout_s;        /* 0: none */
	enum gate_scope scope;   /* what the command runs; a scope the output names wins */
	const char *head, *tree; /* recorded with the run; may be NULL */
	const char *branch;      /* what HEAD named (vcs_head_ref); may be NULL */
	const char *start_event; /* an event logged with the insert ("verify.start"), or NULL */
	const struct patset *ps;
	struct alloc *alloc;     /* run as a step of this Slurm allocation (core/alloc.h),
				  * requested first when it is not there; NULL: here */
	run_output_fn output;    /* every byte of the child's output, may be NULL */
	run_event_fn event;      /* parser events, may be NULL */
	void *ctx;
};

/* Insert the run, probe, start the command.  On success *out owns the going
 * run (run_free).  When the command cannot be started the run is recorded
 * as a harness error and the runner's error is returned (*out NULL). */
int run_start(struct store *st, const struct run_spec *s, struct run **out, struct err *e);

/* The descriptors to poll for POLLIN; how many (0 once ended). */
int run_fds(const struct run *r, int fds[2]);
/* Read what is there, waiting up to timeout_ms (-1: until something
 * happens).  1 while the run goes on, 0 once it ended.  A raw-log write
 * failure cancels the run (run_end reports it). */
int run_pump(struct run *r, int timeout_ms);
/* Ask the run to stop; recorded as cancelled (incomplete). */
void run_cancel(struct run *r);
bool run_going(const struct run *r);
/* The parse result so far (final after run_end). */
const struct parse_result *run_result(const struct run *r);
/* The run's record: id and log path from the start, every field after
 * run_end.  Owned by the run. */
struct store_run *run_record(struct run *r);

/* Called by run_end once the outcome is settled: fill fills fields only the
 * caller knows (the kernel tree at the end, vs best) before the record is
 * written; in_tx adds the caller's rows inside the recording transaction
 * (and may update the record there: store_run_update).
 * Either may be NULL; a failure of either is returned and nothing of the
 * transaction is kept (the run stays incomplete). */
struct run_end_hooks {
	int (*fill)(void *ctx, struct store_run *rec, const struct parse_result *res,
		    struct err *e);
	int (*in_tx)(void *ctx, struct store *st, struct store_run *rec, struct err *e);
	void *ctx;
};

/* Wait for the run to end, settle it by the rules above and record it.
 * 0 when recorded (whatever its gate: read run_record); ERR_IO when the raw
 * log could not be written (the run is recorded incomplete first); the
 * store's or a hook's error otherwise. */
int run_end(struct run *r, const struct run_end_hooks *h, struct err *e);

/* Free the run; one still going is stopped and stays incomplete in the
 * store (the next open settles it). */
void run_free(struct run *r);

#endif
