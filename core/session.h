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

/* The calls are loop.h's (loop_noise, loop_confirm, loop_confirm_begin, ...);
 * this header is for the module's own includes. */

#endif
