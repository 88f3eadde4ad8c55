/*
 * rules — the loop's judgments, each in one function named for its purpose
 * (DESIGN §2): the protocol table (which step each state allows, and the
 * words of each refusal), the default win threshold, which row may be the
 * best, whether a measured iteration may be kept, whether a confirm can
 * still turn a verdict into a win.  Pure functions over plain values: the
 * engine, the statistics and the front-ends ask here and word the answer;
 * none of them decides again.  (The rows and runs they judge are core/model.h's.)
 */
#ifndef OPTLOOP_RULES_H
#define OPTLOOP_RULES_H

#include "core/model.h"

#include <stdbool.h>

struct err;

/* The practical threshold of a win, as a fraction of the best's time, when
 * the contract sets none (contracts, verdicts and the simulator use it). */
#define RULES_THRESHOLD 0.03

/* Can this row be the best?  A base or keep row with a bench number whose
 * gate passed (or, in a hand-written log, is not known), unless it passed a
 * -k subset only and the full gate has failed its kernel since: then the
 * best is the row before it again, and a drop restores that one. */
bool log_row_can_be_best(const struct log_row *r);

/* The one best (DESIGN §2): the baseline or the last keep, what every later
 * row is compared with and what revert/drop restore.  The last row of
 * rows[0..n) that log_row_can_be_best; NULL when there is none.  Every
 * module asks this function; none keeps a best of its own. */
const struct log_row *log_rows_best(const struct log_row *rows, size_t n);

/* Is a verify run of iteration iter an attempt rather than an iteration of
 * the kernel (DESIGN §2)?  A run whose harness broke (error) or that was
 * killed, timed out or cancelled (incomplete) is an attempt; so is any
 * baseline run (iter 0) that is not a full-gate pass with a bench number.
 * An attempt stays in the store and trace/ as evidence; it gets no row and
 * verify may run again. */
bool run_is_attempt(int iter, enum gate_verdict g, enum gate_scope scope, double bench_ms);

/* Does the row's commit give the kernel back to the best (a second commit,
 * Optloop-Restore)?  revert, drop and floor: only base and keep rows leave
 * their kernel in the tree. */
bool rules_row_restores(enum row_status s);

/* Must the measured diff's lint findings be acknowledged to log a row of
 * status s?  Only where the kernel stays (base, keep): a revert, drop or
 * floor gives it back, and an acknowledgement given anyway is recorded. */
bool rules_lints_need_ack(enum row_status s);

/* A floor row: the iteration measured the kernel at a named bound.  It
 * needs a measured run (a failed gate shows nothing about a bound) and the
 * bound with its number; its kernel goes back to the best like a drop. */
bool rules_floor_allowed(enum gate_verdict gate, double bench_ms);

/* A computed floor (stop --reason floor without --bound): a shape of the
 * best is at a limit when it is launch-bound (below the launch floor) or
 * reaches this share of the peak bandwidth or FLOP rate. */
#define RULES_FLOOR_SHARE 0.70
/* Is a shape whose nearest bound reads share of its peak (launch: below the
 * launch floor) at a floor?  A share above margin (the impossible flag's)
 * is no floor: that time is impossible. */
bool rules_at_floor(bool launch, double share, double margin);
/* A roofline computed from the best's run reads as promotion's evidence when
 * one shape reaches this share of the peak of its nearest bound (memory or
 * compute): below it the time is spent on what the model does not count
 * (launches, the host, waiting), which only a profile can show. */
#define RULES_ROOFLINE_READING 0.10

/* Is this row a win that resets the stall count: a keep backed by a win
 * beyond noise (not kept --unconfirmed). */
bool log_row_is_win(const struct log_row *r);

/* A run measured something that can stand as a result: its gate passed and
 * it has a positive bench number.  Only such a run may be kept or be the
 * baseline. */
bool rules_run_measured(enum gate_verdict gate, double bench_ms);

/* The stall rule.  One entry per logged row, oldest first.  Counting back
 * from the newest row to the baseline: a confirmed win ends the count; a row
 * whose run was NOT COMPARABLE, or that changed nothing in the kernel, is
 * not counted (it tried no direction); every other row counts (a keep that
 * was never confirmed does not reset the count). */
struct rules_stall_row {
	bool base;           /* the baseline row */
	bool win;            /* a keep backed by a win beyond noise (log_row_is_win) */
	bool not_comparable; /* not counted: its run's verdict was NOT_COMPARABLE, or
			      * its run changed nothing (the kernel was HEAD's) */
};
int rules_stall_count(const struct rules_stall_row *rows, size_t n);
/* The stall rule's limit: this many counted rows (rules_stall_count) stall
 * the loop. */
#define RULES_STALL_AFTER 3
bool rules_stalled(int stall_count);

/* Can a confirm still turn this verdict into a win?  A fast or ambiguous
 * verdict, yes; same, slow, missing or not comparable cannot become one by
 * measuring again. */
bool rules_confirm_can_win(enum stats_verdict v);

/* Does a confirm's comparison make the candidate the new best?  FAST with no
 * busy GPU and no subset gate, never with SF_IMPOSSIBLE, and no implausible
 * flag (SF_IMPLAUSIBLE_MASK) unless the user has explained it (explained: on
 * stored values, once promote --explain recorded why). */
bool rules_promotes(enum stats_verdict v, unsigned flags, bool explained);

/* Why a measured iteration may or may not be kept. */
enum rules_keep {
	RULES_KEEP_WIN,         /* a win beyond noise backs it */
	RULES_KEEP_UNCONFIRMED, /* no win, but kept --unconfirmed with a reason */
	RULES_KEEP_NOT_MEASURED,/* the gate did not pass, or no bench number */
	RULES_KEEP_CONFIRM,     /* no win yet; a confirm can still show one */
	RULES_KEEP_NO_WIN,      /* not a win, and a confirm cannot make it one */
	RULES_KEEP_IMPLAUSIBLE, /* flagged implausible and not explained: never kept */
	RULES_KEEP_IMPOSSIBLE,  /* a time above the hardware's peak: never kept, and
				 * no explanation lifts it (drop it) */
};
/* The keep rule: a passing gate with a bench number, no impossible time
 * (SF_IMPOSSIBLE in implausible), no implausible flag left unexplained
 * (implausible: measure_win's flags), and a win beyond noise (win:
 * measure_win's answer) or an explicit --unconfirmed reason.  verdict is
 * the evidence's verdict (the confirm's when one ran).  An unexplained
 * implausible speedup is not kept, not even --unconfirmed: the reason it
 * reads fast may be work it skipped; an impossible one is never kept. */
enum rules_keep rules_keep(enum gate_verdict gate, double bench_ms, bool win,
			   enum stats_verdict verdict, unsigned implausible, bool unconfirmed);
/* Does promote --explain lift these flags?  The implausible group, yes;
 * never SF_IMPOSSIBLE: a time the hardware cannot reach is no speedup to
 * explain. */
bool rules_explain_lifts(unsigned flags);
/* RULES_KEEP_WIN and RULES_KEEP_UNCONFIRMED. */
bool rules_keep_allowed(enum rules_keep k);
/* Is a confirm the next step of an iteration not kept as implausible?  Yes
 * when one verify read it so (source) and its verdict is one a confirm can
 * still turn into a win: the confirm measures it against the best
 * interleaved, and its flags become the evidence.  Once a confirm read it
 * implausibly fast too, it is explained or dropped. */
bool rules_implausible_confirm(enum rules_keep k, enum evidence_source source,
			       enum stats_verdict verdict);

/* ---- the protocol: which step each state allows (DESIGN §2) -------------- */

/* The steps of one iteration that the protocol gates by state. */
enum rules_step {
	STEP_VERIFY,
	STEP_LOG,
	STEP_COMMIT,
	STEP_N,
};

/* Why a state refuses a step: the cells of the protocol table. */
enum rules_refusal {
	REFUSE_NONE,           /* the step may run */
	REFUSE_NO_CONTRACT,    /* the task contract is incomplete */
	REFUSE_ROW_DUE,        /* measured: the row is due first */
	REFUSE_COMMIT_DUE,     /* logged: the commit is due first */
	REFUSE_RUN_GOING,      /* the verify run is still going */
	REFUSE_NOT_MEASURED,   /* nothing measured to log (or the last run was an attempt) */
	REFUSE_NO_BASELINE,    /* the baseline has not been measured */
	REFUSE_ALREADY_LOGGED, /* logged already: commit it */
	REFUSE_NOTHING_LOGGED, /* no row waits for a commit */
};

/* What a refusal's words need to know beyond the state and the step. */
struct rules_facts {
	int iter;            /* the iteration the loop is at */
	const char *missing; /* what the contract lacks, or NULL */
	const char *attempt; /* why the iteration's last run was an attempt, or NULL */
};

/* The table's cell: may step run in state st?  REFUSE_NONE when it may.
 * Every refusal of verify, log and commit by state is decided here. */
enum rules_refusal rules_step_refusal(enum loop_state st, enum rules_step step);
/* The same, worded once for every front end: 0, or ERR_REFUSED with the
 * message that says which step is due ("log refused: iteration 4 is ..."). */
int rules_step_check(enum loop_state st, enum rules_step step, const struct rules_facts *f,
		     struct err *e);
/* "verify", "log", "commit". */
const char *rules_step_name(enum rules_step step);

#endif
