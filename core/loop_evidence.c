/*
 * loop_evidence — loop.h's evidence calls: a recorded run with its verdict,
 * confirm and probes; the noise band around the best; promotion; reports
 * and export.  The rules are in measure.c, stats.c and report.c; this file
 * only reads them for an open loop.
 */
#include "core/loop.h"
#include "core/loop_impl.h"

#include "core/contract.h"
#include "core/assets.h"
#include "core/closest.h"
#include "core/err.h"
#include "core/gitshow.h"
#include "core/fsutil.h"
#include "core/measure.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/probe.h"
#include "core/report.h"
#include "core/rules.h"
#include "core/runner.h"
#include "core/sb.h"
#include "core/stats.h"
#include "core/store.h"
#include "core/workspace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void loop_run_release(struct loop_run *r)
{
	if (!r)
		return;
	free(r->command);
	free(r->log_path);
	if (r->have_result)
		parse_result_release(&r->result);
	free(r->verdict);
	free(r->why);
	free(r->flags_text);
	json_decref(r->flags_json);
	json_decref(r->detail);
	free(r->confirm_verdict);
	free(r->probe[0]);
	free(r->probe[1]);
	free(r->probe_command);
	free(r->slurm);
	memset(r, 0, sizeof(*r));
}

static void read_verdict(struct store *s, int run_id, struct loop_run *r)
{
	char *v = NULL;
	json_t *d = NULL;
	if (measure_verdict_get(s, run_id, &v, &r->flags, &d, NULL) < 0)
		return;
	r->verdict = v;
	r->confirm_can_win = rules_confirm_can_win(stats_verdict_parse(v));
	r->detail = d;
	const char *why = json_string_value(json_object_get(d, "why"));
	r->why = why && *why ? xstrdup(why) : NULL;
	json_t *g = json_object_get(d, "vs_best");
	r->gain = json_is_number(g) ? json_number_value(g) : NAN;
	json_decref(r->flags_json);
	r->flags_json = stats_flags_json(r->flags);
	if (r->flags) {
		struct sb f = SB_INIT;
		sb_init(&f);
		stats_flags_text(r->flags, &f);
		r->flags_text = sb_detach(&f);
	}
}

/* The confirm the iteration's verdict reads (measure_win's): a later
 * confirm --baseline of the best is not the iteration's confirm. */
static void read_confirm(struct store *s, int iter, struct loop_run *r)
{
	struct store_confirm c;
	if (store_confirm_as_candidate(s, iter, &c, NULL) < 0)
		return;
	if (!c.done) {
		r->confirm = LOOP_CONFIRM_UNFINISHED;
	} else if (!c.verdict) {
		r->confirm = LOOP_CONFIRM_NO_VERDICT;
	} else {
		r->confirm = LOOP_CONFIRM_DONE;
		r->confirm_verdict = xstrdup(c.verdict);
		r->confirm_promoted = c.promoted;
		/* it would promote once its flags are explained, not before */
		enum stats_verdict v = stats_verdict_parse(c.verdict);
		r->confirm_held = !c.promoted && rules_promotes(v, c.flags, true) &&
				  !rules_promotes(v, c.flags, false);
	}
	store_confirm_release(&c);
}

static void read_step(struct store *s, int run_id, struct loop_run *r)
{
	struct store_step st;
	if (store_step_get(s, run_id, &st, NULL) < 0)
		return;
	struct sb d = SB_INIT;
	sb_init(&d);
	sb_addf(&d, "Slurm job %s", st.job ? st.job : "?");
	if (st.step)
		sb_addf(&d, " step %s", st.step);
	if (st.node)
		sb_addf(&d, " on node %s, GPU %s", st.node, st.gpus ? st.gpus : "none");
	if (st.why)
		sb_addf(&d, "; %s", st.why);
	r->slurm = sb_detach(&d);
	store_step_release(&st);
}

static void read_probes(struct store *s, int run_id, struct loop_run *r)
{
	static const char *const phases[] = {"before", "after"};
	for (int ph = 0; ph < 2; ph++) {
		struct probe_reading pr;
		memset(&pr, 0, sizeof(pr));
		if (measure_probe_get(s, run_id, phases[ph], &pr, NULL) == 0) {
			struct sb d = SB_INIT;
			sb_init(&d);
			probe_describe(&pr, &d);
			r->probe[ph] = sb_detach(&d);
			r->probe_busy[ph] = pr.busy;
			if (!r->probe_command && pr.command)
				r->probe_command = xstrdup(pr.command);
		}
		probe_reading_release(&pr);
	}
}

int loop_run_get(struct loop *l, int run_id, struct loop_run *r, struct err *e)
{
	struct store *s = l->ws.store;
	struct store_run run;
	int rc;

	memset(r, 0, sizeof(*r));
	r->gain = NAN;
	r->flags_json = json_array();
	memset(&run, 0, sizeof(run));
	if ((run_id <= 0 && (rc = store_last_judged_run(s, &run_id, e)) < 0) ||
	    (rc = store_run_get(s, run_id, &run, e)) < 0) {
		loop_run_release(r);
		return rc;
	}
	r->id = run.id;
	r->iter = run.iter;
	r->command = run.command ? xstrdup(run.command) : NULL;
	r->log_path = run.log_path ? xstrdup(run.log_path) : NULL;
	r->exit_status = run.exit_status;
	r->timed_out = run.timed_out;
	r->cancelled = run.cancelled;
	if (run.result_json) {
		json_t *j = json_loads(run.result_json, 0, NULL);
		parse_result_init(&r->result);
		r->have_result = j && parse_result_from_json(j, &r->result, NULL) == 0;
		if (!r->have_result)
			parse_result_release(&r->result);
		json_decref(j);
	}
	store_run_release(&run);
	read_verdict(s, r->id, r);
	read_confirm(s, r->iter, r);
	struct measure_win w;
	r->vs_best = NAN;
	if (measure_win(s, r->iter, r->id, &w, NULL) == 0) {
		r->judged = w.source != EVIDENCE_NONE ? stats_verdict_name(w.verdict) : NULL;
		r->vs_best = w.vs_best;
		measure_win_release(&w);
	}
	read_probes(s, r->id, r);
	read_step(s, r->id, r);
	return 0;
}

int loop_iter_run_get(struct loop *l, int iter, struct loop_run *r, struct err *e)
{
	int run_id = 0, rc;
	char *tree = NULL;

	memset(r, 0, sizeof(*r));
	if ((rc = store_iter_run(l->ws.store, iter, &run_id, &tree, e)) < 0)
		return rc;
	free(tree);
	if (run_id <= 0)
		return err_set(e, ERR_NOTFOUND, "iteration %d has no verify run", iter);
	return loop_run_get(l, run_id, r, e);
}

int loop_noise_band(struct loop *l, struct loop_noise *out, struct err *e)
{
	return measure_noise_band(l->ws.store, NULL, NAN, out, e);
}

void loop_noise_words(const struct loop_noise *n, struct sb *out)
{
	measure_noise_words(n, out);
}

int loop_promote_iter(struct loop *l, int *iter, struct err *e)
{
	struct store *s = l->ws.store;
	struct measure_best b;
	struct loop_status st;
	int rc;

	if ((rc = measure_best(s, &b, e)) < 0)
		return rc;
	bool have = b.have;
	*iter = b.iter;
	measure_best_release(&b);
	if (!have)
		return err_set(e, ERR_REFUSED, "promote refused: there is no best yet (measure the "
					       "baseline first)");
	if (loop_status(l, &st, NULL) == 0) {
		struct store_confirm c;
		if (st.state == ST_MEASURED && st.iteration > 0) {
			*iter = st.iteration; /* measured, not logged: its flags block keep */
		} else if (store_confirm_last(s, st.iteration, &c, NULL) == 0) {
			*iter = st.iteration;
			store_confirm_release(&c);
		}
		loop_status_release(&st);
	}
	return 0;
}

int loop_attach(struct loop *l, int iter, const char *path, char **real, const char **kind,
		struct err *e)
{
	struct store *s = l->ws.store;
	int rc = measure_attach_check(s, iter, path, loop_dir(l), real, kind, e);
	return rc < 0 ? rc : measure_attach_in(s, iter, *real, loop_dir(l), e);
}

int loop_attach_run_trace(struct loop *l, int iter, int run_id, char **path, struct err *e)
{
	char *want = xasprintf("%s/%s_trace.json", loop_dir(l), (&l->ws)->op);
	int rc = measure_attach_run_trace(l->ws.store, iter, run_id, want, loop_dir(l), path, e);
	free(want);
	if (rc < 0) {
		free(*path);
		*path = NULL;
	}
	return rc;
}

int loop_explain(struct loop *l, int iter, const char *note, bool *promoted, struct err *e)
{
	return measure_explain(l->ws.store, iter, note, promoted, e);
}

/* The bar's last line: every test file that runs a kernel file the best
 * changed (its dependents) passed its gate on the best's kernel. */
static bool dependents_check(struct loop *l, struct sb *out, json_t *json)
{
	struct loop_dependents d;
	struct err de = {0};
	if (loop_dependents(l, false, &d, &de) < 0)
		return true; /* no best or no baseline yet: the lines above say so */
	struct sb missing = SB_INIT, failed = SB_INIT;
	size_t nt = 0;
	for (size_t i = 0; i < d.n; i++) {
		int ex;
		if (!d.v[i].test)
			continue;
		nt++;
		if (!loop_dependent_gate(l, d.tree, d.v[i].name, &ex))
			sb_addf(&missing, "%s%s", missing.len ? ", " : "", d.v[i].name);
		else if (ex != 0)
			sb_addf(&failed, "%s%s (exit %d)", failed.len ? ", " : "", d.v[i].name, ex);
	}
	bool ok = !missing.len && !failed.len;
	struct sb detail = SB_INIT;
	if (!nt)
		sb_addf(&detail, "no other test file imports the %zu changed kernel file%s",
			d.nchanged, d.nchanged == 1 ? "" : "s");
	else if (ok)
		sb_addf(&detail, "the %zu test file%s that run the changed kernel files passed on "
				 "the best's kernel",
			nt, nt == 1 ? "" : "s");
	else
		sb_addf(&detail, "%s%s%s%s%s; run them: optloop dependents --run", failed.len ? "failed: " : "",
			failed.len ? failed.buf : "", failed.len && missing.len ? "; " : "",
			missing.len ? "not run on the best's kernel: " : "",
			missing.len ? missing.buf : "");
	sb_addf(out, "%-8s %s: %s\n", ok ? "ok" : "MISSING", "dependent gates", detail.buf);
	if (json) {
		json_t *checks = json_object_get(json, "checks");
		json_t *j = json_object();
		json_object_set_new(j, "name", json_string("dependent gates"));
		json_object_set_new(j, "ok", json_boolean(ok));
		json_object_set_new(j, "detail", json_string(detail.buf));
		json_array_append_new(checks, j);
		if (!ok)
			json_object_set_new(json, "ok", json_false());
	}
	sb_release(&detail);
	sb_release(&missing);
	sb_release(&failed);
	loop_dependents_release(&d);
	return ok;
}

int loop_promote_check(struct loop *l, struct sb *out, json_t **json, struct err *e)
{
	const struct contract *c = loop_contract_get(l);
	if (json)
		*json = NULL;
	int rc = measure_promote_check(l->ws.store, loop_dir(l), c, out, json, e);
	loop_contract_put(c);
	if (rc < 0 && rc != ERR_FAIL)
		return rc;
	if (!dependents_check(l, out, json ? *json : NULL) && rc == 0)
		rc = err_set(e, ERR_FAIL, "promotion check failed: %s",
			     "see the MISSING lines for what to do");
	return rc;
}

static double speedup_of(double gain)
{
	return isfinite(gain) ? 1.0 / (1.0 - gain) : NAN;
}

int loop_best_shapes(struct loop *l, struct loop_shape_speedup **out, size_t *n, struct err *e)
{
	struct stats_cmp cmp;
	*out = NULL;
	*n = 0;
	int rc = report_best_vs_baseline((&l->ws), &cmp, e);
	if (rc == ERR_NOTFOUND) {
		err_clear(e);
		return 0;
	}
	if (rc < 0)
		return rc;
	*out = xcalloc(cmp.nshapes ? cmp.nshapes : 1, sizeof(**out));
	for (size_t i = 0; i < cmp.nshapes; i++) {
		const struct stats_shape_cmp *sc = &cmp.shapes[i];
		if (!sc->in_best || !sc->in_cand)
			continue;
		struct loop_shape_speedup *o = &(*out)[(*n)++];
		o->key = xstrdup(sc->key);
		o->base_ms = sc->best_ms;
		o->best_ms = sc->cand_ms;
		o->speedup = sc->speedup;
		o->lo = speedup_of(sc->lo);
		o->hi = speedup_of(sc->hi);
	}
	stats_cmp_release(&cmp);
	return 0;
}

void loop_shape_speedups_free(struct loop_shape_speedup *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].key);
	free(v);
}

char *loop_shape_key(const struct parse_row *r)
{
	return measure_shape_key(r);
}

int loop_report(struct loop *l, enum loop_report kind, int iter, struct sb *md, json_t **json,
		struct err *e)
{
	const struct workspace *ws = (&l->ws);
	return kind == LOOP_REPORT_FINAL    ? report_final(ws, md, json, e)
	       : kind == LOOP_REPORT_HEADER ? report_header(ws, iter, md, json, e)
					    : report_pr(ws, md, json, e);
}

int loop_export_json(struct loop *l, size_t flags, json_dump_callback_t write, void *data,
		     struct err *e)
{
	json_t *extra = json_object();
	if (l->ws.op)
		json_object_set_new(extra, "op", json_string(l->ws.op));
	int rc = store_export_json(l->ws.store, extra, flags, write, data, e);
	json_decref(extra);
	return rc;
}

int loop_show_commit(struct loop *l, const char *sha, struct sb *stat, struct sb *patch,
		     struct err *e)
{
	return gitshow_commit(loop_repo_dir(l), sha, stat, patch, e);
}

int loop_parse_log(const char *path, const char *patterns, const char *op, int exit_status,
		   bool killed, struct parse_result *out, char **set_name, struct err *e)
{
	struct patset *ps = NULL;
	char *extra = NULL;
	int rc;

	parse_result_init(out);
	*set_name = NULL;
	if (op) {
		extra = xasprintf("profile/%s-opt/patterns", op);
		if (!fsutil_is_dir(extra)) {
			free(extra);
			extra = NULL;
		}
	}
	rc = patset_load(patterns, extra, &ps, e);
	free(extra);
	if (rc < 0)
		return rc;
	if (runner_status_is_signal(exit_status))
		killed = true;
	rc = parse_file(ps, path, exit_status, killed, out, e);
	if (rc == 0)
		*set_name = xstrdup(patset_name(ps));
	patset_free(ps);
	return rc;
}

const char *loop_closest_word(const char *word, const char *const *names)
{
	return closest_word(word, names);
}

const char *loop_assets_dir(struct err *e)
{
	return assets_dir(e);
}

/* ---- what deciding cost ---- */

int loop_cost(struct loop *l, int iter, struct loop_cost *out, struct err *e)
{
	return measure_cost(l->ws.store, iter, out, e);
}

const struct loop_cost_row *loop_cost_of(const struct loop_cost *c, int iter)
{
	return measure_cost_of(c, iter);
}

void loop_cost_release(struct loop_cost *c)
{
	measure_cost_release(c);
}

void loop_cost_words(const struct loop_cost_row *r, struct sb *out)
{
	measure_cost_words(r, out);
}

json_t *loop_cost_json(const struct loop_cost_row *r)
{
	return measure_cost_json(r);
}
