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
	double timeout_s;    /* per run; 0: none */
	/* One line per finished run, for the CLI (may be NULL). */
	void (*progress)(void *ctx, const char *line);
	void *ctx;
};

struct session_result {
	int iter;
	int session;       /* id of the session's first run */
	int nruns;
	bool promoted;     /* confirm: the candidate becomes the best when kept */
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
 * when the protocol does not allow it; ERR_HARNESS when a run broke. */
int session_confirm(struct loop *l, const struct session_opts *o, struct session_result *r,
		    struct err *e);

#endif
