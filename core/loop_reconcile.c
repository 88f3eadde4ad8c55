/* loop_reconcile — the start-up check of a writer: harnesses left running,
 * runs cut off, moves of the kernel cut off (intents), OPT_LOG.md, the
 * database and git history compared, set-aside changes brought back, and
 * what it finds written to the problems the status shows. */
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
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reconciliation ----------------------------------------------------------------- */

void loop_problem(struct loop *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&l->problems, fmt, ap);
	va_end(ap);
	sb_addc(&l->problems, '\n');
}

/* A verify run without an end was cut off (optloop killed mid-run). */
/* A harness whose optloop was killed keeps running in its own process
 * group, measuring on the GPU and writing its raw log: every process
 * tagged with this workspace's runs (run.c) is stopped before anything else
 * is reconciled.  Only a writer gets here, so no live optloop owns one. */
static void reconcile_orphans(struct loop *l)
{
	char *prefix = xasprintf("%s#", l->ws.trace_dir);
	int pid = 0, n = runner_kill_tagged(prefix, 5.0, &pid);
	free(prefix);
	if (n > 0) {
		char *d = xasprintf("%d process(es), the first pid %d", n, pid);
		store_event(l->ws.store, -1, "harness.orphan", d, NULL);
		free(d);
		loop_problem(l,
			"a harness left running by an optloop that was killed (pid %d%s) was "
			"stopped",
			pid, n > 1 ? " and its children" : "");
	}
}

/* Runs whose optloop was killed never ended: each is recorded incomplete
 * (an attempt; a confirm or noise session with it has no verdict). */
static int settle_interrupted_runs(struct loop *l, struct err *e)
{
	struct store_run r;
	int rc = 0;

	while (rc == 0 && store_run_unfinished(l->ws.store, &r, NULL) == 0) {
		char work[VCS_OID_HEX], snap[VCS_OID_HEX];
		bool verify = r.kind == RUN_VERIFY;
		r.t_end = loop_now();
		r.gate = GATE_INCOMPLETE;
		r.exit_status = -1;
		if (verify && vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL, work, NULL) == 0) {
			free(r.tree);
			r.tree = xstrdup(work);
		}
		if (verify && vcs_snapshot(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, snap, NULL) == 0) {
			free(r.snapshot);
			r.snapshot = xstrdup(snap);
		}
		char *what = xasprintf("%s run cut off; recorded as incomplete", run_kind_name(r.kind));
		rc = store_begin(l->ws.store, e);
		if (rc == 0)
			rc = store_run_update(l->ws.store, &r, e);
		if (rc == 0)
			rc = store_event(l->ws.store, r.iter, verify ? "verify.interrupted" : "run.interrupted",
					 what, e);
		if (rc == 0)
			rc = store_commit(l->ws.store, e);
		else
			store_rollback(l->ws.store);
		free(what);
		if (rc == 0 && verify)
			loop_problem(l,
				"the verify run of iteration %d was cut off before it finished; it is "
				"recorded as an incomplete attempt, not an iteration (run optloop "
				"verify again)",
				r.iter);
		else if (rc == 0)
			loop_problem(l, "a %s run of iteration %d was cut off; it is recorded as incomplete",
				run_kind_name(r.kind), r.iter);
		store_run_release(&r);
	}
	return rc;
}

/* A move of the kernel in the work tree that optloop recorded (a
 * revert/drop restore, a confirm or noise swap, a set-aside) and did not
 * finish: a crash cut it off.  Where the files stand decides:
 *   a swap (confirm, noise)        the candidate comes back unless it is
 *                                  there;
 *   a restore                      one cut off half-way is finished; one
 *                                  not begun or done is left to
 *                                  guards_after_commit, which commits it;
 *   a set-aside                    the measured kernel is put in place;
 *   a bring-back ("back")          the set-aside change is put back after
 *                                  its iteration's commit;
 *   a file neither's               edited by hand since: left alone, and
 *                                  said, with the command to finish by hand. */
static int reconcile_intents(struct loop *l, struct err *e)
{
	struct store_intent in;
	int rc = 0;

	while (rc == 0 && store_intent_pending(l->ws.store, &in, NULL) == 0) {
		enum vcs_between at = VCS_ELSEWHERE;
		bool swap = in.kind == INTENT_SWAP;
		/* a swap goes back to where it came from; the others go forward */
		const char *target = swap ? in.from : in.to;
		rc = vcs_kernel_between(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, in.from, in.to, &at, e);
		if (rc < 0) {
			/* a tree that is gone (gc, a rewritten history): nothing to finish */
			loop_problem(l, "an unfinished %s of the kernel (iteration %d) cannot be checked: %s",
				tree_intent_name(in.kind), in.iter, e->msg);
			err_clear(e);
			rc = 0;
		} else if (at == VCS_ELSEWHERE) {
			loop_problem(l,
				"a %s of the kernel during iteration %d was cut off, and the kernel was "
				"edited since, so optloop left it alone; to finish it by hand: git "
				"checkout %.12s -- <kernel paths>",
				tree_intent_what(in.kind), in.iter, target);
		} else if (swap ? at != VCS_AT_FROM
			   : in.kind == INTENT_RESTORE ? at == VCS_BETWEEN
							 : at != VCS_AT_TO) {
			if ((rc = vcs_restore(l->ws.vcs, target, loop_kpaths(l), l->ws.nkernel, e)) == 0) {
				char *d = xasprintf("a %s cut off by a crash was %s", tree_intent_name(in.kind),
						    swap ? "undone: the candidate is back" : "finished");
				store_event(l->ws.store, in.iter, "intent.recovered", d, NULL);
				loop_problem(l, "%s (iteration %d)", d, in.iter);
				free(d);
			}
		}
		/* a restore that reached the best is committed by guards_after_commit */
		if (rc == 0)
			rc = store_intent_end(l->ws.store, in.id, e);
		if (rc == 0 && swap && at != VCS_ELSEWHERE) { /* the candidate is back */
			char *ref = loop_ref(l, "swap");
			vcs_unkeep(l->ws.vcs, ref);
			free(ref);
			vcs_clear_keeps(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL);
		}
		store_intent_release(&in);
	}
	return rc;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* What the history check below depends on: HEAD, where the walk stops and
 * every row's commit.  Commits never change, so while this key stays the
 * same a walk that found nothing to report would find nothing again. */
/* What git's check of the rows depends on: HEAD, where the history
 * starts, and the rows' iterations and commits, which the store's count of
 * rows and its key (store_rows_count) stand for without reading them */
static char *git_key(struct loop *l)
{
	char head[VCS_OID_HEX];
	long long n, k;

	if (vcs_head(l->ws.vcs, head, NULL) < 0 || store_rows_count(l->ws.store, &n, &k, NULL) < 0 ||
	    k < 0)
		return NULL;
	return xasprintf("%s %s %lld %lld", head, l->init_head ? l->init_head : "-", n, k);
}

bool loop_reconcile_git_clean(struct loop *l)
{
	char *key = git_key(l), *seen = NULL;
	bool clean = key && store_meta_get(l->ws.store, "reconciled_git", &seen, NULL) == 0 && seen &&
		     !strcmp(seen, key);
	free(key);
	free(seen);
	return clean;
}

void loop_reconcile_git_carry(struct loop *l)
{
	char head[VCS_OID_HEX], *key = git_key(l);
	if (!key || l->ws.readonly)
		goto out;
	/* as a clean walk records it: the key, and where the branch holds
	 * every row */
	store_meta_set(l->ws.store, "reconciled_git", key, NULL);
	char *ref = loop_ref(l, "history");
	if (vcs_head(l->ws.vcs, head, NULL) == 0)
		vcs_keep(l->ws.vcs, ref, head, NULL);
	free(ref);
out:
	free(key);
}

/* Rows whose commits the branch lost, newest last. */
struct off_rows {
	int *iter;
	char **commit;
	size_t n;
};

static void off_add(struct off_rows *o, const struct log_row *r)
{
	o->iter = xrealloc(o->iter, (o->n + 1) * sizeof(*o->iter));
	o->commit = xrealloc(o->commit, (o->n + 1) * sizeof(*o->commit));
	o->iter[o->n] = r->iter;
	o->commit[o->n++] = xstrdup(r->commit);
}

static void off_release(struct off_rows *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->commit[i]);
	free(o->iter);
	free(o->commit);
	memset(o, 0, sizeof(*o));
}

/* Does a commit on the branch carry iteration iter (a rebase or a
 * cherry-pick made it anew: repair re-links the row to it)? */
static bool carried(const struct vcs_iter_commit *cs, size_t nc, int iter)
{
	for (size_t k = 0; k < nc; k++)
		if (cs[k].iter == iter)
			return true;
	return false;
}

/* "2-4, 7": the iterations as spans. */
static void spans(const int *v, size_t n, struct sb *out)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		sb_addf(out, "%s%d", i ? ", " : "", v[i]);
		if (j > i)
			sb_addf(out, "-%d", v[j]);
		i = j + 1;
	}
}

/* The branch no longer holds these rows' commits, and nothing on it
 * carries them: say what happened and the one way out, once, and hold the
 * loop until then (a new iteration on this history would follow rows its
 * commits do not hold; a drop would restore a best that is not there). */
static void history_off_found(struct loop *l, const struct off_rows *o)
{
	struct sb its = SB_INIT, msg = SB_INIT;
	const char *newest = o->commit[o->n - 1];
	bool one = o->n == 1;
	spans(o->iter, o->n, &its);
	bool exists = vcs_commit_exists(l->ws.vcs, newest);
	char *branch = exists ? vcs_branch_holding(l->ws.vcs, newest) : NULL;
	if (branch) {
		/* another branch was checked out: the rows are on the one left */
		sb_addf(&msg,
			"HEAD is on a history that does not hold iteration%s %s: %s on branch %s, "
			"which is not checked out.  The one way out: git switch %s (the loop's "
			"branch); until then verify, log, commit, confirm and noise are refused",
			one ? "" : "s", its.buf, one ? "it is" : "they are", branch, branch);
		free(branch);
	} else if (exists) {
		/* where HEAD was when it last held every row, if that still holds
		 * the newest of them; else that row's own commit */
		char *ref = loop_ref(l, "history"), *back = NULL;
		char sha[VCS_OID_HEX];
		if (vcs_resolve(l->ws.vcs, ref, sha) == 0 && vcs_holds(l->ws.vcs, sha, newest))
			back = xstrdup(sha);
		sb_addf(&msg,
			"the branch no longer holds iteration%s %s: it was moved back past %s commit%s "
			"(a git reset, or a rebase that dropped %s), and no commit on it carries %s, so "
			"optloop repair has nothing to re-link; git still has %s.  The one way out: git "
			"reset --hard %.12s (%s), which puts %s back; until then verify, log, commit, "
			"confirm and noise are refused",
			one ? "" : "s", its.buf, one ? "its" : "their", one ? "" : "s",
			one ? "it" : "them", one ? "it" : "them", one ? "it" : "them",
			back ? back : newest,
			back ? "where the branch was when it last held every row" : "the newest of them",
			one ? "it" : "them");
		free(back);
		free(ref);
	} else {
		sb_addf(&msg,
			"the commit%s of iteration%s %s %s gone from the repository: the history was "
			"rewritten (a squash, an amend, a filter) and the old commits pruned (git gc), "
			"so optloop cannot restore or compare %s kernel%s.  The one way out: bring the "
			"commit%s back from a clone that has %s (git fetch CLONE %.12s, then git reset "
			"--hard %.12s); where none has %s, keep this workspace as the record (mv %s "
			"%s.lost) and start a new one with optloop init; until then verify, log, "
			"commit, confirm and noise are refused",
			one ? "" : "s", one ? "" : "s", its.buf, one ? "is" : "are", one ? "its" : "their",
			one ? "" : "s", one ? "" : "s", one ? "it" : "them", newest, newest,
			one ? "it" : "them", l->ws.dir, l->ws.dir);
	}
	loop_problem(l, "%s", msg.buf);
	free(l->history_off);
	l->history_off = sb_detach(&msg);
	sb_release(&its);
}

int loop_reconcile_git(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n, nc;
	struct vcs_iter_commit *cs;
	char *key, *seen = NULL;
	int rc;
	key = git_key(l);
	if (key && store_meta_get(l->ws.store, "reconciled_git", &seen, NULL) == 0 && seen &&
	    !strcmp(seen, key)) {
		free(seen);
		free(key);
		return 0;
	}
	free(seen);
	if ((rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e)) < 0) {
		free(key);
		return rc;
	}
	size_t problems_before = l->problems.len;
	bool adopted = false;
	struct off_rows off = {0};
	rc = vcs_iter_commits(l->ws.vcs, l->ws.op, l->init_head, 0, &cs, &nc, e);
	if (rc < 0) {
		free(key);
		log_rows_put(sr);
		return rc;
	}
	/* Sorted indexes: one history walk answers for every row, where a
	 * reachability query per row walked the history n times. */
	const char **shas = xmalloc((nc ? nc : 1) * sizeof(*shas));
	int *iters = xmalloc((n ? n : 1) * sizeof(*iters));
	for (size_t k = 0; k < nc; k++)
		shas[k] = cs[k].sha;
	qsort(shas, nc, sizeof(*shas), strp_cmp);
	for (size_t i = 0; i < n; i++)
		iters[i] = rows[i].iter;
	qsort(iters, n, sizeof(*iters), cmp_int);
	for (size_t i = 0; i < n; i++) {
		const struct log_row *r = &rows[i];
		if (!r->commit) {
			/* committed but the database missed it (killed between the two) */
			for (size_t k = 0; k < nc; k++) {
				if (cs[k].iter != r->iter ||
				    (cs[k].direction && r->direction &&
				     strcmp(cs[k].direction, r->direction)))
					continue;
				if (!l->ws.readonly &&
				    store_iter_set_commit(l->ws.store, r->iter, cs[k].sha, e) == 0) {
					vcs_index_reset(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL);
					store_event(l->ws.store, r->iter, "reconcile.adopt", cs[k].sha, NULL);
					adopted = true;
				}
				break;
			}
		} else if (!bsearch(&r->commit, shas, nc, sizeof(*shas), strp_cmp) &&
			   !vcs_commit_in_history(l->ws.vcs, r->commit) && !carried(cs, nc, r->iter)) {
			/* nothing on the branch carries it: repair has nothing to
			 * re-link to; said once for all such rows, below */
			off_add(&off, r);
		} else if (!bsearch(&r->commit, shas, nc, sizeof(*shas), strp_cmp) &&
			   !vcs_commit_in_history(l->ws.vcs, r->commit)) {
			loop_problem(l,
				"row %d cites commit %.12s, which is not in the history of HEAD "
				"(reset or rebased?); repair: run optloop repair to re-link it to the "
				"commit that carries Optloop-Iter: %d, or restore the branch (git "
				"reset --hard %.12s)",
				r->iter, r->commit, r->iter, r->commit);
		}
	}
	for (size_t k = 0; k < nc; k++) {
		if (bsearch(&cs[k].iter, iters, n, sizeof(*iters), cmp_int))
			continue;
		struct log_row r;
		int run_id;
		char *tree;
		loop_commit_row(&cs[k], &r);
		char *unbacked = loop_commit_unbacked(l, &cs[k], &r, &run_id, &tree);
		if (unbacked)
			loop_problem(l,
				"commit %.12s carries iteration %d as %s, but %s, so nothing backs its "
				"number and optloop repair will not take it back; a commit made by "
				"hand is not an iteration: take its Optloop-* trailers out (git commit "
				"--amend, or git rebase -i) or take the commit off the branch",
				cs[k].sha, cs[k].iter, row_status_name(r.status), unbacked);
		else
			loop_problem(l,
				"commit %.12s carries iteration %d, but OPT_LOG.md and the database have "
				"no row for it; repair: run optloop repair to rebuild the row from the "
				"commit's trailers (rows must follow in order; later rows are kept)",
				cs[k].sha, cs[k].iter);
		free(unbacked);
		free(tree);
		log_row_release(&r);
	}
	free(shas);
	free(iters);
	if (off.n)
		history_off_found(l, &off);
	off_release(&off);
	/* Remember a clean answer (an adoption changed the rows: walk again),
	 * and the commit that holds every row: where a reset back returns to */
	if (key && !adopted && l->problems.len == problems_before) {
		store_meta_set(l->ws.store, "reconciled_git", key, NULL);
		char head[VCS_OID_HEX], *ref = loop_ref(l, "history");
		if (!l->ws.readonly && n && vcs_head(l->ws.vcs, head, NULL) == 0)
			vcs_keep(l->ws.vcs, ref, head, NULL);
		free(ref);
	}
	free(key);
	vcs_iter_commits_free(cs, nc);
	log_rows_put(sr);
	return 0;
}

/* OPT_LOG.md has rows the database lacks: a database replaced, emptied or
 * cut short (or rows added by hand).  Re-rendering would drop them, so the
 * workspace is held until repair --rebuild takes them back. */
static void lost_rows_found(struct loop *l, const struct log_row *rows, size_t n,
			    const struct sb *have)
{
	struct optlog_doc d;
	memset(&d, 0, sizeof(d));
	if (optlog_parse(have->buf, have->len, &d, NULL, NULL) == 0) {
		int extra = 0;
		for (size_t i = 0; i < d.nrows; i++) {
			bool known = false;
			for (size_t k = 0; k < n && !known; k++)
				known = rows[k].iter == d.rows[i].iter;
			extra += !known;
		}
		l->lost_rows = extra;
	}
	optlog_doc_release(&d);
	if (l->lost_rows > 0)
		loop_problem(l,
			"OPT_LOG.md holds %d row%s the database does not (optloop.db was replaced, "
			"emptied or cut short, or rows were added by hand); nothing is written until "
			"they are taken back: optloop repair --rebuild rebuilds the database from "
			"OPT_LOG.md and the commits' Optloop trailers",
			l->lost_rows, l->lost_rows == 1 ? "" : "s");
	else
		loop_optlog_edited(l, rows, n, have);
}

int loop_writable(struct loop *l, const char *verb, struct err *e)
{
	if (l->lost_rows > 0)
		return err_set(e, ERR_REFUSED,
			       "%s refused: OPT_LOG.md holds %d row%s that optloop.db does not; "
			       "writing now would drop them.  Rebuild the database first: optloop "
			       "repair --rebuild",
			       verb, l->lost_rows, l->lost_rows == 1 ? "" : "s");
	if (l->history_off)
		return err_set(e, ERR_REFUSED, "%s refused: %s", verb, l->history_off);
	return 0;
}

int loop_reconcile_optlog(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	struct sb want = SB_INIT, have = SB_INIT;
	struct err re = {0};
	char *key = NULL;
	long long gen = -1;
	struct stat before;
	/* the file last found current, not touched since: not even read */
	if (loop_optlog_unchanged(l))
		return 0;
	bool stat_ok = stat(l->ws.optlog_path, &before) == 0;
	int rc = fsutil_read_file(l->ws.optlog_path, &have, &re);

	/* the file optloop last wrote, with nothing changed since that it
	 * shows: no rows read, nothing rendered (and the next open need not
	 * read it while its stat stays the same) */
	if (rc == 0 && loop_optlog_current(l, &have)) {
		if (stat_ok)
			loop_optlog_record_stat(l, &before, have.len);
		sb_release(&have);
		return 0;
	}
	/* a reader while a writer is at work: the file may be the writer's
	 * next to write (a log's row is in the database before it is in the
	 * file), and a reader could not write it anyway; the writer settles
	 * it, and what it finds is said to the next reader */
	if (l->ws.readonly && store_writer_busy(l->ws.store)) {
		sb_release(&have);
		return 0;
	}
	int frc = rc;
	if ((rc = store_rows_gen(l->ws.store, &gen, e)) < 0 ||
	    (rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e)) < 0) {
		sb_release(&have);
		return rc;
	}
	rc = frc;
	if (rc < 0 && rc != ERR_NOTFOUND) {
		/* not a file optloop may read (a FIFO, a device, too big): said,
		 * and left alone until it is replaced */
		loop_problem(l,
			"%s; the database keeps every row: move it aside and the next optloop "
			"command renders OPT_LOG.md again",
			re.msg);
		rc = 0;
	} else if (loop_render_optlog(l, rows, n, gen, rc == 0 ? &have : NULL, &want, &key)) {
		/* current, but not recorded so (written before the record was
		 * kept, or by hand): recorded now, so the next open is quick */
		loop_optlog_record(l->ws.store, have.buf, have.len, key);
		rc = 0;
	} else {
		struct optlog_doc d;
		bool behind = rc == ERR_NOTFOUND;
		rc = 0;
		if (!behind) {
			memset(&d, 0, sizeof(d));
			if (optlog_parse(have.buf, have.len, &d, NULL, NULL) == 0 && d.nrows <= n) {
				behind = true;
				for (size_t i = 0; i < d.nrows && behind; i++)
					behind = d.rows[i].iter == rows[i].iter;
			} else if (d.nrows == 0) {
				behind = true;
			}
			optlog_doc_release(&d);
		}
		/* a file a person edited is never replaced here: said, and left
		 * to the next command that writes it (which keeps their edits);
		 * one optloop wrote is brought up to date by a writer */
		bool ours = !behind || frc == ERR_NOTFOUND ||
			    (have.len <= want.len && !memcmp(want.buf, have.buf, have.len)) ||
			    loop_optlog_ours(l, &have);
		if (behind && ours && !l->ws.readonly) {
			rc = loop_write_optlog(l, e);
			if (rc == 0)
				store_event(l->ws.store, -1, "reconcile.optlog", "re-rendered", NULL);
		} else if (behind && !ours) {
			loop_optlog_edited(l, rows, n, &have);
		} else if (!behind) {
			lost_rows_found(l, rows, n, &have);
		}
	}
	free(key);
	sb_release(&want);
	sb_release(&have);
	log_rows_put(sr);
	return rc;
}

/* A change set aside during an iteration comes back once that iteration is
 * committed; after a crash this finishes the job. */
/* The tree iteration iter measured (its logged run's snapshot), or NULL. */
static char *measured_tree(struct loop *l, int iter)
{
	int run_id = 0;
	char *tree = NULL, *snap = NULL;
	struct store_run r;
	if (store_iter_run(l->ws.store, iter, &run_id, &tree, NULL) == 0 && run_id &&
	    store_run_get(l->ws.store, run_id, &r, NULL) == 0) {
		snap = r.snapshot ? xstrdup(r.snapshot) : NULL;
		store_run_release(&r);
	}
	free(tree);
	return snap;
}

/* Bring back the edit set aside during iter: only the edit, the change from
 * what iter measured to the aside state, onto the kernel as it is now (the
 * best, after a drop or revert).  With intent, the move is recorded first so
 * a bring-back cut off is finished by the next writer.  When the edit
 * overlaps what changed since, nothing is written, the aside is settled
 * with its ref kept, and ERR_REFUSED says how to apply it by hand. */
int loop_bring_back(struct loop *l, int iter, const char *sha, const char *ref, bool intent,
		      struct err *e)
{
	char *measured = measured_tree(l, iter);
	char merged[VCS_OID_HEX], head[VCS_OID_HEX];
	int id = 0, rc = 0;
	if (measured)
		rc = vcs_aside_merge(l->ws.vcs, measured, sha, loop_kpaths(l), l->ws.nkernel, merged, e);
	else
		snprintf(merged, sizeof(merged), "%s", sha);
	if (rc == ERR_FAIL) {
		store_aside_done(l->ws.store, sha, NULL);
		rc = err_set(e, ERR_REFUSED,
			     "the edit set aside during iteration %d overlaps the change that was "
			     "measured, so optloop did not bring it back onto the kernel; it is kept "
			     "as commit %.12s (ref %s): apply it by hand with git diff %.12s %.12s -- "
			     "<kernel paths> | git apply -3",
			     iter, sha, ref ? ref : "none", measured, sha);
	}
	if (rc == 0 && intent && (rc = vcs_head(l->ws.vcs, head, e)) == 0)
		rc = store_intent_begin(l->ws.store, INTENT_BACK, iter, head, merged, &id, e);
	if (rc == 0)
		rc = vcs_bring_back(l->ws.vcs, merged, ref, loop_kpaths(l), l->ws.nkernel, e);
	fault_point("commit.after_restore");
	if (rc == 0)
		rc = store_aside_done(l->ws.store, sha, e);
	if (rc == 0 && id)
		rc = store_intent_end(l->ws.store, id, e);
	free(measured);
	return rc;
}

static int reconcile_aside(struct loop *l, struct err *e)
{
	int iter = 0, rc;
	char *sha, *ref;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;

	if (store_aside_pending(l->ws.store, &iter, &sha, &ref, NULL) != 0)
		return 0;
	rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e);
	bool committed = false;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (rows[i].iter == iter && rows[i].commit)
			committed = true;
	if (rc == 0 && committed) {
		char work[VCS_OID_HEX], aside[VCS_OID_HEX], head[VCS_OID_HEX];
		vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL, work, NULL);
		vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, sha, aside, NULL);
		vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, "HEAD", head, NULL);
		if (!strcmp(work, aside)) {
			rc = store_aside_done(l->ws.store, sha, e);
		} else if (!strcmp(work, head)) {
			struct err be = {0};
			rc = loop_bring_back(l, iter, sha, ref, false, &be);
			if (rc == 0)
				loop_problem(l, "the change set aside during iteration %d is back in the "
					   "work tree",
					iter);
			else if (rc == ERR_REFUSED) {
				loop_problem(l, "%s", be.msg);
				rc = 0;
			} else if (e)
				*e = be;
		} else {
			loop_problem(l,
				"a change set aside during iteration %d (commit %.12s) is still waiting; "
				"the kernel has other edits now, so optloop left it: bring it back with "
				"git checkout %.12s -- <kernel paths>",
				iter, sha, sha);
		}
	}
	log_rows_put(sr);
	free(sha);
	free(ref);
	return rc;
}

/* An optloop commit killed while git wrote its index leaves the kernel's
 * index entries as they were before it: a drop's or revert's left the
 * dropped kernel staged (the next git commit of the user's would put the
 * dropped change back), a keep's left the kernel before it (the next git
 * commit would undo the kept change).  Once the lock is gone, and only
 * while the index holds one of those two kernels exactly (never what the
 * user staged), the kernel's index entries go back to HEAD's. */
static void reconcile_index(struct loop *l)
{
	struct log_rows *sr;
	if (vcs_index_locked(l->ws.vcs) ||
	    store_rows_before(l->ws.store, INT_MAX, 1, false, &sr, NULL) < 0)
		return;
	const struct log_row *last = sr->n ? &sr->v[sr->n - 1] : NULL;
	char idx[VCS_OID_HEX], row[VCS_OID_HEX], head[VCS_OID_HEX], before[VCS_OID_HEX];
	if (last && last->commit &&
	    vcs_index_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, idx, NULL) == 0 &&
	    vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, "HEAD", head, NULL) == 0 &&
	    strcmp(idx, head) != 0) {
		bool dropped = rules_row_restores(last->status) &&
			       vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, last->commit, row,
					       NULL) == 0 &&
			       !strcmp(idx, row);
		char *parent = xasprintf("%s~1", last->commit);
		bool stale = !dropped &&
			     vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, parent, before, NULL) == 0 &&
			     !strcmp(idx, before);
		free(parent);
		if ((dropped || stale) && vcs_index_reset(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL) == 0)
			loop_problem(l,
				"git's index held iteration %d's %s (a commit cut off while writing "
				"the index); its kernel entries are back to HEAD, so a git commit "
				"cannot %s",
				last->iter, dropped ? "dropped kernel" : "kernel from before its commit",
				dropped ? "bring the dropped change back" : "undo that commit's change");
	}
	log_rows_put(sr);
}

/* What a writer does first: stop what a killed optloop left running, settle
 * its runs, finish or undo its kernel moves, and bring the database, git
 * and OPT_LOG.md into step. */
int loop_reconcile_writer(struct loop *l, struct err *e)
{
	int rc;
	reconcile_orphans(l);
	if (vcs_index_locked(l->ws.vcs))
		loop_problem(l, "git's lock file .git/index.lock is there: a git command is running, or "
			   "one that was killed left it behind; when no git command is running, "
			   "remove it (rm .git/index.lock, in the repository) so that git status "
			   "and git commit work again");
	/* a write killed before its rename left NAME.tmp.PID beside the file */
	char *docs = xasprintf("%s/docs", l->ws.dir);
	int ntemps = fsutil_clear_atomic_temps(l->ws.dir) + fsutil_clear_atomic_temps(docs);
	free(docs);
	if (ntemps)
		loop_problem(l, "%d temp file%s of a write cut off before its rename %s removed (the "
			   "files themselves are whole: the old or the new)",
			ntemps, ntemps == 1 ? "" : "s", ntemps == 1 ? "was" : "were");
	/* in the middle of a merge, rebase, ... the tree and the history are
	 * neither side's: finishing a restore or bringing an edit back now
	 * would write into the operation (and the commands that would are
	 * refused, vcs_operation_check) */
	const char *finish, *gitop = vcs_operation(l->ws.vcs, &finish);
	if (gitop) {
		loop_problem(l, "%s in progress: %s; until then optloop leaves the kernel, git's "
			   "index and history alone, and verify, commit and confirm are refused",
			gitop, finish);
		if ((rc = settle_interrupted_runs(l, e)) < 0 || (rc = loop_reconcile_optlog(l, e)) < 0)
			return rc;
		return 0;
	}
	if ((rc = settle_interrupted_runs(l, e)) < 0 || (rc = reconcile_intents(l, e)) < 0 ||
	    (rc = vcs_clear_temps(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, e)) < 0 ||
	    (rc = loop_reconcile_git(l, e)) < 0 || (rc = reconcile_aside(l, e)) < 0 ||
	    (rc = loop_reconcile_optlog(l, e)) < 0)
		return rc;
	/* finish a revert/drop restore cut off by a crash */
	struct err ge = {0};
	if (guards_after_commit(&l->ws, NULL, &ge) < 0)
		loop_problem(l, "%s", ge.msg);
	else
		reconcile_index(l);
	return 0;
}
