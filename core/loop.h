/*
 * loop — the state machine of one optimization workspace, and the one facade
 * both front-ends (the CLI subcommands and the TUI) call.
 *
 * An iteration is: one change to the kernel -> loop_verify (the gated
 * verify-and-bench run, recorded) -> loop_log (one OPT_LOG.md row) ->
 * loop_commit (one git commit holding only the kernel change).  Iteration 0
 * is the baseline, measured on the unmodified kernel and logged as `base`.
 * Every call checks the protocol first and refuses (ERR_REFUSED, with a
 * message naming the step that is due) when it does not allow the action.
 *
 * The database (optloop.db) is the source of truth; OPT_LOG.md is rendered
 * from it atomically on every log.  loop_open reconciles OPT_LOG.md, the
 * database and git history and reports what it found (loop_status().problems).
 *
 * Guards and statistics hook in through small calls made from loop.c; they
 * reach the database through loop_store() and add their own tables there.
 */
#ifndef OPTLOOP_LOOP_H
#define OPTLOOP_LOOP_H

#include "core/model.h"

#include <stdbool.h>
#include <stddef.h>

struct err;
struct loop;
struct parse_event;
struct parse_result;
struct sb;
struct store;
struct store_rows;
struct workspace;

/* ---- opening a workspace ------------------------------------------------ */

enum loop_open_flags {
	LOOP_READONLY = 1 << 0,  /* never write; no writer lock taken */
	LOOP_TRY_WRITE = 1 << 1, /* fall back to read-only at once when another writer
				  * holds it (a plain writer waits up to 2 s first) */
};

/* Find the repository from cwd (NULL: the process's cwd), pick the workspace
 * under profile/ (op picks one when there are several; NULL when there is
 * one), open its database and take the single-writer lock unless
 * LOOP_READONLY.  A second writer gets ERR_BUSY with a message saying who
 * holds it (or opens read-only with LOOP_TRY_WRITE).  Runs the start-up
 * reconciliation.  *out is owned by the caller: loop_close() it. */
int loop_open(const char *cwd, const char *op, int flags, struct loop **out, struct err *e);
void loop_close(struct loop *l);

/* Every workspace of the repository found from cwd, each read as
 * loop_status would (read-only, no lock): where it stands, its best and its
 * baseline number.  A workspace that cannot be read carries the reason. */
struct loop_summary {
	char *op;
	enum loop_state state;
	int iteration;
	bool has_best, best_unconfirmed;
	int best_iter;
	double best_ms, base_ms; /* NAN when none */
	char *error;             /* NULL when it was read */
};
int loop_workspaces(const char *cwd, struct loop_summary **out, size_t *n, struct err *e);
void loop_summaries_release(struct loop_summary *v, size_t n);
bool loop_readonly(const struct loop *l);

/* Create profile/<op>-opt/ (see workspace_init for the options); notes gets
 * one line per thing done that the user should know about (e.g. profile/
 * added to .git/info/exclude).  Does not open the workspace. */
struct loop_init_opts {
	const char *op;
	const char *test_file;  /* frozen test; NULL: from the FLA registry */
	const char *naive;      /* naive reference; NULL: from the gate test's imports (FLA) */
	const char **frozen;    /* further frozen paths (what the test compares against) */
	size_t nfrozen;
	const char **kernel;    /* kernel paths (repository-relative); NULL/0: op package dir */
	size_t nkernel;
	const char *verify_cmd; /* validation command; NULL: FLA's verify */
	const char *bench_cmd;  /* benchmark command; NULL: verify cmd + --base main */
	const char *target;     /* optional contract fields filled at once */
	const char *languages;
	const char *promotion;
};
int loop_init(const char *cwd, const struct loop_init_opts *o, struct sb *notes, struct err *e);

/* ---- where the loop stands ---------------------------------------------- */

/* The one step that is due, computed in core and worded by each front-end
 * (loop_status().next is the CLI's words for it). */
enum loop_due {
	DUE_NONE,
	DUE_CONTRACT,   /* fill the task contract */
	DUE_BASELINE,   /* verify the unmodified kernel (full gate) */
	DUE_RETRY,      /* the last run was an attempt: fix it, verify again */
	DUE_EDIT,       /* make one change to the kernel */
	DUE_VERIFY,     /* verify the change */
	DUE_WAIT,       /* a verify run is going */
	DUE_SET_ASIDE,  /* the kernel changed after the measurement */
	DUE_CONFIRM,    /* fast or ambiguous without a win beyond noise: confirm, or log revert/drop */
	DUE_LOG,        /* log the row (suggest: the status the evidence supports) */
	DUE_COMMIT,     /* commit the logged row */
	DUE_REASSESS,   /* STALLED: the re-assessment */
	DUE_STOP,       /* STOPPING: promote or record the no-go */
};

struct loop_status {
	enum loop_state state;
	enum loop_due due;
	enum row_status suggest; /* DUE_LOG/DUE_CONFIRM: the status the evidence supports */
	int iteration;      /* the iteration the due step belongs to (0 = baseline) */
	char *next;         /* the next required step, in words */
	bool has_best;      /* the one best (log_rows_best): the baseline or the last keep */
	int best_iter;
	double best_ms;
	bool best_unconfirmed; /* the best was kept --unconfirmed */
	char *op;
	char *workspace;    /* absolute path of profile/<op>-opt */
	char *repo;         /* absolute path of the repository's work tree */
	char **kernel;      /* repository-relative paths */
	size_t nkernel;
	char **frozen;
	size_t nfrozen;
	char *missing;      /* NO_CONTRACT: what the contract lacks, one per line */
	char *problems;     /* reconciliation findings with the repair offered, or NULL */
	bool telescoped;    /* kernel changed since it was measured */
	bool readonly;
	int last_run;       /* id of the iteration's verify run (MEASURED, LOGGED), 0 when none */
	int attempt_run;    /* the iteration's last run was an attempt: its id, else 0 */
	int stall;          /* rows in a row without a win since the baseline or the last
			     * re-assessment; STALLED at stall_limit */
	int stall_limit;
	char *attempt;      /* why it was an attempt and where its raw output is, or NULL */
};

/* Fill *st (caller releases with loop_status_release).  Re-reads the
 * contract and the tree, so it is current after edits by hand. */
int loop_status(struct loop *l, struct loop_status *st, struct err *e);
void loop_status_release(struct loop_status *st);

/* The rows of the log, oldest first, from the database: the store's shared
 * read-only snapshot (core/store.h).  The caller holds one reference and
 * drops it with store_rows_put(*rows); it stays valid and unchanged after
 * later writes and after the loop is closed. */
int loop_rows(struct loop *l, struct store_rows **rows, struct err *e);

/* The bench-per-iteration chart of the log (struct chart, core/model.h):
 * each row a point or a mark on the x axis, the best so far after each
 * row, the noise band around the best.  shape (NULL: the bench column)
 * picks one measured shape, spelled as the measured keys are ("fwd B=2
 * T=512 H=4 D=64") or as a Target may ("B2-T512-H4-D64"); ERR_USAGE naming
 * the measured shapes when it names none or several.  An empty log gives
 * no items.  Release with loop_chart_release (also after an error). */
int loop_chart(struct loop *l, const char *shape, struct chart *c, struct err *e);
void loop_chart_release(struct chart *c);
/* The chart as one JSON object (chart_json; caller owns). */
struct json_t;
struct json_t *loop_chart_json(const struct chart *c);

/* ---- verify -------------------------------------------------------------- */

typedef void (*loop_output_fn)(void *ctx, const char *buf, size_t len);
typedef void (*loop_event_fn)(void *ctx, const struct parse_event *ev);

struct loop_verify_opts {
	const char *gate_k;     /* --gate-k EXPR: a subset run, a signal only */
	const char *base;       /* --base REF */
	double timeout_s;       /* 0: none */
	loop_output_fn output;  /* every byte of the child's output, may be NULL */
	loop_event_fn event;    /* parser events (progress, gate, ...), may be NULL */
	void *ctx;
};

/* What a finished verify run measured; strings owned by the struct
 * (loop_measurement_release). */
struct loop_measurement {
	int iter;
	int run_id;              /* row id in the store's runs table */
	enum gate_verdict gate;
	enum gate_scope scope;
	double bench_ms;         /* geomean of per-shape medians; NAN when none */
	double vs_best;          /* fraction, NAN when nothing to compare */
	int exit_status;         /* -1 when killed */
	bool timed_out, cancelled;
	bool no_change;          /* the kernel equals HEAD (a no-change run) */
	bool attempt;            /* an attempt, not an iteration (run_is_attempt): no row */
	int nlints;              /* trap-lint findings on the measured diff (loop_verify_end) */
	double seconds;
	char *command;
	char *log_path;          /* trace/iter-<N>.log */
	char *tree;              /* kernel tree hash recorded at the end */
	char *result_json;       /* parse_result_json text */
};
void loop_measurement_release(struct loop_measurement *m);

/* Blocking verify for the CLI: refuses unless the state allows it, runs the
 * contract's validation command (--gate-k/--base appended), streams output
 * through o->output, writes trace/iter-<N>.log, records the run and leaves
 * the workspace MEASURED.  Returns 0 when the run was recorded (whatever the
 * gate said: read m->gate); ERR_REFUSED / ERR_IO / ERR_HARNESS otherwise. */
int loop_verify(struct loop *l, const struct loop_verify_opts *o, struct loop_measurement *m,
		struct err *e);

/* The same in steps for an event loop: begin starts the child and returns
 * at once; fds gives the descriptors to poll for POLLIN (returns how many);
 * pump reads what is there (1 still running, 0 finished, <0 error); cancel
 * asks the child to stop (recorded as incomplete); end records the run and
 * fills *m.  result is the parse result so far (NULL when no run is going). */
int loop_verify_begin(struct loop *l, const struct loop_verify_opts *o, struct err *e);
int loop_verify_fds(const struct loop *l, int fds[2]);
int loop_verify_pump(struct loop *l, int timeout_ms, struct err *e);
void loop_verify_cancel(struct loop *l);
int loop_verify_end(struct loop *l, struct loop_measurement *m, struct err *e);
const struct parse_result *loop_verify_result(const struct loop *l);

/* The last recorded measurement of the current iteration (state MEASURED or
 * LOGGED); ERR_NOTFOUND when there is none. */
int loop_measurement(struct loop *l, struct loop_measurement *m, struct err *e);

/* ---- log and commit ------------------------------------------------------ */

struct loop_log_opts {
	const char *direction; /* one line; required */
	enum row_status status;/* RS_NONE for the baseline (becomes base) */
	const char *axis;      /* may be NULL */
	const char *unconfirmed; /* keep without a win beyond noise: the reason, recorded
				  * with the row; NULL: keep needs the win */
	bool ack_lints;        /* the user reviewed the diff's lint findings */
	bool commit_next;      /* loop_commit follows at once (log --commit): refuse
				* before writing anything what that commit would
				* refuse anyway (no git identity, a frozen file changed) */
};

/* Append the row for the measured iteration (gate and bench from the
 * measurement), re-render OPT_LOG.md atomically.  Refused unless MEASURED,
 * and refused when the kernel changed since the measurement (telescoping;
 * see loop_set_aside).  *row, when not NULL, receives a copy (caller
 * releases with log_row_release). */
int loop_log(struct loop *l, const struct loop_log_opts *o, struct log_row *row, struct err *e);

/* Commit the logged iteration: only the kernel paths, message carrying the
 * row (trailers Optloop-Iter, -Direction, -Gate, -Bench, -Vs-Best, -Status).
 * sha (41 bytes) receives the commit id.  Refused unless LOGGED.  A change
 * set aside during the iteration comes back into the work tree afterwards.
 * A revert/drop row is then followed by a second commit that restores the
 * kernel to the best row's (guards_after_commit). */
int loop_commit(struct loop *l, char sha[41], struct err *e);

/* Telescoping: set aside the kernel changes made since the measurement (a
 * stash through libgit2, restoring the measured tree) so log and commit can
 * go on; after the commit they are brought back as the next change
 * automatically.  ERR_REFUSED when nothing is telescoped. */
int loop_set_aside(struct loop *l, struct err *e);

/* The repairs start-up reconciliation offers: a row whose commit left
 * HEAD's history is re-linked to the commit that carries its iteration; an
 * optloop commit without a row gets its row back from its trailers (when it
 * continues the log).  done receives one line per repair.  OPT_LOG.md is
 * re-rendered; what cannot be repaired stays in loop_status().problems. */
int loop_repair(struct loop *l, struct sb *done, struct err *e);

/* ---- contract ------------------------------------------------------------ */

/* Path of docs/draft.md (owned by the loop). */
const char *loop_contract_path(const struct loop *l);

/* The contract as the workspace last read it (loop_open, loop_status,
 * verify, log and commit read docs/draft.md again, and parse it again only
 * when its text changed).  The caller holds a reference: it stays whole
 * when the loop reads a changed file; let go with loop_contract_put.  An
 * empty contract when docs/draft.md is missing; never NULL. */
struct contract;
const struct contract *loop_contract_get(struct loop *l);
void loop_contract_put(const struct contract *c);

/* ---- for modules that hook in ------------------------------------------- */

struct store *loop_store(struct loop *l);
/* The repository handle (libgit2), with profile/ and the frozen files
 * excluded from the kernel; borrowed, valid until loop_close. */
struct vcs;
struct vcs *loop_vcs(struct loop *l);
/* The pattern set runs are parsed with (built-in plus the workspace's
 * patterns/), loaded at the first call and owned by the loop. */
struct patset;
int loop_patset(struct loop *l, const struct patset **ps, struct err *e);
const struct workspace *loop_workspace(const struct loop *l);
/* Absolute path of the repository work tree / the workspace dir (owned by l). */
const char *loop_repo_dir(const struct loop *l);
const char *loop_dir(const struct loop *l);

/* Append an event to the store's append-only event log (kind: short word,
 * detail: free text, may be NULL). */
int loop_event(struct loop *l, const char *kind, const char *detail, struct err *e);

#endif
