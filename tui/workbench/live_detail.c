/* live_detail — the live backend's detail pane of one iteration (its row,
 * run, verdict, flags, shapes and roofline) and the per-shape numbers of
 * the best, with each row's roofline. */
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

/* ---- the roofline a run's verdict recorded ------------------------------- */

static double jnum(const json_t *o, const char *k)
{
	const json_t *x = json_object_get(o, k);
	return json_is_number(x) ? json_number_value(x) : NAN;
}

/* The recorded roofline's shapes (roofline_json's "shapes"), NULL when it
 * has none: a run no cost model covers shows nothing. */
static const json_t *roof_shapes(const struct loop_run *run, const char **peaks)
{
	const json_t *rl = run->detail ? json_object_get(run->detail, "roofline") : NULL;
	const json_t *v = json_object_get(rl, "shapes");
	*peaks = json_string_value(json_object_get(json_object_get(rl, "peaks"), "name"));
	return json_array_size(v) ? v : NULL;
}

static void roof_of_json(const json_t *o, struct wb_roof *r)
{
	const char *b = json_string_value(json_object_get(o, "bound"));
	const char *t = json_string_value(json_object_get(o, "dtype"));
	memset(r, 0, sizeof(*r));
	r->have = true;
	r->bw = jnum(o, "bw");
	r->rate = jnum(o, "flop_rate");
	r->bw_share = jnum(o, "bw_share");
	r->flop_share = jnum(o, "flop_share");
	snprintf(r->bound, sizeof(r->bound), "%s", b ? b : "");
	snprintf(r->dtype, sizeof(r->dtype), "%s", t ? t : "");
	r->impossible = json_is_true(json_object_get(o, "impossible"));
}

static void shape_name(const struct parse_row *r, struct sb *out);

/* The detail's roofline table of run: each shape named as the shape table
 * names it, and the arithmetic of each impossible time under it. */
static void detail_roofline(struct app *a, const struct loop_run *run)
{
	const char *peaks;
	const json_t *shapes = roof_shapes(run, &peaks), *o;
	size_t k, n = json_array_size(shapes);
	if (!n)
		return;
	struct wb_roof *roof = xcalloc(n, sizeof(*roof));
	char **names = xcalloc(n, sizeof(*names));
	json_array_foreach(shapes, k, o) {
		const char *key = json_string_value(json_object_get(o, "shape"));
		roof_of_json(o, &roof[k]);
		for (size_t q = 0; key && !names[k] && run->have_result && q < run->result.nrows; q++) {
			char *rk = loop_shape_key(&run->result.rows[q]);
			if (rk && !strcmp(rk, key)) {
				struct sb nm = SB_INIT;
				sb_init(&nm);
				shape_name(&run->result.rows[q], &nm);
				names[k] = sb_detach(&nm);
			}
			free(rk);
		}
		if (!names[k])
			names[k] = xstrdup(key ? key : "");
	}
	detail_roof_lines(peaks, names, roof, n, &a->data.detail, &a->data.ndetail);
	json_array_foreach(json_object_get(json_object_get(run->detail, "roofline"), "impossible_why"),
			   k, o)
		dline(a, R_FAIL, "Impossible: %s", json_string_value(o) ? json_string_value(o) : "");
	for (k = 0; k < n; k++)
		free(names[k]);
	free(names);
	free(roof);
}

/* Row i's run on the roofline, into each shape it reached (keys[s] is
 * shape s's comparison key) and its peaks' name. */
static void shapes_roofline(struct app *a, size_t i, char **keys, const struct loop_run *run)
{
	const char *peaks;
	const json_t *shapes = roof_shapes(run, &peaks), *o;
	size_t k;
	if (!shapes)
		return;
	if (!a->data.roof_peaks) {
		a->data.roof_peaks = xcalloc(a->data.nrows, sizeof(char *));
		a->data.nroof_peaks = a->data.nrows;
	}
	free(a->data.roof_peaks[i]);
	a->data.roof_peaks[i] = xstrdup(peaks && *peaks ? peaks : "device");
	json_array_foreach(shapes, k, o) {
		const char *key = json_string_value(json_object_get(o, "shape"));
		for (size_t s = 0; key && s < a->data.nshapes; s++) {
			struct wb_shape *sh = &a->data.shapes[s];
			if (!keys[s] || strcmp(keys[s], key))
				continue;
			if (!sh->roof)
				sh->roof = xcalloc(a->data.nrows, sizeof(*sh->roof));
			roof_of_json(o, &sh->roof[i]);
		}
	}
}

int live_detail(struct app *a, int i, struct err *e)
{
	struct ws_loop *w = live_of(a);
	const struct log_row *r;
	struct loop_run run;
	struct sb s = SB_INIT;
	int have;

	if (i < 0 || (size_t)i >= a->data.nrows)
		return err_set(e, ERR_USAGE, "details: no row selected");
	r = &a->data.rows[i];
	live_clear_lines(&a->data.detail, &a->data.ndetail);
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
		if (loop_cost(w->l, r->iter, &cost, NULL) == 0) {
			struct sb cw = SB_INIT;
			sb_init(&cw);
			loop_cost_words(loop_cost_of(&cost, r->iter), &cw);
			sb_adds(&cw, " \xc2\xb7 session ");
			loop_cost_words(&cost.total, &cw);
			dline(a, R_NORMAL, "Cost: %s", cw.buf);
			sb_release(&cw);
			loop_cost_release(&cost);
		}
		live_run_verdict(&run, -1, &a->data.sel);
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
	if (have >= 0)
		detail_roofline(a, &run);
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
int live_shapes(struct app *a, struct err *e)
{
	struct ws_loop *w = live_of(a);
	struct sb key = SB_INIT;
	char **keys = NULL; /* each shape's comparison key */

	live_free_shapes(a);
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
					memset(sh, 0, sizeof(*sh));
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
			shapes_roofline(a, i, keys, &run);
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
