/*
 * live — the live backend: the workspace through the engine (core/loop.h).
 *
 * Everything the loop decides (what is allowed, what is due, what a row
 * holds) comes from loop_* calls; this file turns it into pane data, the
 * status line, wizards and messages, and passes the user's answers back.
 */
#include "tui/workbench/live.h"

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

enum { WZ_LOG = 1, WZ_CONTRACT, WZ_STALL, WZ_STOP };

struct ws_loop {
	struct loop *l;
	struct loop_status st;
	bool have_st;
	struct log_rows *rows; /* shared with the store; the panes borrow rows->v */
	struct ws_files files;
	char *title;
	int run_iter;
	/* Contract wizard: which field each text box sets. */
	const char *contract_fields[CONTRACT_NFIELDS]; /* names, static */
	int ncontract;
	struct traps_doc traps; /* with this iteration's checklist states */
	/* The confirm run going (NULL when none) and the run the live pane
	 * announced last. */
	struct loop_confirm_run *confirm;
	int confirm_shown;
	struct lint_findings lint; /* findings the log wizard asks to acknowledge */
	char *band_text;           /* the noise band in words, for the best pane */
	/* Other optloops writing (an agent's CLI calls, a second workbench):
	 * the watcher wakes the workbench, ext_run is their run going (0 none)
	 * and driver names who drives it. */
	struct loop_watch *watch;
	bool changed;
	int ext_run;
	char *driver;
	/* Runner: slurm: the allocation in a few words, read at most every
	 * ALLOC_REFRESH_S (squeue is asked), and whether it is still waiting */
	char *alloc_text;
	bool alloc_waiting;
	time_t alloc_at;
};

#define ALLOC_REFRESH_S 5

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

static struct ws_loop *W(struct app *a)
{
	return a->be_data;
}

/* Take the writer lock; refused, naming the driver, while another optloop
 * writes. */
static int take_lock(struct app *a, const char *what, struct err *e)
{
	struct ws_loop *w = W(a);
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

static void give_lock(struct app *a)
{
	give_lock_of(W(a)->l);
}

static const char *state_upper(enum loop_state s)
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
	struct ws_loop *w = W(a);
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
	struct ws_loop *w = W(a);
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
static void set_verdict(const struct loop_run *r, int offer_iter, struct wb_verdict *out)
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
	set_verdict(&r, offer_iter, out);
	loop_run_release(&r);
}

static void clear_lines(struct wb_line **v, size_t *n)
{
	wb_lines_free(*v, *n);
	*v = NULL;
	*n = 0;
}

static void free_shapes(struct app *a)
{
	for (size_t i = 0; i < a->data.nshapes; i++) {
		free(a->data.shapes[i].name);
		free(a->data.shapes[i].ms);
	}
	free(a->data.shapes);
	a->data.shapes = NULL;
	a->data.nshapes = 0;
	a->shapes_loaded = false;
}

static int loop_reload(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	int rc;

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
	if ((rc = loop_rows(w->l, &w->rows, e)) < 0)
		return rc;
	clear_lines(&a->data.notes, &a->data.nnotes);
	free_shapes(a);
	free(w->title);
	w->title = xasprintf("%s \xc2\xb7 %s", w->st.op ? w->st.op : "", w->st.workspace ? w->st.workspace : "");
	a->data.title = w->title;
	a->data.readonly = false; /* it writes while it acts, and only then */
	a->data.rows = w->rows->v;
	a->data.nrows = w->rows->n;
	a->data.has_best = w->st.has_best;
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
	case DUE_REBUILD:
	case DUE_NONE:
		sb_adds(out, st->next ? st->next : "");
		break;
	}
}

/* The due step after a run ended, from a fresh status (the workbench
 * reloads its own copy after the message), in the brief words: it ends a
 * message line that has said what the run measured. */
static void next_words(struct ws_loop *w, struct sb *out)
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
	struct ws_loop *w = W(a);
	const struct loop_status *st = &w->st;

	if (a->running && w->confirm) {
		struct loop_confirm_progress p;
		loop_confirm_progress(w->confirm, &p);
		sb_addf(out, "iter %d \xc2\xb7 MEASURED \xc2\xb7 confirm run %d/%d (%s)", w->run_iter, p.run,
			p.nruns, p.role);
		sb_addf(out, brief ? " \xc2\xb7 %s cancels" : " of best and candidate (%s cancels)",
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
		sb_addf(out, "iter %d \xc2\xb7 %s \xc2\xb7 %s", st->iteration, state_upper(st->state),
			w->driver);
		return;
	}
	sb_addf(out, "iter %d \xc2\xb7 %s \xc2\xb7 ", st->iteration, state_upper(st->state));
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
	struct ws_loop *w = W(a);
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

/* ---- verify ---------------------------------------------------------------- */

static void on_output(void *ctx, const char *buf, size_t len)
{
	struct app *a = ctx;
	if (a->data.live)
		live_feed(a->data.live, buf, len);
}

/* Any line may carry a percent (pytest's case lines are test_case events);
 * stage lines name the benchmark's phase. */
static void on_event(void *ctx, const struct parse_event *ev)
{
	struct app *a = ctx;
	if (a->data.live)
		live_set_progress(a->data.live, ev->progress,
				  ev->kind == PEV_STAGE ? ev->stage : NULL, ev->stage_len);
}

static int start_verify(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct loop_verify_opts o = {.output = on_output, .event = on_event, .ctx = a};
	char *title;
	int rc;

	if (!a->data.live)
		a->data.live = live_new(4000, 1024);
	w->run_iter = w->st.iteration;
	title = xasprintf("Verify \xc2\xb7 iter %d", w->run_iter);
	live_reset(a->data.live, title);
	free(title);
	if ((rc = loop_verify_begin(w->l, &o, e)) < 0)
		return rc;
	a->data.live->running = true;
	a->data.live->t_start = app_now();
	app_run_started(a, "verify");
	app_message(a, false, "verify started for iteration %d (%s cancels; the run is recorded either way)",
		    w->run_iter, action_first_key(ACT_CANCEL));
	return 0;
}

/* ---- confirm ---------------------------------------------------------------- */

/* The live pane names the run going: "Confirm · iter 4 · run 3/6 (best)". */
static void confirm_announce(struct app *a)
{
	struct ws_loop *w = W(a);
	struct loop_confirm_progress p;
	struct live_buf *b = a->data.live;

	loop_confirm_progress(w->confirm, &p);
	if (!b || p.run == w->confirm_shown || !p.running)
		return;
	w->confirm_shown = p.run;
	char *title = xasprintf("Confirm \xc2\xb7 iter %d \xc2\xb7 run %d/%d (%s)", p.iter, p.run,
				p.nruns, p.role);
	free(b->title);
	b->title = title;
	live_flush(b);
	char *line = xasprintf("--- confirm run %d/%d (%s): the %s kernel is in the work tree ---\n",
			       p.run, p.nruns, p.role, !strcmp(p.role, "best") ? "best" : "candidate");
	live_feed(b, line, strlen(line));
	free(line);
	/* The bar counts the session's runs (a benchmark prints no percent). */
	b->progress = (p.run - 1) * 100 / (p.nruns > 0 ? p.nruns : 1);
	free(b->stage);
	b->stage = NULL;
}

static int start_confirm(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct loop_session_opts o = {.output = on_output, .event = on_event, .ctx = a};
	int rc;

	if (w->st.state != ST_MEASURED)
		return err_set(e, ERR_REFUSED,
			       "confirm refused: iteration %d is %s; a confirm measures a verified "
			       "candidate before it is logged (%s)",
			       w->st.iteration, state_upper(w->st.state), w->st.next ? w->st.next : "");
	if (!a->data.live)
		a->data.live = live_new(4000, 1024);
	w->run_iter = w->st.iteration;
	live_reset(a->data.live, "Confirm");
	if ((rc = loop_confirm_begin(w->l, &o, &w->confirm, e)) < 0)
		return rc;
	w->confirm_shown = 0;
	confirm_announce(a);
	a->data.live->running = true;
	a->data.live->t_start = app_now();
	app_run_started(a, "confirm");
	app_message(a, false,
		    "confirm started for iteration %d: best and candidate in turns (%s cancels; the "
		    "candidate comes back either way)",
		    w->run_iter, action_first_key(ACT_CANCEL));
	return 0;
}

/* The first key of an action in buf (action_first_key's own buffer is
 * static, so two in one message need copies). */
static const char *key_of(enum action act, char buf[16])
{
	snprintf(buf, 16, "%s", action_first_key(act));
	return buf;
}

static int confirm_end(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct loop_session r;
	struct sb s = SB_INIT;
	char k1[16], k2[16];
	int rc = loop_confirm_end(w->confirm, &r, e);

	w->confirm = NULL;
	if (rc < 0) {
		if (a->data.live)
			live_set_verdict(a->data.live, "confirm broke: not promoted", true);
		return rc;
	}
	sb_init(&s);
	if (r.cancelled) {
		sb_addf(&s, "cancelled after %d run%s: no verdict, not promoted", r.nruns,
			r.nruns == 1 ? "" : "s");
		if (a->data.live)
			live_set_verdict(a->data.live, s.buf, true);
		app_message(a, false,
			    "confirm of iteration %d %s; the candidate is back in the work tree "
			    "(%s runs the confirm again, %s logs the row)",
			    r.iter, s.buf, key_of(ACT_CONFIRM, k1), key_of(ACT_LOG, k2));
	} else {
		if (a->data.live)
			a->data.live->progress = 100;
		sb_addf(&s, "confirm %s", r.verdict);
		if (isfinite(r.speedup))
			sb_addf(&s, " %.3fx", r.speedup);
		sb_addf(&s, " over %d runs \xc2\xb7 %s", r.nruns,
			r.promoted ? "promoted" : "not promoted");
		if (a->data.live)
			live_set_verdict(a->data.live, s.buf, !r.promoted);
		struct sb next = SB_INIT;
		next_words(w, &next);
		if (r.promoted)
			app_message(a, false, "iteration %d: %s \xc2\xb7 next: %s", r.iter, s.buf,
				    next.buf);
		else
			app_message(a, true, "iteration %d: %s (%s) \xc2\xb7 next: %s", r.iter, s.buf,
				    r.why ? r.why : "", next.buf);
		sb_release(&next);
	}
	sb_release(&s);
	loop_session_release(&r);
	return 0;
}

/* ---- the run going: verify or confirm ------------------------------------- */

static int loop_run_fds(struct app *a, int fds[2])
{
	struct ws_loop *w = W(a);
	return w->confirm ? loop_confirm_fds(w->confirm, fds) : loop_verify_fds(w->l, fds);
}

static int loop_run_pump(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	if (w->confirm) {
		int rc = loop_confirm_pump(w->confirm, 0);
		confirm_announce(a);
		return rc;
	}
	return loop_verify_pump(w->l, 0, e);
}

static void loop_run_cancel(struct app *a)
{
	struct ws_loop *w = W(a);
	if (w->confirm)
		loop_confirm_cancel(w->confirm);
	else
		loop_verify_cancel(w->l);
}

static int run_end_locked(struct app *a, struct err *e);

static int loop_run_end(struct app *a, struct err *e)
{
	int rc = run_end_locked(a, e);
	give_lock(a);
	return rc;
}

static int run_end_locked(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct loop_measurement m;
	struct sb s = SB_INIT;
	int rc;

	if (w->confirm)
		return confirm_end(a, e);

	memset(&m, 0, sizeof(m));
	rc = loop_verify_end(w->l, &m, e);
	if (rc < 0) {
		if (a->data.live)
			live_set_verdict(a->data.live, "not recorded", true);
		return rc;
	}
	sb_init(&s);
	bool bad = m.gate != GATE_PASS;
	if (m.cancelled || m.timed_out || m.gate == GATE_INCOMPLETE)
		sb_addf(&s, "incomplete (%s): recorded, never a pass",
			m.cancelled ? "cancelled" : m.timed_out ? "timed out" : "killed");
	else {
		sb_addf(&s, "gate ");
		optlog_fmt_gate(m.gate, m.scope, &s);
		sb_adds(&s, " \xc2\xb7 bench ");
		optlog_fmt_bench(m.bench_ms, &s);
		sb_adds(&s, " ms \xc2\xb7 vs best ");
		optlog_fmt_vs_best(m.vs_best, &s);
	}
	if (a->data.live)
		live_set_verdict(a->data.live, s.buf, bad);
	struct sb next = SB_INIT;
	next_words(w, &next);
	app_message(a, bad, "iteration %d %s: %s \xc2\xb7 next: %s", m.iter,
		    m.attempt ? "attempt (no row)" : "measured", s.buf, next.buf);
	sb_release(&next);
	sb_release(&s);
	loop_measurement_release(&m);
	return 0;
}

/* ---- wizards ------------------------------------------------------------- */

static const char *const status_choices[] = {"keep", "revert", "drop", "floor", NULL};

static int open_log_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct loop_measurement m;
	struct sb s = SB_INIT;
	struct wizard *wz;
	int rc;

	memset(&m, 0, sizeof(m));
	if ((rc = loop_measurement(w->l, &m, e)) < 0)
		return rc;
	wz = wizard_new(m.iter == 0 ? "Log the baseline (iteration 0)" : "Log the iteration", WZ_LOG);
	sb_init(&s);
	sb_addf(&s, "iteration %d \xc2\xb7 gate ", m.iter);
	optlog_fmt_gate(m.gate, m.scope, &s);
	sb_adds(&s, " \xc2\xb7 bench ");
	optlog_fmt_bench(m.bench_ms, &s);
	sb_adds(&s, " ms \xc2\xb7 vs best ");
	optlog_fmt_vs_best(m.vs_best, &s);
	wizard_info(wz, m.gate == GATE_PASS ? R_NORMAL : R_FAIL, "%s", s.buf);
	wizard_info(wz, R_DIM, "gate and bench come from the run; they are shown, not typed");
	if (m.no_change)
		wizard_info(wz, R_DIM, "no-change run: the kernel equals HEAD");
	if (w->st.telescoped)
		wizard_info(wz, R_ERROR, "the kernel changed since this run was measured: the engine will refuse "
					 "the log until the change is set aside or re-verified");
	wizard_text(wz, "Direction", "one line: what this iteration tried", true,
		    m.iter == 0 ? "baseline" : NULL);
	if (m.iter != 0 && w->st.suggest != RS_NONE)
		wizard_info(wz, w->st.suggest == RS_KEEP ? R_KEEP : R_REVERT, "proposed: %s \xc2\xb7 %s",
			    row_status_name(w->st.suggest), w->st.suggest_why ? w->st.suggest_why : "");
	if (m.iter != 0) {
		/* preselect the status the evidence supports (the engine's due
		 * step), revert when it names none: never one it would refuse */
		int pick = 1;
		for (int k = 0; status_choices[k]; k++)
			if (row_status_parse(status_choices[k]) == w->st.suggest)
				pick = k;
		wizard_choice(wz, "Status", "keep = new best (needs a win beyond noise); revert / drop = "
					    "undo; floor = a bound",
			      status_choices, pick);
	}
	wizard_text(wz, "Axis", "optional: the axis of this direction (tiling, fusion, ...)", false, NULL);
	if (m.iter != 0 && w->st.suggest != RS_KEEP)
		wizard_text(wz, "Keep unconfirmed",
			    "only to keep it without a win beyond noise: why (recorded, shown as unconfirmed)",
			    false, NULL);
	/* Lint findings on the diff must be acknowledged, one by one. */
	lint_findings_release(&w->lint);
	struct err ge = {0};
	if (loop_lint(w->l, m.iter, &w->lint, &ge) < 0)
		wizard_info(wz, R_ERROR, "lint: %s", ge.msg);
	for (size_t k = 0; k < w->lint.n; k++) {
		const struct lint_finding *f = &w->lint.v[k];
		sb_reset(&s);
		sb_addf(&s, "Lint: %s", f->lint);
		struct sb h = SB_INIT;
		sb_init(&h);
		sb_addf(&h, "%s:%d %s (trap %s)", f->file, f->line, f->message ? f->message : "",
			f->trap ? f->trap : "-");
		wizard_check(wz, s.buf, h.buf, true);
		sb_release(&h);
	}
	if (w->lint.n)
		wizard_info(wz, R_REVERT, "%zu lint finding%s on this diff: each must be acknowledged",
			    w->lint.n, w->lint.n == 1 ? "" : "s");
	sb_release(&s);
	loop_measurement_release(&m);
	app_open_wizard(a, wz);
	return 0;
}

static int submit_log(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = W(a);
	struct loop_log_opts o = {0};
	struct log_row row;
	int rc;

	memset(&row, 0, sizeof(row));
	o.direction = wz->f[0].value.buf;
	o.status = RS_NONE;
	size_t k = 1;
	if (wz->f[1].kind == WZ_CHOICE) {
		o.status = row_status_parse(wz->f[1].choices[wz->f[1].choice]);
		k = 2;
	}
	o.axis = wz->f[k].value.len ? wz->f[k].value.buf : NULL;
	if (wz->nf > k + 1 && wz->f[k + 1].kind == WZ_TEXT && wz->f[k + 1].value.len &&
	    o.status == RS_KEEP)
		o.unconfirmed = wz->f[k + 1].value.buf;
	/* Every finding's box is ticked (the wizard requires it): the engine
	 * records the acknowledgement with the row, and only then. */
	o.ack_lints = w->lint.n > 0;
	if ((rc = loop_log(w->l, &o, &row, e)) < 0)
		return rc;
	app_message(a, false, "logged iteration %d (%s) \xc2\xb7 next: commit (%s)", row.iter,
		    row_status_name(row.status), action_first_key(ACT_COMMIT));
	log_row_release(&row);
	return 0;
}

static int open_contract_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct wizard *wz;
	int rc;

	/* the contract as it is on disk now (loop_reload reads it again) */
	if ((rc = loop_reload(a, e)) < 0)
		return rc;
	struct loop_contract_field *miss;
	size_t nmiss;
	if ((rc = loop_contract_missing(w->l, &miss, &nmiss, e)) < 0)
		return rc;
	wz = wizard_new("Task contract: fill the missing fields", WZ_CONTRACT);
	/* one field a step, under the hint and example draft.md gives for it */
	wz->one_per_page = true;
	wizard_info(wz, R_NORMAL, "%s", loop_contract_path(w->l));
	w->ncontract = 0;
	for (size_t i = 0; i < nmiss; i++) {
		wizard_text(wz, miss[i].heading, miss[i].hint, true, NULL);
		w->contract_fields[w->ncontract++] = miss[i].name;
	}
	if (w->ncontract == 0)
		wizard_info(wz, R_DIM, "nothing is missing; Enter closes");
	loop_contract_fields_free(miss, nmiss);
	app_open_wizard(a, wz);
	return 0;
}

static int submit_contract(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = W(a);
	const char *values[CONTRACT_NFIELDS];
	size_t n = 0;
	int rc;

	for (int i = 0; i < w->ncontract && (size_t)i < wz->nf; i++)
		values[n++] = wz->f[i].value.buf ? wz->f[i].value.buf : "";
	if ((rc = loop_contract_set(w->l, w->contract_fields, values, n, e)) < 0)
		return rc;
	app_message(a, false, "contract saved: %d field%s filled", w->ncontract, w->ncontract == 1 ? "" : "s");
	return 0;
}

/* The profile is checked where it is typed, by the rule reassess applies. */
static int check_profile(void *ctx, const char *path, struct sb *why)
{
	struct err e = {0};
	int rc = loop_reassess_profile_check(ctx, path, &e);
	if (rc < 0)
		sb_adds(why, e.msg);
	return rc;
}

static int open_stall_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct sb axes = SB_INIT;
	struct wizard *wz;
	int rc;

	sb_init(&axes);
	if ((rc = loop_axes_summary(w->l, &axes, e)) < 0) {
		sb_release(&axes);
		return rc;
	}
	wz = wizard_new("Stall re-assessment", WZ_STALL);
	wz->one_per_page = true;
	wizard_info(wz, R_REVERT, "%d rows in a row without a win: re-assess before the next iteration",
		    w->st.stall_limit);
	wizard_info(wz, R_HEADER, "directions tried so far, by axis:");
	const char *p = axes.buf;
	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		wizard_info(wz, R_NORMAL, "  %.*s", n, p);
		p += n + (nl ? 1 : 0);
	}
	struct wz_field *prof = wizard_text(
		wz, "Re-profile", "a profiler file under trace/, written after the stall began", true, NULL);
	wizard_field_check(prof, check_profile, w->l);
	wizard_text(wz, "Axes already tried", "which axes the directions above covered", true, NULL);
	wizard_text(wz, "Known techniques", "what is known for this op family (papers, other kernels)", true,
		    NULL);
	wizard_text(wz, "New direction", "the next direction and the effect you expect", true, NULL);
	sb_release(&axes);
	app_open_wizard(a, wz);
	return 0;
}

static int submit_stall(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = W(a);
	struct loop_reassess r = {wz->f[0].value.buf, wz->f[1].value.buf, wz->f[2].value.buf,
				  wz->f[3].value.buf};
	int rc = loop_reassess(w->l, &r, e);
	if (rc == 0)
		app_message(a, false, "re-assessment recorded \xc2\xb7 next: %s", wz->f[3].value.buf);
	return rc;
}

static const char *const stop_reasons[] = {"cap", "floor", "directions", NULL};

/* STOPPING: what a no-go still lacks; READY/EDITING: record a stop. */
static int open_stop_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct sb md = SB_INIT;
	struct wizard *wz;

	(void)e;
	if (w->st.state == ST_STOPPING) {
		struct err ne = {0};
		sb_init(&md);
		int nr = loop_nogo(w->l, &md, NULL, &ne);
		wz = wizard_new("Stop: promotion or no-go", WZ_STOP);
		if (w->st.next)
			wizard_info(wz, R_NORMAL, "%s", w->st.next);
		wizard_info(wz, nr == 0 ? R_KEEP : R_REVERT,
			    nr == 0 ? "no-go record complete:" : "no-go record: items still missing:");
		const char *p = md.buf;
		while (*p) {
			const char *nl = strchr(p, '\n');
			int n = nl ? (int)(nl - p) : (int)strlen(p);
			if (n)
				wizard_info(wz, R_NORMAL, "%.*s", n, p);
			p += n + (nl ? 1 : 0);
		}
		sb_release(&md);
	} else {
		wz = wizard_new("Record a stop condition", WZ_STOP);
		wizard_info(wz, R_NORMAL, "cap: the iteration cap is reached; floor: a documented bound with "
					  "its number; directions: three or more tried with evidence");
		wizard_choice(wz, "Reason", "why the loop stops", stop_reasons, 0);
		wizard_text(wz, "Bound", "for floor: the named bound and its number (HBM: 4.1 of 4.8 TB/s)",
			    false, NULL);
	}
	app_open_wizard(a, wz);
	return 0;
}

static int submit_stop(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = W(a);
	if (wz->nf == 0)
		return 0; /* the no-go check only shows */
	int rc = loop_stop(w->l, wz->f[0].choices[wz->f[0].choice],
			   wz->f[1].value.len ? wz->f[1].value.buf : NULL, e);
	if (rc == 0)
		app_message(a, false, "stop recorded (%s)", wz->f[0].choices[wz->f[0].choice]);
	return rc;
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
	if (loop_reload(a, &re) < 0) {
		give_lock(a);
		return err_set(e, re.code, "%s", re.msg);
	}
	rc = act_locked(a, act, e);
	if (!a->running)
		give_lock(a);
	return rc;
}

static int act_locked(struct app *a, enum action act, struct err *e)
{
	struct ws_loop *w = W(a);
	char sha[41];
	int rc;

	switch (act) {
	case ACT_VERIFY:
		return start_verify(a, e);
	case ACT_CONFIRM:
		return start_confirm(a, e);
	case ACT_LOG:
		if ((rc = loop_may(w->l, STEP_LOG, e)) < 0)
			return rc;
		return open_log_wizard(a, e);
	case ACT_COMMIT:
		if ((rc = loop_commit(w->l, sha, e)) < 0)
			return rc;
		app_message(a, false, "committed iteration %d as %.7s \xc2\xb7 next: change the kernel, then verify (%s)",
			    w->st.iteration, sha, action_first_key(ACT_VERIFY));
		return loop_reload(a, e);
	case ACT_REASSESS:
		if (w->st.state == ST_NO_CONTRACT)
			return open_contract_wizard(a, e);
		if (w->st.state == ST_STALLED)
			return open_stall_wizard(a, e);
		if (w->st.state == ST_STOPPING)
			return open_stop_wizard(a, e);
		/* Nothing is due: say so, and why, and do nothing else. */
		app_message(a, false, "no re-assessment is due: stall %d/%d (due after %d rows in a row without a win)",
			    w->st.stall, w->st.stall_limit, w->st.stall_limit);
		return 0;
	case ACT_STOP:
		if (w->st.state == ST_STOPPING || w->st.state == ST_READY || w->st.state == ST_EDITING)
			return open_stop_wizard(a, e);
		return err_set(e, ERR_REFUSED,
			       "stop refused: iteration %d is %s; a stop is recorded between iterations "
			       "(%s)",
			       w->st.iteration, state_upper(w->st.state), w->st.next ? w->st.next : "");
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
		give_lock(a);
	return rc;
}

static int submit_locked(struct app *a, struct wizard *wz, struct err *e)
{
	switch (wz->kind) {
	case WZ_LOG:
		return submit_log(a, wz, e);
	case WZ_CONTRACT:
		return submit_contract(a, wz, e);
	case WZ_STALL:
		return submit_stall(a, wz, e);
	case WZ_STOP:
		return submit_stop(a, wz, e);
	}
	return 0;
}

/* ---- detail -------------------------------------------------------------- */

static void dline(struct app *a, enum role role, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void dline(struct app *a, enum role role, const char *fmt, ...)
{
	struct sb s = SB_INIT;
	va_list ap;

	sb_init(&s);
	va_start(ap, fmt);
	sb_vaddf(&s, fmt, ap);
	va_end(ap);
	a->data.detail = xrealloc(a->data.detail, (a->data.ndetail + 1) * sizeof(*a->data.detail));
	a->data.detail[a->data.ndetail++] = (struct wb_line){sb_detach(&s), role};
}

/* Lines of text, one detail line each. */
static void dtext(struct app *a, enum role role, const char *text)
{
	const char *p = text;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		enum role r = role;
		if (role == R_NORMAL && n > 0 && (p[0] == '+' || p[0] == '-') && strncmp(p, "+++", 3) && strncmp(p, "---", 3))
			r = p[0] == '+' ? R_KEEP : R_REVERT;
		dline(a, r, "%.*s", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

static void shape_name(const struct parse_row *r, struct sb *out)
{
	sb_addf(out, "%s B=%ld T=%ld H=%ld D=%ld", r->mode ? r->mode : "", r->B, r->T, r->H, r->D);
	if (r->L >= 0)
		sb_addf(out, " L=%ld", r->L);
}

static int loop_detail(struct app *a, int i, struct err *e)
{
	struct ws_loop *w = W(a);
	const struct log_row *r;
	struct loop_run run;
	struct sb s = SB_INIT;
	int have;

	if (i < 0 || (size_t)i >= a->data.nrows)
		return err_set(e, ERR_USAGE, "details: no row selected");
	r = &a->data.rows[i];
	clear_lines(&a->data.detail, &a->data.ndetail);
	wb_verdict_clear(&a->data.sel);
	sb_init(&s);
	dline(a, R_HEADER, "Iteration %d \xc2\xb7 %s \xc2\xb7 %s", r->iter, row_status_name(r->status),
	      r->direction ? r->direction : "");
	fmt_gate(r, &s);
	dline(a, theme_row_role(r) == R_FAIL ? R_FAIL : R_NORMAL, "Gate: %s (%s)", s.buf,
	      r->scope == SCOPE_SUBSET ? "-k subset: a signal only, never supports promotion"
	      : r->scope == SCOPE_FULL ? "full gate" : "scope unknown");
	sb_reset(&s);
	fmt_bench(r->bench_ms, &s);
	sb_adds(&s, " ms \xc2\xb7 vs best ");
	fmt_vs_best(r->vs_best, &s);
	dline(a, R_NORMAL, "Bench (geomean of per-shape medians): %s", s.buf);
	if (r->axis)
		dline(a, R_NORMAL, "Axis: %s", r->axis);

	struct err re = {0};
	have = loop_iter_run_get(w->l, r->iter, &run, &re) < 0 ? -1 : run.have_result;
	if (have < 0) {
		dline(a, R_DIM, "Run: %s", re.msg);
	} else {
		dline(a, R_NORMAL, "Run: %s \xc2\xb7 exit %d%s%s", run.command ? run.command : "",
		      run.exit_status, run.cancelled ? " \xc2\xb7 cancelled" : "",
		      run.timed_out ? " \xc2\xb7 timed out" : "");
		if (run.log_path)
			dline(a, R_DIM, "Raw output: %s", run.log_path);
		struct loop_cost cost;
		if (loop_cost(w->l, &cost, NULL) == 0) {
			struct sb cw = SB_INIT;
			sb_init(&cw);
			loop_cost_words(loop_cost_of(&cost, r->iter), &cw);
			sb_adds(&cw, " \xc2\xb7 session ");
			loop_cost_words(&cost.total, &cw);
			dline(a, R_NORMAL, "Cost: %s", cw.buf);
			sb_release(&cw);
			loop_cost_release(&cost);
		}
		set_verdict(&run, -1, &a->data.sel);
		if (run.why)
			dline(a, R_DIM, "Verdict: %s", run.why);
		if (run.slurm)
			dline(a, R_NORMAL, "Ran on: %s", run.slurm);
		if (run.probe_command)
			dline(a, R_DIM, "Probe command: %s", run.probe_command);
		static const char *const phases[] = {"before", "after"};
		for (int ph = 0; ph < 2; ph++) {
			if (!run.probe[ph])
				continue;
			struct sb d = SB_INIT;
			sb_init(&d);
			sb_addf(&d, "Probe %s: ", phases[ph]);
			sb_adds(&d, run.probe[ph]);
			dtext(a, run.probe_busy[ph] ? R_REVERT : R_DIM, d.buf);
			sb_release(&d);
		}
	}
	const struct parse_result res = have > 0 ? run.result : (struct parse_result){0};
	if (have > 0) {
		if (res.gate_test)
			dline(a, R_NORMAL, "Gate test: %s%s%s", res.gate_test, res.gate_k ? " -k " : "",
			      res.gate_k ? res.gate_k : "");
		if (res.pytest.passed >= 0)
			dline(a, R_NORMAL, "pytest: %d passed, %d failed, %d errors, %d skipped",
			      res.pytest.passed, res.pytest.failed < 0 ? 0 : res.pytest.failed,
			      res.pytest.errors < 0 ? 0 : res.pytest.errors,
			      res.pytest.skipped < 0 ? 0 : res.pytest.skipped);
		if (res.env.raw)
			dline(a, R_NORMAL, "Environment: %s", res.env.raw);
		if (res.nrows) {
			dline(a, R_NORMAL, "%s", "");
			dline(a, R_HEADER, "%-34s %10s %10s %7s", "Shape", res.col_base ? res.col_base : "base",
			      res.col_new ? res.col_new : "new", "speedup");
			for (size_t k = 0; k < res.nrows; k++) {
				const struct parse_row *pr = &res.rows[k];
				sb_reset(&s);
				shape_name(pr, &s);
				struct sb nums = SB_INIT;
				sb_init(&nums);
				double v[3] = {pr->base_ms, pr->new_ms, pr->speedup};
				for (int q = 0; q < 3; q++) {
					char cell[32];
					if (!isfinite(v[q]))
						snprintf(cell, sizeof(cell), "\xe2\x80\x94");
					else
						snprintf(cell, sizeof(cell), q == 2 ? "%.2fx" : "%.3f", v[q]);
					sanitize_cell(cell, q == 2 ? 8 : 11, true, &nums);
				}
				dline(a, R_NORMAL, "%-34s%s", s.buf, nums.buf);
				sb_release(&nums);
			}
		}
		for (size_t k = 0; k < res.nwarnings; k++)
			dline(a, R_REVERT, "Warning: %s", res.warnings[k]);
	}
	dline(a, R_NORMAL, "%s", "");
	if (r->commit) {
		struct sb stat = SB_INIT, patch = SB_INIT;
		struct err ge = {0};
		sb_init(&stat);
		sb_init(&patch);
		dline(a, R_HEADER, "Commit %s", r->commit);
		if (loop_show_commit(w->l, r->commit, &stat, &patch, &ge) < 0) {
			dline(a, R_ERROR, "%s", ge.msg);
		} else {
			dtext(a, R_DIM, stat.buf);
			dline(a, R_NORMAL, "%s", "");
			dtext(a, R_NORMAL, patch.buf);
		}
		sb_release(&stat);
		sb_release(&patch);
	} else {
		dline(a, R_DIM, "Not committed yet.");
	}
	sb_release(&s);
	if (have >= 0)
		loop_run_release(&run);
	return 0;
}

/* Per-shape series for the chart: each row's measured shapes. */
static int loop_shapes(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	struct sb key = SB_INIT;
	char **keys = NULL; /* each shape's comparison key */

	free_shapes(a);
	sb_init(&key);
	for (size_t i = 0; i < a->data.nrows; i++) {
		struct loop_run run;
		if (loop_iter_run_get(w->l, a->data.rows[i].iter, &run, NULL) < 0)
			continue;
		const struct parse_result res = run.result;
		if (run.have_result) {
			for (size_t k = 0; k < res.nrows; k++) {
				sb_reset(&key);
				shape_name(&res.rows[k], &key);
				size_t s = 0;
				while (s < a->data.nshapes && strcmp(a->data.shapes[s].name, key.buf))
					s++;
				if (s == a->data.nshapes) {
					a->data.shapes = xrealloc(a->data.shapes, (s + 1) * sizeof(*a->data.shapes));
					keys = xrealloc(keys, (s + 1) * sizeof(*keys));
					struct wb_shape *sh = &a->data.shapes[s];
					sh->name = xstrdup(key.buf);
					sh->base_ms = sh->best_ms = sh->speedup = NAN;
					keys[s] = loop_shape_key(&res.rows[k]);
					sh->ms = xmalloc(a->data.nrows * sizeof(double));
					for (size_t z = 0; z < a->data.nrows; z++)
						sh->ms[z] = NAN;
					a->data.nshapes++;
				}
				double v = res.rows[k].new_ms;
				a->data.shapes[s].ms[i] = isfinite(v) ? v : res.rows[k].base_ms;
			}
		}
		loop_run_release(&run);
	}
	sb_release(&key);
	/* the speedups: the one comparison report final makes, not a division
	 * of two single runs */
	struct loop_shape_speedup *sp;
	size_t nsp;
	if (loop_best_shapes(w->l, &sp, &nsp, NULL) == 0) {
		for (size_t s = 0; s < a->data.nshapes; s++)
			for (size_t k = 0; k < nsp; k++)
				if (keys[s] && !strcmp(keys[s], sp[k].key)) {
					a->data.shapes[s].base_ms = sp[k].base_ms;
					a->data.shapes[s].best_ms = sp[k].best_ms;
					a->data.shapes[s].speedup = sp[k].speedup;
				}
		loop_shape_speedups_free(sp, nsp);
	}
	for (size_t s = 0; s < a->data.nshapes; s++)
		free(keys[s]);
	free(keys);
	a->shapes_loaded = true;
	return 0;
}

static void loop_close_be(struct app *a)
{
	struct ws_loop *w = W(a);

	if (!w)
		return;
	if (w->confirm) {
		/* not reached through app_run, which ends every run; the candidate
		 * must still come back */
		struct loop_session r;
		loop_confirm_end(w->confirm, &r, NULL);
		loop_session_release(&r);
		w->confirm = NULL;
	}
	clear_lines(&a->data.notes, &a->data.nnotes);
	clear_lines(&a->data.detail, &a->data.ndetail);
	wb_verdict_clear(&a->data.last);
	wb_verdict_clear(&a->data.sel);
	free_shapes(a);
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
	free(w);
	a->be_data = NULL;
}

/* ---- other optloops writing ------------------------------------------------ */

static void on_watch(void *ctx, const struct loop_watch_event *ev)
{
	struct app *a = ctx;
	struct ws_loop *w = W(a);

	switch (ev->kind) {
	case LOOP_WATCH_RUN_START:
		if (ev->pid == (int)getpid() || a->running)
			break; /* our own */
		w->ext_run = ev->run_id;
		free(w->driver);
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
			sb_addf(&t, "%s: gate %s, bench ", w->driver ? w->driver : "run", ev->gate);
			optlog_fmt_bench(ev->bench_ms, &t);
			sb_adds(&t, " ms");
			if (a->data.live) {
				live_flush(a->data.live);
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
	struct ws_loop *w = W(a);
	/* while a run of our own goes, our own writes are no news */
	return w->watch && !a->running ? loop_watch_fd(w->watch) : -1;
}

static int loop_watch_pump_be(struct app *a, struct err *e)
{
	struct ws_loop *w = W(a);
	w->changed = false;
	int rc = loop_watch_pump(w->watch, e);
	if (rc < 0)
		return rc;
	return w->changed ? 1 : 0;
}

static const struct backend loop_backend = {
	.reload = loop_reload,
	.status = loop_status_line,
	.act = loop_act,
	.submit = loop_submit,
	.detail = loop_detail,
	.shapes = loop_shapes,
	.run_fds = loop_run_fds,
	.run_pump = loop_run_pump,
	.run_cancel = loop_run_cancel,
	.run_end = loop_run_end,
	.close = loop_close_be,
	.watch_fd = loop_watch_fd_be,
	.watch_pump = loop_watch_pump_be,
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
