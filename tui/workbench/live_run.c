/* live_run — the live backend's runs: a verify, a noise or a confirm job
 * started from the workbench through one job handle, pumped by the event
 * loop, cancelled, and ended into the panes. */
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

/* The words of each kind: the run's name and the live pane's title. */
static const char *const job_name[] = {
	[LOOP_JOB_VERIFY] = "verify", [LOOP_JOB_NOISE] = "noise", [LOOP_JOB_CONFIRM] = "confirm"};
static const char *const job_title[] = {
	[LOOP_JOB_VERIFY] = "Verify", [LOOP_JOB_NOISE] = "Noise", [LOOP_JOB_CONFIRM] = "Confirm"};

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

/* A session's live pane names the run going ("Confirm · iter 4 · run 3/6
 * (best)") and marks where each run's output starts; its bar counts the
 * session's runs (a benchmark prints no percent). */
static void job_announce(struct app *a)
{
	struct ws_loop *w = live_of(a);
	struct loop_job_progress p;
	struct live_buf *b = a->data.live;

	if (!w->job || !b)
		return;
	loop_job_progress(w->job, &p);
	if (p.kind == LOOP_JOB_VERIFY || p.run == w->job_shown || !p.running)
		return;
	w->job_shown = p.run;
	char *title = xasprintf("%s \xc2\xb7 iter %d \xc2\xb7 run %d/%d (%s)", job_title[p.kind],
				p.iter, p.run, p.nruns, p.role);
	free(b->title);
	b->title = title;
	live_flush(b);
	char *line = xasprintf("--- %s run %d/%d (%s): the %s kernel is in the work tree ---\n",
			       job_name[p.kind], p.run, p.nruns, p.role,
			       p.kind == LOOP_JOB_NOISE || !strcmp(p.role, "best") ? "best"
			       : !strcmp(p.role, "baseline")			 ? "baseline"
										 : "candidate");
	live_feed(b, line, strlen(line));
	free(line);
	b->progress = (p.run - 1) * 100 / (p.nruns > 0 ? p.nruns : 1);
	free(b->stage);
	b->stage = NULL;
}

/* The first key of an action in buf (action_first_key's own buffer is
 * static, so two in one message need copies). */
static const char *key_of(enum action act, char buf[16])
{
	snprintf(buf, 16, "%s", action_first_key(act));
	return buf;
}

/* A confirm's judgment after each pair (the verdict so far and its
 * interval, as optloop confirm prints it), with what it has cost so far:
 * into the live pane, and in the message line, so a long wait is understood. */
static void on_progress(void *ctx, const char *line)
{
	struct app *a = ctx;
	struct ws_loop *w = live_of(a);
	struct loop_job_progress p;

	if (!w->job)
		return;
	loop_job_progress(w->job, &p);
	if (a->data.live) {
		char *text = xasprintf("--- %s: %s ---\n", job_name[p.kind], line);
		live_flush(a->data.live);
		live_feed(a->data.live, text, strlen(text));
		free(text);
	}
	if (p.kind == LOOP_JOB_CONFIRM)
		app_message(a, false, "confirm of iteration %d, %d run%s in %.0f s so far: %s", p.iter,
			    p.run, p.run == 1 ? "" : "s", p.elapsed_s, line);
	a->output_dirty = true;
}

int live_start_job(struct app *a, enum loop_job_kind kind, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct loop_job_opts o = {.kind = kind};
	char k1[16];
	int rc;

	/* a confirm measures the verified candidate: said in the workbench's
	 * words before anything is begun */
	if (kind == LOOP_JOB_CONFIRM && w->st.state != ST_MEASURED)
		return err_set(e, ERR_REFUSED,
			       "confirm refused: iteration %d is %s; a confirm measures a verified "
			       "candidate before it is logged (%s)",
			       w->st.iteration, live_state_upper(w->st.state), w->st.next ? w->st.next : "");
	if (kind == LOOP_JOB_VERIFY)
		o.verify = (struct loop_verify_opts){.output = on_output, .event = on_event, .ctx = a};
	else
		o.session = (struct loop_session_opts){.output = on_output, .event = on_event,
						       .progress = on_progress, .ctx = a};
	if (!a->data.live)
		a->data.live = live_new(4000, 1024);
	w->run_iter = w->st.iteration;
	w->job_shown = 0;
	w->job_cancelled = false;
	char *title = kind == LOOP_JOB_VERIFY
			      ? xasprintf("Verify \xc2\xb7 iter %d", w->run_iter)
			      : xstrdup(job_title[kind]);
	live_reset(a->data.live, title);
	free(title);
	if ((rc = loop_job_begin(w->l, &o, &w->job, e)) < 0)
		return rc;
	job_announce(a);
	a->data.live->running = true;
	a->data.live->t_start = app_now();
	app_run_started(a, job_name[kind]);
	key_of(ACT_CANCEL, k1);
	if (kind == LOOP_JOB_VERIFY)
		app_message(a, false,
			    "verify started for iteration %d (%s cancels; the run is recorded either way)",
			    w->run_iter, k1);
	else if (kind == LOOP_JOB_CONFIRM)
		app_message(a, false,
			    "confirm started for iteration %d: best and candidate in turns (%s cancels; the "
			    "candidate comes back either way)",
			    w->run_iter, k1);
	else {
		struct loop_job_progress p;
		loop_job_progress(w->job, &p);
		app_message(a, false,
			    "noise started: the best (iteration %d) %d times in one session (%s cancels; "
			    "the kernel comes back either way)",
			    w->st.best_iter, p.nruns, k1);
	}
	return 0;
}

/* ---- the run going -------------------------------------------------------- */

int live_run_fds(struct app *a, int fds[2])
{
	struct ws_loop *w = live_of(a);
	return w->job ? loop_job_fds(w->job, fds) : 0;
}

int live_run_pump(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	if (!w->job)
		return 0;
	int rc = loop_job_pump(w->job, 0, e);
	job_announce(a);
	return rc;
}

void live_run_cancel(struct app *a)
{
	struct ws_loop *w = live_of(a);
	if (w->job) {
		loop_job_cancel(w->job);
		w->job_cancelled = true;
	}
}

/* ---- the job's end, in the panes ------------------------------------------ */

static void verify_done(struct app *a, const struct loop_measurement *m)
{
	struct ws_loop *w = live_of(a);
	struct sb s = SB_INIT, next = SB_INIT;
	bool bad = m->gate != GATE_PASS;

	sb_init(&s);
	if (m->cancelled || m->timed_out || m->gate == GATE_INCOMPLETE)
		sb_addf(&s, "incomplete (%s): recorded, never a pass",
			m->cancelled ? "cancelled" : m->timed_out ? "timed out" : "killed");
	else {
		sb_addf(&s, "gate ");
		optlog_fmt_gate(m->gate, m->scope, &s);
		sb_adds(&s, " \xc2\xb7 bench ");
		optlog_fmt_bench(m->bench_ms, &s);
		sb_adds(&s, " ms \xc2\xb7 vs best ");
		optlog_fmt_vs_best(m->vs_best, &s);
	}
	if (a->data.live)
		live_set_verdict(a->data.live, s.buf, bad);
	/* the verdict's flags and the rules behind them, under the output: the
	 * best pane that shows them too is hidden by this pane on a small
	 * terminal */
	struct loop_run r;
	if (a->data.live && m->run_id && loop_run_get(w->l, m->run_id, &r, NULL) == 0) {
		if (r.flags_text) {
			char *why = live_implausible_words(&r);
			char *note = xasprintf("flags: %s%s%s", r.flags_text, why ? " \xc2\xb7 " : "",
					       why ? why : "");
			live_set_note(a->data.live, note);
			free(note);
			free(why);
		}
		loop_run_release(&r);
	}
	live_next_words(w, &next);
	app_message(a, bad, "iteration %d %s: %s \xc2\xb7 next: %s", m->iter,
		    m->attempt ? "attempt (no row)" : "measured", s.buf, next.buf);
	sb_release(&next);
	sb_release(&s);
}

static void confirm_done(struct app *a, const struct loop_session *r)
{
	struct ws_loop *w = live_of(a);
	struct sb s = SB_INIT;
	char k1[16], k2[16];

	sb_init(&s);
	if (r->cancelled) {
		sb_addf(&s, "cancelled after %d run%s: no verdict, not promoted", r->nruns,
			r->nruns == 1 ? "" : "s");
		if (a->data.live)
			live_set_verdict(a->data.live, s.buf, true);
		app_message(a, false,
			    "confirm of iteration %d %s; the candidate is back in the work tree "
			    "(%s runs the confirm again, %s logs the row)",
			    r->iter, s.buf, key_of(ACT_CONFIRM, k1), key_of(ACT_LOG, k2));
		sb_release(&s);
		return;
	}
	if (a->data.live)
		a->data.live->progress = 100;
	sb_addf(&s, "confirm %s", r->verdict);
	if (isfinite(r->speedup))
		sb_addf(&s, " %.3fx", r->speedup);
	sb_addf(&s, " over %d runs \xc2\xb7 %s", r->nruns, r->promoted ? "promoted" : "not promoted");
	if (a->data.live)
		live_set_verdict(a->data.live, s.buf, !r->promoted);
	struct sb next = SB_INIT;
	live_next_words(w, &next);
	if (r->promoted)
		app_message(a, false, "iteration %d: %s \xc2\xb7 next: %s", r->iter, s.buf, next.buf);
	else
		app_message(a, true, "iteration %d: %s (%s) \xc2\xb7 next: %s", r->iter, s.buf,
			    r->why ? r->why : "", next.buf);
	sb_release(&next);
	sb_release(&s);
}

/* The widest spread of the best's shapes in this session, as noise --json
 * has them. */
static void noise_done(struct app *a, const struct loop_session *r)
{
	double worst = NAN;
	size_t i, n = 0;
	json_t *s;
	struct sb v = SB_INIT;
	char k1[16];

	json_array_foreach(json_object_get(r->json, "shapes"), i, s) {
		double x = json_number_value(json_object_get(s, "noise"));
		n++;
		if (isfinite(x) && !(x <= worst))
			worst = x;
	}
	sb_init(&v);
	sb_addf(&v, "noise: the best (iteration %d) measured %d times",
		(int)json_integer_value(json_object_get(r->json, "best_iter")), r->nruns);
	if (isfinite(worst))
		sb_addf(&v, " \xc2\xb7 spread up to %.2f%% over %zu shape%s", 100 * worst, n,
			n == 1 ? "" : "s");
	if (a->data.live) {
		a->data.live->progress = 100;
		live_set_verdict(a->data.live, v.buf, false);
	}
	app_message(a, false, "noise of the best measured in session %d: %d runs (%s measures again)",
		    r->session, r->nruns, key_of(ACT_NOISE, k1));
	sb_release(&v);
}

static int run_end_locked(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct loop_job_result r;
	struct loop_job_progress p;
	char k1[16];

	if (!w->job)
		return 0;
	loop_job_progress(w->job, &p);
	int rc = loop_job_end(w->job, &r, e);
	w->job = NULL;
	if (rc < 0) {
		/* a noise cancelled here is no breakage: said as such */
		if (r.kind == LOOP_JOB_NOISE && w->job_cancelled) {
			if (e)
				err_clear(e);
			if (a->data.live)
				live_set_verdict(a->data.live, "noise cancelled: no spread recorded", true);
			app_message(a, false,
				    "noise cancelled after %d of %d runs: no spread recorded; the "
				    "kernel is back (%s measures again)",
				    p.run > 0 ? p.run - 1 : 0, p.nruns, key_of(ACT_NOISE, k1));
			return 0;
		}
		if (a->data.live)
			live_set_verdict(a->data.live,
					 r.kind == LOOP_JOB_VERIFY    ? "not recorded"
					 : r.kind == LOOP_JOB_CONFIRM ? "confirm broke: not promoted"
								      : "noise broke: no spread recorded",
					 true);
		return rc;
	}
	if (r.kind == LOOP_JOB_VERIFY)
		verify_done(a, &r.m);
	else if (r.kind == LOOP_JOB_CONFIRM)
		confirm_done(a, &r.s);
	else
		noise_done(a, &r.s);
	loop_job_result_release(&r);
	return 0;
}

int live_run_end(struct app *a, struct err *e)
{
	int rc = run_end_locked(a, e);
	live_give_lock(a);
	return rc;
}
