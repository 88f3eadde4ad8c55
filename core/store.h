/*
 * store — optloop.db, the workspace's source of truth (sqlite3, WAL).
 *
 * Holds the workspace record, iterations (the log rows and their commits),
 * verify runs (command, cwd, times, exit status, raw-log path, parsed result
 * as JSON), per-shape samples with their environment, environment lines, and
 * an append-only event log.  The schema is versioned (PRAGMA user_version)
 * and migrated forward on open; every change runs in a transaction.
 *
 * One writer per workspace: a writer holds an exclusive flock on
 * optloop.db.lock for as long as the store is open; a second writer waits a
 * moment (a status or a commit is over quickly) and then gets ERR_BUSY
 * naming the holder.  Read-only opens take no lock.
 *
 * The store owns all SQL: every table comes from the numbered migrations
 * in store.c, and every statement is in store.c (the loop's tables),
 * store_guards.c (guards_*) or store_stats.c (stats_*), behind the typed
 * calls below.  No other module includes sqlite3.h.
 */
#ifndef OPTLOOP_STORE_H
#define OPTLOOP_STORE_H

#include "core/model.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;
struct store;
struct sqlite3;

#define STORE_SCHEMA_VERSION 17

/* What to do about a workspace that cannot be written (ERR_READONLY). */
#define STORE_READONLY_HINT                                                                     \
	"make it writable (chmod -R u+w on the workspace, or ask its owner; on a read-only " \
	"mount, work on a copy), or use a command that only reads (status, view, "                   \
	"report)"

enum store_flags {
	STORE_READONLY = 1 << 0,
	STORE_CREATE = 1 << 1, /* create the database when missing */
	STORE_NOWAIT = 1 << 2, /* refuse when another writer holds the lock, after
				* 0.2 s (past a reader's instant check of it; by
				* default a writer waits up to 2 s);
				* ERR_BUSY then, ERR_READONLY when the workspace
				* cannot be written at all */
};

/* Open (and migrate) the database at path.  Caller closes with store_close. */
int store_open(const char *path, int flags, struct store **out, struct err *e);
void store_close(struct store *s);
bool store_readonly(const struct store *s);
/* Does another process hold the writer lock right now?  (A read-only
 * reader asks before it calls a half-done move "cut off": the writer may be
 * in the middle of it.)  Takes and drops the lock when it is free. */
bool store_writer_busy(struct store *s);
/* The database handle, for tests that inspect the schema. */
struct sqlite3 *store_db(struct store *s);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK. */
int store_begin(struct store *s, struct err *e);
int store_commit(struct store *s, struct err *e);
void store_rollback(struct store *s);
/* Run SQL with no result rows. */
int store_exec(struct store *s, const char *sql, struct err *e);

/* Key/value settings of the workspace (op, kernel paths, init HEAD, ...).
 * get: *val is caller-owned, NULL when the key is absent. */
int store_meta_get(struct store *s, const char *key, char **val, struct err *e);
int store_meta_set(struct store *s, const char *key, const char *val, struct err *e);
/* The workspace record, made once by init. */
int store_workspace_add(struct store *s, const char *op, struct err *e);

/* Append-only event log. iter < 0 when not tied to an iteration. */
int store_event(struct store *s, int iter, const char *kind, const char *detail, struct err *e);
/* Each event of a kind, oldest first: fn gets its detail (NULL when none). */
int store_events_of(struct store *s, const char *kind, void (*fn)(void *ctx, const char *detail),
		    void *ctx, struct err *e);

/* One verify run.  Strings owned by the struct (store_run_release). */
struct store_run {
	int id;
	int iter;
	enum run_kind kind;
	char *command, *cwd, *log_path;
	double t_start, t_end;  /* t_end 0 while running */
	int exit_status, signal;
	bool timed_out, cancelled, no_change;
	enum gate_verdict gate;
	enum gate_scope scope;
	double bench_ms, vs_best; /* NAN when none */
	char *result_json;
	char *tree;     /* kernel hash at the end */
	char *snapshot; /* git tree holding what was measured */
	char *head;     /* HEAD when it ran */
	char *branch;   /* what HEAD named then: "refs/heads/NAME", or "HEAD"
			 * when detached; NULL when not recorded */
	int env_id;     /* 0 when none */
	int pid;        /* of the optloop that ran it */
};
void store_run_release(struct store_run *r);

/* Insert a run (r->id is set); t_end 0 marks it running. */
int store_run_insert(struct store *s, struct store_run *r, struct err *e);
/* Update every field of an existing run by r->id. */
int store_run_update(struct store *s, const struct store_run *r, struct err *e);
int store_run_get(struct store *s, int id, struct store_run *r, struct err *e);
/* The oldest run of any kind that never ended (t_end 0: its optloop was
 * killed); ERR_NOTFOUND when none. */
int store_run_unfinished(struct store *s, struct store_run *r, struct err *e);
/* The latest run of kind for iteration iter; ERR_NOTFOUND when none. */
int store_run_last(struct store *s, int iter, enum run_kind kind, struct store_run *r,
		   struct err *e);

/* Environment line: id of an existing identical line or a new one. */
int store_env_id(struct store *s, const struct parse_env *env, int *id, struct err *e);
/* Per-shape samples of a run. */
int store_samples_add(struct store *s, int run_id, int env_id, const struct parse_row *rows,
		      size_t n, struct err *e);

/* A finished run's record, inside the caller's transaction: the
 * environment line (r->env_id is set), every field of the run, and its
 * per-shape samples. */
int store_run_record(struct store *s, struct store_run *r, const struct parse_env *env,
		     const struct parse_row *rows, size_t n, struct err *e);

/* Iterations: one per log row.  run_id and tree tie the row to the
 * measurement it reports. */
int store_iter_add(struct store *s, const struct log_row *r, int run_id, const char *tree,
		   struct err *e);
int store_iter_set_commit(struct store *s, int iter, const char *sha, struct err *e);
/* All rows, oldest first (commit filled when committed), as one immutable
 * snapshot shared by every reader: while nothing is written, each call
 * hands out the same array instead of a copy.  A write (through this store,
 * another connection or plain SQL) makes the next call read a new snapshot;
 * one already handed out stays as it was until its last holder puts it.
 * The caller owns one reference: log_rows_put(*out) (NULL on error). */
int store_rows_get(struct store *s, struct log_rows **out, struct err *e);
/* Drop one reference (NULL is fine); the last one frees the rows. */
/* A copy of all rows for a caller that changes them.  Caller frees:
 * log_row_release each, then free(). */
int store_iters(struct store *s, struct log_row **rows, size_t *n, struct err *e);
/* The newest rows before iteration `before` (INT_MAX: the newest of all),
 * at most limit of them, in the log's order; best_only: only the rows that
 * may be the best (a baseline or a keep, through their index).  The caller
 * owns one reference: log_rows_put(*out) (NULL on error). */
int store_rows_before(struct store *s, int before, size_t limit, bool best_only,
		      struct log_rows **out, struct err *e);
/* What the chart reads of every row (store_rows_chart): the rows that are
 * neither a baseline nor a keep need no more. */
struct store_chart_row {
	int iter;
	double bench_ms; /* NAN when none */
	enum gate_verdict gate_v;
};
/* Every row's iteration, bench and gate verdict, in the log's order, through
 * an index that holds only those (schema 17); caller frees *out. */
int store_rows_chart(struct store *s, struct store_chart_row **out, size_t *n, struct err *e);
/* The newest rows, at most limit of them, in the log's order, and how
 * many rows are older than them (*older), read as of one moment; owned as
 * store_rows_before's.  What a first frame of a long log needs. */
int store_rows_newest(struct store *s, size_t limit, struct log_rows **out, size_t *older,
		      struct err *e);
/* The oldest rows, at most limit of them, in the log's order; owned as
 * store_rows_before's. */
int store_rows_first(struct store *s, size_t limit, struct log_rows **out, struct err *e);
/* The best (log_rows_best over all rows) without reading every row:
 * *best points into *page, which the caller puts (log_rows_put) in any
 * case; *best NULL when no row can be the best. */
int store_rows_best(struct store *s, struct log_rows **page, const struct log_row **best,
		    struct err *e);
/* How many rows there are (*n), and a key that moves on with every row
 * added or taken away and every change of a row's iteration or commit
 * (*key; -1 when the database holds none); both kept by triggers. */
int store_rows_count(struct store *s, long long *n, long long *key, struct err *e);
/* Number of logged rows (= the next iteration number). */
int store_iter_count(struct store *s, int *n, struct err *e);
int store_iter_run(struct store *s, int iter, int *run_id, char **tree, struct err *e);
/* The rows' generation: a count that every change to what OPT_LOG.md
 * shows of the rows moves on (kept by triggers, so a change made through
 * another connection or plain SQL moves it too).  -1 when the database
 * holds none (a count removed by hand): nothing can be known from it. */
int store_rows_gen(struct store *s, long long *gen, struct err *e);
/* What the latest row whose run printed an environment line says of it
 * (one indexed look-up): out[0] the line, out[1..3] the Slurm node, GPUs
 * and job it ran on; each caller-owned, NULL when absent (all NULL when no
 * row's run printed one). */
int store_env_line(struct store *s, char *out[4], struct err *e);

/* Set-aside changes (telescoping). */
int store_aside_add(struct store *s, int iter, const char *sha, const char *ref, struct err *e);
/* The pending set-aside of any iteration; ERR_NOTFOUND when none.  Caller frees strings. */
int store_aside_pending(struct store *s, int *iter, char **sha, char **ref, struct err *e);
int store_aside_done(struct store *s, const char *sha, struct err *e);

/* The whole database as one JSON document, {"schema": N, "tables": {name:
 * [rows]}} and then the members of extra (borrowed; NULL for none), written
 * through write(buf, len, data) as the rows are read: the memory it takes
 * is that of one row, whatever the history's length.  flags are jansson's
 * dump flags; the text is what json_dump_callback of the whole tree would
 * write with them.  Every table is read in one read transaction.  Returns 0,
 * or negative with e set (a table that cannot be read, write returning
 * non-zero: ERR_IO); what was written before a failure stays written. */
int store_export_json(struct store *s, json_t *extra, size_t flags, json_dump_callback_t write,
		      void *data, struct err *e);

/* ---- the guards' tables (core/store_guards.c) ----------------------------
 * Reads answer "nothing there" when a table cannot be read; writes return
 * ERR_IO with the database's message. */

struct dispatch_row;
struct lint_finding;
struct lint_findings;

/* The hash recorded for a frozen path at the baseline (caller frees), or
 * NULL when the path was never seen. */
char *store_frozen_hash(struct store *s, const char *path);
int store_frozen_put(struct store *s, const char *path, const char *hash, struct err *e);

/* The iteration the last re-assessment followed, -1 when there is none. */
int store_reassess_last(struct store *s);
int store_reassess_add(struct store *s, int after_iter, const char *profile, const char *axes,
		       const char *techniques, const char *next, struct err *e);
/* The newest re-assessment: its id (0 when there is none), the iteration it
 * followed and its next direction (*next caller-freed, may be NULL). */
int store_reassess_newest(struct store *s, int *after_iter, char **next);

struct store_stop {
	int iter;
	char *reason, *bound; /* bound NULL when none was named */
};
/* The last stop recorded: true and *out filled (store_stop_release). */
bool store_stop_last(struct store *s, struct store_stop *out);
void store_stop_release(struct store_stop *r);
int store_stop_add(struct store *s, int iter, const char *reason, const char *bound,
		   struct err *e);

/* Every re-assessment and stop, in order (the iteration each followed,
 * then when it was made), for OPT_LOG.md: *v (caller frees each with
 * optlog_event_release, then the array) and *n; none when there are none
 * or they cannot be read. */
void store_optlog_events(struct store *s, struct optlog_event **v, size_t *n);

/* The iteration's trap checklist: state is enum trap_state; source "user"
 * (NULL) or "lint:<rule>". */
int store_trap_state_put(struct store *s, int iter, const char *trap, int state,
			 const char *source, struct err *e);
void store_trap_states(struct store *s, int iter,
		       void (*fn)(void *ctx, const char *trap, int state), void *ctx);

/* The iteration's lint findings, replaced as a whole at each lint run
 * (clear, then add each); read back in order (lint_findings_release). */
int store_findings_clear(struct store *s, int iter, struct err *e);
int store_finding_add(struct store *s, int iter, const struct lint_finding *f, struct err *e);
void store_findings(struct store *s, int iter, struct lint_findings *out);
bool store_findings_acked(struct store *s, int iter);
int store_findings_ack(struct store *s, int iter, int n, struct err *e);

/* Tree intents: optloop is about to move the kernel paths of the work tree
 * from the tree from (a commit or tree id: what is there now) to to.  kind
 * says why (enum tree_intent, model.h).  Recorded before the first file is
 * written and ended once the move and what follows it are done. */
struct store_intent {
	int id;
	enum tree_intent kind;
	int iter;
	char *from, *to;
	int pid;
	double t;
};
void store_intent_release(struct store_intent *i);
int store_intent_begin(struct store *s, enum tree_intent kind, int iter, const char *from,
		       const char *to, int *id, struct err *e);
int store_intent_end(struct store *s, int id, struct err *e);
/* The oldest intent not ended; ERR_NOTFOUND when none. */
int store_intent_pending(struct store *s, struct store_intent *out, struct err *e);

/* Whether the restore after iteration iter (a revert or drop) was done, and
 * recording it (sha: the restore commit, NULL when none was needed). */
bool store_restore_done(struct store *s, int iter);
int store_restore_put(struct store *s, int iter, int best_iter, const char *sha, struct err *e);

/* dispatch.md's rows as kept in the database, in order (caller releases
 * each with dispatch_row_release, then frees *out). */
void store_dispatch_rows(struct store *s, struct dispatch_row **out, size_t *n);
int store_dispatch_add(struct store *s, const struct dispatch_row *r, struct err *e);

/* When iteration iter was logged (unix seconds; 0 when it was not). */
double store_iter_logged_at(struct store *s, int iter);

/* ---- the statistics' tables (core/store_stats.c) --------------------------
 * A stats_* table that cannot be read reads as empty. */

/* A GPU probe reading of a run ("before"/"after"), kept as its JSON. */
int store_probe_put(struct store *s, int run_id, const char *phase, double t, bool available,
		    bool busy, const char *json, struct err *e);
/* The last reading's JSON (caller frees); ERR_NOTFOUND when none. */
int store_probe_json(struct store *s, int run_id, const char *phase, char **json, struct err *e);

/* The session a run belongs to (noise and confirm runs share one) and its
 * role in it ("best", "cand", "noise"); a run without one is its own. */
int store_session_put(struct store *s, int run_id, int session, const char *role, struct err *e);
int store_run_session(struct store *s, int run_id);

/* The parts of a run's environment line; ERR_NOTFOUND when it has none. */
struct store_env {
	char *device, *backend, *pytorch, *triton;
};
int store_run_env(struct store *s, int run_id, struct store_env *out, struct err *e);
void store_env_release(struct store_env *v);
/* A finished run's environment key as measure_env_key made it, kept with
 * the run once made: 1 and *key (NULL: the run has none) when kept, 0 when
 * not yet.  The put is best effort (a read-only store keeps nothing). */
int store_run_env_key(struct store *s, int run_id, char **key);
void store_run_env_key_put(struct store *s, int run_id, const char *key);

/* The usable runs of a kernel tree (finished on their own, gate passed,
 * none or skipped), oldest first, with their session and role. */
struct store_tree_run {
	int id, session;
	char *role; /* NULL when none */
	bool base;  /* a paired run: the tree's times are its base column */
};
int store_tree_runs(struct store *s, const char *tree, struct store_tree_run **out, size_t *n,
		    struct err *e);
void store_tree_runs_release(struct store_tree_run *v, size_t n);
/* The same, of one measuring session only (ERR_NOTFOUND: a database with
 * no sessions, where store_tree_runs' own rule applies). */
int store_session_tree_runs(struct store *s, const char *tree, int session,
			    struct store_tree_run **out, size_t *n, struct err *e);
/* What the runs cost, per iteration and kind: finished runs (attempts
 * included: they held the GPU too), how many of them measured two kernel
 * versions (a result with a base column: the harness's own paired run),
 * and their wall seconds; kept as runs are recorded (table run_costs), so
 * reading one iteration or the totals reads no run.  iter: that
 * iteration's rows, STORE_COST_ALL every iteration's in order, or
 * STORE_COST_TOTAL the whole history's by kind (called with iteration -1). */
/* How many iterations have a row in store_run_costs' STORE_COST_ALL. */
int store_cost_iters(struct store *s, size_t *n, struct err *e);
#define STORE_COST_TOTAL (-1)
#define STORE_COST_ALL (-2)
int store_run_costs(struct store *s, int iter,
		    void (*fn)(void *ctx, int iter, enum run_kind kind, int runs, int paired,
			       double seconds),
		    void *ctx, struct err *e);
/* The id of the last run of a measuring session (0: none, or unknown). */
int store_session_last_run(struct store *s, int session);
/* The usable runs that measured two versions in one process (role "pair":
 * a paired confirm's runs and `noise --paired`'s A/A runs), oldest first,
 * with their sessions; up to run upto (0: all).  Caller frees both. */
int store_pair_runs(struct store *s, int upto, int **ids, int **sessions, size_t *n,
		    struct err *e);
/* Whether a measuring session's runs were such pairs. */
bool store_session_paired(struct store *s, int session);
/* Kept terms of the pooled noise band (schema 14): one spread tree's
 * (nᵢ−1)sᵢ², nᵢ−1 and nᵢ per shape, between sessions, in an environment. */
struct store_noise_term {
	char *shape;
	double ss;
	int dof, runs;
};
/* The terms kept for tree in env, shapes in order: *kept says whether any
 * were made (a tree may have none); caller frees with
 * store_noise_terms_release.  Nothing kept for a NULL tree or env. */
int store_noise_terms_get(struct store *s, const char *tree, const char *env,
			  struct store_noise_term **out, size_t *n, bool *kept, struct err *e);
void store_noise_terms_release(struct store_noise_term *t, size_t n);
/* A count that moves on with every change the kept terms depend on (-1,
 * and a negative return, when there is none). */
int store_noise_gen(struct store *s, long long *gen);
/* Keep the terms made for tree in env from what the database held when
 * store_noise_gen gave gen: kept only while it still gives gen (a change
 * came in meanwhile: the next reader makes them again).  -1 when not kept
 * (read-only, or changed); never an error of the caller's. */
int store_noise_terms_put(struct store *s, const char *tree, const char *env, long long gen,
			  const struct store_noise_term *t, size_t n);
/* Kept confirm comparisons (schema 17): one per session, as it stood with
 * the session's runs up to run upto, and what else it was made with: the
 * best's and the candidate's trees, its threshold, Target text and
 * "against" (NULL and "" differ), and the build of optloop that made it
 * (build_id).  Triggers forget one when anything it
 * was made from changes. */
struct store_compare_key {
	int session, upto;
	const char *best_tree, *cand_tree;
	double threshold;
	const char *target, *against, *build;
};
/* A count that moves on with every change a kept comparison depends on
 * (-1, and a negative return, when there is none). */
int store_compare_gen(struct store *s, long long *gen);
/* The JSON kept for k (*json NULL when none; caller frees); -1 when nothing
 * can be kept (no build id, or no such table). */
int store_compare_get(struct store *s, const struct store_compare_key *k, char **json);
/* Keep json for k, made from what the database held when store_compare_gen
 * gave gen: kept only while it still gives gen.  -1 when not kept
 * (read-only, or changed meanwhile); never an error of the caller's. */
int store_compare_put(struct store *s, const struct store_compare_key *k, long long gen,
		      const char *json);
/* The kernel trees whose usable runs can show a spread (the only ones a
 * pooled noise estimate can take anything from): measured at least twice
 * (a paired confirm's base column counts for its best), or once with a
 * shape timed more than once.  Oldest first. */
int store_spread_trees(struct store *s, char ***trees, size_t *n, struct err *e);
/* Each sample of a run, in order, with its time (the new column, else the
 * base one); r's strings live only during the call. */
int store_run_samples(struct store *s, int run_id,
		      void (*fn)(void *ctx, const struct parse_row *r, double ms), void *ctx,
		      struct err *e);
/* The same for one side of a paired run: base_side reads the base (old)
 * column, which may be NAN where the harness printed none. */
int store_run_side_samples(struct store *s, int run_id, bool base_side,
			   void (*fn)(void *ctx, const struct parse_row *r, double ms), void *ctx,
			   struct err *e);
/* Each distinct shape (mode, B, T, H, D, L, op) that a logged row's run
 * measured, once, in no particular order; r's strings live only during the
 * call (its times are NAN).  Read from the table the triggers keep
 * (row_shapes), a row a shape. */
int store_row_shapes(struct store *s, void (*fn)(void *ctx, const struct parse_row *r),
		     void *ctx, struct err *e);
/* A run's iteration, kernel tree (caller frees) and gate scope. */
int store_run_info(struct store *s, int run_id, int *iter, char **tree, int *scope,
		   struct err *e);
/* The finished runs of a tree with their kinds (caller frees all). */
int store_runs_of_tree(struct store *s, const char *tree, int **ids, enum run_kind **kinds,
		       size_t *n);
/* The ids of the finished runs after id after, oldest first (caller frees). */
int store_runs_ended_after(struct store *s, int after, int **ids, size_t *n);
/* The id of the newest finished run, 0 when none. */
int store_last_ended_run(struct store *s);

/* A run's verdict against the best: its name, flags (stats SF_*) and the
 * comparison as JSON.  get: caller frees; ERR_NOTFOUND when none. */
int store_verdict_put(struct store *s, int run_id, int iter, const char *verdict,
		      unsigned flags, const char *json, struct err *e);
int store_verdict_get(struct store *s, int run_id, char **verdict, unsigned *flags, char **json,
		      struct err *e);
/* The latest verify run with a verdict; ERR_NOTFOUND when none. */
int store_last_judged_run(struct store *s, int *run_id, struct err *e);
/* The logged iterations the stall does not count, sorted: their verdict was
 * not comparable, or their run changed nothing in the kernel (no_change). */
int store_uncounted_iters(struct store *s, int **out, size_t *n, struct err *e);

/* A confirm session's record. */
struct store_confirm {
	int id;
	int iter, session, best_iter;
	char *best_tree, *cand_tree;
	char *cand_snapshot; /* git tree holding the candidate, to restore it */
	char *verdict;
	unsigned flags;
	bool promoted;
	bool done;      /* false while it runs (or when it was cut off) */
	char *json;     /* the comparison */
	double t;
};
void store_confirm_release(struct store_confirm *c);
/* How many confirms of the same two kernels (best and candidate trees)
 * measured anything before the confirm of session. */
int store_confirms_before(struct store *s, const char *best_tree, const char *cand_tree,
			  int session);
/* How many confirms of iteration iter measured anything. */
int store_confirm_count(struct store *s, int iter);
/* Has a paired confirm of this measuring command (the runs' command began
 * with it, then " --base ..." or the {best} form) reached a verdict?  Then
 * the harness is known to time the best's commit beside the tree. */
bool store_paired_proven(struct store *s, const char *command);
/* Start a record (done = 0); c->id is set. */
int store_confirm_begin(struct store *s, struct store_confirm *c, struct err *e);
/* The session id once the first run exists. */
int store_confirm_session(struct store *s, int id, int session, struct err *e);
/* Close it: the verdict (NULL when none), flags, whether it promotes, the
 * comparison's JSON. */
int store_confirm_end(struct store *s, int id, const char *verdict, unsigned flags,
		      bool promoted, const char *json, struct err *e);
/* A held-back confirm promotes once its flags are explained. */
int store_confirm_promote(struct store *s, int id, struct err *e);
/* The last confirm of iteration iter as a candidate: begun before its row
 * was logged (a confirm --baseline of the best, later, is not its
 * verdict); ERR_NOTFOUND when none. */
int store_confirm_as_candidate(struct store *s, int iter, struct store_confirm *c, struct err *e);
/* The iteration's last record, or the one left unfinished; ERR_NOTFOUND. */
int store_confirm_last(struct store *s, int iter, struct store_confirm *c, struct err *e);
int store_confirm_unfinished(struct store *s, struct store_confirm *c, struct err *e);
/* Whether a finished confirm of iter promoted it. */
bool store_confirm_promoted(struct store *s, int iter);

/* Notes kept per iteration: explanations of implausible flags, attached
 * profiler or roofline readings (their paths). */
enum store_note { STORE_NOTE_EXPLAINED, STORE_NOTE_ARTIFACT };
int store_note_add(struct store *s, enum store_note kind, int iter, const char *text,
		   struct err *e);
/* Appends each, one per line, to out (may be NULL); returns how many. */
int store_notes(struct store *s, enum store_note kind, int iter, struct sb *out);
/* The newest note of kind in the workspace: its id (0 when there is none),
 * its iteration and, when text is not NULL, its text (allocated, caller
 * frees; NULL when none). */
int store_note_newest(struct store *s, enum store_note kind, int *id, int *iter, char **text);

/* ---- Slurm (core/store_slurm.c) ---- */

/* One allocation the workspace asked Slurm for.  state: "requested" (salloc
 * started, no job id yet), "pending", "running", "released". */
struct store_alloc {
	int id;
	char *job;    /* NULL until salloc names it */
	char *runner; /* the Runner value it was requested with (canonical) */
	char *state, *reason, *node;
	double requested, granted, last_used, released; /* unix s; 0: not yet */
	char *why;    /* why it was released */
	int pid;      /* the optloop that requested it */
};
void store_alloc_release(struct store_alloc *a);
/* The newest allocation not yet released; ERR_NOTFOUND when none. */
int store_alloc_current(struct store *s, struct store_alloc *a, struct err *e);
/* The newest allocation, released or not; ERR_NOTFOUND when none. */
int store_alloc_last(struct store *s, struct store_alloc *a, struct err *e);
/* Insert (a->id is set) or update every field by a->id. */
int store_alloc_insert(struct store *s, struct store_alloc *a, struct err *e);
int store_alloc_update(struct store *s, const struct store_alloc *a, struct err *e);

/* Where a run's step ran and how it ended (cause: slurm_cause_name). */
struct store_step {
	int run_id;
	char *job, *step, *node, *gpus, *cause, *why;
};
void store_step_release(struct store_step *st);
int store_step_put(struct store *s, const struct store_step *st, struct err *e);
/* ERR_NOTFOUND when the run did not go through Slurm. */
int store_step_get(struct store *s, int run_id, struct store_step *st, struct err *e);

#endif
