/*
 * loop_impl — the open loop as its own files see it: struct loop and the
 * helpers its phases share (loop.c: open, close, the state and the due
 * step, the writer; loop_reconcile.c, loop_init.c, loop_verify.c,
 * loop_record.c, loop_repair.c).  Nothing outside core/loop*.c includes
 * this; the front-ends have core/loop.h.
 */
#ifndef OPTLOOP_LOOP_IMPL_H
#define OPTLOOP_LOOP_IMPL_H

#include "core/loop.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/rules.h"
#include "core/sb.h"
#include "core/vcs.h"
#include "core/workspace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The ref of this work tree's kind of keeping ("swap", "aside") for the op:
 * refs/optloop/<kind>/<op> in the main work tree, refs/optloop/wt/<name>/
 * <kind>/<op> in a linked one (refs are shared by all work trees: two loops
 * on one op in two work trees must not drop each other's). */
char *loop_ref(const struct loop *l, const char *kind);

/* The contract is shared by reference: the loop holds the one it read last
 * and lends it out (loop_contract_get); a re-read makes a new one, so what a
 * borrower holds stays whole. */
struct shared_contract {
	struct contract c; /* first: a borrower's pointer is this one */
	int refs;
	bool missing;      /* docs/draft.md was not there */
	char *text;        /* what was read, to skip parsing it again */
	size_t len;
	int rc;            /* contract_parse's */
	struct err err;
};

struct loop {
	/* paths, store, repository, scopes, pattern set, allocation */
	struct workspace ws;
	struct shared_contract *contract; /* never NULL once open */
	char *missing; /* NULL when the contract is complete */
	bool any_contract; /* LOOP_ANY_CONTRACT: a contract that does not parse is
			    * only incomplete */
	/* OPT_LOG.md holds rows the database does not (it was replaced, emptied
	 * or cut short): how many, 0 when none.  Nothing is written until
	 * repair --rebuild takes them back (loop_writable). */
	int lost_rows;
	/* the database and OPT_LOG.md hold no row, but the history holds the
	 * op's commits from iteration 0 on (an earlier workspace, deleted):
	 * how many, 0 when none.  repair --rebuild takes them back from the
	 * trailers; a verify of the unmodified kernel starts over instead. */
	int earlier_rows;
	/* rows whose commits the branch no longer holds and no commit on it
	 * carries (a reset or rebase moved it back; a rewrite pruned them): what
	 * happened and the way out, in words; nothing is written until then
	 * (loop_writable).  NULL when the history holds every row. */
	char *history_off;
	bool optlog_edited;   /* OPT_LOG.md was edited by hand since optloop wrote it */
	char *optlog_note;    /* what the last write of OPT_LOG.md kept of a hand edit, or NULL */
	struct sb problems;
	char *init_head;

	/* the last verify run: going while verifying */
	struct run *vrun;
	bool verifying;
	char *vcmd; /* the command of the last verify started */
	bool vpaired; /* it named {best}: one process times the best beside the tree */
	/* the kernel as the run started: its hash, a snapshot of it, and
	 * whether it equalled HEAD; what the run measured, unless the kernel
	 * changed while it ran (then the run is an attempt) */
	char vtree[VCS_OID_HEX], vsnap[VCS_OID_HEX];
	bool vno_change;
	char vhead[VCS_OID_HEX]; /* HEAD as the run started ("" unborn) */
	unsigned long long vdb_dev, vdb_ino; /* optloop.db as the run started */

	/* whether a run of this process used the Slurm allocation */
	bool alloc_used;

	/* the measuring job going (loop_job.c), NULL when none */
	struct loop_job *job;
};

struct where {
	enum loop_state state;
	int iter;
	bool telescoped;
	int run_id;
	int nrows;
	bool kernel_changed; /* work tree differs from HEAD */
	int attempt_run;     /* the iteration's last run was an attempt (run_is_attempt) */
	int stall;           /* the stall count when guards_state computed it, else -1 */
	char session[16];    /* "confirm" or "noise" while one is going (another
			      * process's: the best may be in the tree on purpose) */
};

/* The due step and the status the evidence supports, beside its words. */
struct due {
	enum loop_due due;
	enum row_status suggest;
	char *why; /* the evidence behind suggest, in words (owned), or NULL */
};

/* Why kernel path p (relative to repo) cannot be a kernel path, in words,
 * or NULL: it is the whole work tree, or lies in git's own directory gitdir
 * (which no commit holds).  Static text; read from the text and from the
 * real path.  loop_init refuses such a path; loop_open reports it. */
const char *loop_kernel_path_unusable(const char *repo, const char *gitdir, const char *p);

/* ---- shared by the phases (loop.c unless said) ---------------------------- */

struct log_rows;
struct log_row;
struct store;

/* Seconds since the epoch, to the microsecond. */
double loop_now(void);
/* The kernel paths as the vcs calls take them (borrowed from l). */
const char *const *loop_kpaths(const struct loop *l);
/* Split newline-separated text into a list (empty lines dropped); free with
 * loop_free_list. */
void loop_split_lines(const char *text, char ***out, size_t *n);
void loop_free_list(char **v, size_t n);
/* Read docs/draft.md again; parsed again only when its text changed.  What
 * is missing is worked out every time. */
int loop_load_contract(struct loop *l, struct err *e);
/* The rows, shared with the store (read-only): put back with
 * log_rows_put(*sr).  On error *sr is NULL and there are no rows. */
int loop_rows_get(struct store *s, struct log_rows **sr, const struct log_row **rows, size_t *n,
		  struct err *e);
/* ---- OPT_LOG.md (core/loop_optlog.c) ---- */
/* OPT_LOG.md as the database has it (rows, read after the generation gen
 * was: store_rows_gen), into out; unless have is given and already says
 * exactly that: then true, and out is left alone.  key, when not NULL,
 * gets the key of that text for loop_optlog_record (caller frees; NULL
 * when gen is unknown). */
bool loop_render_optlog(struct loop *l, const struct log_row *rows, size_t n, long long gen,
			const struct sb *have, struct sb *out, char **key);
/* The key of a text rendered for op with those Env and Target lines and
 * the re-assessments and stops rendered as events (NULL or "": none) at
 * the rows' generation gen (caller frees); NULL when gen < 0. */
char *loop_optlog_key(const char *op, const char *env, const char *target, const char *events,
		      long long gen);
/* Record that OPT_LOG.md now holds text, rendered from key (nothing is
 * recorded by a read-only store; a NULL key clears the record). */
void loop_optlog_record(struct store *s, const char *text, size_t len, const char *key);
/* Whether have is exactly what optloop last wrote and the database has not
 * changed what it renders since: then it is current, known without the
 * rows.  False when anything is not known. */
bool loop_optlog_current(struct loop *l, const struct sb *have);
/* loop_optlog.c: the file is the one last found current (its stat is the
 * one recorded then, and the database renders the same key): current,
 * without reading it.  loop_optlog_record_stat records it (a writer only)
 * after a read of len bytes found the file current, when its stat now is
 * still before, the one taken before that read. */
struct stat;
bool loop_optlog_unchanged(struct loop *l);
void loop_optlog_record_stat(struct loop *l, const struct stat *before, size_t len);
/* Write OPT_LOG.md from the database (crash-safe), and record it.  A file
 * a person edited is merged (optlog_merge: their columns, text and
 * Directions kept); one that cannot be merged is first copied to
 * OPT_LOG.md.orig-<UTC time>.  Either is said in l->optlog_note. */
int loop_write_optlog(struct loop *l, struct err *e);
/* Whether have is the text optloop last recorded writing. */
bool loop_optlog_ours(struct loop *l, const struct sb *have);
/* What the file have differs in from what the database renders, and
 * what a write would keep of it, as one problem line. */
void loop_optlog_edited(struct loop *l, const struct log_row *rows, size_t n,
			const struct sb *have);
/* The same after the row iter was appended: from the file as recorded and
 * that row, when nothing else it shows changed since the record (the text
 * is what loop_write_optlog writes, byte for byte): then 1; else in full,
 * and 0. */
int loop_write_optlog_appended(struct loop *l, int iter, struct err *e);
/* Where the loop stands now: the state, the iteration, the run being
 * logged, whether the kernel changed. */
int loop_where(struct loop *l, struct where *w, struct err *e);
/* 0, or ERR_REFUSED when w's state does not allow step: the protocol
 * table's answer (rules_step_check), with the facts its words need. */
int loop_step_check(struct loop *l, enum rules_step step, const struct where *w, struct err *e);
/* Why run_id was an attempt and where its raw output is, in words (caller
 * frees). */
char *loop_attempt_words(struct loop *l, int run_id);

/* loop_reconcile.c: a finding for the status's problems (one line). */
void loop_problem(struct loop *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* loop_reconcile.c: what a writer does first (see the file). */
int loop_reconcile_writer(struct loop *l, struct err *e);
/* loop_reconcile.c: OPT_LOG.md against the database (rows it lost, a file
 * that says less). */
int loop_reconcile_optlog(struct loop *l, struct err *e);
/* loop_reconcile.c: the database against the iteration commits. */
int loop_reconcile_git(struct loop *l, struct err *e);
/* Before optloop commits a row: whether git's check of the rows stands
 * (it was made for the rows and HEAD as they are). */
bool loop_reconcile_git_clean(struct loop *l);
/* After that commit, and the restore after it, where the check stood
 * before: it stands for the new HEAD and rows (every earlier row's commit
 * is still in the history, the new one is HEAD's or its parent's and
 * carries its iteration), and is recorded so, without a walk. */
void loop_reconcile_git_carry(struct loop *l);
/* loop_reconcile.c: bring back the edit set aside during iter onto the
 * kernel as it is now (only the edit); with intent, recorded first so a
 * bring-back cut off is finished by the next writer.  ERR_REFUSED, with
 * how to apply it by hand, when the edit overlaps what changed since. */
int loop_bring_back(struct loop *l, int iter, const char *sha, const char *ref, bool intent,
		    struct err *e);

/* loop_repair.c: the row commit c's Optloop-* trailers carry (its strings
 * owned by r: log_row_release). */
struct vcs_iter_commit;
void loop_commit_row(const struct vcs_iter_commit *c, struct log_row *r);
/* loop_repair.c: nothing without its recorded run becomes the best.  Why
 * r, the row commit c carries, cannot be taken back (caller frees), or
 * NULL when it can: a row that can be the best needs the iteration's last
 * verify run in the database, a measured pass of the commit's kernel with
 * the trailer's bench number.  *run_id and *tree (caller frees) get that
 * run when the commit holds its kernel, else 0 and NULL. */
char *loop_commit_unbacked(struct loop *l, const struct vcs_iter_commit *c,
			   const struct log_row *r, int *run_id, char **tree);
/* loop_repair.c: sets earlier_rows (and says so among the problems) when
 * the workspace holds no row and the history holds the op's commits. */
void loop_find_earlier_rows(struct loop *l);
/* loop_repair.c: the next step a repair owes, or NULL: the rows OPT_LOG.md
 * holds and the database lost, or the history's rows of an earlier
 * workspace (before a baseline), to take back; a best taken back without a
 * run, to measure (d->due DUE_REBUILD or DUE_NOISE). */
struct where;
struct due;
char *loop_repair_step(struct loop *l, const struct where *w, struct due *d);

/* ---- the loop's resources, lent to its own files ------------------------- */

/* The contract as the workspace last read it (loop_open, loop_status,
 * verify, log and commit read docs/draft.md again, and parse it again only
 * when its text changed).  The caller holds a reference: it stays whole
 * when the loop reads a changed file; let go with loop_contract_put.  An
 * empty contract when docs/draft.md is missing; never NULL. */
struct contract;
const struct contract *loop_contract_get(struct loop *l);
void loop_contract_put(const struct contract *c);

/* The pattern set runs are parsed with (built-in plus the workspace's
 * patterns/), loaded at the first call and owned by the loop. */
struct patset;
int loop_patset(struct loop *l, const struct patset **ps, struct err *e);

/* cmd with every "{best}" replaced by sha, the best's commit (caller
 * frees): a harness that times that commit beside the work tree. */
char *loop_with_best(const char *cmd, const char *sha);

/* The Slurm allocation runs go through when the contract's Runner is slurm
 * (made when first asked for, owned by the loop); NULL for local runs.
 * Marks the allocation used by this process. */
struct alloc;
struct alloc *loop_run_alloc(struct loop *l);

/* Whether the loop was opened (or fell back to) read-only. */
bool loop_readonly(const struct loop *l);
/* Absolute path of the repository's work tree (owned by l). */
const char *loop_repo_dir(const struct loop *l);
/* The GPU probe's two commands as every run takes them (loop_status's
 * probe and probe_apps); static or environment strings. */
void loop_probe_commands(const char **probe, const char **apps);

/* 0, or ERR_REFUSED (verb starts the message) while OPT_LOG.md holds rows
 * the database lost: every command that writes asks first. */
int loop_writable(struct loop *l, const char *verb, struct err *e);

/* Append an event to the store's append-only event log (kind: short word,
 * detail: free text, may be NULL). */
int loop_event(struct loop *l, const char *kind, const char *detail, struct err *e);

/* ---- the measuring jobs' kinds in steps (loop_job.c drives them) -------- */

/* loop_verify.c: a verify run (l->verifying while it goes).  begin
 * refuses or starts the child; pump is 1 while it runs, 0 once it ended;
 * end records the run (pumping to its end) and fills *m (may be NULL). */
int loop_verify_begin(struct loop *l, const struct loop_verify_opts *o, struct err *e);
int loop_verify_fds(const struct loop *l, int fds[2]);
int loop_verify_pump(struct loop *l, int timeout_ms);
void loop_verify_cancel(struct loop *l);
int loop_verify_end(struct loop *l, struct loop_measurement *m, struct err *e);
/* The verify run going's parse result so far; NULL when none goes. */
const struct parse_result *loop_verify_result(const struct loop *l);

/* loop_session.c: a noise or a confirm session in steps.  begin refuses
 * (nothing left running, the candidate back) or starts the first run;
 * pump records each ended run and starts the next (1 while the session
 * goes on, 0 once over); cancel stops the run going; end cancels a session
 * still going, puts the candidate back, fills *r and frees s.  progress
 * fills the kind's part of a job's progress. */
struct loop_noise_run;
int loop_noise_begin(struct loop *l, const struct loop_session_opts *o,
		     struct loop_noise_run **out, struct err *e);
int loop_noise_fds(const struct loop_noise_run *s, int fds[2]);
int loop_noise_pump(struct loop_noise_run *s, int timeout_ms);
void loop_noise_cancel(struct loop_noise_run *s);
void loop_noise_progress(const struct loop_noise_run *s, struct loop_job_progress *p);
int loop_noise_end(struct loop_noise_run *s, struct loop_session *r, struct err *e);

struct loop_confirm_run;
int loop_confirm_begin(struct loop *l, const struct loop_session_opts *o,
		       struct loop_confirm_run **out, struct err *e);
int loop_confirm_fds(const struct loop_confirm_run *s, int fds[2]);
int loop_confirm_pump(struct loop_confirm_run *s, int timeout_ms);
void loop_confirm_cancel(struct loop_confirm_run *s);
void loop_confirm_progress(const struct loop_confirm_run *s, struct loop_job_progress *p);
/* A cancelled confirm returns 0 with r->cancelled set. */
int loop_confirm_end(struct loop_confirm_run *s, struct loop_session *r, struct err *e);

void loop_session_release(struct loop_session *r);

/* loop_job.c: loop_close's part: a job left going is ended as
 * loop_job_end ends it, its findings dropped. */
void loop_job_close(struct loop *l);

/* loop_roofline.c: a run's roofline from its samples, the contract's Peak:
 * and Cost: (c may be NULL) and the probe; never fails for a missing or
 * malformed peaks or cost entry (out->skipped says why), only for the
 * store.  out caller-owned (roofline_release). */
struct roofline;
int loop_roofline_of_run(const struct contract *c, struct store *st, int run_id,
			 struct roofline *out, struct err *e);
/* Inside the run's transaction, after its verdict: add the roofline to the
 * verdict's detail ("roofline") and SF_IMPOSSIBLE to its flags when a
 * shape's time is impossible.  A run with no verdict (a confirm's) gets one
 * named "none" to carry its roofline, where some shape has a cost model. */
int loop_roofline_record(const struct contract *c, struct store *st, int run_id,
			 struct err *e);
/* stop --reason floor without --bound: the bound computed from the best's
 * run (memory- or compute-bound at N % of the peak, launch-bound at N µs per
 * call; rules_at_floor), into *bound (caller frees); ERR_REFUSED with the
 * roofline when no shape is at a limit or there is no best. */
int loop_roofline_floor(const struct contract *c, struct store *st, char **bound,
			struct err *e);

#endif
