/*
 * guards — the rules that turn a log into a discipline: the frozen scope,
 * diff lints with acknowledgement, the per-iteration trap checklist,
 * revert/drop restoring the best kernel, the stall and its re-assessment,
 * stop conditions, the no-go record, and evidence-backed dispatch rows.
 *
 * The loop engine calls in through a few functions (guards_verify_check,
 * guards_state, guards_log_check, guards_after_commit); the subcommands use
 * the rest.  Everything guards records lives in guards_* tables of the
 * workspace database, created on first use.
 *
 * revert/drop: after the iteration's own commit (which records the change
 * that was tried), guards_after_commit restores the kernel paths to the
 * best row's commit and commits that as a separate "restore" commit (no
 * Optloop-Iter trailer, so history still has one row commit per
 * iteration).  The next iteration then starts from the best kernel.
 */
#ifndef OPTLOOP_GUARDS_H
#define OPTLOOP_GUARDS_H

#include "core/model.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct contract;
struct dispatch_doc;
struct dispatch_row;
struct err;
struct lint_findings;
struct loop;
struct loop_reassess;
struct loop_status;
struct sb;
struct store;
struct traps_doc;
struct problems;
struct vcs;
struct workspace;


/* ---- frozen scope --------------------------------------------------------- */

/* Hash every frozen path (the first time a path is seen is its baseline) and
 * compare with the recorded hash.  ERR_REFUSED naming the changed file and
 * saying that a test change belongs in a separate change; verb ("verify",
 * "commit") starts the message. */
int guards_frozen_check(const struct workspace *ws, const char *verb, struct err *e);
/* The same look without writing (a reader's): how many frozen files differ
 * from their baseline, listed in changed (", "-joined). */
int guards_frozen_changed(const struct workspace *ws, struct sb *changed);

/* ---- state ---------------------------------------------------------------- */

/* The stall count: rows in a row without a win (log_row_is_win) since the
 * baseline or the last re-assessment; not-comparable runs do not count. */
int guards_stall(const struct workspace *ws);

/* Where guards move the engine's state: READY or EDITING become STOPPING
 * after a recorded stop, or STALLED when rules_stalled without a
 * win since the last re-assessment.  Other states are left alone.  *stall
 * (may be NULL) receives the stall count when it was computed, else -1. */
int guards_state(const struct workspace *ws, enum loop_state *st, int *stall, struct err *e);

/* The next step in words for STALLED and STOPPING (caller frees); NULL for
 * other states. */
char *guards_next_step(const struct workspace *ws, enum loop_state st);

/* Before a verify: the frozen scope, then the stall and stop rules.
 * ERR_REFUSED with the reason and what to do. */
int guards_verify_check(const struct workspace *ws, struct err *e);

/* ---- lints and the trap checklist ----------------------------------------- */

/* Lint the diff from HEAD to the work tree over the kernel and frozen paths
 * with the shipped rules and the workspace's lints/; store the findings for
 * iter (replacing earlier ones) and mark their traps hit.  out (may be
 * NULL) receives them (caller releases). */
int guards_lint(const struct workspace *ws, int iter, struct lint_findings *out, struct err *e);

/* The log step: lint iter's diff; when there are findings and ack is false,
 * ERR_REFUSED listing them; with ack, record the acknowledgement. */
int guards_log_check(const struct workspace *ws, int iter, bool ack, struct err *e);

/* Set the checklist state of one trap for one iteration. */
int guards_trap_mark(struct store *s, int iter, const char *trap, enum trap_state st,
		     const char *source, struct err *e);

/* The workspace's TRAPS.md (the shipped seed when it has none), with each
 * entry's state for iter.  Caller releases d (and probs when given). */
int guards_traps(const struct workspace *ws, int iter, struct traps_doc *d,
		 struct problems *probs, struct err *e);

/* Add a trap to TRAPS.md (all of title, fact, why, how required). */
int guards_trap_add(const struct workspace *ws, const char *title, const char *fact,
		    const char *why, const char *how, char **id_out, struct err *e);

/* ---- revert / drop ---------------------------------------------------------- */

/* After a commit: when the last row is revert or drop and the kernel is not
 * the best row's, restore it and commit the restoration on its own.  Safe to
 * call again (after a crash): it does nothing once done.  sha (may be NULL)
 * receives the restore commit, "" when none was needed. */
int guards_after_commit(const struct workspace *ws, char sha[41], struct err *e);
/* Is the restore after the last row (a committed revert or drop) still to
 * be done?  Then the kernel in the tree is not the next iteration's change
 * and nothing may measure it; *iter (may be NULL) is that row's. */
bool guards_restore_pending(const struct workspace *ws, int *iter);

/* ---- stall re-assessment ---------------------------------------------------- */

int guards_reassess(const struct workspace *ws, const struct loop_reassess *r, struct err *e);

/* The re-assessment's profile rule, on its own (guards_reassess applies
 * it): a file under the workspace's trace/ (the path absolute, relative to
 * the cwd or to the workspace), written after the stall began.  0 with its
 * real path in *real (caller frees; real may be NULL); ERR_REFUSED, or
 * ERR_USAGE for an empty path, saying why. */
int guards_profile_check(const struct workspace *ws, const char *profile, char **real,
			 struct err *e);

/* The directions of the log grouped by axis ("(no axis)" last), one line
 * each, appended to out: what the re-assessment's axes prompt starts from. */
int guards_axes_summary(const struct workspace *ws, struct sb *out, struct err *e);

/* ---- stop and no-go ------------------------------------------------------- */

/* reason: "cap", "floor" or "directions"; bound: the named bound with its
 * number (required for floor).  ERR_REFUSED saying what is missing. */
int guards_stop(const struct workspace *ws, const char *reason, const char *bound,
		struct err *e);

/* Does a bound text name a bound and give its number?  ("HBM bandwidth:
 * 4.1 of 4.8 TB/s") */
bool guards_bound_ok(const char *bound);

/* The no-go record: Markdown appended to md, the same as JSON in *json
 * (caller owns; may be NULL).  ERR_FAIL when an item is missing (the
 * record then lists what is missing and how to get it).  The named bound
 * is the last stop's; without one, `computed` (the bound the best's runs
 * show, may be NULL), else missing, with `none_why` (may be NULL) saying
 * why the runs show none. */
int guards_nogo(const struct workspace *ws, const char *computed, const char *none_why,
		struct sb *md, json_t **json, struct err *e);

/* ---- dispatch ------------------------------------------------------------- */

/* Add a bucket row after checking its evidence against the log: every cited
 * iteration must have a row with a bench number from a gate that did not
 * fail, measured in the same environment as the baseline.  Baseline and
 * candidate ms default to the baseline row and the best cited row.  The
 * row goes into the database and dispatch.md is rewritten from it. */
int guards_dispatch_add(const struct workspace *ws, const struct dispatch_row *r, struct err *e);

/* The dispatch rows kept in the database (caller releases d). */
int guards_dispatch_rows(const struct workspace *ws, struct dispatch_doc *d, struct err *e);

#endif
