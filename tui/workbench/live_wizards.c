/* live_wizards — the live backend's wizards: log, contract, stall
 * re-assessment and stop, each opened from the engine's state and submitted
 * back through loop_* calls. */
#include "tui/workbench/live_impl.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/rules.h"
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

/* ---- wizards ------------------------------------------------------------- */

static const char *const status_choices[] = {"keep", "revert", "drop", "floor", NULL};
/* A run that did not measure (failed gate, no bench number): neither keep nor
 * floor may be logged for it (rules_keep, rules_floor_allowed). */
static const char *const unmeasured_choices[] = {"revert", "drop", NULL};

#define SET_ASIDE_LABEL "Set aside the later edit"

/* Whether the box labelled label is there and ticked. */
static bool field_ticked(const struct wizard *wz, const char *label)
{
	for (size_t i = 0; i < wz->nf; i++)
		if (wz->f[i].kind == WZ_CHECK && !strcmp(wz->f[i].label, label))
			return wz->f[i].checked;
	return false;
}

/* The value of the wizard's text field labelled label; NULL when it is
 * absent or empty. */
static const char *field_text(const struct wizard *wz, const char *label)
{
	for (size_t i = 0; i < wz->nf; i++)
		if (wz->f[i].kind == WZ_TEXT && !strcmp(wz->f[i].label, label))
			return wz->f[i].value.len ? wz->f[i].value.buf : NULL;
	return NULL;
}

/* The status the log wizard would log: its Status choice; RS_NONE for the
 * baseline, which has none (the engine writes base). */
static enum row_status chosen_status(const struct wizard *wz)
{
	const char *c = wizard_choice_value(wz, "Status");
	return c ? row_status_parse(c) : RS_NONE;
}

/* A lint box is required where the chosen status keeps the kernel; the
 * engine's rule, asked again whenever the status changes. */
static bool lint_ack_needed(void *ctx, const struct wizard *wz)
{
	(void)ctx;
	return rules_lints_need_ack(chosen_status(wz));
}

/* Every lint box ticked: the one acknowledgement the engine records. */
static bool lints_acked(const struct wizard *wz)
{
	size_t n = 0;
	for (size_t i = 0; i < wz->nf; i++)
		if (wz->f[i].kind == WZ_CHECK && !strncmp(wz->f[i].label, "Lint: ", 6)) {
			if (!wz->f[i].checked)
				return false;
			n++;
		}
	return n > 0;
}

int live_open_log_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
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
	/* the run's flags and the rules that fired, with their numbers: what
	 * the proposal weighed */
	struct loop_run run;
	if (m.iter != 0 && m.run_id && loop_run_get(w->l, m.run_id, &run, NULL) == 0) {
		if (run.flags_text) {
			char *why = live_implausible_words(&run);
			wizard_info(wz, R_REVERT, "flags: %s%s%s", run.flags_text,
				    why ? " \xc2\xb7 " : "", why ? why : "");
			free(why);
		}
		loop_run_release(&run);
	}
	wizard_info(wz, R_DIM, "gate and bench come from the run; they are shown, not typed");
	if (m.no_change)
		wizard_info(wz, R_DIM, "no-change run: the kernel equals HEAD");
	if (w->st.telescoped)
		wizard_info(wz, R_ERROR, "the kernel changed since this run was measured: tick Set aside to keep "
					 "that later edit for after the commit, or Esc and verify (%s) again to "
					 "measure the kernel as it is",
			    action_first_key(ACT_VERIFY));
	wizard_text(wz, "Direction", "one line: what this iteration tried", true,
		    m.iter == 0 ? "baseline" : NULL);
	if (m.iter != 0 && w->st.suggest != RS_NONE)
		wizard_info(wz, w->st.suggest == RS_KEEP ? R_KEEP : R_REVERT, "proposed: %s \xc2\xb7 %s",
			    row_status_name(w->st.suggest), w->st.suggest_why ? w->st.suggest_why : "");
	if (m.iter != 0) {
		/* preselect the status the evidence supports (the engine's due
		 * step), revert when it names none: never one it would refuse */
		bool measured = rules_run_measured(m.gate, m.bench_ms);
		const char *const *choices = measured ? status_choices : unmeasured_choices;
		int pick = measured ? 1 : 0;
		for (int k = 0; choices[k]; k++)
			if (row_status_parse(choices[k]) == w->st.suggest)
				pick = k;
		wizard_choice(wz, "Status",
			      measured ? "keep = new best (needs a win beyond noise); revert / drop = "
					 "undo; floor = a bound"
				       : "the gate did not pass: revert / drop undo it (no keep, no "
					 "floor)",
			      choices, pick);
	}
	wizard_text(wz, "Axis", "optional: the axis of this direction (tiling, fusion, ...)", false, NULL);
	if (m.iter != 0 && rules_run_measured(m.gate, m.bench_ms))
		wizard_text(wz, "Bound",
			    "only for floor: the named bound and its number (HBM: 4.1 of 4.8 TB/s)",
			    false, NULL);
	if (m.iter != 0 && w->st.suggest != RS_KEEP)
		wizard_text(wz, "Keep unconfirmed",
			    "only to keep it without a win beyond noise: why (recorded, shown as unconfirmed)",
			    false, NULL);
	/* Lint findings on the diff are acknowledged one by one, where the
	 * row keeps the kernel. */
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
		wizard_field_need(wizard_check(wz, s.buf, h.buf, true), lint_ack_needed, NULL);
		sb_release(&h);
	}
	/* the CLI's log --set-aside: the row is the measured run's, the later
	 * edit kept under its ref and back after the commit */
	if (w->st.telescoped)
		wizard_check(wz, SET_ASIDE_LABEL,
			     "the kernel edits made after the measurement are set aside (kept under "
			     "refs/optloop/aside/) and come back after the commit",
			     true);
	if (w->lint.n)
		wizard_info(wz, R_REVERT,
			    "%zu lint finding%s on this diff: each must be acknowledged%s", w->lint.n,
			    w->lint.n == 1 ? "" : "s",
			    m.iter == 0 ? "" : " to keep it; undoing it needs none");
	sb_release(&s);
	loop_measurement_release(&m);
	app_open_wizard(a, wz);
	return 0;
}

int live_submit_log(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct loop_log_opts o = {0};
	struct log_row row;
	int rc;

	memset(&row, 0, sizeof(row));
	o.direction = wz->f[0].value.buf;
	o.status = chosen_status(wz);
	o.axis = field_text(wz, "Axis");
	if (o.status == RS_FLOOR)
		o.bound = field_text(wz, "Bound");
	if (o.status == RS_KEEP)
		o.unconfirmed = field_text(wz, "Keep unconfirmed");
	/* Every box ticked is the acknowledgement, recorded with the row; the
	 * wizard requires it where the status keeps the kernel. */
	o.ack_lints = lints_acked(wz);
	/* as log --set-aside: done already (a log refused after it) is no error */
	bool aside = field_ticked(wz, SET_ASIDE_LABEL);
	if (aside) {
		struct loop_status st;
		if ((rc = loop_status(w->l, &st, e)) < 0)
			return rc;
		bool telescoped = st.telescoped;
		loop_status_release(&st);
		if (telescoped && (rc = loop_set_aside(w->l, e)) < 0)
			return rc;
	}
	if ((rc = loop_log(w->l, &o, &row, e)) < 0)
		return rc;
	app_message(a, false, "logged iteration %d (%s)%s \xc2\xb7 next: commit (%s)", row.iter,
		    row_status_name(row.status),
		    aside ? "; the later edit is set aside and comes back after the commit" : "",
		    action_first_key(ACT_COMMIT));
	log_row_release(&row);
	return 0;
}

int live_open_contract_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct wizard *wz;
	int rc;

	/* the contract as it is on disk now (loop_reload reads it again) */
	if ((rc = live_reload(a, e)) < 0)
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

int live_submit_contract(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = live_of(a);
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

int live_open_stall_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
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

int live_submit_stall(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct loop_reassess r = {wz->f[0].value.buf, wz->f[1].value.buf, wz->f[2].value.buf,
				  wz->f[3].value.buf};
	int rc = loop_reassess(w->l, &r, e);
	if (rc == 0)
		app_message(a, false, "re-assessment recorded \xc2\xb7 next: %s", wz->f[3].value.buf);
	return rc;
}

static const char *const stop_reasons[] = {"cap", "floor", "directions", NULL};

/* STOPPING: what a no-go still lacks; READY/EDITING: record a stop. */
int live_open_stop_wizard(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
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

int live_submit_stop(struct app *a, struct wizard *wz, struct err *e)
{
	struct ws_loop *w = live_of(a);
	if (wz->nf == 0)
		return 0; /* the no-go check only shows */
	char *bound = NULL;
	int rc = loop_stop(w->l, wz->f[0].choices[wz->f[0].choice],
			   wz->f[1].value.len ? wz->f[1].value.buf : NULL, &bound, e);
	if (rc == 0)
		app_message(a, false, "stop recorded (%s%s%s)", wz->f[0].choices[wz->f[0].choice],
			    bound ? ": " : "", bound ? bound : "");
	free(bound);
	return rc;
}
