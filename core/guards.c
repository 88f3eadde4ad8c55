/*
 * guards — frozen scope, lints with acknowledgement, trap checklist,
 * revert/drop restore, stall and re-assessment, stop, no-go, dispatch
 * evidence (see guards.h).  The rules live here; loop.c only calls in.
 */
#include "core/guards.h"
#include "core/measure.h"

#include "core/contract.h"
#include "core/dispatch.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/fsutil.h"
#include "core/lint.h"
#include "core/optlog.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/traps.h"
#include "core/vcs.h"
#include "core/workspace.h"
#include "core/rules.h"

#include <ctype.h>
#include <dirent.h>
#include <git2.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The rows, shared with the store (read-only): put back with
 * log_rows_put(*sr).  On error *sr is NULL and there are no rows. */
static int rows_load(const struct workspace *ws, struct log_rows **sr,
		     const struct log_row **rows, size_t *n, struct err *e)
{
	int rc = store_rows_get(ws->store, sr, e);
	*rows = rc < 0 ? NULL : (*sr)->v;
	*n = rc < 0 ? 0 : (*sr)->n;
	return rc;
}

/* ---- frozen scope ---------------------------------------------------------- */

/* Content hash of a frozen path: a file's git blob id; for a directory, the
 * blob id of its sorted "path hash" listing; "absent" when missing.  The
 * kernel hash cannot be used: it leaves the frozen paths out on purpose. */
static void content_hash(const char *full, int depth, char out[VCS_OID_HEX])
{
	struct stat st;
	git_oid oid;
	struct sb data = SB_INIT;

	if (lstat(full, &st) < 0) {
		snprintf(out, VCS_OID_HEX, "absent");
		return;
	}
	if (S_ISDIR(st.st_mode) && depth < 16) {
		DIR *d = opendir(full);
		char **names = NULL;
		size_t n = 0;
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    !strcmp(de->d_name, ".git") || !strcmp(de->d_name, "__pycache__"))
				continue;
			names = xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = xstrdup(de->d_name);
		}
		if (d)
			closedir(d);
		if (n)
			qsort(names, n, sizeof(*names), strp_cmp);
		for (size_t i = 0; i < n; i++) {
			char *sub = fsutil_join(full, names[i]);
			char h[VCS_OID_HEX];
			content_hash(sub, depth + 1, h);
			sb_addf(&data, "%s %s\n", names[i], h);
			free(sub);
			free(names[i]);
		}
		free(names);
	} else if (S_ISLNK(st.st_mode)) {
		char buf[PATH_MAX];
		ssize_t k = readlink(full, buf, sizeof(buf));
		sb_adds(&data, "link ");
		if (k > 0)
			sb_add(&data, buf, (size_t)k);
	} else if (S_ISREG(st.st_mode)) {
		/* streamed by libgit2: a frozen data file may be of any size */
		if (git_odb_hashfile(&oid, full, GIT_OBJECT_BLOB) == 0)
			git_oid_tostr(out, VCS_OID_HEX, &oid);
		else
			snprintf(out, VCS_OID_HEX, "unreadable");
		return;
	} else {
		/* a FIFO or a device in place of a frozen file: never opened (it
		 * could block or never end), and never equal to a file's hash */
		sb_addf(&data, "special %o", (unsigned)(st.st_mode & S_IFMT));
	}
	if (git_odb_hash(&oid, data.buf ? data.buf : "", data.len, GIT_OBJECT_BLOB) == 0)
		git_oid_tostr(out, VCS_OID_HEX, &oid);
	else
		snprintf(out, VCS_OID_HEX, "unhashable");
	sb_release(&data);
}

/* The frozen files whose content differs from their baseline, listed in
 * changed (", "-joined), the first in *first; a path seen for the first
 * time is recorded as its baseline when record (and the store is
 * writable).  Returns how many changed, or the store's error. */
static int frozen_scan(const struct workspace *ws, bool record, struct sb *changed,
		       const char **first, struct err *e)
{
	int rc = 0, nchanged = 0;
	*first = NULL;
	for (size_t i = 0; i < ws->nfrozen && rc == 0; i++) {
		const char *path = ws->frozen[i];
		char hash[VCS_OID_HEX];
		char *full = fsutil_join(ws->repo, path);
		content_hash(full, 0, hash);
		free(full);
		char *was = store_frozen_hash(ws->store, path);
		if (!was) {
			/* first sight of this path: this is its baseline */
			if (!record || store_readonly(ws->store))
				continue;
			rc = store_frozen_put(ws->store, path, hash, e);
			if (rc == 0)
				store_event(ws->store, -1, "frozen.record", path, NULL);
			continue;
		}
		if (strcmp(was, hash)) {
			if (!nchanged++)
				*first = path;
			sb_addf(changed, "%s%s", changed->len ? ", " : "", path);
		}
		free(was);
	}
	return rc < 0 ? rc : nchanged;
}

int guards_frozen_changed(const struct workspace *ws, struct sb *changed)
{
	const char *first;
	int n = frozen_scan(ws, false, changed, &first, NULL);
	return n < 0 ? 0 : n;
}

int guards_frozen_check(const struct workspace *ws, const char *verb, struct err *e)
{
	struct sb changed = SB_INIT;
	const char *first = NULL;
	int rc = frozen_scan(ws, true, &changed, &first, e);
	int nchanged = rc > 0 ? rc : 0;
	rc = rc < 0 ? rc : 0;
	if (rc == 0 && nchanged) {
		rc = err_set(e, ERR_REFUSED,
			     "%s refused: frozen file %s changed since the baseline%s%s%s (the "
			     "contract's frozen scope: the op's test, its naive reference and the "
			     "paths listed there). A test change belongs in a separate change: "
			     "restore it (git checkout -- %s), and if the test must change, commit "
			     "that on its own outside the loop and measure a new baseline",
			     verb, first, nchanged > 1 ? " (all changed: " : "",
			     nchanged > 1 ? changed.buf : "", nchanged > 1 ? ")" : "", first);
	}
	sb_release(&changed);
	return rc;
}

/* ---- stall and stop --------------------------------------------------------- */

/* The stall count of the workspace: the statistics module's rule (only a
 * win beyond noise resets it; not-comparable runs do not count). */
int guards_stall(const struct workspace *ws)
{
	int c = 0;
	measure_stall_count(ws->store, store_reassess_last(ws->store), &c, NULL);
	return c;
}

/* The stalled rows' iterations: "4, 5, 6"; a longer stall in spans of
 * consecutive ones ("1-200, 204"), so a long history stays one line. */
static void stall_iters(const struct log_row *rows, size_t n, int count, struct sb *out)
{
	size_t first = n - (size_t)count;
	for (size_t i = first; i < n; i++) {
		size_t j = i;
		while (count > 5 && j + 1 < n && rows[j + 1].iter == rows[j].iter + 1)
			j++;
		sb_addf(out, "%s%d", i > first ? ", " : "", rows[i].iter);
		if (j >= i + 2) {
			sb_addf(out, "-%d", rows[j].iter);
			i = j;
		}
	}
}

int guards_state(const struct workspace *ws, enum loop_state *st, int *stall, struct err *e)
{
	if (stall)
		*stall = -1;
	if (*st != ST_READY && *st != ST_EDITING)
		return 0;
	struct store_stop sr;
	bool stopped = store_stop_last(ws->store, &sr);
	store_stop_release(&sr);
	if (stopped) {
		*st = ST_STOPPING;
		return 0;
	}
	int c = guards_stall(ws);
	if (stall)
		*stall = c;
	if (rules_stalled(c))
		*st = ST_STALLED;
	return 0;
}

char *guards_next_step(const struct workspace *ws, enum loop_state st)
{
	if (st == ST_STOPPING) {
		struct store_stop sr;
		store_stop_last(ws->store, &sr);
		char *s = xasprintf("the loop is stopping (reason: %s%s%s): promote the best "
				    "candidate, or record the no-go with optloop report nogo",
				    sr.reason ? sr.reason : "?", sr.bound ? "; bound: " : "",
				    sr.bound ? sr.bound : "");
		store_stop_release(&sr);
		return s;
	}
	if (st != ST_STALLED)
		return NULL;
	struct log_rows *rs;
	int c = guards_stall(ws);
	/* the stall's rows are the newest c */
	if (store_rows_before(ws->store, INT_MAX, c > 0 ? (size_t)c : 0, false, &rs, NULL) < 0)
		return NULL;
	struct sb it = SB_INIT;
	if (c > 0)
		stall_iters(rs->v, rs->n, c, &it);
	char *s = xasprintf("re-assess before the next iteration: %d iterations in a row without a "
			    "win (%s). Profile the current kernel into trace/, then run optloop "
			    "reassess --profile trace/FILE --axes TEXT --techniques TEXT --next TEXT",
			    c, it.buf ? it.buf : "");
	sb_release(&it);
	log_rows_put(rs);
	return s;
}

int guards_verify_check(const struct workspace *ws, struct err *e)
{
	int rc = guards_frozen_check(ws, "verify", e);
	if (rc < 0)
		return rc;
	struct store_stop sr;
	if (store_stop_last(ws->store, &sr)) {
		rc = err_set(e, ERR_REFUSED,
			     "verify refused: the loop was stopped (reason: %s%s%s); promote the best "
			     "candidate or record the no-go (optloop report nogo)",
			     sr.reason, sr.bound ? "; bound: " : "", sr.bound ? sr.bound : "");
		store_stop_release(&sr);
		return rc;
	}
	struct log_rows *rs;
	int c = guards_stall(ws);
	/* the stall's rows are the newest c */
	if ((rc = store_rows_before(ws->store, INT_MAX, c > 0 ? (size_t)c : 0, false, &rs, e)) < 0)
		return rc;
	if (rules_stalled(c)) {
		struct sb it = SB_INIT;
		stall_iters(rs->v, rs->n, c, &it);
		rc = err_set(e, ERR_REFUSED,
			     "verify refused: the loop is STALLED: %d iterations in a row without a "
			     "win (%s). Re-assess first: profile the current kernel into trace/, then "
			     "run optloop reassess --profile trace/FILE --axes TEXT --techniques TEXT "
			     "--next TEXT",
			     c, it.buf);
		sb_release(&it);
	}
	log_rows_put(rs);
	return rc;
}

/* ---- lints and traps ---------------------------------------------------------- */

int guards_trap_mark(struct store *s, int iter, const char *trap, enum trap_state state,
		     const char *source, struct err *e)
{
	return store_trap_state_put(s, iter, trap, (int)state, source, e);
}

int guards_lint(const struct workspace *ws, int iter, struct lint_findings *out, struct err *e)
{
	struct lint_set *ls = NULL;
	struct lint_findings f = {0};
	struct sb diff = SB_INIT;
	char *extra = fsutil_join(ws->dir, "lints");
	const char **paths = xcalloc(ws->nkernel + ws->nfrozen + 1, sizeof(char *));
	size_t np = 0;
	int rc;

	for (size_t i = 0; i < ws->nkernel; i++)
		paths[np++] = ws->kernel[i];
	for (size_t i = 0; i < ws->nfrozen; i++)
		paths[np++] = ws->frozen[i];
	rc = lint_load(extra, &ls, e);
	if (rc == 0)
		rc = vcs_diff(ws->vcs, NULL, paths, np, &diff, e);
	if (rc == 0)
		rc = lint_diff(ls, diff.buf ? diff.buf : "", diff.len, &f, e);
	if (rc == 0 && !store_readonly(ws->store)) {
		rc = store_begin(ws->store, e);
		if (rc == 0)
			rc = store_findings_clear(ws->store, iter, e);
		for (size_t i = 0; rc == 0 && i < f.n; i++) {
			const struct lint_finding *x = &f.v[i];
			rc = store_finding_add(ws->store, iter, x, e);
			if (rc == 0) {
				char *src = xasprintf("lint:%s", x->lint);
				rc = guards_trap_mark(ws->store, iter, x->trap, TRAP_HIT, src, e);
				free(src);
			}
		}
		if (rc == 0)
			rc = store_commit(ws->store, e);
		else
			store_rollback(ws->store);
	}
	if (rc == 0 && out) {
		*out = f;
		memset(&f, 0, sizeof(f));
	}
	lint_findings_release(&f);
	lint_set_free(ls);
	sb_release(&diff);
	free(paths);
	free(extra);
	return rc;
}

int guards_log_check(const struct workspace *ws, int iter, bool ack, struct err *e)
{
	struct lint_findings f = {0};
	int rc = guards_lint(ws, iter, &f, e);
	if (rc < 0)
		return rc;
	if (f.n && !ack) {
		struct sb list = SB_INIT;
		for (size_t i = 0; i < f.n && i < 5; i++)
			sb_addf(&list, "; %s:%d %s [trap %s]", f.v[i].file, f.v[i].line, f.v[i].lint,
				f.v[i].trap);
		if (f.n > 5)
			sb_addf(&list, "; and %zu more", f.n - 5);
		rc = err_set(e, ERR_REFUSED,
			     "log refused: the diff of iteration %d has %zu lint finding%s%s. Review "
			     "them (optloop lint), then log again with --ack to record that you did",
			     iter, f.n, f.n == 1 ? "" : "s", list.buf);
		sb_release(&list);
	} else if (f.n) {
		rc = store_findings_ack(ws->store, iter, (int)f.n, e);
		if (rc == 0) {
			char d[64];
			snprintf(d, sizeof(d), "%zu finding%s acknowledged", f.n, f.n == 1 ? "" : "s");
			rc = store_event(ws->store, iter, "lint.ack", d, e);
		}
	}
	lint_findings_release(&f);
	return rc;
}

static void set_trap_state(void *ctx, const char *trap, int state)
{
	struct trap *t = traps_find(ctx, trap);
	if (t)
		t->state = (enum trap_state)state;
}

int guards_traps(const struct workspace *ws, int iter, struct traps_doc *d,
		 struct problems *probs, struct err *e)
{
	struct sb text = SB_INIT;
	int rc = fsutil_read_file(ws->traps_path, &text, e);
	if (rc == 0) {
		rc = traps_parse(text.buf, text.len, d, probs, e);
	} else if (rc == ERR_NOTFOUND) {
		/* no catalogue of its own yet: the shipped seed */
		err_clear(e);
		if (probs)
			memset(probs, 0, sizeof(*probs));
		rc = traps_seed(d, e);
	} else {
		/* a FIFO, a device, a file too big: said, never replaced by the seed */
		memset(d, 0, sizeof(*d));
		if (probs)
			memset(probs, 0, sizeof(*probs));
	}
	sb_release(&text);
	if (rc < 0)
		return rc;
	store_trap_states(ws->store, iter, set_trap_state, d);
	return 0;
}

int guards_trap_add(const struct workspace *ws, const char *title, const char *fact,
		    const char *why, const char *how, char **id_out, struct err *e)
{
	struct traps_doc d;
	struct sb out = SB_INIT;
	const char *id = NULL;
	int rc = guards_traps(ws, -1, &d, NULL, e);
	if (rc < 0)
		return rc;
	rc = traps_add(&d, title, fact, why, how, &id, e);
	if (rc == 0) {
		traps_render(&d, &out);
		sb_addc(&out, '\n');
		rc = fsutil_write_atomic(ws->traps_path, out.buf, out.len, e);
	}
	if (rc == 0) {
		store_event(ws->store, -1, "trap.add", id, NULL);
		if (id_out)
			*id_out = xstrdup(id);
	}
	sb_release(&out);
	traps_doc_release(&d);
	return rc;
}

/* ---- revert / drop ------------------------------------------------------------ */

bool guards_restore_pending(const struct workspace *ws, int *iter)
{
	struct log_rows *rs;
	const struct log_row *rows;
	size_t n;
	bool pending = false;
	if (rows_load(ws, &rs, &rows, &n, NULL) < 0)
		return false;
	const struct log_row *last = n ? &rows[n - 1] : NULL;
	const struct log_row *best = log_rows_best(rows, n);
	if (last && last->commit && rules_row_restores(last->status) &&
	    best && best->commit && !store_restore_done(ws->store, last->iter)) {
		pending = true;
		if (iter)
			*iter = last->iter;
	}
	log_rows_put(rs);
	return pending;
}

int guards_after_commit(const struct workspace *ws, char sha[41], struct err *e)
{
	struct log_rows *rs, *bs = NULL;
	const struct log_row *best = NULL;
	int rc;

	if (sha)
		sha[0] = '\0';
	/* the newest row and the best: not every row */
	if ((rc = store_rows_before(ws->store, INT_MAX, 1, false, &rs, e)) < 0)
		return rc;
	const struct log_row *last = rs->n ? &rs->v[rs->n - 1] : NULL;
	if (!last || !last->commit || !rules_row_restores(last->status))
		goto out;
	bool done = store_restore_done(ws->store, last->iter);
	int intent = 0;
	if (!done && (rc = store_rows_best(ws->store, &bs, &best, e)) < 0)
		goto out;
	if (done || !best || !best->commit)
		goto out;
	char head[VCS_OID_HEX], work[VCS_OID_HEX], want[VCS_OID_HEX];
	if ((rc = vcs_kernel_hash(ws->vcs, (const char *const *)ws->kernel, ws->nkernel, "HEAD", head, e)) < 0 ||
	    (rc = vcs_kernel_hash(ws->vcs, (const char *const *)ws->kernel, ws->nkernel, NULL, work, e)) < 0 ||
	    (rc = vcs_kernel_hash(ws->vcs, (const char *const *)ws->kernel, ws->nkernel, best->commit, want, e)) < 0)
		goto out;
	if (strcmp(head, work) && strcmp(work, want)) {
		/* edited since the commit: leave the user's work alone (a restore cut
		 * off half-way is finished by reconcile_intents before this runs) */
		rc = err_set(e, ERR_REFUSED,
			     "restore refused: the kernel changed after iteration %d was committed, "
			     "so optloop did not restore the best kernel (iteration %d); restore it "
			     "with git checkout %.12s -- <kernel paths>",
			     last->iter, best->iter, best->commit);
		goto out;
	}
	char made[VCS_OID_HEX] = "";
	if (strcmp(head, want)) {
		char *msg = xasprintf("optloop: restore the best kernel (iteration %d) after iteration "
				      "%d (%s)\n\nIteration %d was logged as %s, so the next "
				      "iteration starts from the best kernel.\n\nOptloop-Restore: %d\n"
				      "Optloop-Restored-From: %d\n",
				      best->iter, last->iter, row_status_name(last->status),
				      last->iter, row_status_name(last->status), last->iter,
				      best->iter);
		/* recorded before the first file is written: a restore cut off is
		 * finished the next time the workspace is opened */
		char hsha[VCS_OID_HEX];
		rc = vcs_head(ws->vcs, hsha, e);
		if (rc == 0)
			rc = store_intent_begin(ws->store, INTENT_RESTORE, last->iter, hsha, best->commit,
						&intent, e);
		if (rc == 0 && strcmp(work, want))
			rc = vcs_restore(ws->vcs, best->commit, (const char *const *)ws->kernel, ws->nkernel, e);
		fault_point("restore.after_checkout");
		if (rc == 0)
			rc = vcs_commit_kernel(ws->vcs, (const char *const *)ws->kernel, ws->nkernel, msg, made, e);
		free(msg);
		if (rc < 0)
			goto out;
		fault_point("restore.after_commit");
	}
	rc = store_restore_put(ws->store, last->iter, best->iter, made, e);
	if (rc == 0 && intent)
		rc = store_intent_end(ws->store, intent, e);
	if (rc == 0 && made[0]) {
		char *d = xasprintf("iteration %d back to iteration %d: %s", last->iter, best->iter,
				    made);
		store_event(ws->store, last->iter, "restore", d, NULL);
		free(d);
		if (sha)
			memcpy(sha, made, VCS_OID_HEX);
	}
out:
	log_rows_put(bs);
	log_rows_put(rs);
	return rc;
}

/* ---- re-assessment ------------------------------------------------------------ */

static bool blank(const char *s)
{
	for (; s && *s; s++)
		if (!isspace((unsigned char)*s))
			return false;
	return true;
}

static void fmt_time(double t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	localtime_r(&tt, &tm);
	strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Resolve the profile path (absolute, relative to the cwd, or relative to
 * the workspace) and check that it lies under trace/. */
static int profile_path(const struct workspace *ws, const char *p, char **out, struct err *e)
{
	switch (fsutil_file_under(p, ws->dir, ws->trace_dir, out)) {
	case 0:
		return 0;
	case ERR_NOTFOUND:
		return err_set(e, ERR_REFUSED,
			       "the profile %s does not exist (save the profiler's output under "
			       "%s/trace/ and name that file)",
			       p, ws->rel);
	case ERR_REFUSED:
		return err_set(e, ERR_REFUSED,
			       "the profile %s is not under %s/trace/ (copy it there so it stays "
			       "with the workspace)",
			       p, ws->rel);
	default:
		return err_set(e, ERR_REFUSED, "the profile %s is not a file", p);
	}
}

/* The stall's last row, and when it was logged. */
static int stall_began(const struct workspace *ws, int *after, double *t, struct err *e)
{
	struct log_rows *rs;
	const struct log_row *rows;
	size_t n;
	int rc = rows_load(ws, &rs, &rows, &n, e);
	if (rc < 0)
		return rc;
	*after = n ? rows[n - 1].iter : 0;
	log_rows_put(rs);
	*t = store_iter_logged_at(ws->store, *after);
	return 0;
}

int guards_profile_check(const struct workspace *ws, const char *profile, char **real,
			 struct err *e)
{
	char *path = NULL;
	int after, rc;
	double stall_t;

	if (real)
		*real = NULL;
	if (blank(profile))
		return err_set(e, ERR_USAGE, "a profile is needed: a file under %s/trace/",
			       ws->rel);
	if ((rc = stall_began(ws, &after, &stall_t, e)) < 0 ||
	    (rc = profile_path(ws, profile, &path, e)) < 0)
		return rc;
	struct stat sb;
	stat(path, &sb);
	double mt = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec / 1e9;
	if (mt <= stall_t) {
		char a[32], b[32];
		fmt_time(mt, a, sizeof(a));
		fmt_time(stall_t, b, sizeof(b));
		rc = err_set(e, ERR_REFUSED,
			     "the profile %s is older than the stall (written %s; the stall began %s "
			     "when iteration %d was logged). Profile the current kernel again and "
			     "save it under trace/",
			     profile, a, b, after);
		free(path);
		return rc;
	}
	/* a profile is what a profiler wrote, as promote --attach takes it */
	const char *kind = NULL;
	if ((rc = measure_file_kind(path, &kind, e)) < 0) {
		free(path);
		return rc;
	}
	if (!kind) {
		rc = err_set(e, ERR_REFUSED,
			     "the profile %s is not recognised as a profiler's output; profile the "
			     "current kernel and save what the profiler writes under trace/: "
			     MEASURE_PROFILE_KINDS,
			     profile);
		free(path);
		return rc;
	}
	if (real)
		*real = path;
	else
		free(path);
	return 0;
}

int guards_reassess(const struct workspace *ws, const struct loop_reassess *r, struct err *e)
{
	struct sb miss = SB_INIT;
	if (blank(r->profile))
		sb_adds(&miss, " --profile PATH (new profile evidence under trace/)");
	if (blank(r->axes))
		sb_adds(&miss, " --axes TEXT (the axes already tried)");
	if (blank(r->techniques))
		sb_adds(&miss, " --techniques TEXT (known techniques searched for this op family)");
	if (blank(r->next))
		sb_adds(&miss, " --next TEXT (the next direction and its expected effect)");
	if (miss.len) {
		int rc = err_set(e, ERR_USAGE, "reassess needs all four prompts; missing:%s",
				 miss.buf);
		sb_release(&miss);
		return rc;
	}
	sb_release(&miss);

	struct log_rows *rs;
	const struct log_row *rows;
	size_t n;
	int rc = rows_load(ws, &rs, &rows, &n, e);
	if (rc < 0)
		return rc;
	int c = guards_stall(ws);
	if (!rules_stalled(c)) {
		rc = err_set(e, ERR_REFUSED,
			     "reassess refused: the loop is not stalled (%d iteration%s without a win "
			     "since the last win or re-assessment; a re-assessment is due after %d)",
			     c, c == 1 ? "" : "s", RULES_STALL_AFTER);
		log_rows_put(rs);
		return rc;
	}
	if (!rows[n - 1].commit) {
		rc = err_set(e, ERR_REFUSED,
			     "reassess refused: iteration %d is logged but not committed (run "
			     "optloop commit first)",
			     rows[n - 1].iter);
		log_rows_put(rs);
		return rc;
	}
	int after = rows[n - 1].iter;
	log_rows_put(rs);

	char *real = NULL;
	if ((rc = guards_profile_check(ws, r->profile, &real, e)) < 0) {
		err_prefix(e, "reassess refused: ");
		return rc;
	}
	size_t rl = strlen(ws->repo);
	const char *rel = !strncmp(real, ws->repo, rl) && real[rl] == '/' ? real + rl + 1 : real;
	rc = store_reassess_add(ws->store, after, rel, r->axes, r->techniques, r->next, e);
	if (rc == 0)
		rc = store_event(ws->store, after, "reassess", r->next, e);
	free(real);
	return rc;
}

int guards_axes_summary(const struct workspace *ws, struct sb *out, struct err *e)
{
	struct log_rows *rs;
	const struct log_row *rows;
	size_t n;
	int rc = rows_load(ws, &rs, &rows, &n, e);
	if (rc < 0)
		return rc;
	bool *done = xcalloc(n ? n : 1, sizeof(bool));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			if (done[i] || rows[i].iter == 0)
				continue;
			bool has_axis = rows[i].axis && *rows[i].axis;
			if ((pass == 0) != has_axis)
				continue;
			const char *axis = has_axis ? rows[i].axis : "(no axis)";
			sb_addf(out, "%s:\n", axis);
			for (size_t k = i; k < n; k++) {
				bool kx = rows[k].axis && *rows[k].axis;
				if (done[k] || rows[k].iter == 0 || kx != has_axis ||
				    (has_axis && strcmp(rows[k].axis, axis)))
					continue;
				done[k] = true;
				sb_addf(out, "  iter %d %s: %s\n", rows[k].iter,
					row_status_name(rows[k].status), rows[k].direction);
			}
		}
	}
	free(done);
	log_rows_put(rs);
	return 0;
}

/* ---- stop and no-go --------------------------------------------------------- */

bool guards_bound_ok(const char *b)
{
	if (blank(b))
		return false;
	int letters = 0;
	bool digit = false;
	const char *p = b;
	for (; *p && !isdigit((unsigned char)*p); p++)
		if (isalpha((unsigned char)*p))
			letters++;
	digit = isdigit((unsigned char)*p);
	return letters >= 2 && digit;
}

static char *direction_key(const struct log_row *r)
{
	struct sb k = SB_INIT;
	const char *src = r->axis && *r->axis ? r->axis : r->direction ? r->direction : "";
	bool sp = false;
	for (const char *p = src; *p; p++) {
		if (isspace((unsigned char)*p)) {
			sp = k.len > 0;
			continue;
		}
		if (sp)
			sb_addc(&k, ' ');
		sp = false;
		sb_addc(&k, (char)tolower((unsigned char)*p));
	}
	return sb_detach(&k);
}

static bool has_evidence(const struct log_row *r)
{
	return isfinite(r->bench_ms) || r->gate_v == GATE_PASS || r->gate_v == GATE_FAIL;
}

static int distinct_directions(const struct log_row *rows, size_t n)
{
	char **keys = xcalloc(n ? n : 1, sizeof(char *));
	int nk = 0;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].iter == 0 || !has_evidence(&rows[i]))
			continue;
		char *k = direction_key(&rows[i]);
		bool seen = !*k;
		for (int j = 0; j < nk && !seen; j++)
			seen = !strcmp(keys[j], k);
		if (seen)
			free(k);
		else
			keys[nk++] = k;
	}
	for (int j = 0; j < nk; j++)
		free(keys[j]);
	free(keys);
	return nk;
}

int guards_stop(const struct workspace *ws, const char *reason, const char *bound, struct err *e)
{
	struct log_rows *rs;
	const struct log_row *rows;
	size_t n;
	int rc;

	if (!reason || (strcmp(reason, "cap") && strcmp(reason, "floor") &&
			strcmp(reason, "directions")))
		return err_set(e, ERR_USAGE, "stop needs --reason cap, floor or directions");
	if ((rc = rows_load(ws, &rs, &rows, &n, e)) < 0)
		return rc;
	int cands = 0;
	for (size_t i = 0; i < n; i++)
		cands += rows[i].iter > 0;
	if (n == 0) {
		rc = err_set(e, ERR_REFUSED, "stop refused: the baseline has not been measured yet");
	} else if (!rows[n - 1].commit) {
		rc = err_set(e, ERR_REFUSED,
			     "stop refused: iteration %d is logged but not committed (run optloop "
			     "commit first)",
			     rows[n - 1].iter);
	} else if (!strcmp(reason, "cap")) {
		int cap = ws->contract ? ws->contract->cap : 0;
		if (cap <= 0)
			rc = err_set(e, ERR_REFUSED,
				     "stop refused: the contract sets no iteration cap (add one with "
				     "optloop contract --set cap=N, or stop for another reason)");
		else if (cands < cap)
			rc = err_set(e, ERR_REFUSED,
				     "stop refused: the iteration cap is not reached (%d of %d "
				     "iterations logged)",
				     cands, cap);
	} else if (!strcmp(reason, "floor")) {
		if (!guards_bound_ok(bound))
			rc = err_set(e, ERR_REFUSED,
				     "stop refused: a floor needs the named bound and its number "
				     "(--bound 'HBM bandwidth: 4.1 of 4.8 TB/s', or launch overhead, or "
				     "timer resolution, with the measured figure)");
	} else {
		int d = distinct_directions(rows, n);
		if (d < 3)
			rc = err_set(e, ERR_REFUSED,
				     "stop refused: %d distinct direction%s with logged evidence; "
				     "stopping for directions needs at least 3 (by axis, or by "
				     "direction when rows have no axis)",
				     d, d == 1 ? "" : "s");
	}
	if (rc == 0 && bound && !blank(bound) && !guards_bound_ok(bound))
		rc = err_set(e, ERR_USAGE,
			     "stop: --bound must name the bound and give its number (e.g. 'HBM "
			     "bandwidth: 4.1 of 4.8 TB/s')");
	int last = n ? rows[n - 1].iter : 0;
	log_rows_put(rs);
	if (rc < 0)
		return rc;
	rc = store_stop_add(ws->store, last, reason, bound && !blank(bound) ? bound : NULL, e);
	if (rc == 0)
		rc = store_event(ws->store, last, "stop", reason, e);
	return rc;
}

/* Can row r be cited in a no-go as the candidate and the bench evidence?
 * Only a run that counts as evidence: its gate passed with a bench number
 * (not a failed gate a drop recorded), its time is not impossible, and no
 * implausible flag on its verdict or its confirm is left unexplained.  true, or false with why in
 * words appended to why. */
static bool nogo_evidence(const struct workspace *ws, const struct log_row *r, struct sb *why)
{
	if (!rules_run_measured(r->gate_v, r->bench_ms)) {
		if (r->gate_v == GATE_PASS)
			sb_addf(why, "iteration %d has no bench number", r->iter);
		else if (r->gate_v == GATE_NONE)
			sb_addf(why, "iteration %d's gate is not known", r->iter);
		else {
			struct sb g = SB_INIT;
			optlog_fmt_gate(r->gate_v, r->scope, &g);
			sb_addf(why, "iteration %d's gate is %s", r->iter, g.buf);
			sb_release(&g);
		}
		return false;
	}
	unsigned flags = 0, f = 0;
	int run_id = 0;
	if (store_iter_run(ws->store, r->iter, &run_id, NULL, NULL) == 0 && run_id &&
	    measure_verdict_get(ws->store, run_id, NULL, &f, NULL, NULL) == 0)
		flags |= f;
	struct store_confirm c;
	if (store_confirm_last(ws->store, r->iter, &c, NULL) == 0) {
		if (c.done)
			flags |= c.flags;
		store_confirm_release(&c);
	}
	/* a time faster than the hardware allows is no evidence, explained or not */
	if (flags & SF_IMPOSSIBLE) {
		sb_addf(why, "iteration %d's time is impossible", r->iter);
		return false;
	}
	if (!(flags & SF_IMPLAUSIBLE_MASK) || measure_explanations(ws->store, r->iter, NULL) > 0)
		return true;
	struct sb names = SB_INIT;
	stats_flags_text(flags & SF_IMPLAUSIBLE_MASK, &names);
	sb_addf(why, "iteration %d is flagged implausible (%s) and not explained", r->iter,
		names.buf);
	sb_release(&names);
	return false;
}

/* The no-go's candidate: the fastest logged row that counts as evidence;
 * NULL with *why (when rows were logged but none counts) saying which and
 * what to do. */
static const struct log_row *nogo_candidate(const struct workspace *ws, const struct log_row *rows,
					    size_t n, char **why)
{
	const struct log_row *cand = NULL;
	struct sb unfit = SB_INIT, one = SB_INIT;
	int nunfit = 0;
	*why = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct log_row *r = &rows[i];
		if (r->iter == 0 || blank(r->direction))
			continue;
		sb_reset(&one);
		if (!nogo_evidence(ws, r, &one)) {
			if (nunfit++ < 5)
				sb_addf(&unfit, "%s%s", unfit.len ? "; " : "", one.buf);
			continue;
		}
		if (!cand || r->bench_ms < cand->bench_ms)
			cand = r;
	}
	if (nunfit > 5)
		sb_addf(&unfit, "; and %d more", nunfit - 5);
	if (!cand && nunfit)
		*why = xasprintf("no logged iteration counts as evidence (a passing gate with a "
				 "bench number, no implausible flag left unexplained): %s. Verify a "
				 "candidate that does, or explain a flagged one (optloop promote --iter "
				 "N --explain TEXT)",
				 unfit.buf);
	sb_release(&one);
	sb_release(&unfit);
	return cand;
}

int guards_nogo(const struct workspace *ws, const char *computed, const char *none_why,
		struct sb *md, json_t **json, struct err *e)
{
	struct log_rows *rs;
	const struct log_row *rows;
	size_t n;
	int rc = rows_load(ws, &rs, &rows, &n, e);
	if (rc < 0)
		return rc;
	struct store_stop sr;
	bool have_stop = store_stop_last(ws->store, &sr);

	enum { I_BASE, I_CAND, I_GATE, I_BENCH, I_BOUND, NI };
	static const char *const key[NI] = {"baseline", "candidate", "gate", "bench", "bound"};
	static const char *const label[NI] = {"Baseline", "Reasoned candidate", "Gate status",
					      "Bench evidence", "Named bound"};
	static const char *const how[NI] = {
		"measure the baseline (optloop verify on the unmodified kernel, then log it)",
		"log at least one candidate iteration with its direction (optloop log --direction)",
		"a candidate needs a gate result (pass or FAIL) from a verify run",
		"a candidate needs a bench number from a verify run",
		"record the bound with its number (optloop stop --reason floor --bound 'NAME: "
		"NUMBER ...')",
	};
	char *val[NI] = {0};
	struct sb t = SB_INIT, b = SB_INIT;

	const struct log_row *base = n && rows[0].status == RS_BASE ? &rows[0] : NULL;
	if (base && isfinite(base->bench_ms)) {
		optlog_fmt_bench(base->bench_ms, &b);
		val[I_BASE] = xasprintf("%s ms (iteration 0%s%.7s)", b.buf, base->commit ? ", " : "",
					base->commit ? base->commit : "");
	}
	char *no_cand = NULL;
	const struct log_row *cand = nogo_candidate(ws, rows, n, &no_cand);
	if (cand) {
		val[I_CAND] = xasprintf("iteration %d (%s): %s", cand->iter,
					row_status_name(cand->status), cand->direction);
		if (cand->gate_v == GATE_PASS || cand->gate_v == GATE_FAIL ||
		    cand->gate_v == GATE_ERROR) {
			sb_reset(&t);
			optlog_fmt_gate(cand->gate_v, cand->scope, &t);
			val[I_GATE] = xasprintf("%s%s", t.buf,
						cand->scope == SCOPE_SUBSET
							? " (a -k subset: a signal only)"
							: "");
		}
		if (isfinite(cand->bench_ms)) {
			sb_reset(&b);
			optlog_fmt_bench(cand->bench_ms, &b);
			sb_reset(&t);
			optlog_fmt_vs_best(cand->vs_best, &t);
			val[I_BENCH] = xasprintf("%s ms at iteration %d (vs best %s)", b.buf, cand->iter,
						 t.buf);
		}
	}
	if (have_stop && guards_bound_ok(sr.bound))
		val[I_BOUND] = xasprintf("%s (stop reason: %s)", sr.bound, sr.reason);
	else if (guards_bound_ok(computed))
		val[I_BOUND] = xasprintf("%s (computed from the measured runs)", computed);
	char *bound_how = none_why && *none_why ? xasprintf("%s; the measured runs name none: %s",
							    how[I_BOUND], none_why)
						: NULL;

	int missing = 0;
	const char *hows[NI];
	for (int i = 0; i < NI; i++) {
		missing += !val[i];
		hows[i] = how[i];
	}
	if (bound_how)
		hows[I_BOUND] = bound_how;
	if (no_cand) {
		hows[I_CAND] = no_cand;
		hows[I_GATE] = hows[I_BENCH] = "none cited: no logged iteration counts as evidence "
						 "(see the reasoned candidate)";
	}
	const char *op = ws->op ? ws->op : "?";
	if (md) {
		if (!missing)
			sb_addf(md, "## No-go record: %s\n\n", op);
		else
			sb_addf(md, "## No-go record: %s — incomplete (%d of %d items missing)\n\n", op,
				missing, NI);
		for (int i = 0; i < NI; i++) {
			if (val[i])
				sb_addf(md, "- **%s:** %s\n", label[i], val[i]);
			else
				sb_addf(md, "- **%s:** MISSING — %s\n", label[i], hows[i]);
		}
	}
	if (json) {
		json_t *o = json_object(), *items = json_object(), *miss = json_array();
		json_object_set_new(o, "op", json_string(op));
		json_object_set_new(o, "complete", json_boolean(!missing));
		for (int i = 0; i < NI; i++) {
			json_t *it = json_object();
			json_object_set_new(it, "ok", json_boolean(val[i] != NULL));
			json_object_set_new(it, val[i] ? "value" : "how",
					    json_string(val[i] ? val[i] : hows[i]));
			json_object_set_new(items, key[i], it);
			if (!val[i])
				json_array_append_new(miss, json_string(key[i]));
		}
		json_object_set_new(o, "items", items);
		json_object_set_new(o, "missing", miss);
		*json = o;
	}
	if (missing) {
		struct sb m = SB_INIT;
		for (int i = 0; i < NI; i++)
			if (!val[i])
				sb_addf(&m, "%s%s", m.len ? ", " : "", key[i]);
		rc = err_set(e, ERR_FAIL, "no-go record incomplete: missing %s", m.buf);
		sb_release(&m);
	} else if (!store_readonly(ws->store)) {
		store_event(ws->store, -1, "nogo",
			    have_stop && guards_bound_ok(sr.bound) ? sr.bound : computed, NULL);
	}
	for (int i = 0; i < NI; i++)
		free(val[i]);
	free(no_cand);
	free(bound_how);
	sb_release(&t);
	sb_release(&b);
	store_stop_release(&sr);
	log_rows_put(rs);
	return rc;
}

/* ---- dispatch ------------------------------------------------------------- */

/* The environment an iteration was measured in, as "device|backend|pytorch|
 * triton" (branch and commit left out: they change with every iteration).
 * *key is NULL when the run printed no environment line. */
static int run_env(struct store *s, int iter, char **key, struct err *e)
{
	int run_id = 0;
	char *tree = NULL;
	*key = NULL;
	int rc = store_iter_run(s, iter, &run_id, &tree, e);
	free(tree);
	if (rc < 0 || run_id <= 0)
		return rc;
	struct store_env v;
	if (store_run_env(s, run_id, &v, NULL) == 0) {
		*key = xasprintf("%s|%s|%s|%s", v.device ? v.device : "", v.backend ? v.backend : "",
				 v.pytorch ? v.pytorch : "", v.triton ? v.triton : "");
		store_env_release(&v);
	}
	return 0;
}

int guards_dispatch_rows(const struct workspace *ws, struct dispatch_doc *d, struct err *e)
{
	memset(d, 0, sizeof(*d));
	store_dispatch_rows(ws->store, &d->v, &d->n);
	(void)e;
	return 0;
}

static int dispatch_write(const struct workspace *ws, struct err *e)
{
	struct dispatch_doc file, db;
	struct sb text = SB_INIT, out = SB_INIT;
	memset(&file, 0, sizeof(file));
	memset(&db, 0, sizeof(db));
	int rc = fsutil_read_file(ws->dispatch_path, &text, e);
	if (rc == 0)
		dispatch_parse(text.buf, text.len, &file, NULL, NULL);
	else if (rc != ERR_NOTFOUND)
		goto out; /* what is there is not overwritten unread */
	err_clear(e);
	rc = guards_dispatch_rows(ws, &db, e);
	if (rc == 0) {
		/* the template's placeholder, filled once */
		struct sb pre = SB_INIT;
		const char *p = file.preamble ? file.preamble : "", *q;
		while ((q = strstr(p, "{{op}}"))) {
			sb_add(&pre, p, (size_t)(q - p));
			sb_adds(&pre, ws->op ? ws->op : "");
			p = q + 6;
		}
		sb_adds(&pre, p);
		db.preamble = sb_detach(&pre);
		db.after = file.after ? xstrdup(file.after) : NULL;
		dispatch_render(&db, &out);
		rc = fsutil_write_atomic(ws->dispatch_path, out.buf, out.len, e);
	}
out:
	dispatch_doc_release(&db);
	dispatch_doc_release(&file);
	sb_release(&text);
	sb_release(&out);
	return rc;
}

/* The bucket's equal-weight geomean in one iteration's measured run, over
 * the samples whose shape it takes in; which shapes, in *shapes. */
struct bucket_acc {
	const struct dispatch_bucket *b;
	double logsum;
	size_t n;
	struct sb shapes;
};

static void bucket_sample(void *ctx, const struct parse_row *r, double ms)
{
	struct bucket_acc *a = ctx;
	if (!dispatch_bucket_matches(a->b, r) || !isfinite(ms) || ms <= 0)
		return;
	a->logsum += log(ms);
	a->n++;
	char *key = measure_shape_key(r);
	sb_addf(&a->shapes, "%s%s", a->shapes.len ? "; " : "", key);
	free(key);
}

static double bucket_ms(struct store *s, int iter, const struct dispatch_bucket *b, char **shapes)
{
	int run_id = 0;
	char *tree = NULL;
	struct bucket_acc a = {.b = b, .shapes = SB_INIT};
	*shapes = NULL;
	if (store_iter_run(s, iter, &run_id, &tree, NULL) == 0 && run_id > 0)
		store_run_samples(s, run_id, bucket_sample, &a, NULL);
	free(tree);
	*shapes = sb_detach(&a.shapes);
	return a.n ? exp(a.logsum / (double)a.n) : NAN;
}

/* What iteration iter measured, for a bucket that took in none of it. */
static char *all_shapes(struct store *s, int iter)
{
	static const struct dispatch_bucket any = {.ncmp = 1, .cmp = {{0, 'g', 0}}};
	char *shapes;
	bucket_ms(s, iter, &any, &shapes);
	return shapes;
}

/* Is iteration iter evidence for a dispatch row: logged, not the baseline,
 * with a bench number, its gate not failed, measured in the baseline's
 * environment?  ERR_REFUSED saying which it is not; *candidate when its
 * time may be the row's default (a row that may be a best, never a dropped
 * or reverted run's). */
static int dispatch_evidence_check(const struct workspace *ws, const struct log_row *rows,
				   size_t n, int iter, const char *base_env, bool *candidate,
				   struct err *e)
{
	const struct log_row *row = NULL;
	char *env = NULL;
	int rc = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].iter == iter)
			row = &rows[i];
	if (!row)
		return err_set(e, ERR_REFUSED,
			       "dispatch row refused: iteration %d has no row in the log (cite "
			       "iterations that were measured and logged)",
			       iter);
	if (row->iter == 0)
		return err_set(e, ERR_REFUSED,
			       "dispatch row refused: iteration 0 is the baseline itself; cite the "
			       "candidate iterations that measured the bucket");
	if (!isfinite(row->bench_ms))
		return err_set(e, ERR_REFUSED,
			       "dispatch row refused: iteration %d has no bench number, so it "
			       "measured nothing for this bucket",
			       row->iter);
	if (row->gate_v == GATE_FAIL || row->gate_v == GATE_ERROR || row->gate_v == GATE_INCOMPLETE)
		return err_set(e, ERR_REFUSED,
			       "dispatch row refused: iteration %d's gate is %s; a measurement "
			       "from a failed or incomplete run is not evidence",
			       row->iter, gate_verdict_name(row->gate_v));
	if ((rc = run_env(ws->store, row->iter, &env, e)) == 0 && base_env && env &&
	    strcmp(env, base_env))
		rc = err_set(e, ERR_REFUSED,
			     "dispatch row refused: iteration %d was measured in another "
			     "environment than the baseline (GPU, driver or library versions "
			     "changed), so it is not against the same baseline; re-measure "
			     "the bucket",
			     row->iter);
	else if (rc == 0)
		*candidate = log_row_can_be_best(row);
	free(env);
	return rc;
}

int guards_dispatch_add(const struct workspace *ws, const struct dispatch_row *r, struct err *e)
{
	/* dispatch.md is rewritten with the row: one that cannot be read (a
	 * FIFO, a device) refuses the row before anything is stored */
	int fd, frc = fsutil_open_read(ws->dispatch_path, 0, &fd, e);
	if (frc == 0)
		close(fd);
	else if (frc != ERR_NOTFOUND)
		return frc;
	err_clear(e);
	if (blank(r->evidence))
		return err_set(e, ERR_REFUSED,
			       "dispatch row refused: no evidence cited; a bucket row must name the "
			       "iterations that measured its shapes against the baseline "
			       "(--evidence 3,5)");
	int rc = dispatch_row_check(r, e);
	if (rc < 0)
		return rc;
	int *iters;
	size_t ni;
	if ((rc = dispatch_evidence_parse(r->evidence, &iters, &ni, e)) < 0)
		return rc;
	struct log_rows *rs;
	const struct log_row *rows;
	size_t n;
	if ((rc = rows_load(ws, &rs, &rows, &n, e)) < 0) {
		free(iters);
		return rc;
	}
	const struct log_row *base = n && rows[0].status == RS_BASE ? &rows[0] : NULL;
	char *base_env = NULL, *base_shapes = NULL;
	double cand_best = NAN, base_bucket = NAN;
	/* the default times are the bucket's own: the geomean of its shapes,
	 * never the whole run's */
	struct dispatch_bucket bk = {0};
	bool defaults = isnan(r->base_ms) || isnan(r->cand_ms);
	if (!base)
		rc = err_set(e, ERR_REFUSED,
			     "dispatch row refused: there is no baseline row to measure against yet");
	else
		rc = run_env(ws->store, 0, &base_env, e);
	if (rc == 0 && defaults)
		rc = dispatch_bucket_parse(r->bucket, &bk, e);
	int *cands = xcalloc(ni ? ni : 1, sizeof(int));
	size_t ncand = 0;
	for (size_t k = 0; rc == 0 && k < ni; k++) {
		bool cand = false;
		rc = dispatch_evidence_check(ws, rows, n, iters[k], base_env, &cand, e);
		if (rc == 0 && cand)
			cands[ncand++] = iters[k];
	}
	free(base_env);
	/* the default times are the bucket's own: the geomean of the shapes it
	 * takes in, in the baseline's run and in the fastest cited candidate's */
	if (rc == 0 && defaults) {
		base_bucket = bucket_ms(ws->store, 0, &bk, &base_shapes);
		if (isnan(base_bucket)) {
			char *all = all_shapes(ws->store, 0);
			rc = err_set(e, ERR_REFUSED,
				     "dispatch row refused: the bucket '%s' takes in none of the "
				     "shapes the baseline measured (%s); name the bucket by those "
				     "shapes, or give its times with --base-ms and --cand-ms",
				     r->bucket, all && *all ? all : "none");
			free(all);
		}
	}
	for (size_t k = 0; rc == 0 && defaults && k < ncand; k++) {
		char *shapes = NULL;
		double ms = bucket_ms(ws->store, cands[k], &bk, &shapes);
		if (!shapes || !base_shapes || strcmp(shapes, base_shapes))
			rc = err_set(e, ERR_REFUSED,
				     "dispatch row refused: iteration %d measured other shapes of the "
				     "bucket '%s' (%s) than the baseline (%s), so the two times would "
				     "not compare; cite iterations that ran the baseline's shapes",
				     cands[k], r->bucket, shapes && *shapes ? shapes : "none",
				     base_shapes ? base_shapes : "none");
		else if (isnan(cand_best) || ms < cand_best)
			cand_best = ms;
		free(shapes);
	}
	free(cands);
	struct dispatch_row c = *r;
	if (rc == 0 && isnan(c.cand_ms) && isnan(cand_best))
		rc = err_set(e, ERR_REFUSED,
			     "dispatch row refused: none of the cited iterations (%s) may be a best "
			     "(a keep whose gate passed with a bench number), so there is no candidate "
			     "time to default to; cite a kept iteration, or give --cand-ms",
			     r->evidence);
	free(base_shapes);
	dispatch_bucket_release(&bk);
	if (rc == 0) {
		if (isnan(c.base_ms))
			c.base_ms = base_bucket;
		if (isnan(c.cand_ms))
			c.cand_ms = cand_best;
		if (isnan(c.speedup) && c.cand_ms > 0)
			c.speedup = c.base_ms / c.cand_ms;
	}
	struct sb ev = SB_INIT;
	for (size_t k = 0; k < ni; k++)
		sb_addf(&ev, "%s%d", k ? "," : "", iters[k]);
	free(iters);
	log_rows_put(rs);
	if (rc < 0) {
		sb_release(&ev);
		return rc;
	}
	struct dispatch_row put = c;
	put.evidence = ev.buf;
	rc = store_dispatch_add(ws->store, &put, e);
	if (rc == 0)
		rc = store_event(ws->store, -1, "dispatch.add", c.bucket, e);
	sb_release(&ev);
	if (rc == 0)
		rc = dispatch_write(ws, e);
	return rc;
}
