/*
 * model — the plain data every part of optloop talks about: loop states,
 * log rows, traps, dispatch rows.  Engine modules fill these; views read
 * them through pointers and never own them.
 */
#ifndef OPTLOOP_MODEL_H
#define OPTLOOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>

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
};

void log_row_release(struct log_row *r);

/* Can this row be the best?  A base or keep row with a bench number whose
 * gate passed (or, in a hand-written log, is not known). */
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

/* Is this row a win that resets the stall count: a keep backed by a win
 * beyond noise (not kept --unconfirmed). */
bool log_row_is_win(const struct log_row *r);

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

const char *loop_state_name(enum loop_state s);        /* "ready", "measured", ... */
/* What is true in a state and what it allows, one line (DESIGN §2). */
const char *loop_state_meaning(enum loop_state s);
const char *gate_verdict_name(enum gate_verdict g);    /* "pass", "fail", ... */
const char *row_status_name(enum row_status s);        /* "base", "keep", ... ; "" for NONE */
/* Parse a status word case-insensitively; RS_NONE when unknown. */
enum row_status row_status_parse(const char *word);
const char *trap_state_name(enum trap_state s);

#endif
