/*
 * live — the live backend: the workspace through the engine (core/loop.h).
 *
 * Everything the loop decides (what is allowed, what is due, what a row
 * holds) comes from loop_* calls; the backend turns it into pane data, the
 * status line, wizards and messages, and passes the user's answers back.
 * This file: opening, reloading, the status line, the actions and the
 * watcher of other optloops; runs are live_run.c's, wizards
 * live_wizards.c's, the detail pane live_detail.c's (live_impl.h).
 */
#include "tui/workbench/live.h"
#include "tui/workbench/live_impl.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"
#include "tui/workbench/app.h"
#include "tui/workbench/files.h"
#include "views/live.h"
#include "views/sanitize.h"
#include "views/wizard.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* The allocation as squeue sees it now, for the status line. */
static void alloc_refresh(struct ws_loop *w, bool force)
{
	time_t t = time(NULL);
	if (!force && t - w->alloc_at < ALLOC_REFRESH_S)
		return;
	w->alloc_at = t;
	struct loop_allocation al;
	if (loop_allocation(w->l, &al, NULL) < 0)
		return;
	free(w->alloc_text);
	w->alloc_text = NULL;
	w->alloc_waiting = al.held && (!al.job || (al.state && (!strcmp(al.state, "PENDING") ||
								  !strcmp(al.state, "pending"))));
	if (al.held && al.job)
		w->alloc_text = xasprintf("Slurm job %s %s%s%s%s%s", al.job, al.state,
					  al.reason ? " (" : "", al.reason ? al.reason : "",
					  al.reason ? ")" : "", al.node && !al.reason ? " on " : "");
	else if (al.held)
		w->alloc_text = xstrdup("Slurm allocation requested");
	else if (al.slurm)
		w->alloc_text = xstrdup("Slurm: no allocation held");
	if (w->alloc_text && al.held && al.job && al.node && !al.reason) {
		char *t2 = xasprintf("%s%s", w->alloc_text, al.node);
		free(w->alloc_text);
		w->alloc_text = t2;
	}
	loop_allocation_release(&al);
}

struct ws_loop *live_of(struct app *a)
{
	return a->be_data;
}

/* Take the writer lock; refused, naming the driver, while another optloop
 * writes. */
static int take_lock(struct app *a, const char *what, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct err le = {0};
	if (loop_writer(w->l, true, &le) == 0)
		return 0;
	if (le.code == ERR_BUSY)
		return err_set(e, ERR_REFUSED, "%s refused: %s; it comes back when that one is done "
					       "(this workbench follows it)",
			       what, w->driver ? w->driver : le.msg);
	*e = le;
	return le.code;
}

static void give_lock_of(struct loop *l)
{
	struct err ignored = {0};
	loop_writer(l, false, &ignored);
}

void live_give_lock(struct app *a)
{
	give_lock_of(live_of(a)->l);
}

const char *live_state_upper(enum loop_state s)
{
	static char buf[32];
	const char *n = loop_state_name(s);
	size_t i = 0;
	for (; n[i] && i < sizeof(buf) - 1; i++)
		buf[i] = (char)(n[i] >= 'a' && n[i] <= 'z' ? n[i] - 32 : n[i]);
	buf[i] = '\0';
	return buf;
}

/* ---- loading ------------------------------------------------------------- */

/* The trap checklist with this iteration's states (guards keeps them). */
static void load_traps(struct app *a)
{
	struct ws_loop *w = live_of(a);
	struct err e = {0};

	traps_doc_release(&w->traps);
	if (loop_traps(w->l, w->st.iteration, &w->traps, NULL, &e) == 0) {
		a->data.traps = w->traps.v;
		a->data.ntraps = w->traps.n;
	}
}

/* The noise band around the best, the engine's figure in its words. */
static void load_band(struct app *a)
{
	struct ws_loop *w = live_of(a);
	struct loop_noise nz;
	struct err e = {0};

	a->data.band_lo = a->data.band_hi = NAN;
	a->data.band_text = NULL;
	free(w->band_text);
	w->band_text = NULL;
	if (!w->st.has_best || loop_noise_band(w->l, &nz, &e) < 0 || !nz.have)
		return;
	struct sb t = SB_INIT;
	sb_init(&t);
	sb_adds(&t, "noise ");
	loop_noise_words(&nz, &t);
	w->band_text = sb_detach(&t);
	a->data.band_lo = nz.lo_ms;
	a->data.band_hi = nz.hi_ms;
	a->data.band_text = w->band_text;
}

/* The stored verdict of a verify run, for the panes.  When the run is of
 * offer_iter (the measured, not yet logged iteration; -1: none), a fast or
 * ambiguous verdict without a confirm says how to get one. */
char *live_implausible_words(const struct loop_run *r)
{
	const json_t *a = r->detail ? json_object_get(r->detail, "implausible_why") : NULL;
	struct sb s = SB_INIT;
	const json_t *v;
	size_t i;

	json_array_foreach(a, i, v)
	{
		const char *rule = json_string_value(json_object_get(v, "rule"));
		const char *detail = json_string_value(json_object_get(v, "detail"));
		sb_addf(&s, "%s%s: %s", s.len ? "; " : "", rule ? rule : "?", detail ? detail : "");
	}
	return s.len ? sb_detach(&s) : NULL;
}

void live_run_verdict(const struct loop_run *r, int offer_iter, struct wb_verdict *out)
{
	const char *ck = action_first_key(ACT_CONFIRM);
	bool mine = r->iter == offer_iter;

	wb_verdict_clear(out);
	if (!r->verdict)
		return;
	out->have = true;
	out->iter = r->iter;
	/* the iteration's one judgment and figure (the confirm's once one ran),
	 * as its row, the timeline and watch --json carry them */
	out->verdict = xstrdup(r->judged ? r->judged : r->verdict);
	out->gain = r->vs_best;
	out->flags = r->flags_text ? xstrdup(r->flags_text) : NULL;
	out->why = live_implausible_words(r);
	bool wants = r->confirm_can_win;
	switch (r->confirm) {
	case LOOP_CONFIRM_UNFINISHED:
		out->confirm = xstrdup("confirm unfinished: still running, or cut off");
		break;
	case LOOP_CONFIRM_NO_VERDICT:
		out->confirm = mine ? xasprintf("confirm stopped: no verdict (%s runs it again)", ck)
				    : xstrdup("confirm stopped: no verdict, not promoted");
		break;
	case LOOP_CONFIRM_DONE:
		out->confirm = xasprintf("confirm %s, %s", r->confirm_verdict,
					 r->confirm_promoted ? "promoted"
					 : r->confirm_held   ? "held back until its flags are explained"
							     : "not promoted");
		break;
	case LOOP_CONFIRM_NONE:
		if (mine && wants)
			out->confirm = xasprintf("not confirmed yet: press %s (optloop confirm)", ck);
		break;
	}
}

static void load_verdict(struct ws_loop *w, int run_id, int offer_iter, struct wb_verdict *out)
{
	struct loop_run r;

	wb_verdict_clear(out);
	if (loop_run_get(w->l, run_id, &r, NULL) < 0)
		return;
	live_run_verdict(&r, offer_iter, out);
	loop_run_release(&r);
}

void live_clear_lines(struct wb_line **v, size_t *n)
{
	wb_lines_free(*v, *n);
	*v = NULL;
	*n = 0;
}

void live_free_shapes(struct app *a)
{
	wb_shapes_clear(&a->data);
	a->shapes_loaded = false;
}

/* defined with the status line's wording, below */
static void load_due(struct app *a);

/* The top bar: the op, the kernel file(s) with the key that opens them
 * (before the long workspace path, so they stay at 80 columns), the
 * workspace.  Caller frees. */
static char *live_title(const struct loop_status *st)
{
	struct sb s = SB_INIT;

	sb_addf(&s, "%s \xc2\xb7 ", st->op ? st->op : "");
	if (st->nkernel) {
		sb_adds(&s, "kernel ");
		for (size_t i = 0; i < st->nkernel; i++)
			sb_addf(&s, "%s%s", i ? ", " : "", st->kernel[i]);
		sb_addf(&s, " (%s edits) \xc2\xb7 ", action_first_key(ACT_EDIT));
	}
	sb_adds(&s, st->workspace ? st->workspace : "");
	return sb_detach(&s);
}

int live_reload(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	int rc;

	a->data.kernel = NULL; /* they point into w->st */
	a->data.nkernel = 0;
	a->data.repo = NULL;
	if (w->have_st)
		loop_status_release(&w->st);
	w->have_st = false;
	if ((rc = loop_status(w->l, &w->st, e)) < 0)
		return rc;
	alloc_refresh(w, true);
	w->have_st = true;
	log_rows_put(w->rows);
	w->rows = NULL;
	a->data.rows = NULL;
	a->data.nrows = 0;
	a->data.nrows_older = 0;
	/* The first frame needs the newest rows only (a pane's height or
	 * width of them): app_run has the rest read right after it. */
	rc = w->rows_read ? loop_rows(w->l, &w->rows, e)
			  : loop_rows_newest(w->l, LIVE_FIRST_ROWS, &w->rows, &a->data.nrows_older, e);
	if (rc < 0)
		return rc;
	w->rows_read = true;
	live_clear_lines(&a->data.notes, &a->data.nnotes);
	live_free_shapes(a);
	free(w->title);
	w->title = live_title(&w->st);
	a->data.title = w->title;
	a->data.kernel = w->st.kernel;
	a->data.nkernel = w->st.nkernel;
	a->data.repo = w->st.repo;
	a->data.readonly = false; /* it writes while it acts, and only then */
	a->data.rows = w->rows->v;
	a->data.nrows = w->rows->n;
	load_due(a);
	a->data.has_best = w->st.has_best;
	a->data.best_unconfirmed = w->st.best_unconfirmed;
	a->data.best_iter = w->st.best_iter;
	a->data.best_ms = w->st.best_ms;
	a->data.band_lo = a->data.band_hi = NAN;
	if (w->st.problems) {
		char *p = w->st.problems, *nl;
		while (*p) {
			nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			char *line = xstrndup(p, n);
			if (*line)
				ws_note(&a->data, R_NORMAL, line);
			free(line);
			p += n + (nl ? 1 : 0);
		}
	}
	ws_files_release(&w->files);
	ws_files_load(&w->files, loop_dir(w->l), &a->data);
	load_band(a);
	load_traps(a);
	/* The last iteration's verdict, also once it is committed. */
	load_verdict(w, w->st.last_run, w->st.state == ST_MEASURED ? w->st.iteration : -1, &a->data.last);
	return 0;
}

/* The rows the first reload left out, read whole now: the panes' data
 * stays that of the reload otherwise. */
static int live_rows_rest(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct log_rows *all;
	int rc = loop_rows(w->l, &all, e);
	if (rc < 0)
		return rc;
	live_free_shapes(a); /* per-row series, sized to the rows */
	log_rows_put(w->rows);
	w->rows = all;
	a->data.rows = all->v;
	a->data.nrows = all->n;
	a->data.nrows_older = 0;
	return 0;
}

/* ---- the status line ------------------------------------------------------ */

/* The engine's due step (loop_status().due) in words and keys: the status
 * line and the messages after a run say the same step.  terse 0: the full
 * words; 1: the short ones an 80-column status line has room for; 2: the
 * shortest (an attempt's reason left out too). */
static void due_words(const struct loop_status *st, int terse, struct sb *out)
{
	bool brief = terse > 0;
	/* action_first_key's buffer is static: one key per call */
	switch (st->due) {
	case DUE_CONTRACT:
		sb_addf(out, brief ? "fill in the task contract (%s)"
				   : "the task contract is incomplete: fill it in (%s)",
			action_first_key(ACT_REASSESS));
		break;
	case DUE_BASELINE:
		sb_addf(out, brief ? "verify the unmodified kernel (%s)"
				   : "step 2/3: verify the unmodified kernel for the baseline (%s)",
			action_first_key(ACT_VERIFY));
		break;
	case DUE_RETRY:
		if (brief && st->attempt && terse < 2) {
			/* why, without where its output is */
			const char *paren = strstr(st->attempt, " (");
			int n = paren ? (int)(paren - st->attempt) : (int)strlen(st->attempt);
			sb_addf(out, "the last run was an attempt: %.*s; verify again (%s)", n, st->attempt,
				action_first_key(ACT_VERIFY));
		} else if (brief)
			sb_addf(out, "attempt, no row: fix it, verify again (%s)", action_first_key(ACT_VERIFY));
		else
			sb_addf(out, "the last run was an attempt, not an iteration: %s; fix it, verify again (%s)",
				st->attempt ? st->attempt : "no row", action_first_key(ACT_VERIFY));
		break;
	case DUE_EDIT:
		sb_addf(out, brief ? "change the kernel, then verify (%s)"
				   : "step 1/3: change the kernel, then verify (%s)",
			action_first_key(ACT_VERIFY));
		break;
	case DUE_VERIFY:
		sb_addf(out, brief ? "verify the change (%s)" : "step 2/3: verify the change (%s)",
			action_first_key(ACT_VERIFY));
		break;
	case DUE_WAIT:
		sb_adds(out, brief ? "another optloop is verifying"
				   : "step 2/3: a verify run is going in another optloop");
		break;
	case DUE_CONFIRM:
		sb_addf(out, brief ? "confirm (%s) " : "step 3/3: no win yet: confirm (%s) ",
			action_first_key(ACT_CONFIRM));
		sb_addf(out, "or log revert/drop (%s)", action_first_key(ACT_LOG));
		if (!brief)
			sb_addf(out, ", then commit (%s)", action_first_key(ACT_COMMIT));
		break;
	case DUE_LOG:
		sb_addf(out, brief ? "log as %s (%s), " : "step 3/3: log the row as %s (%s), ",
			st->suggest == RS_NONE ? "keep|revert|drop|floor" : row_status_name(st->suggest),
			action_first_key(ACT_LOG));
		sb_addf(out, "then commit (%s)", action_first_key(ACT_COMMIT));
		break;
	case DUE_SET_ASIDE:
		sb_adds(out, brief ? "kernel changed after measuring: undo it"
				   : "the kernel changed after the measurement: undo the extra change (or set it "
				     "aside: optloop log --set-aside)");
		break;
	case DUE_COMMIT:
		sb_addf(out, brief ? "commit the row (%s)" : "step 3/3: commit the logged row (%s)",
			action_first_key(ACT_COMMIT));
		break;
	case DUE_REASSESS:
		sb_addf(out, brief ? "%d rows without a win: re-assess (%s)"
				   : "%d rows without a win: re-assess (%s) before the next iteration",
			st->stall, action_first_key(ACT_REASSESS));
		break;
	case DUE_STOP:
		sb_addf(out, brief ? "stop condition: checks (%s)"
				   : "a stop condition holds: promotion / no-go checks (%s)",
			action_first_key(ACT_REASSESS));
		break;
	case DUE_NOISE:
		sb_addf(out, brief ? "measure the best first (%s)"
				   : "the best has no run since repair took it back: measure it (%s)",
			action_first_key(ACT_NOISE));
		break;
	case DUE_REBUILD:
	case DUE_NONE:
		sb_adds(out, st->next ? st->next : "");
		break;
	}
}

/* The due step for the panes (the timeline's empty state), in the status
 * line's words. */
static void load_due(struct app *a)
{
	struct ws_loop *w = live_of(a);
	struct sb full = SB_INIT, brief = SB_INIT;
	due_words(&w->st, 0, &full);
	due_words(&w->st, 1, &brief);
	free(w->due);
	free(w->due_brief);
	w->due = sb_detach(&full);
	w->due_brief = sb_detach(&brief);
	a->data.due = w->due;
	a->data.due_brief = w->due_brief;
}

/* The due step after a run ended, from a fresh status (the workbench
 * reloads its own copy after the message), in the brief words: it ends a
 * message line that has said what the run measured. */
void live_next_words(struct ws_loop *w, struct sb *out)
{
	struct loop_status st;
	sb_init(out);
	if (loop_status(w->l, &st, NULL) < 0) {
		sb_adds(out, "see the status line");
		return;
	}
	due_words(&st, 1, out);
	loop_status_release(&st);
}

static void status_words(struct app *a, int terse, bool extras, struct sb *out)
{
	bool brief = terse > 0;
	struct ws_loop *w = live_of(a);
	const struct loop_status *st = &w->st;

	struct loop_job_progress p = {.kind = LOOP_JOB_VERIFY};
	if (a->running && w->job)
		loop_job_progress(w->job, &p);
	if (a->running && p.kind == LOOP_JOB_CONFIRM) {
		sb_addf(out, "iter %d \xc2\xb7 MEASURED \xc2\xb7 confirm run %d/%d (%s)", w->run_iter, p.run,
			p.nruns, p.role);
		sb_addf(out, brief ? " \xc2\xb7 %s cancels" : " of best and candidate (%s cancels)",
			action_first_key(ACT_CANCEL));
		return;
	}
	if (a->running && p.kind == LOOP_JOB_NOISE) {
		sb_addf(out, "iter %d \xc2\xb7 %s \xc2\xb7 noise run %d/%d", w->run_iter,
			live_state_upper(st->state), p.run, p.nruns);
		sb_addf(out, brief ? " \xc2\xb7 %s cancels" : " of the best (%s cancels)",
			action_first_key(ACT_CANCEL));
		return;
	}
	if (a->running && w->alloc_text) {
		alloc_refresh(w, false);
		if (w->alloc_waiting) {
			sb_addf(out, "iter %d \xc2\xb7 VERIFYING \xc2\xb7 waiting for the allocation: %s (%s "
				     "cancels)",
				w->run_iter, w->alloc_text, action_first_key(ACT_CANCEL));
			return;
		}
	}
	if (a->running) {
		sb_addf(out, brief ? "iter %d \xc2\xb7 VERIFYING \xc2\xb7 verify is running (%s cancels)"
				   : "iter %d \xc2\xb7 VERIFYING \xc2\xb7 step 2/3: verify is running (%s cancels)",
			w->run_iter, action_first_key(ACT_CANCEL));
		return;
	}
	if (w->driver) { /* another optloop's run: keys that write wait for it */
		sb_addf(out, "iter %d \xc2\xb7 %s \xc2\xb7 %s", st->iteration, live_state_upper(st->state),
			w->driver);
		return;
	}
	sb_addf(out, "iter %d \xc2\xb7 %s \xc2\xb7 ", st->iteration, live_state_upper(st->state));
	due_words(st, terse, out);
	if (!extras)
		return;
	if (st->due == DUE_EDIT || st->due == DUE_VERIFY)
		sb_addf(out, " \xc2\xb7 stall %d/%d", st->stall, st->stall_limit);
	if (st->telescoped)
		sb_adds(out, " \xc2\xb7 kernel changed since it was measured");
	if (w->alloc_text)
		sb_addf(out, " \xc2\xb7 %s", w->alloc_text);
}

/* The longest of: the full words, the brief ones with the stall count and
 * notes, the brief ones alone, the shortest, that fits. */
static void loop_status_line(struct app *a, int cells, struct sb *out)
{
	struct ws_loop *w = live_of(a);
	size_t start = out->len;

	if (!w->have_st) {
		sb_adds(out, "status unknown");
		return;
	}
	for (int k = 0; k < 4; k++) {
		out->len = start;
		out->buf[start] = '\0';
		status_words(a, k == 0 ? 0 : k == 3 ? 2 : 1, k < 2, out);
		if (sanitize_width(out->buf + start, out->len - start) <= cells)
			return;
	}
}


static int act_locked(struct app *a, enum action act, struct err *e);

static int loop_act(struct app *a, enum action act, struct err *e)
{
	struct err re = {0};
	int rc;

	/* The writer lock while it acts, and only then: an agent's optloop
	 * may write in between, and this one follows it (the watcher). */
	if ((rc = take_lock(a, act > ACT_NONE && act < ACT_COUNT ? action_table[act - 1].name : "action",
			    e)) < 0)
		return rc;
	/* Current state first: the tree may have changed under us. */
	if (live_reload(a, &re) < 0) {
		live_give_lock(a);
		return err_set(e, re.code, "%s", re.msg);
	}
	rc = act_locked(a, act, e);
	if (!a->running)
		live_give_lock(a);
	return rc;
}

static int act_locked(struct app *a, enum action act, struct err *e)
{
	struct ws_loop *w = live_of(a);
	char sha[41];
	int rc;

	switch (act) {
	case ACT_VERIFY:
		return live_start_job(a, LOOP_JOB_VERIFY, e);
	case ACT_NOISE:
		return live_start_job(a, LOOP_JOB_NOISE, e);
	case ACT_CONFIRM:
		return live_start_job(a, LOOP_JOB_CONFIRM, e);
	case ACT_LOG:
		if ((rc = loop_may(w->l, STEP_LOG, e)) < 0)
			return rc;
		return live_open_log_wizard(a, e);
	case ACT_COMMIT:
		if ((rc = loop_commit(w->l, sha, e)) < 0)
			return rc;
		app_message(a, false, "committed iteration %d as %.7s \xc2\xb7 next: change the kernel, then verify (%s)",
			    w->st.iteration, sha, action_first_key(ACT_VERIFY));
		return live_reload(a, e);
	case ACT_REASSESS:
		if (w->st.state == ST_NO_CONTRACT)
			return live_open_contract_wizard(a, e);
		if (w->st.state == ST_STALLED)
			return live_open_stall_wizard(a, e);
		if (w->st.state == ST_STOPPING)
			return live_open_stop_wizard(a, e);
		/* Nothing is due: say so, and why, and do nothing else. */
		app_message(a, false, "no re-assessment is due: stall %d/%d (due after %d rows in a row without a win)",
			    w->st.stall, w->st.stall_limit, w->st.stall_limit);
		return 0;
	case ACT_STOP:
		if (w->st.state == ST_STOPPING || w->st.state == ST_READY || w->st.state == ST_EDITING)
			return live_open_stop_wizard(a, e);
		return err_set(e, ERR_REFUSED,
			       "stop refused: iteration %d is %s; a stop is recorded between iterations "
			       "(%s)",
			       w->st.iteration, live_state_upper(w->st.state), w->st.next ? w->st.next : "");
	case ACT_TOGGLE: {
		struct view *v = &a->views[P_TRAPS];
		if (v->sel < 0 || (size_t)v->sel >= a->data.ntraps)
			return err_set(e, ERR_USAGE, "no trap selected");
		struct trap *t = &a->data.traps[v->sel];
		enum trap_state ns = t->state == TRAP_CHECKED ? TRAP_UNCHECKED : TRAP_CHECKED;
		if (t->state == TRAP_HIT)
			return err_set(e, ERR_REFUSED, "trap %s was hit by this iteration's diff (lint): "
						       "it stays marked", t->id);
		if ((rc = loop_trap_mark(w->l, w->st.iteration, t->id, ns, "tui", e)) < 0)
			return rc;
		t->state = ns;
		return 0;
	}
	default:
		return 0;
	}
}

static int submit_locked(struct app *a, struct wizard *wz, struct err *e);

static int loop_submit(struct app *a, struct wizard *wz, struct err *e)
{
	int rc = take_lock(a, "saving", e);
	if (rc < 0)
		return rc;
	rc = submit_locked(a, wz, e);
	if (!a->running)
		live_give_lock(a);
	return rc;
}

static int submit_locked(struct app *a, struct wizard *wz, struct err *e)
{
	switch (wz->kind) {
	case WZ_LOG:
		return live_submit_log(a, wz, e);
	case WZ_CONTRACT:
		return live_submit_contract(a, wz, e);
	case WZ_STALL:
		return live_submit_stall(a, wz, e);
	case WZ_STOP:
		return live_submit_stop(a, wz, e);
	}
	return 0;
}


static void loop_close_be(struct app *a)
{
	struct ws_loop *w = live_of(a);

	if (!w)
		return;
	if (w->job) {
		/* not reached through app_run, which ends every run; the run is
		 * still recorded and the candidate must still come back */
		struct loop_job_result r;
		loop_job_end(w->job, &r, NULL);
		loop_job_result_release(&r);
		w->job = NULL;
	}
	live_clear_lines(&a->data.notes, &a->data.nnotes);
	live_clear_lines(&a->data.detail, &a->data.ndetail);
	wb_verdict_clear(&a->data.last);
	wb_verdict_clear(&a->data.sel);
	live_free_shapes(a);
	live_free(a->data.live);
	a->data.live = NULL;
	/* a Slurm allocation this workbench's runs used goes back when it quits
	 * (one an agent's runs use stays theirs) */
	if (loop_allocation_used(w->l)) {
		struct err le = {0};
		if (loop_writer(w->l, true, &le) == 0)
			loop_allocation_end(w->l, "the workbench that used it quit", true, NULL, NULL);
		give_lock_of(w->l);
	}
	loop_watch_close(w->watch);
	free(w->driver);
	free(w->ext_desc);
	free(w->alloc_text);
	ws_files_release(&w->files);
	traps_doc_release(&w->traps);
	lint_findings_release(&w->lint);
	log_rows_put(w->rows);
	if (w->have_st)
		loop_status_release(&w->st);
	loop_close(w->l);
	free(w->title);
	free(w->band_text);
	free(w->due);
	free(w->due_brief);
	free(w);
	a->be_data = NULL;
}

/* ---- other optloops writing ------------------------------------------------ */

/* Once another optloop's run ended, the live pane names it by what it was,
 * no longer by who drives. */
static void ext_title(struct app *a)
{
	struct ws_loop *w = live_of(a);
	if (!w->ext_desc || !a->data.live)
		return;
	free(a->data.live->title);
	a->data.live->title = xstrdup(w->ext_desc);
}

/* The pid of the `optloop mcp` that started optloop pid (an agent's tool
 * call), or 0: read from /proc, as the run records only its own pid. */
static int mcp_server_of(int pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fsutil_read_head(path, buf, sizeof(buf));
	const char *paren = strrchr(buf, ')');
	int ppid = 0;
	if (!paren || sscanf(paren + 1, " %*c %d", &ppid) != 1 || ppid <= 1)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", ppid);
	size_t n = fsutil_read_head(path, buf, sizeof(buf));
	/* optloop [-C DIR] [--op OP] mcp: the words are NUL-separated */
	const char *w = buf, *end = buf + n;
	const char *base = strrchr(w, '/');
	if (strcmp(base ? base + 1 : w, "optloop"))
		return 0;
	for (bool value = false; (w += strlen(w) + 1) < end;) {
		if (!value && !strcmp(w, "mcp"))
			return ppid;
		value = !value && (!strcmp(w, "-C") || !strcmp(w, "--op"));
	}
	return 0;
}

static void on_watch(void *ctx, const struct loop_watch_event *ev)
{
	struct app *a = ctx;
	struct ws_loop *w = live_of(a);

	switch (ev->kind) {
	case LOOP_WATCH_RUN_START:
		if (ev->pid == (int)getpid() || a->running)
			break; /* our own */
		w->ext_run = ev->run_id;
		free(w->ext_desc);
		w->ext_desc = xasprintf("optloop %s (iteration %d) of pid %d",
					ev->run_kind ? ev->run_kind : "run", ev->iteration, ev->pid);
		free(w->driver);
		int server = mcp_server_of(ev->pid);
		if (server) /* an agent's tool call: the server is the driver to name */
			w->driver = xasprintf("driven by pid %d: optloop mcp, tool %s (iteration %d)",
					      server, ev->run_kind ? ev->run_kind : "run",
					      ev->iteration);
		else
			w->driver = xasprintf("driven by pid %d: optloop %s (iteration %d)", ev->pid,
					      ev->run_kind ? ev->run_kind : "run", ev->iteration);
		if (!a->data.live)
			a->data.live = live_new(4000, 1024);
		live_reset(a->data.live, w->driver);
		a->data.live->running = true;
		a->data.live->t_start = app_now();
		app_external_run(a, true);
		app_message(a, false, "%s", w->driver);
		break;
	case LOOP_WATCH_OUTPUT:
		if (w->ext_run == ev->run_id && a->data.live) {
			live_feed(a->data.live, ev->text, ev->len);
			a->output_dirty = true;
		}
		return; /* the panes stay as they are */
	case LOOP_WATCH_PROGRESS:
	case LOOP_WATCH_STAGE:
		if (w->ext_run == ev->run_id && a->data.live) {
			live_set_progress(a->data.live, ev->kind == LOOP_WATCH_PROGRESS ? ev->progress : -1,
					  ev->kind == LOOP_WATCH_STAGE ? ev->text : NULL,
					  ev->kind == LOOP_WATCH_STAGE && ev->text ? strlen(ev->text) : 0);
			a->output_dirty = true;
		}
		return;
	case LOOP_WATCH_GATE:
		if (w->ext_run == ev->run_id && a->data.live) {
			char *t = xasprintf("gate %s (as printed)", ev->gate);
			live_set_verdict(a->data.live, t, ev->gate && ev->gate_v != GATE_PASS);
			free(t);
		}
		return;
	case LOOP_WATCH_RUN_END:
		if (w->ext_run == ev->run_id) {
			struct sb t = SB_INIT;
			sb_init(&t);
			/* past tense: that optloop drives nothing any more */
			sb_addf(&t, "%s ended: gate %s, bench ", w->ext_desc ? w->ext_desc : "run",
				ev->gate);
			optlog_fmt_bench(ev->bench_ms, &t);
			sb_adds(&t, " ms");
			if (a->data.live) {
				live_flush(a->data.live);
				ext_title(a);
				live_set_verdict(a->data.live, t.buf, ev->gate && ev->gate_v != GATE_PASS);
				a->data.live->running = false;
				a->data.live->t_end = app_now();
			}
			app_message(a, false, "%s", t.buf);
			sb_release(&t);
			w->ext_run = 0;
			free(w->driver);
			w->driver = NULL;
			app_external_run(a, false);
		}
		break;
	case LOOP_WATCH_PROBLEM:
		if (ev->run_id && ev->run_id == w->ext_run) { /* its driver was killed */
			app_message(a, true, "%s", ev->text);
			w->ext_run = 0;
			free(w->driver);
			w->driver = NULL;
			if (a->data.live) {
				ext_title(a);
				live_set_verdict(a->data.live, "cut off: its optloop is gone", true);
				a->data.live->running = false;
			}
		}
		break;
	default:
		break;
	}
	w->changed = true;
}

static int loop_watch_fd_be(struct app *a)
{
	struct ws_loop *w = live_of(a);
	/* while a run of our own goes, our own writes are no news */
	return w->watch && !a->running ? loop_watch_fd(w->watch) : -1;
}

static int loop_watch_pump_be(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	w->changed = false;
	int rc = loop_watch_pump(w->watch, e);
	if (rc < 0)
		return rc;
	return w->changed ? 1 : 0;
}

static const struct backend loop_backend = {
	.reload = live_reload,
	.status = loop_status_line,
	.act = loop_act,
	.submit = loop_submit,
	.detail = live_detail,
	.shapes = live_shapes,
	.run_fds = live_run_fds,
	.run_pump = live_run_pump,
	.run_cancel = live_run_cancel,
	.run_end = live_run_end,
	.close = loop_close_be,
	.watch_fd = loop_watch_fd_be,
	.watch_pump = loop_watch_pump_be,
	.rows_rest = live_rows_rest,
};

int ws_loop_open(struct app *a, const char *op, struct err *e)
{
	struct ws_loop *w = xcalloc(1, sizeof(*w));
	int rc;

	/* a writer's open reconciles what a crash left; then the lock goes
	 * back until an action needs it */
	if ((rc = loop_open(NULL, op, LOOP_TRY_WRITE, &w->l, e)) < 0) {
		free(w);
		return rc;
	}
	give_lock_of(w->l);
	app_init(a, &loop_backend, w);
	struct err we = {0};
	if (loop_watch_open(NULL, op, LOOP_WATCH_WANT_OUTPUT, on_watch, a, &w->watch, &we) < 0)
		w->watch = NULL; /* no inotify: the panes reload on the next key */
	return 0;
}
