/* loop — the state machine of a workspace: which step is due, verify / log /
 * commit with their refusals, start-up reconciliation of OPT_LOG.md, the
 * database and git history, and the telescoping set-aside. */
#include "core/loop.h"
#include "core/vis.h"
#include "core/loop_impl.h"
#include "core/measure.h"
#include "core/chart.h"
#include "core/contract.h"
#include "core/alloc.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/flaref.h"
#include "core/fsutil.h"
#include "core/guards.h"
#include "core/lint.h"
#include "core/optlog.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/rules.h"
#include "core/run.h"
#include "core/runner.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/vcs.h"
#include "core/workspace.h"

#include <jansson.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

double loop_now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

const char *const *loop_kpaths(const struct loop *l)
{
	return (const char *const *)l->ws.kernel;
}

void loop_free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Split newline-separated text into a list (empty lines dropped). */
void loop_split_lines(const char *text, char ***out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		if (len) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 4;
				*out = xrealloc(*out, cap * sizeof(char *));
			}
			(*out)[(*n)++] = xstrndup(text, len);
		}
		text += len + (nl ? 1 : 0);
	}
}

/* The pattern set the parser reads runs with: the built-in one and the
 * workspace's patterns/ folder, loaded once. */
int loop_patset(struct loop *l, const struct patset **ps, struct err *e)
{
	if (!l->ws.patset) {
		char *extra = xasprintf("%s/patterns", l->ws.dir);
		int rc = patset_load(NULL, fsutil_is_dir(extra) ? extra : NULL, &l->ws.patset, e);
		free(extra);
		if (rc < 0)
			return rc;
	}
	*ps = l->ws.patset;
	return 0;
}

/* ---- best and rows ---------------------------------------------------------- */

/* The rows, shared with the store (read-only): put back with
 * log_rows_put(*sr).  On error *sr is NULL and there are no rows. */
int loop_rows_get(struct store *s, struct log_rows **sr, const struct log_row **rows,
		    size_t *n, struct err *e)
{
	int rc = store_rows_get(s, sr, e);
	*rows = rc < 0 ? NULL : (*sr)->v;
	*n = rc < 0 ? 0 : (*sr)->n;
	return rc;
}

int loop_rows(struct loop *l, struct log_rows **rows, struct err *e)
{
	return store_rows_get(l->ws.store, rows, e);
}

int loop_rows_newest(struct loop *l, size_t limit, struct log_rows **rows, size_t *older,
		     struct err *e)
{
	return store_rows_newest(l->ws.store, limit, rows, older, e);
}

int loop_chart(struct loop *l, const char *shape, struct chart *c, struct err *e)
{
	int rc = chart_load(l->ws.store, shape, c, e);
	c->op = xstrdup(l->ws.op);
	return rc;
}

void loop_chart_release(struct chart *c)
{
	chart_release(c);
}

json_t *loop_chart_json(const struct chart *c)
{
	json_t *j = chart_json(c);
	json_object_set_new(j, "op", c->op ? json_string(c->op) : json_null());
	return j;
}

/* ---- state ------------------------------------------------------------------------- */

static int kernel_changed(struct loop *l, bool *changed, char work[VCS_OID_HEX], struct err *e)
{
	char head[VCS_OID_HEX];
	int rc = vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, "HEAD", head, e);
	if (rc == 0)
		rc = vcs_kernel_hash(l->ws.vcs, loop_kpaths(l), l->ws.nkernel, NULL, work, e);
	if (rc == 0)
		*changed = strcmp(head, work) != 0;
	return rc;
}

int loop_where(struct loop *l, struct where *w, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	long long count, key;
	char work[VCS_OID_HEX];
	int rc;

	memset(w, 0, sizeof(*w));
	w->stall = -1;
	/* how many rows, and the newest: not every row */
	if ((rc = store_rows_count(l->ws.store, &count, &key, e)) < 0 ||
	    (rc = store_rows_before(l->ws.store, INT_MAX, 1, false, &sr, e)) < 0)
		return rc;
	rows = sr->v;
	w->nrows = (int)count;
	if ((rc = kernel_changed(l, &w->kernel_changed, work, e)) < 0) {
		log_rows_put(sr);
		return rc;
	}
	if (sr->n > 0 && !rows[sr->n - 1].commit) {
		char *tree = NULL;
		w->state = ST_LOGGED;
		w->iter = rows[sr->n - 1].iter;
		if (store_iter_run(l->ws.store, w->iter, &w->run_id, &tree, NULL) == 0 && tree)
			w->telescoped = strcmp(tree, work) != 0;
		free(tree);
		log_rows_put(sr);
		if (l->missing)
			w->state = ST_NO_CONTRACT;
		return 0;
	}
	log_rows_put(sr);
	w->iter = (int)count;
	if (l->missing) {
		w->state = ST_NO_CONTRACT;
		return 0;
	}
	if (l->verifying) {
		w->state = ST_VERIFYING;
		return 0;
	}
	struct store_run r;
	if (store_run_last(l->ws.store, w->iter, RUN_VERIFY, &r, NULL) == 0) {
		bool attempt = r.t_end > 0 && run_is_attempt(r.iter, r.gate, r.scope, r.bench_ms);
		if (attempt) {
			w->attempt_run = r.id;
		} else if (r.t_end <= 0) {
			/* another optloop is running it (a crashed one is
			 * settled by reconciliation when a writer opens) */
			w->run_id = r.id;
			w->state = ST_VERIFYING;
		} else {
			w->run_id = r.id;
			w->state = ST_MEASURED;
			w->telescoped = r.tree && strcmp(r.tree, work) != 0;
			/* a confirm going has swapped the best in: not a second change */
			struct store_run u;
			if (store_run_unfinished(l->ws.store, &u, NULL) == 0) {
				if (u.kind == RUN_CONFIRM || u.kind == RUN_NOISE) {
					snprintf(w->session, sizeof(w->session), "%s", run_kind_name(u.kind));
					w->telescoped = false;
				}
				store_run_release(&u);
			}
		}
		store_run_release(&r);
		if (!attempt)
			return 0;
	}
	if (count == 0)
		w->state = ST_NEED_BASELINE;
	else
		w->state = w->kernel_changed ? ST_EDITING : ST_READY;
	/* a recorded stop, or a stall, overrides READY/EDITING */
	return guards_state(&l->ws, &w->state, &w->stall, e);
}

char *loop_ref(const struct loop *l, const char *kind)
{
	char *wt = vcs_worktree_id(l->ws.vcs);
	char *ref = wt ? xasprintf("refs/optloop/wt/%s/%s/%s", wt, kind, l->ws.op)
		       : xasprintf("refs/optloop/%s/%s", kind, l->ws.op);
	free(wt);
	return ref;
}

/* Why run_id was an attempt and where its raw output is, in words. */
char *loop_attempt_words(struct loop *l, int run_id)
{
	struct store_run r;
	if (!run_id || store_run_get(l->ws.store, run_id, &r, NULL) != 0)
		return NULL;
	const char *why;
	/* the kernel changed while it ran (verify_fill) */
	char *changed = NULL;
	json_t *rj = r.result_json ? json_loads(r.result_json, 0, NULL) : NULL;
	const char *tc = json_string_value(json_object_get(rj, "tree_changed"));
	if (tc)
		changed = xasprintf("the kernel changed while it ran (%s), so which version was "
				    "measured is not known",
				    tc);
	/* a commit made while it ran (verify_fill) */
	const json_t *hm = json_object_get(rj, "head_moved");
	if (hm && !changed)
		changed = xasprintf(
			"HEAD moved while it ran (%.12s to %.12s: a commit optloop did not make, "
			"by the validation command or by hand), so the change measured is not the "
			"iteration's to commit; a validation command must not commit: take the "
			"commit back (git reset --soft %.12s) and verify again",
			json_string_value(json_object_get(hm, "from")),
			json_string_value(json_object_get(hm, "to")),
			json_string_value(json_object_get(hm, "from")));
	/* the harness printed its gate verdict, then exited non-zero */
	bool passed_then = json_is_true(json_object_get(json_object_get(rj, "markers"),
							"gate_passed"));
	json_decref(rj);
	char *broke = NULL;
	switch (r.gate) {
	case GATE_ERROR:
		if (passed_then && r.exit_status > 0 && r.exit_status != 2) {
			broke = xasprintf("the gate passed, then the harness exited %d: a run that "
					  "ends in an error measures nothing, whatever it printed",
					  r.exit_status);
			why = broke;
			break;
		}
		why = r.exit_status == 2 ? "the gate test was not found (exit 2)"
		      : r.exit_status == 126 || r.exit_status == 127
			  ? "the validation command could not be run (the shell's exit 126/127: not "
			    "found or not executable)"
		      : r.exit_status < 0 ? "the validation command could not start"
					  : "the harness broke before a gate verdict";
		break;
	case GATE_INCOMPLETE:
		why = changed ? changed
		      : r.timed_out ? "it ran past its timeout"
		      : r.cancelled ? "it was cancelled"
				    : "it was killed before a gate verdict";
		break;
	case GATE_FAIL:
		why = "the unmodified kernel failed its own gate";
		break;
	case GATE_PASS:
		why = r.scope == SCOPE_SUBSET ? "it ran a -k subset of the gate"
					      : "it printed no bench number";
		break;
	default:
		why = "its output had no gate verdict";
		break;
	}
	/* a Slurm step that Slurm ended, or no allocation: its cause says more */
	struct store_step sp;
	char *slurm = NULL;
	if (store_step_get(l->ws.store, run_id, &sp, NULL) == 0) {
		if (sp.why && strcmp(sp.cause, "ok"))
			slurm = xasprintf("%s: %s", why, sp.why);
		store_step_release(&sp);
	}
	char *s = xasprintf("%s (gate %s; raw output in %s)", slurm ? slurm : why,
			    gate_verdict_name(r.gate), r.log_path ? r.log_path : "trace/");
	free(slurm);
	free(changed);
	free(broke);
	store_run_release(&r);
	return s;
}

/* The MEASURED step, with the status the evidence supports. */
static char *measured_step(struct loop *l, const struct where *w, struct due *d)
{
	struct store_run r;
	struct measure_win win;
	d->due = DUE_LOG;
	if (store_run_get(l->ws.store, w->run_id, &r, NULL) != 0)
		return xasprintf("log iteration %d: optloop log --direction TEXT --status "
				 "keep|revert|drop|floor",
				 w->iter);
	char *s;
	if (!rules_run_measured(r.gate, r.bench_ms)) {
		d->suggest = RS_DROP;
		d->why = xasprintf("the gate is %s%s: a row that did not pass cannot be kept; drop "
				   "(or revert) puts the best kernel back",
				   gate_verdict_name(r.gate), r.gate == GATE_PASS ? " but no bench number" : "");
		s = xasprintf("log iteration %d as drop (or revert): optloop log --direction TEXT "
			      "--status drop (gate %s%s: it cannot be kept; the kernel goes back to "
			      "the best)",
			      w->iter, gate_verdict_name(r.gate),
			      r.gate == GATE_PASS ? ", no bench number" : "");
	} else if (measure_win(l->ws.store, w->iter, r.id, &win, NULL) < 0) {
		s = xasprintf("log iteration %d: optloop log --direction TEXT --status "
			      "keep|revert|drop|floor",
			      w->iter);
	} else {
		enum rules_keep k = rules_keep(r.gate, r.bench_ms, win.win, win.verdict,
					       win.implausible, false);
		if (rules_implausible_confirm(k, win.source, win.verdict)) {
			/* one verify read it implausibly fast: the confirm measures it
			 * against the best interleaved, and its flags are the evidence */
			d->due = DUE_CONFIRM;
			d->suggest = RS_REVERT;
			d->why = xasprintf("%s: not keep; a confirm measures it again, against the "
					   "best interleaved",
					   win.why);
			s = xasprintf("confirm iteration %d: %s (optloop confirm measures it against "
				      "the best interleaved; if it still reads so, explain it with "
				      "optloop promote --explain TEXT or drop it); or log it: optloop "
				      "log --direction TEXT --status revert|drop",
				      w->iter, win.why);
		} else if (k == RULES_KEEP_IMPOSSIBLE) {
			d->suggest = RS_DROP;
			d->why = xasprintf("%s: never keep", win.why);
			s = xasprintf("%s: log it as drop: optloop log --direction TEXT --status drop "
				      "(no explanation lifts an impossible time)",
				      win.why);
		} else if (k == RULES_KEEP_IMPLAUSIBLE) {
			d->suggest = RS_DROP;
			d->why = xasprintf("%s: not keep until it is explained", win.why);
			s = xasprintf("%s: if the speedup is real, record why with optloop promote "
				      "--explain TEXT, then log it; else log it: optloop log --direction "
				      "TEXT --status drop",
				      win.why);
		} else if (k == RULES_KEEP_WIN) {
			d->suggest = RS_KEEP;
			d->why = xasprintf("a win beyond noise, by its %s", evidence_source_name(win.source));
			s = xasprintf("log iteration %d: optloop log --direction TEXT --status keep "
				      "(a win beyond noise, by its %s)",
				      w->iter, evidence_source_name(win.source));
		} else if (k == RULES_KEEP_CONFIRM) {
			d->due = DUE_CONFIRM;
			d->suggest = RS_REVERT;
			d->why = xasprintf("%s: no win beyond noise yet, so not keep (a confirm can show "
					   "one)",
					   win.why);
			s = xasprintf("confirm iteration %d before keeping it: optloop confirm (%s); "
				      "or log it: optloop log --direction TEXT --status revert|drop",
				      w->iter, win.why);
		} else {
			d->suggest = RS_REVERT;
			d->why = xasprintf("%s: not a win, so not keep", win.why ? win.why : "no verdict");
			s = xasprintf("log iteration %d: optloop log --direction TEXT --status "
				      "revert|drop|floor (%s: not a win)",
				      w->iter, win.why ? win.why : "no verdict");
		}
		measure_win_release(&win);
	}
	store_run_release(&r);
	return s;
}

static char *next_step(struct loop *l, const struct where *w, struct due *d)
{
	char *repair;
	d->due = DUE_NONE;
	d->suggest = RS_NONE;
	d->why = NULL;
	char *why = w->attempt_run && (w->state == ST_NEED_BASELINE || w->state == ST_READY ||
				       w->state == ST_EDITING)
			    ? loop_attempt_words(l, w->attempt_run)
			    : NULL;
	if (why) {
		d->due = DUE_RETRY;
		char *s = w->iter == 0
				  ? xasprintf("the baseline run was an attempt, not the baseline: %s; "
					      "fix what stopped it, then run optloop verify again on "
					      "the unmodified kernel (full gate)",
					      why)
				  : xasprintf("iteration %d's last run was an attempt, not an "
					      "iteration: %s; it gets no row: fix what stopped it, "
					      "then run optloop verify again",
					      w->iter, why);
		free(why);
		return s;
	}
	if ((repair = loop_repair_step(l, w, d)))
		return repair;
	switch (w->state) {
	case ST_NO_CONTRACT:
		d->due = DUE_CONTRACT;
		return xasprintf("complete the task contract in %s/docs/draft.md (optloop contract "
				 "--check lists what is missing; optloop contract --set FIELD=VALUE "
				 "fills a field)",
				 l->ws.rel);
	case ST_NEED_BASELINE:
		d->due = DUE_BASELINE;
		return xstrdup("measure the baseline: run optloop verify on the unmodified kernel "
			       "(full gate); it becomes iteration 0");
	case ST_READY:
		d->due = DUE_EDIT;
		return xasprintf("make one change to the kernel, then run optloop verify "
				 "(iteration %d)",
				 w->iter);
	case ST_EDITING:
		d->due = DUE_VERIFY;
		return xasprintf("run optloop verify to measure iteration %d", w->iter);
	case ST_VERIFYING:
		d->due = DUE_WAIT;
		return xasprintf("wait for the verify run of iteration %d to finish (or cancel it)",
				 w->iter);
	case ST_MEASURED:
		if (w->session[0]) {
			d->due = DUE_WAIT;
			return xasprintf("wait for the %s of iteration %d to finish (or cancel it)",
					 w->session, w->iter);
		}
		if (w->telescoped)
			d->due = DUE_SET_ASIDE;
		if (w->telescoped)
			return xasprintf("the kernel changed after iteration %d was measured: undo "
					 "the extra change, or set it aside with optloop log "
					 "--set-aside (it comes back after the commit)",
					 w->iter);
		if (w->iter == 0) {
			d->due = DUE_LOG;
			d->suggest = RS_BASE;
			return xstrdup("log the baseline: optloop log --direction TEXT (status base)");
		}
		return measured_step(l, w, d);
	case ST_LOGGED:
		d->due = w->telescoped ? DUE_SET_ASIDE : DUE_COMMIT;
		if (w->telescoped)
			return xasprintf("the kernel changed after iteration %d was measured: undo "
					 "the extra change, or set it aside with optloop commit "
					 "--set-aside (it comes back after the commit)",
					 w->iter);
		return xasprintf("commit iteration %d: optloop commit", w->iter);
	default: {
		d->due = w->state == ST_STALLED ? DUE_REASSESS : DUE_STOP;
		char *s = guards_next_step(&l->ws, w->state);
		return s ? s : xstrdup("see optloop status");
	}
	}
}

/* ---- open / close ---------------------------------------------------------------- */

/* A database copied in from another op's workspace: its rows, best and
 * contract are that op's, and no judgment may be made on them here. */
static int foreign_database(const struct workspace *ws, struct err *e)
{
	char *owner = NULL;
	int rc = 0;
	if (store_meta_get(ws->store, "op", &owner, NULL) == 0 && owner && *owner &&
	    strcmp(owner, ws->op) != 0) {
		struct sb who = SB_INIT; /* the file's text: shown, never acted on */
		vis_escape(owner, &who);
		rc = err_set(e, ERR_REFUSED,
			     "%s/optloop.db belongs to op %s, not %s (copied from another "
			     "workspace?): nothing was read from it or written to it; move it "
			     "aside (mv %s/optloop.db %s/optloop.db.foreign), then optloop init "
			     "--op %s with this op's options and optloop repair --rebuild take %s's "
			     "rows back from OPT_LOG.md and the commits",
			     ws->rel, who.buf, ws->op, ws->rel, ws->rel, ws->op, ws->op);
		sb_release(&who);
	}
	free(owner);
	return rc;
}

int loop_open(const char *cwd, const char *op, int flags, struct loop **out, struct err *e)
{
	struct loop *l = xcalloc(1, sizeof(*l));
	struct vcs *v;
	char *kernel = NULL;
	int rc;

	sb_init(&l->problems);
	if ((rc = vcs_open(cwd, &v, e)) < 0)
		goto fail;
	rc = workspace_find(vcs_workdir(v), op, &l->ws, e);
	l->ws.vcs = v; /* workspace_find fills in the paths only */
	if (rc < 0)
		goto fail;
	l->ws.readonly = flags & LOOP_READONLY;
	l->any_contract = flags & LOOP_ANY_CONTRACT;
	rc = store_open(l->ws.db_path,
			l->ws.readonly		       ? STORE_READONLY
			: (flags & LOOP_TRY_WRITE) ? STORE_NOWAIT
						   : 0,
			&l->ws.store, e);
	if ((rc == ERR_BUSY || rc == ERR_READONLY) && (flags & LOOP_TRY_WRITE)) {
		l->ws.readonly = true;
		l->ws.readonly_why = rc == ERR_BUSY ? "another optloop is writing"
						 : "this user may not write the workspace";
		rc = store_open(l->ws.db_path, STORE_READONLY, &l->ws.store, e);
	}
	if (rc < 0 || (rc = foreign_database(&l->ws, e)) < 0)
		goto fail;
	store_meta_get(l->ws.store, "kernel", &kernel, NULL);
	loop_split_lines(kernel, &l->ws.kernel, &l->ws.nkernel);
	free(kernel);
	store_meta_get(l->ws.store, "init_head", &l->init_head, NULL);
	if ((rc = loop_load_contract(l, e)) < 0)
		goto fail;
	if (l->ws.readonly) {
		struct store_intent in;
		if ((rc = loop_reconcile_optlog(l, e)) < 0)
			goto fail;
		if (store_intent_pending(l->ws.store, &in, NULL) == 0) {
			/* a move a live writer is making is not cut off */
			if (!store_writer_busy(l->ws.store))
				loop_problem(l,
					"a %s of the kernel during iteration %d was cut off; the next "
					"optloop command that writes (verify, log, commit, confirm) "
					"finishes it",
					tree_intent_what(in.kind),
					in.iter);
			store_intent_release(&in);
		}
	} else if ((rc = loop_reconcile_writer(l, e)) < 0) {
		goto fail;
	}
	loop_find_earlier_rows(l);
	*out = l;
	return 0;
fail:
	loop_close(l);
	return rc;
}

int loop_writer(struct loop *l, bool on, struct err *e)
{
	struct store *st;
	int rc;

	if (on != l->ws.readonly)
		return 0; /* already so */
	if (!on && (l->verifying || l->job))
		return 0; /* the run going keeps it */
	rc = store_open(l->ws.db_path, on ? STORE_NOWAIT : STORE_READONLY, &st, e);
	if (rc < 0)
		return rc; /* ERR_BUSY names the writer; the loop stays as it was */
	struct workspace probe = l->ws; /* the file may have been replaced since */
	probe.store = st;
	if ((rc = foreign_database(&probe, e)) < 0) {
		store_close(st);
		return rc;
	}
	store_close(l->ws.store);
	l->ws.store = st;
	l->ws.readonly = !on;
	if (!on)
		return 0;
	/* what another writer did meanwhile, and what a crashed one left */
	char *kernel = NULL;
	loop_free_list(l->ws.kernel, l->ws.nkernel);
	store_meta_get(l->ws.store, "kernel", &kernel, NULL);
	loop_split_lines(kernel, &l->ws.kernel, &l->ws.nkernel);
	free(kernel);
	free(l->init_head);
	l->init_head = NULL;
	store_meta_get(l->ws.store, "init_head", &l->init_head, NULL);
	sb_reset(&l->problems);
	l->lost_rows = 0;
	if ((rc = loop_load_contract(l, e)) == 0)
		rc = loop_reconcile_writer(l, e);
	if (rc == 0)
		loop_find_earlier_rows(l);
	if (rc < 0) {
		struct err ignored = {0};
		loop_writer(l, false, &ignored);
	}
	return rc;
}

int loop_workspaces(const char *cwd, bool read, struct loop_summary **out, size_t *n,
		    struct err *e)
{
	struct vcs *v;
	char **ops = NULL;
	size_t nops = 0;
	*out = NULL;
	*n = 0;
	int rc = vcs_open(cwd, &v, e);
	if (rc < 0)
		return rc;
	rc = workspace_list(vcs_workdir(v), &ops, &nops, e);
	char *repo = xstrdup(vcs_workdir(v));
	vcs_free(v);
	if (rc < 0) {
		free(repo);
		return rc;
	}
	*out = xcalloc(nops ? nops : 1, sizeof(**out));
	for (size_t i = 0; i < nops; i++) {
		struct loop_summary *s = &(*out)[(*n)++];
		struct loop *l;
		struct err le = {0};
		s->op = ops[i];
		s->best_ms = s->base_ms = NAN;
		if (!read)
			continue;
		if (loop_open(repo, ops[i], LOOP_READONLY, &l, &le) < 0) {
			s->error = xstrdup(le.msg);
			continue;
		}
		struct loop_status st;
		if (loop_status(l, &st, &le) == 0) {
			s->state = st.state;
			s->iteration = st.iteration;
			s->has_best = st.has_best;
			s->best_iter = st.best_iter;
			s->best_ms = st.best_ms;
			s->best_unconfirmed = st.best_unconfirmed;
			loop_status_release(&st);
		} else {
			s->error = xstrdup(le.msg);
		}
		struct log_rows *rs;
		if (store_rows_get(l->ws.store, &rs, NULL) == 0) {
			if (rs->n && rs->v[0].status == RS_BASE)
				s->base_ms = rs->v[0].bench_ms;
			log_rows_put(rs);
		}
		loop_close(l);
	}
	free(ops); /* the names now belong to the summaries */
	free(repo);
	return 0;
}

void loop_summaries_release(struct loop_summary *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].op);
		free(v[i].error);
	}
	free(v);
}

void loop_close(struct loop *l)
{
	if (!l)
		return;
	loop_job_close(l);
	run_free(l->vrun);
	free(l->vcmd);
	workspace_release(&l->ws);
	if (l->contract)
		loop_contract_put(&l->contract->c);
	free(l->missing);
	free(l->history_off);
	free(l->init_head);
	free(l->optlog_note);
	sb_release(&l->problems);
	free(l);
}

struct alloc *loop_run_alloc(struct loop *l)
{
	struct slurm_runner r;
	const char *v = l->contract ? l->contract->c.runner : NULL;
	if (slurm_runner_parse(v, &r, NULL) < 0 || !r.slurm) {
		slurm_runner_release(&r);
		alloc_free(l->ws.alloc);
		l->ws.alloc = NULL;
		/* back to local: an allocation held for the old Runner is given back */
		if (!l->ws.readonly)
			alloc_release_recorded(l->ws.store, l->ws.dir, "the contract's Runner is local now",
					       NULL, NULL);
		return NULL;
	}
	l->alloc_used = true;
	if (!l->ws.alloc)
		l->ws.alloc = alloc_new(l->ws.store, l->ws.dir, &r);
	else if (strcmp(alloc_runner(l->ws.alloc), r.canon)) {
		alloc_free(l->ws.alloc);
		l->ws.alloc = alloc_new(l->ws.store, l->ws.dir, &r);
	}
	slurm_runner_release(&r);
	return l->ws.alloc;
}

bool loop_allocation_used(const struct loop *l)
{
	return l->alloc_used;
}

bool loop_readonly(const struct loop *l)
{
	return l->ws.readonly;
}

const struct workspace *loop_workspace(const struct loop *l)
{
	return &l->ws;
}

const char *loop_repo_dir(const struct loop *l)
{
	return l->ws.repo;
}

const char *loop_dir(const struct loop *l)
{
	return l->ws.dir;
}

const char *loop_contract_path(const struct loop *l)
{
	return l->ws.contract_path;
}

int loop_event(struct loop *l, const char *kind, const char *detail, struct err *e)
{
	return store_event(l->ws.store, -1, kind, detail, e);
}

/* ---- init ---------------------------------------------------------------------- */

/* ---- init: the frozen scope ------------------------------------------------ */

/* ---- status -------------------------------------------------------------------- */

static char **dup_list(char *const *v, size_t n)
{
	char **out = xcalloc(n ? n : 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

void loop_probe_commands(const char **probe, const char **apps)
{
	measure_probe_commands(probe, apps, NULL);
}

int loop_status(struct loop *l, struct loop_status *st, struct err *e)
{
	struct where w;
	struct log_rows *sr;
	const struct log_row *best;
	int rc;

	memset(st, 0, sizeof(*st));
	if (!l->verifying && (rc = loop_load_contract(l, e)) < 0)
		return rc;
	if ((rc = loop_where(l, &w, e)) < 0)
		return rc;
	if ((rc = store_rows_best(l->ws.store, &sr, &best, e)) < 0)
		return rc;
	st->state = w.state;
	st->iteration = w.iter;
	struct due d;
	st->next = next_step(l, &w, &d);
	/* a changed frozen file: verify, log --commit and commit refuse it,
	 * so it comes first (the step after it stays what it was) */
	struct sb frozen = SB_INIT;
	if (w.state != ST_NO_CONTRACT && guards_frozen_changed(&l->ws, &frozen) > 0) {
		char *then = st->next;
		st->next = xasprintf("the frozen scope changed since the baseline (%s): restore it (git checkout "
				     "-- %s), since verify, log --commit and commit refuse it; then: "
				     "%s",
				     frozen.buf, frozen.buf, then);
		free(then);
	}
	sb_release(&frozen);
	if (l->history_off) {
		free(st->next);
		st->next = xstrdup("put the branch back as the problem above says: until then verify, log, "
				   "commit, confirm and noise are refused");
	}
	st->due = d.due;
	st->suggest = d.suggest;
	st->suggest_why = d.why;
	st->has_best = best != NULL;
	if (best) {
		st->best_iter = best->iter;
		st->best_ms = best->bench_ms;
		st->best_vs_best = best->vs_best;
		st->best_unconfirmed = best->unconfirmed != NULL;
	}
	log_rows_put(sr);
	st->op = xstrdup(l->ws.op);
	st->workspace = xstrdup(l->ws.dir);
	st->repo = xstrdup(l->ws.repo);
	st->kernel = dup_list(l->ws.kernel, l->ws.nkernel);
	st->nkernel = l->ws.nkernel;
	st->frozen = dup_list(l->ws.frozen, l->ws.nfrozen);
	st->nfrozen = l->ws.nfrozen;
	st->missing = l->missing ? xstrdup(l->missing) : NULL;
	st->problems = l->problems.len ? xstrdup(l->problems.buf) : NULL;
	st->optlog_note = l->optlog_note ? xstrdup(l->optlog_note) : NULL;
	st->telescoped = w.telescoped;
	st->readonly = l->ws.readonly;
	st->readonly_why = l->ws.readonly_why;
	st->last_run = w.run_id;
	st->attempt_run = w.attempt_run;
	st->stall = w.stall >= 0 ? w.stall : guards_stall(&l->ws);
	st->stall_limit = RULES_STALL_AFTER;
	st->attempt = loop_attempt_words(l, w.attempt_run);
	const char *pc, *pa;
	measure_probe_commands(&pc, &pa, &st->probe_env);
	st->validation = l->contract->c.v[CF_VALIDATION] ? xstrdup(l->contract->c.v[CF_VALIDATION])
							  : NULL;
	st->probe = xstrdup(pc);
	st->probe_apps = xstrdup(pa);
	return 0;
}

void loop_status_release(struct loop_status *st)
{
	free(st->next);
	free(st->suggest_why);
	free(st->op);
	free(st->workspace);
	free(st->repo);
	loop_free_list(st->kernel, st->nkernel);
	loop_free_list(st->frozen, st->nfrozen);
	free(st->missing);
	free(st->problems);
	free(st->optlog_note);
	free(st->attempt);
	free(st->validation);
	free(st->probe);
	free(st->probe_apps);
	memset(st, 0, sizeof(*st));
}

int loop_may(struct loop *l, enum rules_step step, struct err *e)
{
	struct where w;
	int rc = loop_load_contract(l, e);
	if (rc == 0)
		rc = loop_where(l, &w, e);
	return rc < 0 ? rc : loop_step_check(l, step, &w, e);
}

int loop_step_check(struct loop *l, enum rules_step step, const struct where *w, struct err *e)
{
	enum rules_refusal r = rules_step_refusal(w->state, step);
	if (r == REFUSE_NONE)
		return 0;
	char *attempt = (r == REFUSE_NOT_MEASURED || r == REFUSE_NO_BASELINE) && w->attempt_run
				? loop_attempt_words(l, w->attempt_run)
				: NULL;
	struct rules_facts f = {.iter = w->iter, .missing = l->missing, .attempt = attempt};
	int rc = rules_step_check(w->state, step, &f, e);
	free(attempt);
	return rc;
}

