/*
 * loop — the state machine of one optimization workspace, and the one facade
 * the front-ends (tui/cmd/, tui/workbench/, views/) call, with the types of
 * core/model.h.  An iteration is one kernel change -> a verify job (the
 * gated run, recorded) -> loop_log (one OPT_LOG.md row) -> loop_commit (the
 * kernel change only); iteration 0 is the baseline, logged as `base`.  Every
 * call checks the protocol first and refuses (ERR_REFUSED, naming the step
 * that is due).  The database is the source of truth: OPT_LOG.md is
 * rendered from it, and loop_open reconciles both with git history
 * (loop_status().problems).  The calls live with their rules: loop*.c,
 * loop_job.c (verify, noise, confirm), loop_guards.c, loop_evidence.c.
 */
#ifndef OPTLOOP_LOOP_H
#define OPTLOOP_LOOP_H

#include "core/model.h"
#include "core/rules.h"

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct loop;
struct parse_event;
struct parse_result;
struct sb;
struct log_rows;

/* ---- opening a workspace ------------------------------------------------ */

enum loop_open_flags {
	LOOP_READONLY = 1 << 0,  /* never write; no writer lock taken */
	LOOP_TRY_WRITE = 1 << 1, /* fall back to read-only at once when another writer
				  * holds it (a plain writer waits up to 2 s first) */
	LOOP_ANY_CONTRACT = 1 << 2, /* a draft.md that does not parse is only incomplete */
};

/* Find the repository from cwd (NULL: the process's), pick the workspace
 * (op: which, when there are several), open its database and take the
 * writer lock unless LOOP_READONLY (another writer: ERR_BUSY naming it),
 * reconcile.  *out is the caller's: loop_close() it. */
int loop_open(const char *cwd, const char *op, int flags, struct loop **out, struct err *e);
void loop_close(struct loop *l);

/* Every workspace of the repository, each read read-only as loop_status
 * would (error: why not); with read false only the ops are filled. */
struct loop_summary {
	char *op;
	enum loop_state state;
	int iteration;
	bool has_best, best_unconfirmed;
	int best_iter;
	double best_ms, base_ms; /* NAN when none */
	char *error;             /* NULL when it was read */
};
int loop_workspaces(const char *cwd, bool read, struct loop_summary **out, size_t *n,
		    struct err *e);
void loop_summaries_release(struct loop_summary *v, size_t n);
/* Take (on) or give back the writer lock, so that a long-lived client
 * writes only while it acts.  Taking it reconciles as a writer's open does
 * (ERR_BUSY naming the holder: the loop stays read-only); a job going keeps
 * it.  0 when it is already so. */
int loop_writer(struct loop *l, bool on, struct err *e);

/* Create profile/<op>-opt/ (workspace_init); notes gets a line per thing
 * done the user should know of.  Does not open the workspace. */
struct loop_init_opts {
	const char *op;
	const char *test_file;  /* frozen test; NULL: from the FLA registry */
	const char *naive;      /* naive reference; NULL: from the gate test's imports (FLA) */
	const char **frozen;    /* further frozen paths (what the test compares against) */
	size_t nfrozen;
	const char **kernel;    /* kernel paths (repository-relative); NULL/0: op package dir */
	size_t nkernel;
	const char *verify_cmd; /* validation command; NULL: FLA's verify */
	int gate_workers;       /* >1: the gate's pytest on that many xdist workers */
	const char *bench_cmd;  /* benchmark command; NULL: verify cmd + --base main */
	const char *target;     /* optional contract fields filled at once */
	const char *languages;
	const char *promotion;
};
int loop_init(const char *cwd, const struct loop_init_opts *o, struct sb *notes, struct err *e);

/* The demo project (core/demo.c): a new git repository (dir empty or
 * absent; NULL: under $TMPDIR) of assets/demo/ and its workspace, the
 * baseline verify due.  Release with loop_demo_release. */
struct loop_demo {
	char *dir;          /* absolute path of the new project */
	char commit[41];    /* its one commit */
	bool identity_set;  /* git had no user identity: a repository-local one was set */
	char *identity;     /* "Name <email>" the commit was made with */
	char *workspace;    /* profile/<op>-opt, absolute */
	const char *op, *kernel, *test_file, *verify_cmd; /* static */
};
int loop_demo(const char *dir, struct loop_demo *d, struct err *e);
void loop_demo_release(struct loop_demo *d);

/* ---- where the loop stands ---------------------------------------------- */

/* The one step that is due, worded by each front-end (status.next: the CLI's). */
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
	DUE_REBUILD,    /* OPT_LOG.md holds rows the database lost: repair --rebuild */
	DUE_NOISE,      /* the best was taken back without a run: measure it (noise) */
};

struct loop_status {
	enum loop_state state;
	enum loop_due due;
	enum row_status suggest; /* DUE_LOG/DUE_CONFIRM: the status the evidence
				  * supports (never one loop_log would refuse) */
	char *suggest_why;       /* that evidence in words, or NULL */
	int iteration;      /* the iteration the due step belongs to (0 = baseline) */
	char *next;         /* the next required step, in words */
	bool has_best;      /* the one best (log_rows_best): the baseline or the last keep */
	int best_iter;
	double best_ms;
	double best_vs_best;   /* the best row's own "vs best" figure (NAN: none) */
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
	char *optlog_note;  /* what the last OPT_LOG.md write kept of a hand edit, or NULL */
	bool telescoped;    /* kernel changed since it was measured */
	bool readonly;
	const char *readonly_why; /* when readonly: why ("another optloop is writing"; static) */
	int last_run;       /* id of the iteration's verify run (MEASURED, LOGGED), 0 when none */
	int attempt_run;    /* the iteration's last run was an attempt: its id, else 0 */
	int stall;          /* rows in a row without a win; STALLED at stall_limit */
	int stall_limit;
	char *attempt;      /* why it was an attempt and where its raw output is, or NULL */
	/* what runs through /bin/sh -c, shown so nothing runs unseen */
	char *validation;   /* NULL when the contract has none */
	char *probe;
	char *probe_apps;   /* "" when the process check is turned off */
	bool probe_env;     /* either probe command came from the environment */
};

/* May step run now?  0, or ERR_REFUSED in the protocol table's words. */
int loop_may(struct loop *l, enum rules_step step, struct err *e);

/* Fill *st (caller releases with loop_status_release).  Re-reads the
 * contract and the tree, so it is current after edits by hand. */
int loop_status(struct loop *l, struct loop_status *st, struct err *e);
void loop_status_release(struct loop_status *st);

/* The rows of the log, oldest first: the store's shared read-only snapshot,
 * one reference the caller's (log_rows_put), valid after loop_close. */
int loop_rows(struct loop *l, struct log_rows **rows, struct err *e);
/* The newest rows only, at most limit of them, and how many are older
 * (*older): a long log's first frame, before loop_rows reads them all.
 * Owned as loop_rows'. */
int loop_rows_newest(struct loop *l, size_t limit, struct log_rows **rows, size_t *older,
		     struct err *e);

/* The bench-per-iteration chart (struct chart): the rows, the best so far,
 * the noise band.  shape (NULL: the bench column) picks a measured shape,
 * as its key or a Target spells it ("B2-T512-H4-D64"); ERR_USAGE naming
 * them when it names none or several.  loop_chart_release, also on error. */
int loop_chart(struct loop *l, const char *shape, struct chart *c, struct err *e);
void loop_chart_release(struct chart *c);
/* The chart as one JSON object (chart_json; caller owns). */
struct json_t;
struct json_t *loop_chart_json(const struct chart *c);

/* ---- measuring jobs: verify, noise, confirm (core/loop_job.c) ----------- */

/* Every child run is one of three jobs behind one handle: verify (MEASURED
 * after it; an attempt leaves no row), noise (the best, to seed the noise
 * band) and confirm (best and candidate interleaved until the sequential
 * test decides).  Noise and confirm swap kernel states in the tree; the
 * candidate is saved as a git tree and always put back (after a crash, by
 * the next writer). */

typedef void (*loop_output_fn)(void *ctx, const char *buf, size_t len);
typedef void (*loop_event_fn)(void *ctx, const struct parse_event *ev);

struct loop_verify_opts {
	const char *gate_k;     /* --gate-k EXPR: a subset run, a signal only */
	const char *base;       /* --base REF */
	double timeout_s;       /* 0: none */
	const char *const *include; /* --include: changed files made kernel files */
	size_t ninclude;
	bool profile;           /* --profile: the harness's profiler after the bench */
	loop_output_fn output;  /* every byte of the child's output, may be NULL */
	loop_event_fn event;    /* parser events (progress, gate, ...), may be NULL */
	void *ctx;
};

/* What a verify run measured (loop_measurement_release). */
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
	int nlints;              /* trap-lint findings on the measured diff */
	double seconds;
	char *command;
	char *log_path;          /* trace/iter-<N>.log */
	char *tree;              /* kernel tree hash recorded at the end */
	char *result_json;       /* parse_result_json text */
};
void loop_measurement_release(struct loop_measurement *m);

/* The current iteration's last measurement (MEASURED, LOGGED; else ERR_NOTFOUND). */
int loop_measurement(struct loop *l, struct loop_measurement *m, struct err *e);

struct loop_session_opts {
	const char *command; /* NULL: validation command + " --no-gate" */
	int runs;            /* noise: how many runs (0: 5) */
	size_t max_pairs;    /* confirm: 0: STATS_CONFIRM_MAX_PAIRS */
	bool baseline;       /* confirm: the best (at rest) against the baseline commit */
	bool paired;         /* each run a pair: --base <best's commit> (or it at {best});
			      * a confirm pairs by itself where the contract's benchmark
			      * command passes --base, or once a paired one decided */
	bool unpaired;       /* confirm: in turns even where the harness pairs */
	double timeout_s;    /* per run; 0: none */
	void (*progress)(void *ctx, const char *line); /* a line per finished run */
	loop_output_fn output; /* every byte of each run's output, may be NULL */
	loop_event_fn event;
	void *ctx;
};

/* What a noise or confirm session found (owned: loop_job_result_release). */
struct loop_session {
	int iter;
	int session;          /* id of the session's first run */
	int nruns;
	size_t pairs;         /* confirm: best/candidate pairs measured */
	double gpu_s;         /* wall seconds of the session's runs */
	bool promoted;        /* confirm: the candidate becomes the best when kept */
	bool cancelled;       /* confirm: cancelled before its verdict (nothing judged) */
	/* confirm: best against candidate in this session */
	const char *verdict;  /* "fast", "slow", "same", "ambiguous", ...; NULL for noise */
	char *why;            /* the verdict in one sentence */
	double speedup;       /* equal-weight geomean of per-shape speedups, NAN */
	size_t ncommon;       /* shapes both sides measured */
	char *flags_text;     /* NULL when no flag */
	bool busy_gpu;        /* the GPU was busy: can reject, never promote */
	bool held;            /* fast beyond noise, held back by implausible flags */
	char *worst;          /* the worst shape, NULL when none */
	double worst_speedup;
	/* the same over the contract's Target shapes (0: every shape counts) */
	size_t ntargets;
	double target_speedup;
	size_t target_ncommon;
	const char *target_verdict;
	char **missing;       /* named target shapes not measured on both sides */
	size_t nmissing;
	json_t *json;         /* the whole result for --json */
};

enum loop_job_kind { LOOP_JOB_VERIFY, LOOP_JOB_NOISE, LOOP_JOB_CONFIRM };

struct loop_job_opts {
	enum loop_job_kind kind;
	struct loop_verify_opts verify;   /* LOOP_JOB_VERIFY */
	struct loop_session_opts session; /* LOOP_JOB_NOISE, LOOP_JOB_CONFIRM */
	const volatile sig_atomic_t *stop; /* loop_job_run cancels once it is set */
};

/* Where a job stands, for a live pane: "confirm run 3 of 6 (best)". */
struct loop_job_progress {
	enum loop_job_kind kind;
	int iter;            /* the iteration it measures for */
	int run, nruns;      /* the run going (1-based; the last once over) of those
			      * planned so far (a confirm's grow a pair at a time) */
	const char *role;    /* "best", "cand", "pair", "noise", "baseline"; NULL: verify */
	size_t pairs;        /* confirm: pairs compared so far */
	bool running;        /* false once it is over: loop_job_end is due */
	double elapsed_s;    /* since it began */
	const char *command; /* the command line its runs take (owned by the job) */
	/* the GPU probe around every run: $OPTLOOP_PROBE(_APPS) or nvidia-smi */
	const char *probe, *probe_apps; /* "" apps: no process check */
	const struct parse_result *result; /* the run going's output so far, or NULL */
};

/* A finished job's findings, tagged by kind (loop_job_result_release). */
struct loop_job_result {
	enum loop_job_kind kind;
	struct loop_measurement m; /* verify */
	struct loop_session s;     /* noise, confirm */
};
void loop_job_result_release(struct loop_job_result *r);

/* The job in steps, for an event loop; the loop holds it, one at a time.
 * begin refuses (nothing left running) or starts the first run: *out is the
 * caller's until end.  fds: the run going's, to poll for POLLIN.  pump
 * reads what is there (up to timeout_ms, -1 forever), records a session's
 * ended run and starts the next: 1 while it goes on, 0 once over.  cancel
 * stops the run going: a verify is an attempt, a confirm has no verdict, a
 * noise fails (ERR_HARNESS).  end cancels one still going, records it, puts
 * the candidate back, fills *out (nothing to release on error), frees j.
 * loop_close ends a job left going as end does. */
struct loop_job;
int loop_job_begin(struct loop *l, const struct loop_job_opts *o, struct loop_job **out,
		   struct err *e);
int loop_job_fds(const struct loop_job *j, int fds[2]);
int loop_job_pump(struct loop_job *j, int timeout_ms, struct err *e);
void loop_job_cancel(struct loop_job *j);
void loop_job_progress(const struct loop_job *j, struct loop_job_progress *p);
int loop_job_end(struct loop_job *j, struct loop_job_result *out, struct err *e);
/* begin, pump to the end, end: 0 for a recorded verify whatever its gate,
 * a measured confirm (cancelled too: out->s.cancelled). */
int loop_job_run(struct loop *l, const struct loop_job_opts *o, struct loop_job_result *out,
		 struct err *e);

/* ---- log and commit ------------------------------------------------------ */

struct loop_log_opts {
	const char *direction; /* one line; required */
	enum row_status status;/* RS_NONE for the baseline (becomes base) */
	const char *axis;      /* may be NULL */
	const char *bound;     /* floor: the named bound and its number, recorded with the row */
	const char *unconfirmed; /* keep without a win beyond noise: why; NULL: no such keep */
	bool ack_lints;        /* the user reviewed the diff's lint findings */
	bool commit_next;      /* log --commit: refuse first what that commit would */
};

/* Append the measured iteration's row, re-render OPT_LOG.md atomically.
 * Refused unless MEASURED with the kernel as measured (loop_set_aside).
 * *row (may be NULL) gets a copy (log_row_release). */
int loop_log(struct loop *l, const struct loop_log_opts *o, struct log_row *row, struct err *e);

/* Commit the logged iteration (the kernel paths, the row as Optloop-*
 * trailers) into sha; refused unless LOGGED.  A change set aside comes back
 * after; a revert/drop/floor row is followed by a commit restoring the best. */
int loop_commit(struct loop *l, char sha[41], struct err *e);

/* Telescoping: set aside the kernel changes made since the measurement so
 * log and commit can go on; the commit brings them back as the next change.
 * ERR_REFUSED when nothing is telescoped. */
int loop_set_aside(struct loop *l, struct err *e);

/* The repairs reconciliation offers: a row re-linked to the commit carrying
 * its iteration, an optloop commit's row taken back from its trailers; done
 * gets a line each, the rest stays in loop_status().problems.  rebuild:
 * first take back the rows OPT_LOG.md holds and the database lost
 * (ERR_REFUSED when there are none, or the kernel paths are lost too). */
int loop_repair(struct loop *l, bool rebuild, struct sb *done, struct err *e);

/* ---- guards: traps, lints, re-assessment, stop, no-go, dispatch --------- */

/* TRAPS.md (the shipped seed when none), each trap's state for iter. */
int loop_traps(struct loop *l, int iter, struct traps_doc *d, struct problems *probs,
	       struct err *e);
/* Set one trap's checklist state for iter; source says who ("user", "tui"). */
int loop_trap_mark(struct loop *l, int iter, const char *trap, enum trap_state st,
		   const char *source, struct err *e);
/* Add a trap to TRAPS.md (all four texts required); *id receives its id. */
int loop_trap_add(struct loop *l, const char *title, const char *fact, const char *why,
		  const char *how, char **id, struct err *e);

/* Lint iter's diff (HEAD to the tree), store the findings, mark their traps
 * hit; out (may be NULL) gets them (lint_findings_release). */
int loop_lint(struct loop *l, int iter, struct lint_findings *out, struct err *e);

/* The stall re-assessment: all four answers (ERR_USAGE naming one missing),
 * the profile as loop_reassess_profile_check takes it. */
int loop_reassess(struct loop *l, const struct loop_reassess *r, struct err *e);
/* The log's directions grouped by axis, one line each, appended to out. */
int loop_axes_summary(struct loop *l, struct sb *out, struct err *e);

/* Record a stop: "cap", "floor" (bound: the bound and its number; none: computed from the
 * best's run), "directions".  *recorded (may be NULL): the bound recorded, caller frees. */
int loop_stop(struct loop *l, const char *reason, const char *bound, char **recorded, struct err *e);
/* The no-go record as Markdown (md) and JSON (*json, may be NULL);
 * ERR_FAIL when an item is missing (the record says which). */
int loop_nogo(struct loop *l, struct sb *md, json_t **json, struct err *e);

/* Add a dispatch.md row once its evidence checks against the log. */
int loop_dispatch_add(struct loop *l, const struct dispatch_row *r, struct err *e);
/* The stored dispatch rows (dispatch_doc_release). */
int loop_dispatch_rows(struct loop *l, struct dispatch_doc *d, struct err *e);

/* ---- evidence: runs, verdicts, the noise band, promotion, reports -------- */

/* The best against the baseline on one shape, as report final compares. */
struct loop_shape_speedup {
	char *key;                /* loop_shape_key's */
	double base_ms, best_ms;  /* centres of each side's runs */
	double speedup, lo, hi;   /* base / best with its 95 % interval */
};
/* Per shape (loop_shape_speedups_free); *n = 0 while the best is the baseline. */
int loop_best_shapes(struct loop *l, struct loop_shape_speedup **out, size_t *n, struct err *e);
void loop_shape_speedups_free(struct loop_shape_speedup *v, size_t n);
/* The key a shape of a parsed table is compared under (caller frees). */
char *loop_shape_key(const struct parse_row *r);

/* A recorded verify run with what was judged of it (loop_run_release). */
struct loop_run {
	int id, iter;
	char *command, *log_path;
	int exit_status;
	bool timed_out, cancelled;
	bool have_result;          /* result holds what the parser read */
	struct parse_result result;
	/* its verdict against the best; verdict NULL when it has none */
	char *verdict;             /* "fast", "same", "ambiguous", ... */
	bool confirm_can_win;      /* a confirm could still make it a win */
	char *why;                 /* the comparison in words, may be NULL */
	double gain;               /* vs best as a fraction; NAN when none */
	unsigned flags;
	char *flags_text;          /* flag names joined by ", "; NULL when none */
	json_t *flags_json;        /* the same as an array (never NULL) */
	json_t *detail;            /* the whole comparison, or NULL */
	/* the last confirm of its iteration */
	enum { LOOP_CONFIRM_NONE, LOOP_CONFIRM_UNFINISHED, LOOP_CONFIRM_NO_VERDICT,
	       LOOP_CONFIRM_DONE } confirm;
	char *confirm_verdict;     /* LOOP_CONFIRM_DONE: its verdict */
	bool confirm_promoted;
	bool confirm_held;         /* fast, but held back until its flags are explained */
	/* the iteration's judgment its row carries: the confirm's, else this */
	const char *judged;        /* that verdict's name (static); NULL when none */
	double vs_best;            /* its one "vs best" figure; NAN when none */
	/* the GPU probe before and after the run, in words (NULL: none) */
	char *probe[2];
	bool probe_busy[2];
	char *probe_command;       /* the probe command that ran, or NULL */
	/* through Slurm: where it ran ("Slurm job 12 step 3 on node gpu07") */
	char *slurm;
};
/* Run run_id (0: the latest judged); ERR_NOTFOUND: none, nothing to release. */
int loop_run_get(struct loop *l, int run_id, struct loop_run *r, struct err *e);
/* The verify run behind iteration iter's row; ERR_NOTFOUND when none. */
int loop_iter_run_get(struct loop *l, int iter, struct loop_run *r, struct err *e);
void loop_run_release(struct loop_run *r);

/* What deciding cost: the total and iter's row (LOOP_COST_ALL: every row). */
int loop_cost(struct loop *l, int iter, struct loop_cost *out, struct err *e);
/* The row of iteration iter, NULL when it ran nothing. */
const struct loop_cost_row *loop_cost_of(const struct loop_cost *c, int iter);
void loop_cost_release(struct loop_cost *c);
/* "3 measurements in 3 runs, 116 s (verify 1 run 38 s, ...)"; NULL: "nothing run". */
void loop_cost_words(const struct loop_cost_row *r, struct sb *out);
/* {"runs", "measurements", "gpu_s", "by_kind": {"verify": {"runs", "s"}, ...}} */
json_t *loop_cost_json(const struct loop_cost_row *r);

int loop_noise_band(struct loop *l, struct loop_noise *out, struct err *e);
/* "±1.5% (6 runs)", "±4.0% (assumed)", "none yet" (appended). */
void loop_noise_words(const struct loop_noise *n, struct sb *out);

/* promote's iteration: the one measured and not yet logged, else the best. */
int loop_promote_iter(struct loop *l, int *iter, struct err *e);
/* Attach a profiler or roofline reading to iter: *real its path, *kind what. */
int loop_attach(struct loop *l, int iter, const char *path, char **real, const char **kind,
		struct err *e);
/* Record why iter's flagged speedup is real; *promoted: its confirm now promotes. */
int loop_explain(struct loop *l, int iter, const char *note, bool *promoted, struct err *e);
/* verify --profile: attach the trace run run_id wrote (*path); ERR_NOTFOUND. */
int loop_attach_run_trace(struct loop *l, int iter, int run_id, char **path, struct err *e);
/* The promotion check as text and JSON: 0 when it passes, ERR_FAIL when not. */
int loop_promote_check(struct loop *l, struct sb *out, json_t **json, struct err *e);

enum loop_report { LOOP_REPORT_FINAL, LOOP_REPORT_HEADER, LOOP_REPORT_PR };
/* A report as Markdown (appended to md) and JSON (*json, may be NULL);
 * iter is the iteration of a header.  ERR_REFUSED with what is missing. */
int loop_report(struct loop *l, enum loop_report kind, int iter, struct sb *md, json_t **json,
		struct err *e);

/* The whole store as JSON, streamed through write as read (memory bounded). */
int loop_export_json(struct loop *l, size_t flags, json_dump_callback_t write, void *data,
		     struct err *e);

/* Read a saved log (path "-": stdin) with pattern set patterns (NULL: fla;
 * first in op's workspace patterns/).  exit_status -1: unknown; 128+N reads
 * as killed.  *out (parse_result_release), *set_name (caller frees). */
int loop_parse_log(const char *path, const char *patterns, const char *op, int exit_status,
		   bool killed, struct parse_result *out, char **set_name, struct err *e);

/* The stat lines and the patch of commit sha (either may be NULL). */
int loop_show_commit(struct loop *l, const char *sha, struct sb *stat, struct sb *patch,
		     struct err *e);

/* ---- watching a workspace (core/watch.c) -------------------------------- */

/* A workspace followed from outside (optloop watch, a workbench watching an
 * agent): inotify wakes the watcher, which reads it read-only, reports what
 * changed and tails the raw log of a run going.  Nothing polls. */
enum loop_watch_kind {
	LOOP_WATCH_STATE,     /* state or iteration changed: state, iteration, text (next) */
	LOOP_WATCH_RUN_START, /* a run began: run_id, run_kind, pid, text (command), log_path */
	LOOP_WATCH_PROGRESS,  /* progress (percent) of the run going */
	LOOP_WATCH_STAGE,     /* the run going entered a stage: text */
	LOOP_WATCH_GATE,      /* the run going printed its gate verdict: gate */
	LOOP_WATCH_RUN_END,   /* the run ended: gate, bench_ms, vs_best */
	LOOP_WATCH_ROW,       /* a row was logged: status, unconfirmed, text (direction), gate, ... */
	LOOP_WATCH_COMMIT,    /* a row was committed: commit, status */
	LOOP_WATCH_CONFIRM,   /* a confirm finished: verdict, promoted */
	LOOP_WATCH_STALL,     /* the loop stalled: stall, stall_limit */
	LOOP_WATCH_STOP,      /* a stop condition was recorded: reason, bound */
	LOOP_WATCH_PROBLEM,   /* reconciliation findings changed: text */
	LOOP_WATCH_EXPLAIN,   /* an explanation was recorded (promote --explain): text */
	LOOP_WATCH_OUTPUT,    /* the run's output: text, len bytes (LOOP_WATCH_WANT_OUTPUT) */
	LOOP_WATCH_REASSESS,  /* a stall was re-assessed: text (the next direction) */
};
enum { LOOP_WATCH_WANT_OUTPUT = 1 << 0 };
struct loop_watch_event {
	enum loop_watch_kind kind;
	double t; /* unix seconds when seen */
	const char *op;
	int iteration;
	const char *state, *run_kind, *gate, *status, *commit, *verdict, *text, *log_path;
	const char *unconfirmed, *reason, *bound; /* ROW: a keep's why; STOP: why, and its bound */
	enum gate_verdict gate_v; /* the gate as a value, where gate is set */
	int run_id, pid, progress, stall, stall_limit;
	size_t len; /* LOOP_WATCH_OUTPUT */
	double bench_ms, vs_best; /* 0 when not set; NAN when the run had none */
	bool promoted;
};
const char *loop_watch_kind_name(enum loop_watch_kind k); /* "run.start", ... */
typedef void (*loop_watch_fn)(void *ctx, const struct loop_watch_event *ev);
struct loop_watch;
/* Watch (cwd, op as loop_open's); fn gets a state event at once; events'
 * strings live only during the call. */
int loop_watch_open(const char *cwd, const char *op, unsigned flags, loop_watch_fn fn, void *ctx,
		    struct loop_watch **out, struct err *e);
/* The descriptor to poll for POLLIN. */
int loop_watch_fd(const struct loop_watch *w);
/* Read what woke the watcher and report what changed (0 when nothing did). */
int loop_watch_pump(struct loop_watch *w, struct err *e);
void loop_watch_close(struct loop_watch *w);

/* ---- runs through Slurm (core/loop_slurm.c) ------------------------------ */

/* Where runs go and, with Runner: slurm, their allocation as squeue sees it
 * now, or how the last one ended (loop_allocation_release). */
struct loop_allocation {
	bool slurm;          /* the contract's Runner is slurm */
	char *runner;        /* the Runner value, "local" by default */
	double idle_s;       /* released after this long unused; 0: never */
	bool held;           /* an allocation is recorded and not released */
	char *job;           /* its job id; NULL until salloc names it */
	char *state;         /* squeue's state ("PENDING", "RUNNING"), else the store's */
	char *reason;        /* the queue reason while pending, or NULL */
	char *node;          /* the node runs go to, or NULL */
	double requested, granted, last_used; /* unix s, 0 when not yet */
	char *last_job;      /* !held: the last allocation's job and why it ended */
	char *last_why;
};
/* Fill *a (a writer also forgets an allocation squeue no longer has). */
int loop_allocation(struct loop *l, struct loop_allocation *a, struct err *e);
void loop_allocation_release(struct loop_allocation *a);
/* "Slurm job 12 PENDING (Resources), requested 2 min ago"; "local". */
void loop_allocation_words(const struct loop_allocation *a, struct sb *out);
/* Give the allocation back now (scancel), recording why; only_used: only
 * one this process's runs used.  *had (may be NULL): one was.  ERR_BUSY
 * when read-only. */
int loop_allocation_end(struct loop *l, const char *why, bool only_used, bool *had,
			struct err *e);
/* Whether a run of this process went through the Slurm allocation. */
bool loop_allocation_used(const struct loop *l);

/* ---- contract ------------------------------------------------------------ */

/* Path of docs/draft.md (owned by the loop). */
const char *loop_contract_path(const struct loop *l);

/* The required fields the contract leaves empty, in order, with what a form
 * asks with: the section heading and docs/draft.md's (else the template's)
 * hint.  *out is the caller's: loop_contract_fields_free. */
#define CONTRACT_NFIELDS 12 /* the seven required, cap, threshold, runner, peak, cost */
struct loop_contract_field {
	int field;           /* its index: contract_field_name(field) == name */
	const char *name;    /* "op", "target", ... (static): what --set takes */
	const char *heading; /* "Op and entry point", ... (static) */
	char *hint;
};
int loop_contract_missing(struct loop *l, struct loop_contract_field **out, size_t *n,
			  struct err *e);
void loop_contract_fields_free(struct loop_contract_field *v, size_t n);
/* Is name a contract field --set accepts (synonyms included)? */
bool loop_contract_field_known(const char *name);
/* Set fields names[i] to values[i] ("" clears) in docs/draft.md, the rest
 * kept byte for byte, written atomically once.  ERR_USAGE: unknown field. */
int loop_contract_set(struct loop *l, const char *const *names, const char *const *values,
		      size_t n, struct err *e);

/* Would the stall re-assessment take this profile (a file under trace/
 * written after the stall began)?  0, or ERR_REFUSED / ERR_USAGE, why. */
int loop_reassess_profile_check(struct loop *l, const char *path, struct err *e);

/* ---- who else runs the changed files (core/loop_deps.c) ------------------- */

/* The kernel files the best (work: the work tree) changed since the
 * baseline, and who else runs them: other ops, test files reaching one. */
struct loop_dependent {
	char *name;   /* "op chunk_simple_gla", or the test file's path */
	bool test;    /* a test file: its gate can be run */
	char *file;   /* the changed file it reaches */
	char *why;    /* the import path to it */
};
struct loop_dependents {
	char **changed; /* the changed kernel files */
	size_t nchanged;
	struct loop_dependent *v;
	size_t n;
	char *tree;     /* the compared kernel's tree hash */
	char *from;     /* the baseline's commit */
};
int loop_dependents(struct loop *l, bool work, struct loop_dependents *d, struct err *e);
void loop_dependents_release(struct loop_dependents *d);
/* dependents --run and warmup: pytest with no shell, in a process group of
 * its own; once *stop is set it is stopped, nothing recorded: ERR_HARNESS. */
struct loop_pytest_opts {
	void (*output)(void *ctx, const char *buf, size_t len); /* its output; may be NULL */
	void (*gate)(void *ctx, const char *file, int exit_status, double secs); /* each gate */
	void *ctx, *gate_ctx;
	const volatile sig_atomic_t *stop;
};
/* Run each dependent test file's gate (python3 -m pytest FILE -q) on the
 * work tree holding the compared kernel; each recorded (dependents.gate). */
int loop_dependents_run(struct loop *l, const struct loop_dependents *d,
			const struct loop_pytest_opts *o, struct err *e);
/* The gate test once outside the loop to fill compile caches (pytest on
 * `workers` xdist workers), recorded as an event: its exit status, secs. */
int loop_warmup(struct loop *l, int workers, const struct loop_pytest_opts *o, int *exit_status,
		double *secs, struct err *e);
/* The newest gate of file on kernel tree: 1 and its exit status, or 0. */
int loop_dependent_gate(struct loop *l, const char *tree, const char *file, int *exit_status);

/* ---- for the front-ends' own words ---------------------------------------- */

/* The did-you-mean for ops: the name in names (NULL-ended) nearest word. */
const char *loop_closest_word(const char *word, const char *const *names);
/* The assets folder in use; NULL with e saying why when there is none. */
const char *loop_assets_dir(struct err *e);

/* Absolute path of the workspace dir (owned by l). */
const char *loop_dir(const struct loop *l);
#endif
