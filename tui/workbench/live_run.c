/* live_run — the live backend's runs: a verify or a confirm started from
 * the workbench, pumped by the event loop, cancelled, and ended into the
 * panes. */
#include "tui/workbench/live_impl.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"
#include "tui/workbench/app.h"
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

int live_start_verify(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
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
	struct ws_loop *w = live_of(a);
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

int live_start_confirm(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct loop_session_opts o = {.output = on_output, .event = on_event, .ctx = a};
	int rc;

	if (w->st.state != ST_MEASURED)
		return err_set(e, ERR_REFUSED,
			       "confirm refused: iteration %d is %s; a confirm measures a verified "
			       "candidate before it is logged (%s)",
			       w->st.iteration, live_state_upper(w->st.state), w->st.next ? w->st.next : "");
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
	struct ws_loop *w = live_of(a);
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
		live_next_words(w, &next);
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

int live_run_fds(struct app *a, int fds[2])
{
	struct ws_loop *w = live_of(a);
	return w->confirm ? loop_confirm_fds(w->confirm, fds) : loop_verify_fds(w->l, fds);
}

int live_run_pump(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	if (w->confirm) {
		int rc = loop_confirm_pump(w->confirm, 0);
		confirm_announce(a);
		return rc;
	}
	return loop_verify_pump(w->l, 0, e);
}

void live_run_cancel(struct app *a)
{
	struct ws_loop *w = live_of(a);
	if (w->confirm)
		loop_confirm_cancel(w->confirm);
	else
		loop_verify_cancel(w->l);
}

static int run_end_locked(struct app *a, struct err *e);

int live_run_end(struct app *a, struct err *e)
{
	int rc = run_end_locked(a, e);
	live_give_lock(a);
	return rc;
}

static int run_end_locked(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
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
	live_next_words(w, &next);
	app_message(a, bad, "iteration %d %s: %s \xc2\xb7 next: %s", m.iter,
		    m.attempt ? "attempt (no row)" : "measured", s.buf, next.buf);
	sb_release(&next);
	sb_release(&s);
	loop_measurement_release(&m);
	return 0;
}
