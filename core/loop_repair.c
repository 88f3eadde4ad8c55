/* loop_repair — taking back what the database lost: repair --rebuild puts
 * the rows OPT_LOG.md holds back into the store, each linked to the commit
 * whose trailers carry it; the repairs loop_open offered. */
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

#include <jansson.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- repair ---------------------------------------------------------------------- */

void loop_commit_row(const struct vcs_iter_commit *c, struct log_row *r)
{
	memset(r, 0, sizeof(*r));
	r->iter = c->iter;
	r->direction = xstrdup(c->direction ? c->direction : "(rebuilt from the commit)");
	r->gate = xstrdup(c->gate ? c->gate : "");
	if (!c->gate || optlog_parse_gate(c->gate, &r->gate_v, &r->scope) < 0)
		r->gate_v = GATE_NONE;
	if (!c->bench || optlog_parse_bench(c->bench, &r->bench_ms) < 0)
		r->bench_ms = NAN;
	if (!c->vs_best || optlog_parse_vs_best(c->vs_best, &r->vs_best) < 0)
		r->vs_best = NAN;
	if (!c->status || optlog_parse_status(c->status, &r->status) < 0)
		r->status = c->iter == 0 ? RS_BASE : RS_DROP;
	if (r->status == RS_KEEP && c->unconfirmed)
		r->unconfirmed = xstrdup(c->unconfirmed);
	r->commit = xstrdup(c->sha);
}

/* A keep commit is taken back only as a keep that log would have let
 * through (the keep rule, rules_keep): its run's own evidence a win beyond
 * noise, or an Optloop-Unconfirmed reason; never an implausible speedup
 * left unexplained.  NULL when it may be the row; else why not. */
static char *keep_unbacked(struct loop *l, int iter, const struct store_run *run,
			   const struct log_row *r)
{
	struct measure_win win;
	if (measure_win(l->ws.store, iter, run->id, &win, NULL) < 0)
		return xasprintf("iteration %d's verdict against the best cannot be read", iter);
	enum rules_keep k = rules_keep(run->gate, run->bench_ms, win.win, win.verdict,
				       win.implausible, r->unconfirmed && *r->unconfirmed);
	char *why = NULL;
	if (k == RULES_KEEP_IMPOSSIBLE)
		why = xasprintf("iteration %d's time is impossible (%s)", iter,
				win.why ? win.why : "impossible");
	else if (k == RULES_KEEP_IMPLAUSIBLE)
		why = xasprintf("iteration %d's speedup is flagged implausible and not explained "
				"(%s)",
				iter, win.why ? win.why : "implausible");
	else if (!rules_keep_allowed(k))
		why = xasprintf("iteration %d is not a win beyond noise (%s) and the commit "
				"carries no Optloop-Unconfirmed reason",
				iter, win.why ? win.why : "no verdict");
	measure_win_release(&win);
	return why;
}

char *loop_commit_unbacked(struct loop *l, const struct vcs_iter_commit *c,
			   const struct log_row *r, int *run_id, char **tree)
{
	struct store_run run;
	char have[VCS_OID_HEX];
	*run_id = 0;
	*tree = NULL;
	if (store_run_last(l->ws.store, c->iter, RUN_VERIFY, &run, NULL) < 0)
		return log_row_can_be_best(r)
			       ? xasprintf("the database holds no verify run of iteration %d", c->iter)
			       : NULL;
	char *why = NULL;
	bool same_kernel = run.tree &&
			   vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, c->sha, have,
					   NULL) == 0 &&
			   !strcmp(have, run.tree);
	struct sb want = SB_INIT, got = SB_INIT;
	optlog_fmt_bench(r->bench_ms, &want);
	optlog_fmt_bench(run.bench_ms, &got);
	if (!log_row_can_be_best(r))
		; /* a row that cannot be the best: its run, when it is the commit's */
	else if (run.t_end <= 0 || run_is_attempt(run.iter, run.gate, run.scope, run.bench_ms) ||
		 !rules_run_measured(run.gate, run.bench_ms))
		why = xasprintf("iteration %d's last verify run (run %d) did not measure a passing "
				"gate with a bench number",
				c->iter, run.id);
	else if (!same_kernel)
		why = xasprintf("iteration %d's verify run (run %d) measured another kernel than the "
				"commit holds",
				c->iter, run.id);
	else if (strcmp(want.buf, got.buf))
		why = xasprintf("iteration %d's verify run (run %d) measured %s ms, not %s", c->iter,
				run.id, got.buf, want.buf);
	else if (r->status == RS_KEEP)
		why = keep_unbacked(l, c->iter, &run, r);
	if (!why && same_kernel) {
		*run_id = run.id;
		*tree = xstrdup(run.tree);
	}
	sb_release(&want);
	sb_release(&got);
	store_run_release(&run);
	return why;
}

/* The kernel tree a rebuilt row measured: its commit's (a row taken back
 * has no run to say it), so runs of that kernel made since (optloop noise)
 * are the row's; NULL without a commit, or a kernel the commit lacks. */
static char *rebuilt_tree(struct loop *l, const char *sha)
{
	char have[VCS_OID_HEX];
	if (!sha || vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, sha, have, NULL) < 0)
		return NULL;
	return xstrdup(have);
}

/* The best taken back by repair --rebuild has no run in the database: until
 * its kernel is measured again, no verdict has a best to compare with. */
static char *unmeasured_best(struct loop *l)
{
	struct measure_best b;
	int *ids = NULL;
	enum run_kind *kinds = NULL;
	size_t n = 0;
	char *s = NULL;
	if (measure_best(l->ws.store, &b, NULL) < 0)
		return NULL;
	if (b.have && !b.run_id && b.tree) {
		store_runs_of_tree(l->ws.store, b.tree, &ids, &kinds, &n);
		if (n == 0)
			s = xasprintf("the best (iteration %d) was taken back without a run, so no "
				      "verdict has anything to compare with yet: measure it first with "
				      "optloop noise (its kernel is in the tree), then make one change "
				      "and run optloop verify",
				      b.iter);
		free(ids);
		free(kinds);
	}
	measure_best_release(&b);
	return s;
}

char *loop_repair_step(struct loop *l, const struct where *w, struct due *d)
{
	char *s;
	if (l->lost_rows > 0) {
		d->due = DUE_REBUILD;
		return xasprintf("OPT_LOG.md holds %d row%s the database lost: rebuild it with "
				 "optloop repair --rebuild (nothing is written until then)",
				 l->lost_rows, l->lost_rows == 1 ? "" : "s");
	}
	if (l->earlier_rows > 0 && w->state == ST_NEED_BASELINE) {
		d->due = DUE_REBUILD;
		return xasprintf("the history holds %d iteration%s of op %s from an earlier "
				 "workspace: take them back with optloop repair --rebuild, or verify "
				 "the unmodified kernel to start the op over at iteration 0",
				 l->earlier_rows, l->earlier_rows == 1 ? "" : "s", l->ws.op);
	}
	if ((w->state == ST_READY || w->state == ST_EDITING) && (s = unmeasured_best(l))) {
		d->due = DUE_NOISE;
		return s;
	}
	return NULL;
}

/* repair --rebuild: the rows OPT_LOG.md holds and the database lost go back
 * into the database, in order, each linked to the commit that carries its
 * iteration with the same direction (Optloop-Iter and Optloop-Direction:
 * after a new init the history can hold two commits of one iteration). */
/* The commit that carries row r (the oldest: the log's own), or NULL. */
static const struct vcs_iter_commit *row_commit(const struct vcs_iter_commit *cs, size_t nc,
						const struct log_row *r)
{
	for (size_t k = nc; k-- > 0;)
		if (cs[k].iter == r->iter &&
		    (!cs[k].direction || !r->direction || !strcmp(cs[k].direction, r->direction)))
			return &cs[k];
	return NULL;
}

/* The re-assessments and stops OPT_LOG.md lists and the database lacks (a
 * database lost, or an older copy of it) go back too, after the rows: each
 * listed one that none of the database's own renders the same (its words
 * as OPT_LOG.md shows them: a blank field is none, a line break a space),
 * once per match, for an iteration the database now holds.  The stall
 * count and the stop read them, so the loop resumes where the log says it
 * stood. */
static int rebuild_events(struct loop *l, const struct optlog_doc *d, int next, struct sb *done,
			  int *fixed, struct err *e)
{
	struct optlog_event *have = NULL;
	size_t nhave = 0;
	int rc = 0;
	store_optlog_events(l->ws.store, &have, &nhave);
	char **words = xcalloc(nhave ? nhave : 1, sizeof(*words)); /* NULL once matched */
	for (size_t k = 0; k < nhave; k++) {
		struct sb w = SB_INIT;
		sb_init(&w);
		optlog_event_text(&have[k], &w);
		words[k] = sb_detach(&w);
	}
	for (size_t i = 0; rc == 0 && i < d->nevents; i++) {
		const struct optlog_event *ev = &d->events[i];
		struct sb w = SB_INIT;
		sb_init(&w);
		optlog_event_text(ev, &w);
		bool found = false;
		for (size_t k = 0; !found && k < nhave; k++)
			if (words[k] && have[k].iter == ev->iter && !strcmp(words[k], w.buf)) {
				free(words[k]);
				words[k] = NULL;
				found = true;
			}
		sb_release(&w);
		if (found || ev->iter >= next)
			continue;
		rc = ev->stop ? store_stop_add(l->ws.store, ev->iter, ev->what, ev->detail, e)
			      : store_reassess_add(l->ws.store, ev->iter, NULL, ev->detail, NULL,
						   ev->what, e);
		if (rc == 0)
			rc = store_event(l->ws.store, ev->iter, "repair.rebuild",
					 ev->stop ? "stop" : "reassess", e);
		if (rc == 0 && done)
			sb_addf(done, "%s after iteration %d taken back from OPT_LOG.md\n",
				ev->stop ? "stop" : "re-assessment", ev->iter);
		if (rc == 0)
			(*fixed)++;
	}
	for (size_t k = 0; k < nhave; k++) {
		free(words[k]);
		optlog_event_release(&have[k]);
	}
	free(words);
	free(have);
	return rc;
}

/* The newest chain of the op's commits from an iteration 0 in cs (newest
 * first, as vcs_iter_commits gives them): its length, 0 when no commit
 * carries an iteration 0; *from is the index of that commit, and the
 * chain's iteration i is cs[*from - i] (each next one newer and numbered
 * one higher). */
static size_t trailer_chain(const struct vcs_iter_commit *cs, size_t nc, size_t *from)
{
	size_t z = 0, len = 1;
	while (z < nc && cs[z].iter != 0)
		z++;
	if (z == nc)
		return 0;
	*from = z;
	for (size_t k = z; k-- > 0 && cs[k].iter == (int)len;)
		len++;
	return len;
}

/* The rows after OPT_LOG.md's last one that the op's commits still carry:
 * the newest chain from an iteration 0 (trailer_chain), when the rows
 * so far are its own (prev: the commit of row next - 1, NULL at 0).  A keep
 * that no run in this database backs and that carries no Optloop-Unconfirmed
 * reason comes back unconfirmed, saying so: its number is the commit's word
 * alone, so it is never a confirmed best (verify it again, or measure it with
 * optloop noise). */
static int rebuild_from_trailers(struct loop *l, const struct vcs_iter_commit *cs, size_t nc,
				 int *next, const char *prev, const char **first,
				 struct sb *done, int *fixed, struct err *e)
{
	size_t from, len = trailer_chain(cs, nc, &from);
	int rc = 0;
	if ((size_t)*next >= len ||
	    (*next > 0 && (!prev || strcmp(cs[from - (size_t)(*next - 1)].sha, prev))))
		return 0;
	for (size_t i = (size_t)*next; rc == 0 && i < len; i++) {
		const struct vcs_iter_commit *c = &cs[from - i];
		struct log_row r;
		loop_commit_row(c, &r);
		if (r.status == RS_KEEP && !r.unconfirmed)
			r.unconfirmed = xasprintf("taken back from commit %.12s's trailers by repair "
						  "--rebuild: no run in this database backs its number",
						  c->sha);
		char *tree = rebuilt_tree(l, c->sha);
		rc = store_iter_add(l->ws.store, &r, 0, tree, e);
		free(tree);
		if (i == 0)
			*first = c->sha;
		if (rc == 0)
			rc = store_event(l->ws.store, r.iter, "repair.rebuild", c->sha, e);
		if (rc == 0 && done)
			sb_addf(done, "row %d taken back from the trailers of commit %.12s\n", r.iter,
				c->sha);
		log_row_release(&r);
		(*fixed)++;
		(*next)++;
	}
	return rc;
}

void loop_find_earlier_rows(struct loop *l)
{
	long long n = -1, key;
	struct vcs_iter_commit *cs;
	size_t nc, from;
	l->earlier_rows = 0;
	/* only a workspace with no row yet: the walk costs a history's length */
	if (l->lost_rows || store_rows_count(l->ws.store, &n, &key, NULL) < 0 || n != 0 ||
	    vcs_iter_commits(l->ws.vcs, l->ws.op, NULL, 0, &cs, &nc, NULL) < 0)
		return;
	size_t len = trailer_chain(cs, nc, &from);
	if (len) {
		l->earlier_rows = (int)len;
		loop_problem(l,
			"the history holds %zu iteration%s of op %s that neither optloop.db nor "
			"OPT_LOG.md holds (commits %.12s to %.12s: an earlier workspace of this op, "
			"deleted?); optloop repair --rebuild takes them back from the commits' "
			"Optloop trailers, or a verify of the unmodified kernel starts the op over at "
			"iteration 0",
			len, len == 1 ? "" : "s", l->ws.op, cs[from].sha, cs[from - (len - 1)].sha);
	}
	vcs_iter_commits_free(cs, nc);
}

static int rebuild_rows(struct loop *l, struct sb *done, int *fixed, struct err *e)
{
	struct sb text = SB_INIT;
	struct optlog_doc d;
	struct log_rows *sr = NULL;
	const struct log_row *rows;
	struct vcs_iter_commit *cs = NULL;
	size_t n = 0, nc = 0;
	int rc;

	if (l->ws.nkernel == 0)
		return err_set(e, ERR_REFUSED,
			       "repair --rebuild refused: the database lost the workspace's settings "
			       "too (its kernel paths, which only it holds); move %s aside, run "
			       "optloop init --op %s --kernel PATH ... again with the options it was "
			       "made with, then optloop repair --rebuild",
			       l->ws.db_path, l->ws.op);
	memset(&d, 0, sizeof(d));
	/* OPT_LOG.md gone with the workspace: the commits carry the rows */
	if ((rc = fsutil_read_file(l->ws.optlog_path, &text, e)) < 0 && rc != ERR_NOTFOUND)
		return rc;
	if ((rc = optlog_parse(text.buf ? text.buf : "", text.len, &d, NULL, e)) < 0)
		goto out;
	if ((rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e)) < 0 ||
	    (rc = vcs_iter_commits(l->ws.vcs, l->ws.op, NULL, 0, &cs, &nc, e)) < 0)
		goto out;
	int next = (int)n;
	const char *first = n ? rows[0].commit : NULL, *prev = n ? rows[n - 1].commit : NULL;
	/* A base or keep row whose run the database does not hold and that no
	 * commit carries has nothing behind its number: taken back it would be
	 * the best.  Refuse before anything is written. */
	for (size_t i = 0; rc == 0 && i < d.nrows; i++) {
		const struct log_row *r = &d.rows[i];
		if (r->iter >= next && (r->status == RS_BASE || r->status == RS_KEEP) &&
		    !row_commit(cs, nc, r))
			rc = err_set(e, ERR_REFUSED,
				     "repair --rebuild refused: OPT_LOG.md row %d (line %d, %s) has no "
				     "run in the database and no commit carries it, so nothing backs its "
				     "number and it cannot be the best. Set its Status to drop (or "
				     "remove the row) and run optloop repair --rebuild again; to keep "
				     "that kernel, verify it after the rebuild",
				     r->iter, r->lineno, row_status_name(r->status));
	}
	for (size_t i = 0; rc == 0 && i < d.nrows; i++) {
		struct log_row *r = &d.rows[i];
		if (r->iter < next)
			continue; /* the database has it */
		if (r->iter != next) {
			rc = err_set(e, ERR_REFUSED,
				     "repair --rebuild stopped: OPT_LOG.md jumps from iteration %d to %d "
				     "(line %d); fix the table so rows follow in order, then run it "
				     "again",
				     next - 1, r->iter, r->lineno);
			break;
		}
		const struct vcs_iter_commit *c = row_commit(cs, nc, r);
		free(r->commit);
		r->commit = c ? xstrdup(c->sha) : NULL;
		if (r->status == RS_KEEP && c && c->unconfirmed && !r->unconfirmed)
			r->unconfirmed = xstrdup(c->unconfirmed);
		char *tree = rebuilt_tree(l, r->commit);
		rc = store_iter_add(l->ws.store, r, 0, tree, e);
		free(tree);
		if (rc == 0)
			rc = store_event(l->ws.store, r->iter, "repair.rebuild", c ? c->sha : NULL, e);
		if (rc == 0 && done)
			sb_addf(done, "row %d taken back from OPT_LOG.md%s%.12s\n", r->iter,
				c ? ", commit " : " (no commit carries it yet)", c ? c->sha : "");
		if (r->iter == 0)
			first = r->commit;
		prev = r->commit;
		(*fixed)++;
		next++;
	}
	if (rc == 0)
		rc = rebuild_from_trailers(l, cs, nc, &next, prev, &first, done, fixed, e);
	/* the commits before the baseline are not the workspace's */
	char parent[VCS_OID_HEX];
	if (rc == 0 && first && vcs_parent(l->ws.vcs, first, parent, NULL) == 0 && parent[0]) {
		rc = store_meta_set(l->ws.store, "init_head", parent, e);
		if (rc == 0) {
			free(l->init_head);
			l->init_head = xstrdup(parent);
		}
	}
	if (rc == 0)
		rc = rebuild_events(l, &d, next, done, fixed, e);
	if (rc == 0)
		l->lost_rows = l->earlier_rows = 0;
out:
	vcs_iter_commits_free(cs, nc);
	log_rows_put(sr);
	optlog_doc_release(&d);
	sb_release(&text);
	return rc;
}

int loop_repair(struct loop *l, bool rebuild, struct sb *done, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n, nc;
	struct vcs_iter_commit *cs;
	int rc, fixed = 0;

	if (l->ws.readonly)
		return err_set(e, ERR_BUSY, "repair refused: the workspace is open read-only");
	/* the history a rebase or bisect is in the middle of is not the branch's */
	if ((rc = vcs_operation_check(l->ws.vcs, "repair", rebuild ? "repair --rebuild" : "repair",
				      e)) < 0)
		return rc;
	if (rebuild && l->lost_rows == 0 && l->earlier_rows == 0)
		return err_set(e, ERR_REFUSED,
			       "repair --rebuild refused: the database holds every row OPT_LOG.md "
			       "and the op's commits do; there is nothing to take back (optloop "
			       "repair fixes the rest)");
	if (!rebuild && l->lost_rows > 0)
		return err_set(e, ERR_REFUSED,
			       "repair refused: OPT_LOG.md holds %d row%s the database lost; take "
			       "them back first with optloop repair --rebuild",
			       l->lost_rows, l->lost_rows == 1 ? "" : "s");
	if (rebuild) {
		rc = store_begin(l->ws.store, e);
		if (rc == 0)
			rc = rebuild_rows(l, done, &fixed, e);
		if (rc == 0)
			rc = store_commit(l->ws.store, e);
		else
			store_rollback(l->ws.store);
		if (rc < 0)
			return rc;
	}
	if ((rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e)) < 0)
		return rc;
	if ((rc = vcs_iter_commits(l->ws.vcs, l->ws.op, l->init_head, 0, &cs, &nc, e)) < 0) {
		log_rows_put(sr);
		return rc;
	}
	rc = store_begin(l->ws.store, e);
	/* rows whose commit left the history: re-link to the commit that now
	 * carries their iteration */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!rows[i].commit || vcs_commit_in_history(l->ws.vcs, rows[i].commit))
			continue;
		for (size_t k = 0; k < nc; k++) {
			/* the iteration and its direction: after a new init the
			 * history may hold another commit of the same number */
			if (cs[k].iter != rows[i].iter ||
			    (cs[k].direction && rows[i].direction &&
			     strcmp(cs[k].direction, rows[i].direction)))
				continue;
			rc = store_iter_set_commit(l->ws.store, rows[i].iter, cs[k].sha, e);
			if (rc == 0)
				rc = store_event(l->ws.store, rows[i].iter, "repair.relink", cs[k].sha, e);
			if (rc == 0 && done)
				sb_addf(done, "row %d now cites commit %.12s\n", rows[i].iter, cs[k].sha);
			fixed++;
			break;
		}
	}
	/* commits without a row: rebuilt from their trailers, in iteration
	 * order, when they continue the log */
	for (int next = (int)n; rc == 0;) {
		size_t k;
		for (k = 0; k < nc && cs[k].iter != next; k++)
			;
		if (k == nc)
			break;
		struct log_row r;
		int run_id = 0;
		char *tree = NULL;
		loop_commit_row(&cs[k], &r);
		char *unbacked = loop_commit_unbacked(l, &cs[k], &r, &run_id, &tree);
		if (unbacked) {
			struct sb b = SB_INIT;
			optlog_fmt_bench(r.bench_ms, &b);
			rc = err_set(e, ERR_REFUSED,
				     "repair refused: commit %.12s carries iteration %d as %s (bench %s "
				     "ms), but %s, so nothing backs its number and it cannot be the "
				     "best. A commit made by hand is not an iteration: take its "
				     "Optloop-* trailers out (git commit --amend, or git rebase -i for "
				     "an older one) or take the commit off the branch, then run optloop "
				     "repair again; to keep that kernel, verify it as a new iteration",
				     cs[k].sha, next, row_status_name(r.status), b.buf, unbacked);
			sb_release(&b);
			free(unbacked);
			log_row_release(&r);
			break;
		}
		rc = store_iter_add(l->ws.store, &r, run_id, tree, e);
		free(tree);
		if (rc == 0)
			rc = store_event(l->ws.store, next, "repair.row", cs[k].sha, e);
		if (rc == 0 && done)
			sb_addf(done, "row %d rebuilt from commit %.12s\n", next, cs[k].sha);
		log_row_release(&r);
		fixed++;
		next++;
	}
	if (rc == 0)
		rc = store_commit(l->ws.store, e);
	else
		store_rollback(l->ws.store);
	vcs_iter_commits_free(cs, nc);
	log_rows_put(sr);
	bool edited = l->optlog_edited;
	if (rc == 0 && (fixed || edited))
		rc = loop_write_optlog(l, e);
	if (rc == 0 && edited && done)
		sb_addf(done, "%s\n", l->optlog_note ? l->optlog_note : "OPT_LOG.md written from the database");
	if (rc == 0 && !fixed && !edited && done)
		sb_adds(done, "nothing optloop can repair by itself\n");
	if (rc == 0) {
		sb_reset(&l->problems);
		rc = loop_reconcile_git(l, e);
	}
	return rc;
}
