/*
 * stats — what "faster" means: estimators, the noise band, the verdict of
 * one measurement set against another, and the implausible-speedup flags.
 *
 * Everything here is a pure function of its inputs (no store, no clock).
 * Times are milliseconds; all arithmetic on them is done in log space, so a
 * ratio of two times is a difference and an equal-weight geometric mean over
 * shapes is an arithmetic mean.  A "run" is one independent verify or bench
 * process; it gives one centre (the harness's median) per shape.
 *
 * The verdict (stats_compare) works on the log speedup D = mean over shapes
 * of log(best / candidate), over the shapes both sides measured, with the
 * interval D ± t·se, where se is the mean over shapes of each shape's
 * standard error (pooled per-run noise, stats_noise_pool, and the run counts
 * of both sides; shapes measured in one run move together, so their errors
 * are not root-summed) and t the 95 % Student quantile:
 *
 *   FAST       the whole interval is a win of at least the threshold (and,
 *              in a sequential comparison, the ratio test accepted the win
 *              or a lower bound valid under every look to the cap clears
 *              the threshold: α at each, 2α in all)
 *   SLOW       the whole interval is a loss of at least the threshold
 *   SAME       the change itself is below the threshold (|D| under it): too
 *              small to matter whatever the noise, so no confirm is offered
 *   AMBIGUOUS  the change is big enough but the interval reaches back
 *              inside the threshold: the noise hides whether it is real
 *   MISSING    the candidate lacks a shape the best measured
 *   NOT_COMPARABLE  different environment, or a changed shape set
 *
 * So a win needs both the practical threshold and the noise band: its lower
 * bound must clear the threshold.
 */
#ifndef OPTLOOP_STATS_H
#define OPTLOOP_STATS_H

#include "core/model.h"

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct err;
struct sb;

#define STATS_NOISE_FLOOR 0.005   /* no band is narrower than 0.5 % per run */
#define STATS_NOISE_DEFAULT 0.02  /* assumed per-run spread with no history */
#define STATS_NOISE_RECENT_DOF 4  /* the newest sessions holding this many degrees of
				   * freedom give the noise within a session (one
				   * optloop noise of 5 runs); older ones are left out */
#define STATS_UNSTABLE_CV 0.10    /* coefficient of variation that flags UNSTABLE */
#define STATS_IMPLAUSIBLE_AGG 1.5 /* aggregate speedup above this is implausible */
#define STATS_IMPLAUSIBLE_SHAPE 3.0
/* The sequential confirm test (stats_compare with opts.sequential): Wald's
 * sequential probability ratio test on the log speedup D, H0 "a change of
 * exactly the threshold" against H1 "twice the threshold", with the error
 * rates below at those two points (smaller beyond them). */
#define STATS_SEQ_ALPHA 0.005 /* a promotion at a change of the threshold or less, per stop */
#define STATS_SEQ_BETA 0.05   /* a stop as "no win" at twice the threshold */
#define STATS_SEQ_LOOKS CONFIRM_MAX_LOOKS /* the most pairs a confirm may look at */

/* ---- estimators on plain arrays (NAN where undefined) ---- */

double stats_median(const double *x, size_t n);
double stats_mean(const double *x, size_t n);
/* Sample standard deviation (n − 1); NAN for n < 2. */
double stats_std(const double *x, size_t n);
/* Quantile p in [0,1] by linear interpolation between order statistics
 * (h = (n−1)·p, the "type 7" rule). */
double stats_quantile(const double *x, size_t n, double p);
/* d₂ constant of the range of n normal samples (n = 2..4); NAN otherwise. */
double stats_d2(size_t n);
/* Robust spread of a sample: 1.4826·MAD for n ≥ 5, range/d₂ for 2–4, NAN
 * for n < 2.  On the values as given (callers pass log times). */
double stats_spread(const double *x, size_t n);
/* Two-sided 95 % Student t quantile for dof degrees of freedom (dof ≤ 0:
 * the normal 1.96). */
double stats_t975(int dof);
/* The p quantile of Student's t with dof degrees of freedom (dof ≤ 0: the
 * normal's), 0 < p < 1. */
double stats_t_quantile(double p, int dof);

struct stats_summary {
	size_t n;
	double median, mean, std, min, max, p10, p90;
};
/* Summary of n times (n = 0 gives NANs). */
void stats_summarize(const double *x, size_t n, struct stats_summary *out);

/* True for a usable time: finite and > 0. */
bool stats_time_ok(double ms);

/* ---- measurement sets: one kernel state in one environment ---- */

struct stats_shape {
	char *key;    /* stable shape identity, e.g. "fwd B=4 T=2048 H=16 D=64" */
	double *ms;   /* one centre per run, in the order measured */
	int *session; /* the measuring session of each run; 0: unknown (alone) */
	size_t n, cap;
};

struct stats_set {
	char *env; /* environment key; NULL when unknown */
	struct stats_shape *shapes;
	size_t nshapes, cap;
};

/* Append one run's centre for a shape (the shape is created on first use).
 * The set owns copies of key and env.
 *
 * A session is one sitting of the GPU (one optloop command: a verify, a
 * noise series, a confirm).  Runs of one session share its GPU state, which
 * on the H200 moved a kernel by 20 % between processes; so when best and
 * candidate were measured in different sessions, each session counts once
 * (its median) and the noise is the spread between sessions, and when they
 * share a session (a confirm) the noise is the spread within sessions.
 * stats_set_add records session 0: every run its own session. */
void stats_set_add_run(struct stats_set *s, const char *key, double ms, int session);
void stats_set_add(struct stats_set *s, const char *key, double ms);
void stats_set_env(struct stats_set *s, const char *env);
const struct stats_shape *stats_set_find(const struct stats_set *s, const char *key);
void stats_set_release(struct stats_set *s);

/* ---- noise ---- */

struct stats_noise {
	double sigma;  /* per-run spread in log space (≈ relative), floored */
	double raw;    /* pooled spread before the floor; NAN when assumed */
	double cv;     /* coefficient of variation implied by sigma */
	int dof;       /* pooled degrees of freedom; 0 when assumed */
	int runs;      /* runs (or session centres) behind the band; 0 when assumed */
	bool assumed;  /* no repeated runs: STATS_NOISE_DEFAULT */
	bool crossed;  /* within-session noise not yet measured: the spread
			* between sessions stands in for it (never smaller) */
	bool unstable; /* cv ≥ STATS_UNSTABLE_CV */
	bool pairs;    /* the spread of in-process pairs' ratios (stats_opts.pairs) */
};

/* Noise of one shape, pooled over groups of repeated runs.  Each group is
 * one kernel state's runs of this shape in one environment; groups whose
 * env differs from env (when both are known) are skipped, so the band is
 * per (environment, shape).  Spread per group by stats_spread on the log
 * times of its sessions (see stats_set_add_run); pooled as
 * sqrt(Σ(nᵢ−1)sᵢ² / Σ(nᵢ−1)). */
void stats_noise_pool(const struct stats_set *const *groups, size_t ngroups, const char *env,
		      const char *shape, struct stats_noise *out);
/* One group's part of stats_noise_pool for a shape: what it adds to the
 * pooled sums, (nᵢ−1)sᵢ², nᵢ−1 and nᵢ; all zero where it adds nothing (an
 * environment that differs, fewer than two session centres). */
struct stats_noise_term {
	double ss;
	int dof, runs;
};
void stats_noise_term(const struct stats_set *g, const char *env, const char *shape,
		      struct stats_noise_term *out);
/* stats_noise_pool from its groups' terms, in the groups' order: the same
 * figures to the last bit, without the groups' runs. */
void stats_noise_pool_terms(const struct stats_noise_term *t, size_t n, struct stats_noise *out);

/* ---- comparison ---- */


struct stats_opts {
	double threshold; /* 0 means RULES_THRESHOLD (core/rules.h) */
	/* Prior runs for the noise band (pooled with best and candidate); may
	 * be NULL. */
	const struct stats_set *const *history;
	size_t nhistory;
	/* A confirm looked at after every pair: add the sequential test
	 * (stats_cmp.llr, .decided) to the verdict. */
	bool sequential;
	/* With sequential: the same two kernels compared over their other
	 * sessions (the candidate's verify against the best's history), or
	 * NULL.  One run can meet interference (H200: one run in 46 read 8 %
	 * slow at one shape); until the session holds STATS_ROBUST_RUNS runs a
	 * side, so that its estimate resists one such run, the test decides
	 * only when the session agrees with this comparison. */
	const struct stats_cmp *screen;
	/* Groups whose spread between sessions stands in for the spread within
	 * one while no session has repeated a kernel (each kernel's runs over
	 * all its sessions, this one's too); NULL: the history and both sides. */
	const struct stats_set *const *across;
	size_t nacross;
	/* Runs that timed both kernels in one process (a benchmark helper's
	 * A B B A blocks): each run's log(base / new) per shape, by session,
	 * as times exp(d) (A/A runs of `noise --paired`, paired confirm runs),
	 * or NULL.  When best and candidate are such pairs, the spread of d
	 * within these sessions is the noise of one pair: the process's own
	 * state (its slow mode, its launch path) moves both sides alike and
	 * cancels, so it is far below what two runs of either side spread. */
	const struct stats_set *pairs;
	/* With sequential: how many confirms of the same two kernels came
	 * before this one.  All confirms of one candidate share one error
	 * budget: the k-th decides at STATS_SEQ_ALPHA / 2^(k-1) (stats_alpha),
	 * so confirming again until one says fast cannot push the chance of a
	 * false win past 2 x STATS_SEQ_ALPHA over any number of them. */
	unsigned spent;
	/* What the candidate is compared with, as the verdict's sentence (why)
	 * names it: "the baseline" for confirm --baseline; NULL: the best. */
	const char *against;
};
/* The sequential test's alpha for a confirm that spent confirms of the same
 * two kernels came before. */
double stats_alpha(unsigned spent);
#define STATS_ROBUST_RUNS 4 /* one disturbed pair in four: under half the Walsh averages */
#define STATS_AGREE_Z 2.576 /* the agreement check's two-sided 99 % quantile */

struct stats_shape_cmp {
	char *key;
	double best_ms, cand_ms; /* centres (medians of the runs) */
	size_t n_best, n_cand;
	double speedup;          /* best / candidate */
	double gain;             /* (best − candidate) / best, the "vs best" value */
	double lo, hi;           /* interval of gain */
	struct stats_noise noise;
	bool in_best, in_cand;   /* measured on that side */
};

struct stats_cmp {
	enum stats_verdict verdict;
	unsigned flags;
	double threshold;
	size_t ncommon;      /* shapes both sides measured */
	double speedup;      /* equal-weight geomean of per-shape speedups */
	double gain;         /* 1 − 1/speedup: the "vs best" fraction */
	double lo, hi;       /* interval of gain (log-normal t interval) at level */
	double level;        /* its confidence: 0.95, or for a sequential comparison
			      * the bound that holds under every look */
	unsigned spent;      /* sequential: confirms of the same kernels before it */
	double alpha;        /* sequential: the alpha it decided at (stats_alpha) */
	double band;         /* half-width of the interval in log space */
	int dof;             /* of the t quantile used */
	bool paired;         /* best and candidate shared a session (confirm) */
	/* The sequential test (opts.sequential): log likelihood ratio of "twice
	 * the threshold" over "the threshold" given D and its standard error;
	 * decided once it crossed a bound (win or no win) or the verdict is
	 * SLOW.  NAN / false otherwise. */
	double llr;
	bool decided;
	bool disagrees;      /* the session disagrees with opts.screen (not decided) */
	bool lone_pair;      /* a win on one pair that nothing else vouches for
			      * (not decided) */
	/* |D − D of opts.screen| and what agreement allows (99 %), in log
	 * space; NAN without a screen */
	double screen_gap, screen_tol;
	double se;           /* standard error of the log speedup (band = t·se) */
	int noise_runs;      /* fewest runs behind any shape's noise band (0: assumed) */
	long worst;          /* index in shapes of the worst common shape, -1 none */
	struct stats_shape_cmp *shapes;
	size_t nshapes;
	char *why;           /* one sentence explaining the verdict */
};

/* Compare a candidate with the best.  Either may be NULL or empty (then the
 * verdict is SV_NONE or SV_MISSING).  out is caller-owned; release it with
 * stats_cmp_release.  Never fails. */
void stats_compare(const struct stats_set *best, const struct stats_set *cand,
		   const struct stats_opts *o, struct stats_cmp *out);
void stats_cmp_release(struct stats_cmp *c);

/* The decision rules the loop and the simulator share are in core/rules.h
 * (rules_confirm_can_win, rules_promotes). */

/* The confirm rule: a confirm measures best and candidate interleaved
 * (B C B C ...) in one session, one pair at a time, and looks after every
 * pair with the sequential comparison (opts.sequential); it measures one
 * more pair while the test has not decided, up to max_pairs (0:
 * STATS_CONFIRM_MAX_PAIRS).  A run that measured both (the harness's own
 * paired --base run) is a pair by itself. */
#define STATS_CONFIRM_PAIRS CONFIRM_PAIRS
#define STATS_CONFIRM_MAX_PAIRS CONFIRM_MAX_PAIRS
bool stats_confirm_more(const struct stats_cmp *c, size_t pairs, size_t max_pairs);

/* The interval's confidence in words: "95%", or "99.97% (under every look to
 * 16 pairs)" for a sequential comparison; appended to out. */
void stats_level_text(const struct stats_cmp *c, struct sb *out);
const char *stats_verdict_name(enum stats_verdict v); /* "fast", "not_comparable", ... */
enum stats_verdict stats_verdict_parse(const char *name); /* SV_NONE when unknown */
/* Flag names, in a fixed order; "implausible" first when any implausible
 * bit is set.  Returns a new JSON array (caller owns). */
json_t *stats_flags_json(unsigned flags);
/* Same names joined by ", " into out. */
void stats_flags_text(unsigned flags, struct sb *out);
/* Parse a JSON flags array back into bits (unknown names ignored). */
unsigned stats_flags_parse(const json_t *arr);
/* The whole comparison as JSON (caller owns). */
json_t *stats_cmp_json(const struct stats_cmp *c);
/* The whole comparison, every field exactly (NaN and infinities too), for
 * the store to keep (core/stats_pack.c); unpacked into out, which is then
 * caller-owned (stats_cmp_release).  Unpack returns -1, out empty, for JSON
 * that is not such a comparison. */
json_t *stats_cmp_pack(const struct stats_cmp *c);
int stats_cmp_unpack(const json_t *j, struct stats_cmp *out);
/* Which implausible rule fired, each with its number: [{"rule":
 * "implausible_shape", "detail": "fwd B=4 T=8192 at 859.00x is above 3x"}]
 * (empty when none). */
json_t *stats_implausible_json(const struct stats_cmp *c);

#endif
