/*
 * rules — the loop's judgments, each in one function named for its purpose
 * (DESIGN §2): the default win threshold, which row may be the best, whether
 * a measured iteration may be kept, whether a confirm can still turn a
 * verdict into a win.  Pure functions over plain values: the engine, the
 * statistics and the front-ends ask here and word the answer; none of them
 * decides again.
 */
#ifndef OPTLOOP_RULES_H
#define OPTLOOP_RULES_H

#include "core/model.h"
#include "core/stats.h"

#include <stdbool.h>

/* The practical threshold of a win, as a fraction of the best's time, when
 * the contract sets none (contracts, verdicts and the simulator use it). */
#define RULES_THRESHOLD 0.03

/* A run measured something that can stand as a result: its gate passed and
 * it has a positive bench number.  Only such a run may be kept or be the
 * baseline. */
bool rules_run_measured(enum gate_verdict gate, double bench_ms);

/* Can a confirm still turn this verdict into a win?  A fast or ambiguous
 * verdict, yes; same, slow, missing or not comparable cannot become one by
 * measuring again. */
bool rules_confirm_can_win(enum stats_verdict v);

/* Why a measured iteration may or may not be kept. */
enum rules_keep {
	RULES_KEEP_WIN,         /* a win beyond noise backs it */
	RULES_KEEP_UNCONFIRMED, /* no win, but kept --unconfirmed with a reason */
	RULES_KEEP_NOT_MEASURED,/* the gate did not pass, or no bench number */
	RULES_KEEP_CONFIRM,     /* no win yet; a confirm can still show one */
	RULES_KEEP_NO_WIN,      /* not a win, and a confirm cannot make it one */
};
/* The keep rule: a passing gate with a bench number, and a win beyond noise
 * (win: measure_win's answer) or an explicit --unconfirmed reason.  verdict
 * is the evidence's verdict (the confirm's when one ran). */
enum rules_keep rules_keep(enum gate_verdict gate, double bench_ms, bool win,
			   enum stats_verdict verdict, bool unconfirmed);
/* RULES_KEEP_WIN and RULES_KEEP_UNCONFIRMED. */
bool rules_keep_allowed(enum rules_keep k);

#endif
