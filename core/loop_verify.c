/* loop_verify — the verify step: what it refuses before a run starts (a
 * hand-made commit, changes outside the kernel, --include), the run itself
 * (begin, fds, pump, cancel, end: the verify job of loop_job.c) and the
 * measurement it leaves. */
#include "core/loop_impl.h"
#include "core/alloc.h"
#include "core/fault.h"
#include "core/fsutil.h"
#include "core/gatecfg.h"
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
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- verify -------------------------------------------------------------------- */

void loop_measurement_release(struct loop_measurement *m)
{
	free(m->command);
	free(m->log_path);
	free(m->tree);
	free(m->result_json);
	memset(m, 0, sizeof(*m));
}

static void shell_quote(struct sb *s, const char *arg)
{
	sb_addc(s, '\'');
	for (const char *p = arg; *p; p++) {
		if (*p == '\'')
			sb_adds(s, "'\\''");
		else
			sb_addc(s, *p);
	}
	sb_addc(s, '\'');
}

/* An attempt's raw output stays in trace/ as evidence: it moves from
 * iter-N.log (which the next run of the iteration writes) to
 * iter-N.attempt-<run>.log, and the store follows it. */
static int keep_attempt_log(struct loop *l, int run_id, struct err *e)
{
	struct store_run r;
	int rc = store_run_get(l->ws.store, run_id, &r, e);
	if (rc < 0)
		return rc;
	char *to = xasprintf("%s/iter-%d.attempt-%d.log", l->ws.trace_dir, r.iter, r.id);
	if (r.log_path && strcmp(r.log_path, to) && fsutil_exists(r.log_path)) {
		if (rename(r.log_path, to) < 0)
			rc = err_set(e, ERR_IO, "cannot keep the attempt's raw output %s as %s: %s",
				     r.log_path, to, strerror(errno));
		else {
			free(r.log_path);
			r.log_path = to;
			to = NULL;
			rc = store_run_update(l->ws.store, &r, e);
		}
	}
	free(to);
	store_run_release(&r);
	return rc;
}

/* A kernel change committed by hand since the last row: HEAD's kernel is not
 * the one optloop left (the last row's, or the best's after a drop or
 * revert).  Measured now, it would count as no change, and a drop's restore
 * would quietly undo it: refused, with the two ways on. */
static int hand_commit_check(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e);
	if (rc < 0)
		return rc;
	const struct log_row *last = n ? &rows[n - 1] : NULL, *best = log_rows_best(rows, n);
	bool back = last && rules_row_restores(last->status);
	const char *expect = !last || !last->commit ? NULL : back ? (best ? best->commit : NULL)
								 : last->commit;
	char want[VCS_OID_HEX], head[VCS_OID_HEX];
	if (expect && vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, expect, want, NULL) == 0 &&
	    vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, "HEAD", head, NULL) == 0 &&
	    strcmp(want, head))
		rc = err_set(e, ERR_REFUSED,
			     "verify refused: a commit made since iteration %d changed the kernel "
			     "(HEAD's kernel is not the one optloop left: %s commit %.12s), so a verify "
			     "would see no change and a drop would quietly undo it; make it this "
			     "iteration's change (git reset --soft to optloop's last commit: the "
			     "change stays in the tree, uncommitted, then optloop verify), or undo "
			     "it (git revert)",
			     last->iter, back ? "the best's" : "that iteration's", expect);
	log_rows_put(sr);
	return rc;
}

/* A change outside the kernel and the frozen scope would be measured with
 * the kernel, but never committed, and left in the tree by a drop: shown
 * and refused, or made part of the kernel with the user's consent
 * (--include PATH, for each of them). */
static int outside_check(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	size_t nkeep = l->ws.nkernel + l->ws.nfrozen + (o ? o->ninclude : 0);
	const char **keep = xcalloc(nkeep + 1, sizeof(*keep));
	size_t k = 0;
	for (size_t i = 0; i < l->ws.nkernel; i++)
		keep[k++] = l->ws.kernel[i];
	for (size_t i = 0; i < l->ws.nfrozen; i++)
		keep[k++] = l->ws.frozen[i];
	for (size_t i = 0; o && i < o->ninclude; i++)
		keep[k++] = o->include[i];
	struct vcs_change *ch = NULL;
	size_t n = 0;
	int rc = vcs_changes_outside(l->ws.vcs, keep, k, &ch, &n, e);
	free(keep);
	if (rc == 0 && n) {
		/* the names are the repository's, not the user's choice: spelled
		 * out where listed, shell-quoted in the command to paste */
		struct sb list = SB_INIT, flags = SB_INIT;
		for (size_t i = 0; i < n; i++) {
			sb_adds(&list, i ? ", " : "");
			vis_escape(ch[i].path, &list);
			sb_addf(&list, " (%s)", ch[i].what);
			sb_adds(&flags, " --include ");
			vis_shell_word(ch[i].path, &flags);
		}
		rc = err_set(e, ERR_REFUSED,
			     "verify refused: %zu file%s outside the kernel and the frozen scope "
			     "changed: %s. The run would measure %s with the kernel, but %s no "
			     "kernel change: never committed, and left in the tree by a drop. Undo "
			     "%s (git checkout -- PATH, or remove a new file); git-ignore %s if %s "
			     "no code the run uses (notes, scratch: .git/info/exclude); or make "
			     "%s part of the kernel: optloop verify%s",
			     n, n == 1 ? "" : "s", list.buf, n == 1 ? "it" : "them",
			     n == 1 ? "it is" : "they are", n == 1 ? "it" : "them",
			     n == 1 ? "it" : "them", n == 1 ? "it is" : "they are",
			     n == 1 ? "it" : "them", flags.buf);
		sb_release(&list);
		sb_release(&flags);
	}
	vcs_changes_free(ch, n);
	return rc;
}

/* An --include path is held to what init holds a kernel path to: it names
 * something (in the tree, or in HEAD for a deletion), not the whole
 * repository, git's directory or optloop's profile/, and no other
 * workspace's kernel (a drop here would put back this op's best of that
 * op's files). */
static int include_path_check(struct loop *l, const char *p, struct err *e)
{
	const char *bad = loop_kernel_path_unusable(l->ws.repo, vcs_gitdir(l->ws.vcs), p);
	if (bad)
		return err_set(e, ERR_USAGE, "--include %s %s; name the files the change is in", p,
			       bad);
	if (fsutil_path_under(p, "profile") || !strcmp(p, "profile"))
		return err_set(e, ERR_USAGE,
			       "--include %s lies in profile/, optloop's workspaces, which no "
			       "kernel holds",
			       p);
	char *full = fsutil_join(l->ws.repo, p);
	bool there = fsutil_exists(full) || vcs_path_in(l->ws.vcs, "HEAD", p);
	free(full);
	if (!there)
		return err_set(e, ERR_USAGE,
			       "--include %s: no such file or directory, in the tree or in HEAD "
			       "(give a path relative to the repository root)",
			       p);
	char **ops = NULL;
	size_t nops = 0;
	int rc = 0;
	if (workspace_list(l->ws.repo, &ops, &nops, NULL) < 0)
		return 0;
	for (size_t i = 0; rc == 0 && i < nops; i++) {
		if (!strcmp(ops[i], l->ws.op))
			continue;
		char **kern = NULL;
		size_t nk = workspace_kernel_of(l->ws.repo, ops[i], &kern);
		for (size_t k = 0; rc == 0 && k < nk; k++)
			if (fsutil_path_under(p, kern[k]) || fsutil_path_under(kern[k], p) ||
			    !strcmp(p, kern[k]))
				rc = err_set(e, ERR_REFUSED,
					     "verify refused: --include %s %s op %s's kernel (%s): a "
					     "drop or revert here would put back this op's best of it "
					     "and lose %s's work; change it in its own workspace "
					     "(optloop --op %s)",
					     p, fsutil_path_under(kern[k], p) ? "holds" : "is in",
					     ops[i], kern[k], ops[i], ops[i]);
		for (size_t k = 0; k < nk; k++)
			free(kern[k]);
		free(kern);
	}
	for (size_t i = 0; i < nops; i++)
		free(ops[i]);
	free(ops);
	return rc;
}

/* An --include naming what configures a pytest gate (gatecfg): refused in
 * every state, frozen or not in this workspace. */
static int include_gate_config_check(struct loop *l, const struct loop_verify_opts *o,
				     struct err *e)
{
	for (size_t i = 0; o && i < o->ninclude; i++) {
		const char *sec = gatecfg_pytest_section(l->ws.repo, o->include[i]);
		if (sec)
			return err_set(e, ERR_REFUSED,
				       "verify refused: --include %s: it configures the gate (pytest "
				       "reads its %s), so a change there could thin the gate, e.g. an "
				       "addopts that deselects tests, while it still reads \"(full)\"; "
				       "it stays frozen: undo the edit to it",
				       o->include[i], sec);
	}
	return 0;
}

/* The user's --include paths: not frozen, a path of the repository, and
 * as the best has it in HEAD (a drop puts back the best's version: one
 * committed after the best would be lost). */
static int include_check(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	if (!o || !o->ninclude)
		return 0;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e);
	if (rc < 0)
		return rc;
	const struct log_row *best = log_rows_best(rows, n);
	for (size_t i = 0; rc == 0 && i < o->ninclude; i++) {
		const char *p = o->include[i];
		for (size_t j = 0; rc == 0 && j < l->ws.nfrozen; j++)
			if (fsutil_path_under(p, l->ws.frozen[j]))
				rc = err_set(e, ERR_REFUSED,
					     "verify refused: --include %s is frozen (it is or lies in "
					     "%s): a change there is undone before any run, never "
					     "measured",
					     p, l->ws.frozen[j]);
		if (rc < 0)
			break;
		if (!*p || strstr(p, "..") || p[0] == '/') {
			rc = err_set(e, ERR_USAGE,
				     "--include %s: give a path of the repository, relative to its "
				     "root",
				     p);
			break;
		}
		if ((rc = include_path_check(l, p, e)) < 0)
			break;
		const char *one[] = {p};
		char at_best[VCS_OID_HEX], at_head[VCS_OID_HEX];
		if (best && best->commit &&
		    vcs_kernel_hash(l->ws.vcs, one, 1, best->commit, at_best, NULL) == 0 &&
		    vcs_kernel_hash(l->ws.vcs, one, 1, "HEAD", at_head, NULL) == 0 &&
		    strcmp(at_best, at_head) != 0)
			rc = err_set(e, ERR_REFUSED,
				     "verify refused: --include %s: a commit after the best (iteration "
				     "%d, %.12s) changed it, so a drop would put back the best's "
				     "version and lose that commit's; include it in a workspace made "
				     "after that commit, or undo this iteration's edit to it",
				     p, best->iter, best->commit);
	}
	log_rows_put(sr);
	return rc;
}

/* The --include paths join the kernel (the workspace's kernel list), said
 * in an event. */
static int include_in_kernel(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	if (!o || !o->ninclude)
		return 0;
	struct sb list = SB_INIT, added = SB_INIT;
	for (size_t i = 0; i < l->ws.nkernel; i++)
		sb_addf(&list, "%s%s", i ? "\n" : "", l->ws.kernel[i]);
	for (size_t i = 0; i < o->ninclude; i++) {
		bool have = false;
		for (size_t j = 0; j < l->ws.nkernel; j++)
			have |= fsutil_path_under(o->include[i], l->ws.kernel[j]);
		if (have)
			continue;
		sb_addf(&list, "%s%s", list.len ? "\n" : "", o->include[i]);
		sb_addf(&added, "%s%s", added.len ? ", " : "", o->include[i]);
	}
	int rc = 0;
	if (added.len) {
		rc = store_begin(l->ws.store, e);
		if (rc == 0)
			rc = store_meta_set(l->ws.store, "kernel", list.buf, e);
		if (rc == 0) {
			char *d = xasprintf("made part of the kernel by --include: %s", added.buf);
			rc = store_event(l->ws.store, -1, "kernel.include", d, e);
			free(d);
		}
		if (rc == 0)
			rc = store_commit(l->ws.store, e);
		else
			store_rollback(l->ws.store);
		if (rc == 0) {
			loop_free_list(l->ws.kernel, l->ws.nkernel);
			loop_split_lines(list.buf, &l->ws.kernel, &l->ws.nkernel);
		}
	}
	sb_release(&list);
	sb_release(&added);
	return rc;
}

int loop_verify_begin(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	struct where w;
	struct sb cmd = SB_INIT;
	char head[VCS_OID_HEX] = "";
	char *log_path = NULL, *branch = NULL;
	const struct patset *ps;
	int rc;

	if (loop_writable(l, "verify", e) < 0)
		return ERR_REFUSED;

	if (l->ws.readonly)
		return err_set(e, ERR_BUSY,
			       "verify refused: this optloop opened the workspace read-only "
			       "(another one is writing to it)");
	if ((rc = vcs_operation_check(l->ws.vcs, "verify", "verify", e)) < 0)
		return rc;
	if ((rc = loop_load_contract(l, e)) < 0 || (rc = loop_where(l, &w, e)) < 0)
		return rc;
	if ((rc = include_gate_config_check(l, o, e)) < 0)
		return rc;
	if ((rc = loop_step_check(l, STEP_VERIFY, &w, e)) < 0)
		return rc;
	if (w.state == ST_NEED_BASELINE) {
		if (o && o->gate_k)
			return err_set(e, ERR_REFUSED,
				       "verify refused: the baseline (iteration 0) needs the full "
				       "gate; run optloop verify without --gate-k");
		if (w.kernel_changed)
			return err_set(e, ERR_REFUSED,
				       "verify refused: the baseline must be measured on the "
				       "unmodified kernel, but the kernel differs from HEAD (commit "
				       "or stash the change first, then run optloop verify)");
	}
	/* the frozen scope (hashed at the baseline), then stall and stop */
	int pending;
	if (guards_restore_pending(&l->ws, &pending))
		return err_set(e, ERR_REFUSED,
			       "verify refused: iteration %d's drop or revert is committed but the "
			       "restore of the best kernel after it is not%s, so the tree is not "
			       "the next iteration's change; %s, then run optloop status (it "
			       "commits the restore)",
			       pending, vcs_index_locked(l->ws.vcs) ? " (git's index is locked)" : "",
			       vcs_index_locked(l->ws.vcs)
				       ? "when no git command is running, remove .git/index.lock"
				       : "see optloop status for what stopped it");
	if ((rc = hand_commit_check(l, e)) < 0 || (rc = guards_verify_check(&l->ws, e)) < 0 ||
	    (rc = include_check(l, o, e)) < 0 || (rc = outside_check(l, o, e)) < 0 ||
	    (rc = include_in_kernel(l, o, e)) < 0)
		return rc;
	/* {best} in the validation command: the harness times the best's
	 * commit beside the work tree in one process (assets/bench/
	 * optloop_ab.py), and the verdict reads that pair; before a best
	 * exists (the baseline) the commit is HEAD, the tree itself */
	const char *val = l->contract->c.v[CF_VALIDATION];
	l->vpaired = strstr(val, "{best}") != NULL;
	if (l->vpaired) {
		struct measure_best b;
		char sha[VCS_OID_HEX] = "";
		if ((rc = measure_best(l->ws.store, &b, e)) == 0 && b.have && !b.commit)
			rc = err_set(e, ERR_REFUSED,
				     "verify refused: the validation command times the best at "
				     "{best}, and the best (iteration %d) is not committed yet (run "
				     "optloop commit)",
				     b.iter);
		if (rc == 0 && !b.have)
			rc = vcs_head(l->ws.vcs, sha, e);
		if (rc == 0) {
			char *v = loop_with_best(val, b.have ? b.commit : sha);
			sb_adds(&cmd, v);
			free(v);
		}
		measure_best_release(&b);
		if (rc < 0)
			goto out;
	} else {
		sb_adds(&cmd, val);
	}
	if (o && o->gate_k) {
		sb_adds(&cmd, " --gate-k ");
		shell_quote(&cmd, o->gate_k);
	}
	if (o && o->base) {
		sb_adds(&cmd, " --base ");
		shell_quote(&cmd, o->base);
	}
	if (o && o->profile)
		sb_adds(&cmd, " --profile");
	if (w.attempt_run && (rc = keep_attempt_log(l, w.attempt_run, e)) < 0)
		goto out;
	if ((rc = loop_patset(l, &ps, e)) < 0)
		goto out;
	vcs_head(l->ws.vcs, head, NULL);
	/* what is measured is the kernel as the run starts: an edit made while
	 * it runs is not part of it */
	char at_head[VCS_OID_HEX];
	if ((rc = vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL, l->vtree, e)) <
		    0 ||
	    (rc = vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, "HEAD", at_head, e)) < 0 ||
	    (rc = vcs_snapshot(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, l->vsnap, e)) < 0)
		goto out;
	l->vno_change = !strcmp(l->vtree, at_head);
	memcpy(l->vhead, head, sizeof(l->vhead));
	struct stat dbst;
	l->vdb_dev = l->vdb_ino = 0;
	if (stat(l->ws.db_path, &dbst) == 0) {
		l->vdb_dev = (unsigned long long)dbst.st_dev;
		l->vdb_ino = (unsigned long long)dbst.st_ino;
	}
	/* the row and its commit go on the branch measured (loop_record.c) */
	vcs_head_ref(l->ws.vcs, &branch, NULL);
	log_path = xasprintf("%s/iter-%d.log", l->ws.trace_dir, w.iter);
	struct run_spec spec = {
		.kind = RUN_VERIFY,
		.iter = w.iter,
		.command = cmd.buf,
		.cwd = l->ws.repo,
		.log_path = log_path,
		.trace_dir = l->ws.trace_dir,
		.timeout_s = o ? o->timeout_s : 0,
		.scope = o && o->gate_k ? SCOPE_SUBSET : SCOPE_FULL,
		.head = head[0] ? head : NULL,
		.branch = branch,
		.start_event = "verify.start",
		.alloc = loop_run_alloc(l),
		.ps = ps,
		.output = o ? o->output : NULL,
		.event = o ? o->event : NULL,
		.ctx = o ? o->ctx : NULL,
	};
	run_free(l->vrun);
	l->vrun = NULL;
	if ((rc = run_start(l->ws.store, &spec, &l->vrun, e)) == 0) {
		l->verifying = true;
		free(l->vcmd);
		l->vcmd = xstrdup(cmd.buf);
	}
out:
	free(log_path);
	free(branch);
	sb_release(&cmd);
	return rc;
}

int loop_verify_fds(const struct loop *l, int fds[2])
{
	return l->verifying ? run_fds(l->vrun, fds) : 0;
}

/* A raw-log write failure stops the run; loop_verify_end reports it. */
int loop_verify_pump(struct loop *l, int timeout_ms)
{
	return l->verifying ? run_pump(l->vrun, timeout_ms) : 0;
}

void loop_verify_cancel(struct loop *l)
{
	if (l->verifying)
		run_cancel(l->vrun);
}

const struct parse_result *loop_verify_result(const struct loop *l)
{
	return l->verifying ? run_result(l->vrun) : NULL;
}

static void fill_measurement(const struct store_run *r, struct loop_measurement *m)
{
	memset(m, 0, sizeof(*m));
	m->iter = r->iter;
	m->run_id = r->id;
	m->gate = r->gate;
	m->scope = r->scope;
	m->bench_ms = r->bench_ms;
	m->vs_best = r->vs_best;
	m->exit_status = r->exit_status;
	m->timed_out = r->timed_out;
	m->cancelled = r->cancelled;
	m->no_change = r->no_change;
	m->attempt = run_is_attempt(r->iter, r->gate, r->scope, r->bench_ms);
	m->seconds = r->t_end > r->t_start ? r->t_end - r->t_start : 0;
	m->command = r->command ? xstrdup(r->command) : NULL;
	m->log_path = r->log_path ? xstrdup(r->log_path) : NULL;
	m->tree = r->tree ? xstrdup(r->tree) : NULL;
	m->result_json = r->result_json ? xstrdup(r->result_json) : NULL;
}

/* The kernel files that differ between the snapshot snap and the work
 * tree, ", "-joined into out. */
static void changed_files(struct loop *l, const char *snap, struct sb *out)
{
	char **files = NULL;
	size_t n = 0;
	if (vcs_kernel_changed(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, snap, NULL, &files, &n,
			       NULL) == 0)
		for (size_t i = 0; i < n; i++)
			sb_addf(out, "%s%s", i ? ", " : "", files[i]);
	for (size_t i = 0; i < n; i++)
		free(files[i]);
	free(files);
	if (!out->len)
		sb_adds(out, "the kernel files");
}

/* What only the loop knows of a verify run, filled before it is recorded:
 * the kernel tree it measured (as the run started), the snapshot of it,
 * whether it changed anything (vs best is the verdict's: verify_in_tx).  A
 * kernel that changed while the run went makes it an attempt: which
 * version was measured is not known, and a row would commit the later
 * one as measured. */
static int verify_fill(void *ctx, struct store_run *r, const struct parse_result *res,
		       struct err *e)
{
	struct loop *l = ctx;
	char work[VCS_OID_HEX];
	(void)res;
	r->vs_best = NAN; /* the verdict's, set inside the run's transaction */
	/* the workspace deleted under the run (a validation command that runs
	 * git clean -x, or by hand): the database written to would be a file
	 * no one can open again, and the run would read as recorded */
	struct stat dbst;
	if (l->vdb_ino && (stat(l->ws.db_path, &dbst) != 0 ||
			   (unsigned long long)dbst.st_ino != l->vdb_ino ||
			   (unsigned long long)dbst.st_dev != l->vdb_dev))
		return err_set(e, ERR_HARNESS,
			       "the workspace %s was deleted or replaced while the run went (a "
			       "validation command that runs git clean -x does this; profile/ is "
			       "git-ignored): nothing of this run is recorded. Take git clean out of "
			       "the validation command, and put the workspace back from a copy "
			       "before running optloop again; the rows committed so far are in "
			       "the commits' Optloop-* trailers (git log --grep 'Optloop-Op: %s')",
			       l->ws.rel, l->ws.op);
	int rc = vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL, work, e);
	if (rc < 0)
		return rc;
	free(r->tree);
	r->tree = xstrdup(l->vtree);
	free(r->snapshot);
	r->snapshot = xstrdup(l->vsnap);
	r->no_change = l->vno_change;
	/* a commit made while it ran (a validation command that commits, a
	 * hand commit meanwhile): the iteration's change is then in a commit
	 * optloop did not make, and its row would commit nothing */
	char now[VCS_OID_HEX] = "";
	vcs_head(l->ws.vcs, now, NULL);
	if (strcmp(now, l->vhead) != 0) {
		json_t *j = r->result_json ? json_loads(r->result_json, 0, NULL) : NULL;
		if (!j)
			j = json_object();
		json_object_set_new(j, "head_moved", json_pack("{s:s, s:s}", "from", l->vhead,
							       "to", now));
		free(r->result_json);
		r->result_json = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		if (r->gate != GATE_ERROR)
			r->gate = GATE_INCOMPLETE;
		r->bench_ms = NAN;
	}
	if (strcmp(work, l->vtree) != 0) {
		struct sb files = SB_INIT;
		changed_files(l, l->vsnap, &files);
		json_t *j = r->result_json ? json_loads(r->result_json, 0, NULL) : NULL;
		if (!j)
			j = json_object();
		json_object_set_new(j, "tree_changed", json_string(files.buf));
		free(r->result_json);
		r->result_json = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		sb_release(&files);
		if (r->gate != GATE_ERROR)
			r->gate = GATE_INCOMPLETE;
		r->bench_ms = NAN;
	}
	return 0;
}

/* Inside the run's transaction: its verdict against the best, and with it
 * the run's one "vs best" figure, so no reader ever sees another. */
static int verify_in_tx(void *ctx, struct store *st, struct store_run *r, struct err *e)
{
	struct loop *l = ctx;
	struct stats_cmp c;
	/* a pair in one process: the run is its own session, role "pair" */
	if (l->vpaired && r->gate != GATE_FAIL) {
		int rc = store_session_put(st, r->id, r->id, "pair", e);
		if (rc < 0)
			return rc;
	}
	if (measure_judge_run(st, r->id, l->contract->c.threshold, &c, NULL) == 0) {
		r->vs_best = c.gain;
		stats_cmp_release(&c);
		/* the roofline beside the verdict, and its impossible flag */
		int rrc = loop_roofline_record(&l->contract->c, st, r->id, e);
		if (rrc < 0)
			return rrc;
		if (isfinite(r->vs_best)) {
			int rc = store_run_update(st, r, e);
			if (rc < 0)
				return rc;
		}
	}
	return store_event(st, r->iter, "verify.end", gate_verdict_name(r->gate), e);
}

int loop_verify_end(struct loop *l, struct loop_measurement *m, struct err *e)
{
	if (!l->verifying)
		return err_set(e, ERR_REFUSED, "no verify run is going");
	struct run_end_hooks h = {.fill = verify_fill, .in_tx = verify_in_tx, .ctx = l};
	int rc = run_end(l->vrun, &h, e);
	l->verifying = false;
	struct store_run *r = run_record(l->vrun);
	if (rc < 0)
		return rc;
	/* the trap lints over the measured diff, at verify: evidence beside the
	 * verdict, not a gate (log asks for the acknowledgement) */
	struct lint_findings lf = {0};
	int nlints = 0;
	if (!run_is_attempt(r->iter, r->gate, r->scope, r->bench_ms) &&
	    guards_lint(&l->ws, r->iter, &lf, NULL) == 0)
		nlints = (int)lf.n;
	lint_findings_release(&lf);
	if (m) {
		fill_measurement(r, m);
		m->nlints = nlints;
	}
	return 0;
}

int loop_measurement(struct loop *l, struct loop_measurement *m, struct err *e)
{
	struct where w;
	struct store_run r;
	int rc = loop_where(l, &w, e);
	if (rc < 0)
		return rc;
	if (w.state != ST_MEASURED && w.state != ST_LOGGED)
		return err_set(e, ERR_NOTFOUND, "iteration %d has no measurement yet", w.iter);
	if (w.state == ST_LOGGED)
		rc = w.run_id ? store_run_get(l->ws.store, w.run_id, &r, e)
			      : err_set(e, ERR_NOTFOUND, "no run");
	else
		rc = store_run_last(l->ws.store, w.iter, RUN_VERIFY, &r, e);
	if (rc < 0)
		return rc;
	fill_measurement(&r, m);
	/* the iteration's one "vs best" figure, the one its row carries: the
	 * confirm's when one ran (measure_win) */
	struct measure_win win;
	if (measure_win(l->ws.store, w.iter, r.id, &win, NULL) == 0) {
		if (isfinite(win.vs_best))
			m->vs_best = win.vs_best;
		measure_win_release(&win);
	}
	store_run_release(&r);
	return 0;
}
