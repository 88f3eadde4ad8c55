/*
 * session — benchmark-only measuring sessions outside verify:
 * `optloop noise` (the current best K times, to seed the noise band) and
 * `optloop confirm` (best and candidate interleaved in one session; only
 * these numbers size a win, and only a FAST confirm promotes).
 *
 * Both swap kernel states in the work tree: the candidate is saved as a git
 * tree first (and recorded in the store), the best is checked out from its
 * commit for its runs, and the candidate is restored afterwards, also when
 * a run fails.  A confirm cut off by a crash is noticed by the next confirm
 * or noise, which restores the candidate before anything else.
 *
 * Each run is a real run of the measuring command (the contract's validation
 * command with --no-gate, or the command given), parsed with the
 * workspace's pattern set, stored as a run of kind "noise" or "confirm"
 * with its samples, a probe reading before and after, and its session.
 */
#ifndef OPTLOOP_SESSION_H
#define OPTLOOP_SESSION_H

#include "core/loop.h"
#include "core/measure.h"
#include "core/stats.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct loop;

struct session_opts {
	const char *command; /* NULL: validation command + " --no-gate" */
	int runs;            /* noise: how many runs (0: 5) */
	size_t max_pairs;    /* confirm: 0: STATS_CONFIRM_MAX_PAIRS */
	bool baseline;       /* confirm: the best (in the tree, at rest) against the
			      * baseline commit, the promotion verdict and final claim */
	double timeout_s;    /* per run; 0: none */
	/* One line per finished run, for the CLI (may be NULL). */
	void (*progress)(void *ctx, const char *line);
	/* Every byte of each run's output, and the parser's events (progress,
	 * stage lines), as they arrive; may be NULL. */
	loop_output_fn output;
	loop_event_fn event;
	void *ctx;
};

struct session_result {
	int iter;
	int session;       /* id of the session's first run */
	int nruns;
	bool promoted;     /* confirm: the candidate becomes the best when kept */
	bool cancelled;    /* confirm: cancelled before its verdict (nothing judged) */
	struct stats_cmp cmp; /* confirm: best vs candidate in this session */
	struct measure_target target; /* confirm: the same over the contract's target
				       * shapes (every shape when it names none) */
	json_t *json;      /* the whole result for --json (owned) */
};
void session_result_release(struct session_result *r);

/* Measure the current best `runs` times in one session.  Refused before the
 * baseline exists or while a verify is running. */
int session_noise(struct loop *l, const struct session_opts *o, struct session_result *r,
		  struct err *e);

/* The confirm run for the measured, not yet logged iteration.  Returns 0
 * when the session was measured (read r->promoted and r->cmp); ERR_REFUSED
 * when the protocol does not allow it; ERR_HARNESS when a run broke.
 * It is session_confirm_begin, pump until done, session_confirm_end. */
int session_confirm(struct loop *l, const struct session_opts *o, struct session_result *r,
		    struct err *e);

/* The same in steps, for an event loop (the TUI):
 *   begin  checks the protocol (refusals as session_confirm), records the
 *          confirm, checks out the best and starts its first run; returns
 *          at once.  *out is owned by the caller until session_confirm_end.
 *          On failure nothing is left running and the candidate is back.
 *   fds    the descriptors of the run going, to poll for POLLIN (how many).
 *   pump   reads what is there (waits up to timeout_ms, -1 forever); when a
 *          run ends it is recorded and the next one starts (the kernel state
 *          swapped in first).  1 while the session goes on, 0 once it is over
 *          (done, failed or cancelled: session_confirm_end says which).
 *   cancel stops the run going (SIGTERM to its group, SIGKILL after the
 *          grace period); the session ends without a verdict.
 *   end    finishes (cancelling first if still going), puts the candidate
 *          back, closes the confirm record, fills *r and frees s.  Returns
 *          as session_confirm; a cancelled session returns 0 with
 *          r->cancelled set, no verdict, nothing promoted (every run so far
 *          stays recorded, the cancelled one as incomplete). */
struct session_run;
struct parse_result;
int session_confirm_begin(struct loop *l, const struct session_opts *o, struct session_run **out,
			  struct err *e);
int session_confirm_fds(const struct session_run *s, int fds[2]);
int session_confirm_pump(struct session_run *s, int timeout_ms);
void session_confirm_cancel(struct session_run *s);
int session_confirm_end(struct session_run *s, struct session_result *r, struct err *e);

/* The parse result of the run going so far (owned by s; NULL between runs). */
const struct parse_result *session_confirm_result(const struct session_run *s);

/* Where the session stands: "run 3 of 6, best". */
struct session_progress {
	int iter;
	int run;          /* 1-based: the run going, or the last one once over */
	int nruns;        /* runs planned so far (grows when an ambiguous look asks
			   * for more pairs) */
	const char *role; /* "best" or "cand": what the run measures (static) */
	size_t pairs;     /* pairs compared so far */
	bool running;
};
void session_confirm_progress(const struct session_run *s, struct session_progress *p);

#endif
