/*
 * model — the plain data every part of optloop talks about: loop states,
 * log rows, traps, dispatch rows.  Engine modules fill these; views read
 * them through pointers and never own them.
 */
#ifndef OPTLOOP_MODEL_H
#define OPTLOOP_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;

/* Workspace states (DESIGN §2).  Names are interface: status --json prints
 * them in lower case (loop_state_name). */
enum loop_state {
	ST_NO_CONTRACT,
	ST_NEED_BASELINE,
	ST_READY,
	ST_EDITING,
	ST_VERIFYING,
	ST_MEASURED,
	ST_LOGGED,
	ST_STALLED,
	ST_STOPPING,
};

/* Outcome of a gate, from the parser and the process's end (DESIGN §4). */
enum gate_verdict {
	GATE_NONE,        /* the output has no gate at all (plain run.py) */
	GATE_PASS,
	GATE_FAIL,
	GATE_ERROR,       /* the harness broke */
	GATE_INCOMPLETE,  /* killed or cut off before a verdict */
	GATE_UNVERIFIED,  /* the gate was skipped (--no-gate) */
};

enum gate_scope {
	SCOPE_UNKNOWN,
	SCOPE_FULL,
	SCOPE_SUBSET, /* --gate-k: a signal only, never supports promotion */
};

/* Status column of OPT_LOG.md. */
enum row_status {
	RS_NONE,
	RS_BASE,
	RS_KEEP,
	RS_REVERT,
	RS_DROP,
	RS_FLOOR,
};

/* One row of OPT_LOG.md's summary table, as rendered or imported.  Strings
 * are owned by whoever owns the row (free with log_row_release). */
struct log_row {
	int iter;
	char *direction;      /* one line, unescaped */
	char *gate;           /* gate cell as shown: "pass", "FAIL", "pass (-k)", ... */
	enum gate_verdict gate_v;
	enum gate_scope scope;
	double bench_ms;      /* NAN when none ("—") */
	double vs_best;       /* fraction, +0.12 = 12 % faster; NAN for "—" */
	enum row_status status;
	char *axis;           /* may be NULL */
	char *commit;         /* full or short sha, may be NULL */
	char *unconfirmed;    /* keep without a win beyond noise: the reason given
			       * (log --unconfirmed); NULL for every other row */
	char *notes;          /* an imported log's Notes cell (per-shape numbers,
			       * remarks; line breaks kept), NULL otherwise */
	int lineno;           /* line in the source file when imported, else 0 */
	bool vs_confirm;      /* vs_best is its confirm's (best and candidate interleaved
			       * in one session), not the verify verdict's */
	bool full_gate_failed;/* a -k subset-gate row whose kernel the full gate has
			       * failed since: never the best (log_row_can_be_best) */
};

void log_row_release(struct log_row *r);


/* The rows of a workspace's log as one immutable snapshot, shared by every
 * reader (store_rows_get hands it out, loop_rows too): the holder drops
 * its reference with log_rows_put; the rows never change while shared. */
struct log_rows {
	const struct log_row *v; /* n rows; never changed while shared */
	size_t n;
	/* private: the rows' strings, all in one block, and the references
	 * (the store's own and each holder's) */
	char *text;
	unsigned refs;
};
void log_rows_put(struct log_rows *r);


/* A confirm measures best and candidate interleaved, CONFIRM_PAIRS pair at
 * a time, up to CONFIRM_MAX_PAIRS by default (core/stats.h has the rule). */
#define CONFIRM_PAIRS 1
#define CONFIRM_MAX_PAIRS 8
#define CONFIRM_MAX_LOOKS 16 /* the most pairs a confirm may be asked for */

/* ---- the bench-per-iteration chart ----
 *
 * What `optloop chart`, the reports' Mermaid block and the workbench's best
 * pane draw, built in one place (chart_build) from the log's rows.  Only a
 * row that may be the best (log_row_can_be_best) with a number is a point;
 * every other row is a mark on the x axis, its kind saying why. */
enum chart_kind {
	CHART_BASE,    /* the baseline */
	CHART_KEEP,    /* a keep that may be the best */
	CHART_DROPPED, /* revert, drop, floor, or a keep that cannot be the best */
	CHART_FAILED,  /* the gate failed, broke or was cut off */
};

struct chart_item {
	int iter;
	enum chart_kind kind;
	double ms;       /* the row's bench, or the charted shape's time; NAN when none */
	bool point;      /* drawn as a point (CHART_BASE/KEEP with a number), else a mark */
	bool unconfirmed;/* kept --unconfirmed */
	double best_ms;  /* the best so far after this row (log_rows_best over the rows up
			  * to here), at the charted shape; NAN while there is none */
};

struct chart {
	char *op;         /* the workspace's op (loop_chart), or NULL */
	char *shape;      /* the shape charted ("fwd B=2 T=512 H=4 D=64"); NULL: the
			   * bench column (the geomean of every shape) */
	struct chart_item *v; /* one per row, oldest first */
	size_t n;
	bool has_best;    /* the one best (log_rows_best over every row) */
	int best_iter;
	double best_ms;   /* at the charted shape; NAN when the best did not measure it */
	double band_lo, band_hi; /* the noise band around the best (measure_noise_band);
				  * NAN when unknown */
	bool band_assumed;       /* no repeated runs yet: the default noise */
	size_t nshapes;   /* shapes measured by the logged runs (1 reads as "the bench") */
};

/* Trap checklist state per iteration. */
enum trap_state {
	TRAP_UNCHECKED,
	TRAP_CHECKED,
	TRAP_HIT,
};

struct trap {
	char *id;    /* short slug, stable ("int64-addressing") */
	char *title;
	char *fact;
	char *why;
	char *how;
	enum trap_state state; /* for the iteration being shown */
	int lineno;
};

void trap_release(struct trap *t);

struct dispatch_row {
	char *bucket;  /* bucket condition */
	char *entry;   /* entry point chosen */
	double base_ms;
	double cand_ms;
	double speedup;
	char *why;
	char *evidence; /* cited iterations, e.g. "3,5" */
};

void dispatch_row_release(struct dispatch_row *d);

/* What a run measured, as the parser reads it and the store keeps it: one
 * result-table row (numbers NAN, and L -1, where absent) and the run's
 * environment line. */
struct parse_row {
	char *mode; /* "fwd", "fwdbwd", ... */
	long B, T, H, D, L;
	char *op;
	double base_ms, new_ms, speedup;
};

struct parse_env {
	char *raw; /* the whole line after "Machine:" */
	char *device, *backend, *pytorch, *triton, *branch, *sha;
};

/* ---- what a run showed, as the parser reads it (core/parse.c) --------- */

struct parse_result {
	enum gate_verdict gate;
	enum gate_scope scope;
	char *gate_test; /* file named in the banner */
	char *gate_k;    /* the -k expression, NULL when full */
	bool complete;   /* the run reached its natural end */
	struct {
		int passed, failed, errors, skipped, deselected; /* -1 when unknown */
	} pytest;
	struct parse_env env;
	char *col_base, *col_new; /* table column labels, e.g. "main[ce250a9]" */
	struct parse_row *rows;   /* the last table printed */
	size_t nrows;
	char **warnings;
	size_t nwarnings;
	int progress;      /* last [ NN%] seen, -1 before any */
	int cases_passed;  /* test-case lines seen, by outcome */
	int cases_failed;  /* failed or error */
	int cases_skipped; /* skipped or xfail */
	bool traceback;
	bool gate_line_pass, gate_line_fail, gate_not_found, no_gate;
	int exit_status;   /* as given to parser_finish, -1 unknown */
	bool killed;
	bool has_L;        /* the result table has an L column */
	bool truncated;    /* the output ended inside a line */
	size_t lines;      /* lines read */
	bool runpy_json;   /* read from run.py --json results, not from a log */
	size_t rows_dropped; /* table rows beyond PARSE_MAX_ROWS */
	char *exception;   /* last line of the last traceback ("RuntimeError: ..."), or NULL */
	char *stage;       /* the phase the run is in ("Warming up 6 shape(s)"), or NULL */
};

enum parse_event_kind {
	PEV_LINE,
	PEV_GATE_BANNER,
	PEV_TEST_CASE,
	PEV_PROGRESS,
	PEV_PYTEST_SUMMARY,
	PEV_GATE_VERDICT,
	PEV_ENV,
	PEV_TABLE_HEADER,
	PEV_TABLE_ROW,
	PEV_WARNING,
	PEV_TRACEBACK,
	PEV_STAGE,
};

/* One line as the parser saw it: escape sequences, carriage returns and
 * control bytes removed, NUL-terminated (len excludes the NUL).  Valid only
 * during the callback. progress is the percent the line showed, -1 if none,
 * whatever its kind (a pytest case line is a test_case event with progress).
 * For PEV_STAGE, stage/stage_len name the phase (not NUL-terminated). */
struct parse_event {
	enum parse_event_kind kind;
	const char *line;
	size_t len;
	int progress;
	const char *stage;
	size_t stage_len;
};

/* Whether anything of a verify or benchmark run was seen: a gate, pytest
 * counts or test cases, progress, an environment line, a result table, a
 * traceback.  parse_file reads any text; this says whether it was one. */
bool parse_recognised(const struct parse_result *r);

/* The result as JSON with the documented keys (gate, gate_scope, gate_k,
 * complete, pytest, env, columns, rows, warnings, ...); caller owns it. */
json_t *parse_result_json(const struct parse_result *r);
/* The inverse, for results stored as JSON.  *out is filled (release it);
 * ERR_USAGE when j is not such an object. */
int parse_result_from_json(const json_t *j, struct parse_result *out, struct err *e);
void parse_result_init(struct parse_result *r);
void parse_result_release(struct parse_result *r);

/* "full", "subset", or NULL for unknown. */
const char *parse_scope_name(enum gate_scope s);
const char *parse_event_kind_name(enum parse_event_kind k);

/* ---- the workspace's documents, as read ------------------------------- */

/* Something a reader could not take as written: its line (1-based; 0 for
 * the file as a whole) and what was wrong.  OPT_LOG.md, TRAPS.md and
 * dispatch.md report these. */
struct problem {
	int lineno;
	char *msg;
};

struct problems {
	struct problem *v;
	size_t n;
};

void problems_release(struct problems *p);

/* A re-assessment or a stop, as OPT_LOG.md shows it under the table (one
 * line each, in order with the rows: after the iteration it followed). */
struct optlog_event {
	int iter;     /* the iteration it followed */
	bool stop;    /* a stop; else a re-assessment */
	char *what;   /* re-assessment: the next direction; stop: its reason
		       * ("cap", "floor", "directions"); may be NULL */
	char *detail; /* re-assessment: the axes tried; stop: the named bound;
		       * may be NULL */
};

/* OPT_LOG.md (core/optlog.c reads and renders it). */
struct optlog_doc {
	char *op;       /* from "# Optimization log — <op>"; NULL when absent */
	char *env;      /* "Env:" line value; NULL when absent or "—" */
	char *baseline; /* "Baseline (main):" */
	char *target;   /* "Target:" */
	struct log_row *rows;
	size_t nrows;
	size_t cap;       /* allocated rows (optlog_doc_add_row); 0 is fine */
	int table_lineno; /* line of the summary table's header when parsed, else 0 */
	/* where the summary table is in the text parsed: from its header line
	 * to the end of its last row's line (bytes), its last line, and how
	 * many lines that are not rows stand between its rows */
	size_t table_start, table_end;
	int table_end_line, table_strays;
	/* the re-assessments and stops, in order (owned when parsed; a
	 * document put together for rendering may borrow them) */
	struct optlog_event *events;
	size_t nevents;
};

/* TRAPS.md (core/traps.c). */
struct traps_doc {
	char *preamble; /* text before the first entry (title, intro), may be "" */
	struct trap *v; /* state is TRAP_UNCHECKED after parsing */
	size_t n;
};

/* The entry with this id, or NULL.  Points into d. */
struct trap *traps_find(const struct traps_doc *d, const char *id);

/* dispatch.md (core/dispatch.c). */
struct dispatch_doc {
	char *preamble;  /* text before the table, "" when none */
	char *after;     /* text after the table, "" when none */
	struct dispatch_row *v;
	size_t n;
};

/* Trap-lint findings on an iteration's diff (core/lint.c). */
struct lint_finding {
	char *lint;    /* rule id, e.g. "tf32-enabled" */
	char *trap;    /* trap id, e.g. "symmetric-flags" */
	char *file;    /* path as named by the diff (new name; old name when deleted) */
	int line;      /* line in the new file ('+') or the old file ('-') */
	char side;     /* '+' or '-' */
	char *text;    /* the diff line without its marker, at most 200 bytes */
	char *message; /* what the rule says, plus detail ("atol 1e-05 -> 0.001") */
};

struct lint_findings {
	struct lint_finding *v;
	size_t n;
};

/* Free what each owns and zero it (NULL is fine). */
void optlog_doc_release(struct optlog_doc *d);
void traps_doc_release(struct traps_doc *d);
void dispatch_doc_release(struct dispatch_doc *d);
void lint_findings_release(struct lint_findings *f);

/* ---- reading and writing the documents (no workspace needed) ---------- */

/* Append one table line (with its trailing newline) for row r. */
void optlog_render_row(const struct log_row *r, struct sb *out);

/* Read any OPT_LOG.md.  *d is overwritten (release it afterwards, also on
 * error); probs (may be NULL) receives what could not be read, each with its
 * line number, and is appended to.  Returns 0 when a summary table was found
 * (problems or not), ERR_FAIL with *e explaining when there is no table at
 * all.  The summary table is the first table under a heading that says
 * "summary", else the first table with an Iter column. */
int optlog_parse(const char *text, size_t len, struct optlog_doc *d,
		 struct problems *probs, struct err *e);

/* Cell formatting shared by render, the TUI and commit messages. */
void optlog_fmt_bench(double ms, struct sb *out);     /* "0.973" or "—" */
void optlog_fmt_vs_best(double frac, struct sb *out); /* "+12%", "-4%", "+2.6%", "—" */
void optlog_fmt_gate(enum gate_verdict g, enum gate_scope s, struct sb *out); /* "pass", "pass (-k)", "FAIL", ... */

/* A re-assessment or stop in words, as a pane shows it: OPT_LOG.md's line
 * without its "- After iteration N: " and without Markdown ("re-assessed;
 * axes tried: ...; next direction: ...", "stopped, at a floor: ..."),
 * appended to out. */
void optlog_event_text(const struct optlog_event *ev, struct sb *out);
/* (best - new) / best; NAN when either is not a positive finite number. */
double optlog_vs_best(double best_ms, double new_ms);

/* Parse text into *d (caller releases with traps_doc_release).  Never fails
 * on content: what it cannot use is listed in *probs (may be NULL) with line
 * numbers.  Fields an entry lacks are "" (never NULL). */
int traps_parse(const char *text, size_t len, struct traps_doc *d, struct problems *probs,
		struct err *e);

/* Parse dispatch.md (caller releases d with dispatch_doc_release).  A file
 * without a table is an empty document, not an error; rows it cannot read
 * are listed in probs (may be NULL) with line numbers.  Rows keep their
 * evidence normalised ("3,5"), NULL when none is cited. */
int dispatch_parse(const char *text, size_t len, struct dispatch_doc *d,
		   struct problems *probs, struct err *e);

/* Append the whole file text (preamble, table, after) to out. */
void dispatch_render(const struct dispatch_doc *d, struct sb *out);

const char *loop_state_name(enum loop_state s);        /* "ready", "measured", ... */
/* What is true in a state and what it allows, one line (DESIGN §2). */
const char *loop_state_meaning(enum loop_state s);
const char *gate_verdict_name(enum gate_verdict g);    /* "pass", "fail", ... */
const char *row_status_name(enum row_status s);        /* "base", "keep", ... ; "" for NONE */
/* Parse a status word case-insensitively; RS_NONE when unknown. */
enum row_status row_status_parse(const char *word);
const char *trap_state_name(enum trap_state s);

/* Verdict of a comparison with the best (DESIGN §6; core/stats.c decides
 * it, core/rules.c judges what it allows).  Names are interface:
 * stats_verdict_name. */
enum stats_verdict {
	SV_NONE, /* nothing to compare yet (no best) */
	SV_FAST,
	SV_SAME,
	SV_SLOW,
	SV_AMBIGUOUS,
	SV_MISSING,
	SV_NOT_COMPARABLE,
};

/* A comparison's flags (stats_cmp.flags); the first five are the implausible
 * group that blocks promotion. */
enum {
	SF_IMPLAUSIBLE_AGG = 1u << 0,   /* aggregate speedup > 1.5× */
	SF_IMPLAUSIBLE_SHAPE = 1u << 1, /* a shape > 3× */
	SF_CONFINED = 1u << 2,          /* the win comes from one shape only */
	SF_COLLAPSED = 1u << 3,         /* the candidate's spread collapsed: on every
					 * shape with ≥ 3 runs, below a tenth of the
					 * pooled noise (or exactly zero) */
	SF_BAD_TIME = 1u << 4,          /* a zero, negative or NaN time */
	SF_IMPOSSIBLE = 1u << 5,        /* a shape's time implies more than the peak
					 * bandwidth or FLOP rate (core/roofline.h):
					 * set by the caller; no explanation lifts it */
	SF_UNSTABLE = 1u << 8,          /* noise CV ≥ 10 % */
	SF_NOISE_ASSUMED = 1u << 9,     /* no history: 2 % assumed */
	SF_ENV_CHANGED = 1u << 10,
	SF_SHAPES_CHANGED = 1u << 11,
	SF_BUSY_GPU = 1u << 12,         /* set by the caller from the probe */
	SF_SUBSET_GATE = 1u << 13,      /* set by the caller from the gate scope */
};
#define SF_IMPLAUSIBLE_MASK \
	(SF_IMPLAUSIBLE_AGG | SF_IMPLAUSIBLE_SHAPE | SF_CONFINED | SF_COLLAPSED | SF_BAD_TIME)

/* Where an iteration's verdict against the best comes from: its finished
 * confirm (best and candidate interleaved) when one ran, else its verify.
 * Names are interface: evidence_source_name ("confirm", "verify"). */
enum evidence_source {
	EVIDENCE_NONE, /* no verdict yet */
	EVIDENCE_VERIFY,
	EVIDENCE_CONFIRM,
};
const char *evidence_source_name(enum evidence_source s); /* NULL for NONE */

/* What a run was for; the runs table's kind column holds run_kind_name.
 * RUN_VERIFY is 0: a run that says nothing else is a verify. */
enum run_kind {
	RUN_VERIFY,
	RUN_NOISE,   /* a noise session's run of the best */
	RUN_CONFIRM, /* a confirm session's run: best, candidate or a pair */
	RUN_OTHER,   /* a kind this version does not know (read, never written) */
};
const char *run_kind_name(enum run_kind k); /* "verify", "noise", "confirm", "other" */
enum run_kind run_kind_parse(const char *w); /* NULL: RUN_VERIFY; unknown: RUN_OTHER */

/* Why optloop moves the kernel paths of the work tree (a tree intent,
 * recorded before the first file is written; tree_intents.kind holds
 * tree_intent_name). */
enum tree_intent {
	INTENT_RESTORE, /* "restore": revert/drop back to the best */
	INTENT_SWAP,    /* "swap": a confirm or noise session puts the best in; from
			 * is the candidate's snapshot, which must come back */
	INTENT_ASIDE,   /* "aside": log --set-aside; from is the set-aside commit,
			 * to the measured tree */
	INTENT_BACK,    /* "back": the set-aside change comes back after the commit;
			 * from is that commit, to the set-aside commit */
	INTENT_OTHER,   /* a kind this version does not know (read, never written) */
};
const char *tree_intent_name(enum tree_intent k);
enum tree_intent tree_intent_parse(const char *w); /* unknown or NULL: INTENT_OTHER */
/* The move in words: "restore", "confirm or noise swap", ... */
const char *tree_intent_what(enum tree_intent k);

/* What deciding cost: GPU runs and their wall seconds, per iteration and
 * for the whole session.  A measurement is one kernel version measured
 * once: a run counts one, a run of the harness's paired mode (old and new
 * columns) two.  Every finished run counts, attempts included. */
struct loop_cost_row {
	int iter;
	int runs;             /* runs of every kind */
	int measurements;     /* kernel versions measured */
	double gpu_s;         /* wall seconds of those runs */
	int verify, confirm, noise, other; /* runs by kind */
	double verify_s, confirm_s, noise_s, other_s;
};
struct loop_cost {
	struct loop_cost_row *v; /* the iterations asked for that ran something, in order */
	size_t n;
	size_t cap; /* (room in v) */
	struct loop_cost_row total; /* the whole history (iter -1) */
};
#define LOOP_COST_ALL (-2) /* loop_cost's iter: every iteration's row */

/* The noise band around the best that the workbench draws and status prints
 * (measure_noise_band): ±2σ of the per-run spread a verdict against the
 * best pools, σ in log space averaged over the best's shapes; assumed (the
 * default spread) until some kernel state has repeated runs. */
struct loop_noise {
	bool have;           /* false without a best with per-shape runs */
	double sigma;        /* NAN when !have */
	double lo_ms, hi_ms; /* best·e^(∓2σ) */
	double half;         /* relative half-width: (hi − lo) / 2 / best */
	bool assumed;        /* no kernel measured twice yet: the default spread */
	int runs;            /* runs (session centres) behind it; 0 when assumed */
};

/* The four answers of the stall re-assessment (loop_reassess). */
struct loop_reassess {
	const char *profile;    /* a file under trace/, newer than the stall */
	const char *axes;       /* the axes already tried */
	const char *techniques; /* known techniques searched for this op family */
	const char *next;       /* the next direction and its expected effect */
};

#endif
