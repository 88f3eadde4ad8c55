/* loop_record — what a measured iteration becomes: the set-aside of an edit
 * made after the measurement, the row (loop_log, with its checks of the
 * text and the status) and the commit that carries it (loop_commit). */
#include "core/loop_impl.h"
#include "core/alloc.h"
#include "core/fault.h"
#include "core/fsutil.h"
#include "core/guards.h"
#include "core/lint.h"
#include "core/measure.h"
#include "core/optlog.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/rules.h"
#include "core/run.h"
#include "core/runner.h"
#include "core/store.h"
#include "core/vcs.h"
#include "core/vis.h"

#include <jansson.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- set aside (telescoping) ------------------------------------------------------- */

int loop_set_aside(struct loop *l, struct err *e)
{
	struct where w;
	struct store_run r;
	char sha[VCS_OID_HEX];
	int rc;

	if (loop_writable(l, "set-aside", e) < 0)
		return ERR_REFUSED;

	if (l->ws.readonly)
		return err_set(e, ERR_BUSY, "set-aside refused: the workspace is open read-only");
	if ((rc = vcs_operation_check(l->ws.vcs, "set-aside", NULL, e)) < 0)
		return rc;
	if ((rc = loop_where(l, &w, e)) < 0)
		return rc;
	if (!(w.state == ST_MEASURED || w.state == ST_LOGGED) || !w.telescoped)
		return err_set(e, ERR_REFUSED,
			       "nothing to set aside: the kernel is as it was measured");
	rc = w.state == ST_LOGGED && w.run_id ? store_run_get(l->ws.store, w.run_id, &r, e)
					       : store_run_last(l->ws.store, w.iter, RUN_VERIFY, &r, e);
	if (rc < 0)
		return rc;
	if (!r.snapshot) {
		store_run_release(&r);
		return err_set(e, ERR_REFUSED,
			       "set-aside refused: iteration %d's run has no snapshot of the measured "
			       "kernel; undo the extra change by hand",
			       w.iter);
	}
	char *msg = xasprintf("optloop(%s): change set aside during iteration %d\n\nThe kernel "
			      "changed after iteration %d was measured; optloop keeps the change "
			      "here and brings it back after the iteration's commit.\n",
			      l->ws.op, w.iter, w.iter);
	char *base = loop_ref(l, "aside");
	char *ref = xasprintf("%s/%d", base, w.iter);
	free(base);
	/* the change is saved and the move recorded before any file is written:
	 * a set-aside cut off is finished by the next writer (reconcile_intents) */
	int intent = 0;
	rc = vcs_aside_save(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, ref, msg, sha, e);
	if (rc == 0) {
		rc = store_begin(l->ws.store, e);
		if (rc == 0)
			rc = store_aside_add(l->ws.store, w.iter, sha, ref, e);
		if (rc == 0)
			rc = store_intent_begin(l->ws.store, INTENT_ASIDE, w.iter, sha, r.snapshot, &intent, e);
		if (rc == 0)
			rc = store_event(l->ws.store, w.iter, "aside", sha, e);
		if (rc == 0)
			rc = store_commit(l->ws.store, e);
		else
			store_rollback(l->ws.store);
	}
	if (rc == 0)
		rc = vcs_restore(l->ws.vcs, r.snapshot, loop_kpaths(l), l->ws.nkernel, e);
	if (rc == 0)
		rc = store_intent_end(l->ws.store, intent, e);
	free(msg);
	free(ref);
	store_run_release(&r);
	return rc;
}

/* ---- log --------------------------------------------------------------------------- */

static char *one_line(const char *s)
{
	char *t = xstrdup(s);
	for (char *p = t; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	struct sb b = SB_INIT;
	sb_adds(&b, t);
	sb_trim(&b);
	free(t);
	return sb_detach(&b);
}

/* Text a row stores goes into OPT_LOG.md, the commit message and the
 * database, and from there onto every terminal that shows them: ESC would
 * start an escape sequence there.  Tab, CR and LF are folded into spaces
 * (one_line); anything else vis_check refuses is refused (ERR_USAGE). */
static int row_text_check(const char *opt, const char *s, struct err *e)
{
	return vis_check(opt, s, "\t\n\r",
			 "which would be written as it is into OPT_LOG.md and the commit message, "
			 "where a terminal acts on it",
			 "give plain text", e);
}

static int telescoped_refusal(const char *verb, int iter, struct err *e)
{
	return err_set(e, ERR_REFUSED,
		       "%s refused: the kernel changed after iteration %d was measured (a second "
		       "change telescoped into this iteration); undo it, or run optloop %s "
		       "--set-aside to keep it aside until the commit (nothing is lost: it "
		       "comes back as the next iteration's change)",
		       verb, iter, verb);
}

/* "branch main", or "a detached HEAD at 1a2b3c4d5e6f" (caller frees). */
static char *head_words(const char *ref, const char *sha)
{
	if (!strncmp(ref, "refs/heads/", 11))
		return xasprintf("branch %s", ref + 11);
	if (!strcmp(ref, "HEAD"))
		return xasprintf("a detached HEAD at %.12s", sha ? sha : "?");
	return xasprintf("%s", ref);
}

/* The row and its commit belong on the branch the kernel was measured on:
 * ERR_REFUSED when HEAD names another branch than it did when run r
 * started, or, measured on a detached HEAD, when HEAD is now at another
 * commit.  A run recorded before branches were (NULL) is not checked. */
static int measured_branch_check(struct loop *l, const char *verb, const struct store_run *r,
				 struct err *e)
{
	char *now = NULL;
	char sha[VCS_OID_HEX] = "";
	if (!r->branch || vcs_head_ref(l->ws.vcs, &now, NULL) < 0)
		return 0;
	vcs_head(l->ws.vcs, sha, NULL);
	bool detached = !strcmp(r->branch, "HEAD");
	bool same = detached ? r->head && !strcmp(r->head, sha) : !strcmp(r->branch, now);
	int rc = 0;
	if (!same) {
		char *was = head_words(r->branch, r->head);
		char *is = strcmp(now, "HEAD") ? head_words(now, sha)
					       : xasprintf("detached at %.12s", sha);
		char *back = detached ? xasprintf("git switch --detach %.12s", r->head ? r->head : "")
				      : xasprintf("git switch %s", r->branch + (strncmp(r->branch,
						"refs/heads/", 11) ? 0 : 11));
		rc = err_set(e, ERR_REFUSED,
			     "%s refused: iteration %d was measured on %s, but HEAD is now %s%s; "
			     "the row and its commit belong where the kernel was measured: switch "
			     "back (%s), then run optloop %s again",
			     verb, r->iter, was, strcmp(now, "HEAD") ? "on " : "", is, back, verb);
		free(was);
		free(is);
		free(back);
	}
	free(now);
	return rc;
}

/* keep needs a passing gate with a bench number, and a win beyond noise
 * (measure_win) or an explicit, recorded --unconfirmed reason. */
static int keep_check(struct loop *l, const struct store_run *r, const struct measure_win *win,
		      const struct loop_log_opts *o, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int best = -1;
	if (loop_rows_get(l->ws.store, &sr, &rows, &n, NULL) == 0) {
		const struct log_row *b = log_rows_best(rows, n);
		best = b ? b->iter : -1;
		log_rows_put(sr);
	}
	char restore[64] = "";
	if (best >= 0)
		snprintf(restore, sizeof(restore), " (iteration %d)", best);
	enum rules_keep k = rules_keep(r->gate, r->bench_ms, win->win, win->verdict,
				       win->implausible, o->unconfirmed && *o->unconfirmed);
	if (k == RULES_KEEP_NOT_MEASURED)
		return err_set(e, ERR_REFUSED,
			       "keep refused: iteration %d's gate is %s%s; a kept row needs a "
			       "passing gate and a bench number. Log it as drop (or revert): the "
			       "row records what happened and the kernel goes back to the best%s",
			       r->iter, gate_verdict_name(r->gate),
			       r->gate == GATE_PASS ? " but it has no bench number" : "", restore);
	if (k == RULES_KEEP_IMPOSSIBLE)
		return err_set(e, ERR_REFUSED,
			       "keep refused: %s. No explanation lifts an impossible time, and "
			       "--unconfirmed does not apply: log it as drop (the kernel goes back to "
			       "the best%s), then look for the work the kernel skips at those shapes or "
			       "the stream the benchmark does not time",
			       win->why, restore);
	if (k == RULES_KEEP_IMPLAUSIBLE)
		return err_set(e, ERR_REFUSED,
			       "keep refused: %s. Check that every shape still does all its work; "
			       "if the speedup is real, record why with optloop promote --explain "
			       "TEXT --iter %d and log keep again; otherwise log it as drop (the "
			       "kernel goes back to the best%s). --unconfirmed does not apply to an "
			       "unexplained implausible speedup",
			       win->why, r->iter, restore);
	if (rules_keep_allowed(k))
		return 0;
	bool worth = k == RULES_KEEP_CONFIRM;
	return err_set(e, ERR_REFUSED,
		       "keep refused: iteration %d is not a win beyond noise: %s. %s; or keep it "
		       "anyway with --unconfirmed \"why\" (recorded, and shown as unconfirmed "
		       "everywhere)",
		       r->iter, win->why ? win->why : "no verdict",
		       worth ? "Run optloop confirm (best and candidate interleaved in one "
			       "session) and log again, or log it as revert/drop"
			     : "Log it as revert or drop: the kernel goes back to the best");
}

/* The row's status and the options that go with it: iteration 0 is the
 * baseline, a floor names its bound, --bound and --unconfirmed only where
 * they belong.  *status is the one to record. */
static int log_status_check(const struct loop_log_opts *o, int iter, enum row_status *status,
			    struct err *e)
{
	int rc;
	if (iter == 0) {
		if (*status != RS_NONE && *status != RS_BASE)
			return err_set(e, ERR_USAGE,
				       "iteration 0 is the baseline: its status is base (leave out "
				       "--status)");
		*status = RS_BASE;
	} else if (*status == RS_NONE) {
		return err_set(e, ERR_USAGE,
			       "log needs --status keep|revert|drop|floor for iteration %d", iter);
	} else if (*status == RS_BASE) {
		return err_set(e, ERR_USAGE,
			       "status base is only for the baseline (iteration 0); use "
			       "keep|revert|drop|floor");
	}
	if (*status == RS_FLOOR && !guards_bound_ok(o->bound))
		return err_set(e, ERR_USAGE,
			       "a floor row needs the named bound and its number: --bound 'HBM "
			       "bandwidth: 4.1 of 4.8 TB/s' (or launch overhead, or timer resolution, "
			       "with the measured figure)");
	if (o->bound && *o->bound && *status != RS_FLOOR)
		return err_set(e, ERR_USAGE,
			       "--bound names the bound a floor row reached; it goes with --status "
			       "floor only (to stop the loop at a bound: optloop stop --reason floor "
			       "--bound TEXT)");
	if (o->bound && (rc = row_text_check("--bound", o->bound, e)) < 0)
		return rc;
	if (o->unconfirmed && *status != RS_KEEP)
		return err_set(e, ERR_USAGE,
			       "--unconfirmed is the reason for keeping a row without a win beyond "
			       "noise; it goes with --status keep only");
	return 0;
}

int loop_log(struct loop *l, const struct loop_log_opts *o, struct log_row *out, struct err *e)
{
	struct where w;
	struct store_run r;
	struct log_row row;
	struct sb gate = SB_INIT;
	int rc;

	if (loop_writable(l, "log", e) < 0)
		return ERR_REFUSED;

	if (l->ws.readonly)
		return err_set(e, ERR_BUSY, "log refused: the workspace is open read-only");
	if ((rc = loop_load_contract(l, e)) < 0 || (rc = loop_where(l, &w, e)) < 0)
		return rc;
	if ((rc = loop_step_check(l, STEP_LOG, &w, e)) < 0)
		return rc;
	if (w.telescoped)
		return telescoped_refusal("log", w.iter, e);
	if (!o->direction || !o->direction[strspn(o->direction, " \t\r\n")])
		return err_set(e, ERR_USAGE, "log needs --direction TEXT (one line: what changed)%s",
			       o->direction && *o->direction ? "; a blank one says nothing" : "");
	if ((rc = row_text_check("--direction", o->direction, e)) < 0 ||
	    (rc = row_text_check("--axis", o->axis, e)) < 0 ||
	    (rc = row_text_check("--unconfirmed", o->unconfirmed, e)) < 0)
		return rc;
	enum row_status status = o->status;
	if ((rc = log_status_check(o, w.iter, &status, e)) < 0)
		return rc;
	if (o->commit_next &&
	    (rc = vcs_operation_check(l->ws.vcs, "log --commit", "log --commit", e)) < 0)
		return rc;
	if ((rc = store_run_last(l->ws.store, w.iter, RUN_VERIFY, &r, e)) < 0)
		return rc;
	/* before the commit's own checks: measured on a branch and detached
	 * since, the way on is back to that branch, not a new one */
	if ((rc = measured_branch_check(l, o->commit_next ? "log --commit" : "log", &r, e)) < 0 ||
	    (o->commit_next && ((rc = vcs_commit_check(l->ws.vcs, e)) < 0 ||
				(rc = guards_frozen_check(&l->ws, "log --commit", e)) < 0))) {
		store_run_release(&r);
		return rc;
	}
	struct measure_win win;
	if ((rc = measure_win(l->ws.store, w.iter, r.id, &win, e)) < 0) {
		store_run_release(&r);
		return rc;
	}
	if (status == RS_KEEP && (rc = keep_check(l, &r, &win, o, e)) < 0)
		goto refused;
	if (status == RS_FLOOR && !rules_floor_allowed(r.gate, r.bench_ms)) {
		rc = err_set(e, ERR_REFUSED,
			     "floor refused: iteration %d's gate is %s%s; a floor row records a "
			     "kernel measured at a bound, and a run that did not pass shows none. "
			     "Log it as drop (the kernel goes back to the best); to stop at a bound "
			     "the best reached, run optloop stop --reason floor --bound TEXT",
			     r.iter, gate_verdict_name(r.gate),
			     r.gate == GATE_PASS ? " but it has no bench number" : "");
		goto refused;
	}
	/* lint the measured diff: findings need an acknowledgement (recorded)
	 * where the kernel stays; one given anyway is recorded too */
	if ((rules_lints_need_ack(status) || o->ack_lints) &&
	    (rc = guards_log_check(&l->ws, w.iter, o->ack_lints, e)) < 0)
		goto refused;
	memset(&row, 0, sizeof(row));
	row.iter = w.iter;
	if (status == RS_FLOOR) {
		/* the bound in the row itself: OPT_LOG.md, the commit and its
		 * trailers say what was reached */
		char *d = one_line(o->direction), *b = one_line(o->bound);
		row.direction = xasprintf("%s (floor: %s)", d, b);
		free(d);
		free(b);
	} else {
		row.direction = one_line(o->direction);
	}
	optlog_fmt_gate(r.gate, r.scope, &gate);
	row.gate = sb_detach(&gate);
	row.gate_v = r.gate;
	row.scope = r.scope;
	row.bench_ms = r.bench_ms;
	/* one number per comparison: the confirm's when one ran, else the verify's */
	row.vs_best = isfinite(win.vs_best) ? win.vs_best : r.vs_best;
	row.vs_confirm = isfinite(win.vs_best) && win.source == EVIDENCE_CONFIRM;
	row.status = status;
	row.axis = o->axis ? one_line(o->axis) : NULL;
	if (status == RS_KEEP && !win.win)
		row.unconfirmed = one_line(o->unconfirmed);
	measure_win_release(&win);

	/* git's check of the rows, standing now, stands with a new row that no
	 * commit carries yet (no commit carried its iteration, or the check
	 * would not stand) */
	bool clean = loop_reconcile_git_clean(l);
	fault_point("log.begin");
	rc = store_begin(l->ws.store, e);
	if (rc == 0)
		rc = store_iter_add(l->ws.store, &row, r.id, r.tree, e);
	if (rc == 0)
		rc = store_event(l->ws.store, w.iter, "log", row.direction, e);
	if (rc == 0)
		rc = store_commit(l->ws.store, e);
	else
		store_rollback(l->ws.store);
	store_run_release(&r);
	if (rc < 0) {
		log_row_release(&row);
		return rc;
	}
	if (clean)
		loop_reconcile_git_carry(l);
	fault_point("log.after_db");
	if ((rc = loop_write_optlog_appended(l, row.iter, e)) > 0)
		rc = 0;
	fault_point("log.after_render");
	if (rc == 0 && out)
		*out = row;
	else
		log_row_release(&row);
	sb_release(&gate);
	return rc;
refused:
	measure_win_release(&win);
	store_run_release(&r);
	return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

static void add_trailer(struct sb *m, const char *key, const char *val)
{
	sb_addf(m, "Optloop-%s: ", key);
	for (const char *p = val; *p; p++)
		sb_addc(m, *p == '\n' ? ' ' : *p);
	sb_addc(m, '\n');
}

#define SUBJECT_DIRECTION_MAX 60 /* bytes of the direction in a commit's subject */

/* The direction as the subject shows it: whole when it fits, else cut at
 * the last word boundary that leaves room for "…" (when that would keep
 * less than half, inside the long word, at a character boundary: never in
 * the middle of a UTF-8 sequence). */
static void add_subject_direction(struct sb *m, const char *d)
{
	size_t n = strlen(d), room = SUBJECT_DIRECTION_MAX - 3; /* "…" is 3 bytes */
	if (n <= SUBJECT_DIRECTION_MAX) {
		sb_adds(m, d);
		return;
	}
	size_t cut = room;
	while (cut > 0 && d[cut] != ' ')
		cut--;
	if (cut < room / 2)
		for (cut = room; cut > 0 && ((unsigned char)d[cut] & 0xc0) == 0x80;)
			cut--;
	while (cut > 0 && d[cut - 1] == ' ')
		cut--;
	sb_add(m, d, cut);
	sb_adds(m, "\xe2\x80\xa6");
}

static char *commit_message(const char *op, const struct log_row *r, int confirms)
{
	struct sb m = SB_INIT, bench = SB_INIT, vs = SB_INIT, gate = SB_INIT;
	char iter[16];

	optlog_fmt_bench(r->bench_ms, &bench);
	optlog_fmt_vs_best(r->vs_best, &vs);
	optlog_fmt_gate(r->gate_v, r->scope, &gate);
	snprintf(iter, sizeof(iter), "%d", r->iter);
	sb_addf(&m, "optloop(%s): iter %d %s%s: ", op, r->iter, row_status_name(r->status),
		r->status == RS_KEEP && r->unconfirmed ? " (unconfirmed)" : "");
	add_subject_direction(&m, r->direction);
	sb_adds(&m, "\n\n");
	sb_addf(&m, "Gate %s, bench %s ms, vs best %s.\n\n", gate.buf, bench.buf, vs.buf);
	add_trailer(&m, "Op", op);
	add_trailer(&m, "Iter", iter);
	add_trailer(&m, "Direction", r->direction);
	add_trailer(&m, "Gate", gate.buf);
	add_trailer(&m, "Bench", bench.buf);
	add_trailer(&m, "Vs-Best", vs.buf);
	add_trailer(&m, "Status", row_status_name(r->status));
	if (r->status == RS_KEEP && r->unconfirmed)
		add_trailer(&m, "Unconfirmed", r->unconfirmed);
	if (r->axis)
		add_trailer(&m, "Axis", r->axis);
	if (confirms > 0) {
		char n[16];
		snprintf(n, sizeof(n), "%d", confirms);
		add_trailer(&m, "Confirms", n); /* every confirm of the iteration counted */
	}
	sb_release(&bench);
	sb_release(&vs);
	sb_release(&gate);
	return sb_detach(&m);
}

int loop_commit(struct loop *l, char sha[41], struct err *e)
{
	struct where w;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int rc;

	if (loop_writable(l, "commit", e) < 0)
		return ERR_REFUSED;

	if (l->ws.readonly)
		return err_set(e, ERR_BUSY, "commit refused: the workspace is open read-only");
	if ((rc = vcs_operation_check(l->ws.vcs, "commit", "commit", e)) < 0)
		return rc;
	if ((rc = loop_load_contract(l, e)) < 0 || (rc = loop_where(l, &w, e)) < 0)
		return rc;
	if ((rc = loop_step_check(l, STEP_COMMIT, &w, e)) < 0)
		return rc;
	if (w.telescoped)
		return telescoped_refusal("commit", w.iter, e);
	if (w.run_id > 0) {
		struct store_run r;
		if (store_run_get(l->ws.store, w.run_id, &r, NULL) == 0) {
			rc = measured_branch_check(l, "commit", &r, e);
			store_run_release(&r);
			if (rc < 0)
				return rc;
		}
	}
	if ((rc = vcs_commit_check(l->ws.vcs, e)) < 0)
		return rc;
	if ((rc = guards_frozen_check(&l->ws, "commit", e)) < 0)
		return rc;
	/* the row to commit is the newest */
	if ((rc = store_rows_before(l->ws.store, INT_MAX, 1, false, &sr, e)) < 0)
		return rc;
	if (sr->n == 0) {
		log_rows_put(sr);
		return err_set(e, ERR_REFUSED, "commit refused: there is no row to commit");
	}
	rows = sr->v;
	n = sr->n;
	char *msg = commit_message(l->ws.op, &rows[n - 1],
				   store_confirm_count(l->ws.store, rows[n - 1].iter));
	int iter = rows[n - 1].iter;
	log_rows_put(sr);
	/* git's check of the rows, standing now, stands after this commit */
	bool clean = loop_reconcile_git_clean(l);

	fault_point("commit.begin");
	rc = vcs_commit_kernel(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, msg, sha, e);
	free(msg);
	if (rc < 0)
		return rc;
	fault_point("commit.after_git");
	rc = store_begin(l->ws.store, e);
	if (rc == 0)
		rc = store_iter_set_commit(l->ws.store, iter, sha, e);
	if (rc == 0)
		rc = store_event(l->ws.store, iter, "commit", sha, e);
	if (rc == 0)
		rc = store_commit(l->ws.store, e);
	else
		store_rollback(l->ws.store);
	if (rc < 0)
		return rc;
	fault_point("commit.after_db");
	/* the commit sha appears in the Baseline line of OPT_LOG.md */
	if (iter == 0 && (rc = loop_write_optlog(l, e)) < 0)
		return rc;
	fault_point("commit.after_render");
	/* revert/drop: the kernel goes back to the best, in a commit of its own */
	if ((rc = guards_after_commit(&l->ws, NULL, e)) < 0)
		return err_prefix(e, "iteration %d is committed (%.12s), but the restore of the best "
				     "kernel that follows failed (the next optloop command finishes it): ",
				  iter, sha);
	if (clean)
		loop_reconcile_git_carry(l);
	/* bring back a change set aside during this iteration, recorded first
	 * so that a bring-back cut off is finished by the next writer */
	int aiter;
	char *asha, *aref;
	if (store_aside_pending(l->ws.store, &aiter, &asha, &aref, NULL) == 0) {
		if (aiter == iter) {
			rc = loop_bring_back(l, iter, asha, aref, true, e);
			if (rc == ERR_REFUSED)
				err_prefix(e, "iteration %d is committed (%.12s), but ", iter, sha);
			else if (rc < 0)
				err_prefix(e, "iteration %d is committed (%.12s), but bringing back the "
					      "change set aside failed (the next optloop command brings it "
					      "back): ",
					   iter, sha);
		}
		free(asha);
		free(aref);
	}
	return rc;
}
