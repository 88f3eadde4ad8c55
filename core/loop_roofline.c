/*
 * loop_roofline — every verify and confirm run's roofline (core/
 * roofline.h), kept in its verdict's detail as evidence, and the impossible
 * flag it may raise.
 *
 * Peaks: the contract's Peak: line, else the row of assets/peaks.tsv that
 * the probe's GPU name (else the Machine line's device) matches, else, when
 * the Machine line names a CPU backend (the demo), this CPU measured once
 * per run.  Costs: the op's row of assets/costs.tsv, overridden by the
 * contract's Cost: line.  Nothing here fails a run: a missing or malformed
 * peaks or cost entry leaves the run without a roofline and says why.
 */
#include "core/loop_impl.h"
#include "core/assets.h"
#include "core/contract.h"
#include "core/guards.h"
#include "core/measure.h"
#include "core/model.h"
#include "core/probe.h"
#include "core/rules.h"
#include "core/roofline.h"
#include "core/sb.h"
#include "core/stats.h"
#include "core/store.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One shape's samples of the run: its row (strings owned) and times. */
struct rl_shape {
	char *key, *mode, *op;
	struct parse_row row;
	double *ms;
	size_t n;
};

struct rl_samples {
	struct rl_shape *v;
	size_t n;
};

static void take_sample(void *ctx, const struct parse_row *r, double ms)
{
	struct rl_samples *s = ctx;
	char *key = measure_shape_key(r);
	size_t i = 0;
	while (i < s->n && strcmp(s->v[i].key, key))
		i++;
	if (i == s->n) {
		struct rl_shape *v = realloc(s->v, (s->n + 1) * sizeof(*v));
		if (!v)
			abort();
		s->v = v;
		memset(&v[i], 0, sizeof(v[i]));
		v[i].key = key;
		v[i].row = *r;
		v[i].mode = xstrdup(r->mode ? r->mode : "");
		v[i].op = xstrdup(r->op ? r->op : "");
		v[i].row.mode = v[i].mode;
		v[i].row.op = v[i].op;
		s->n++;
		key = NULL;
	}
	free(key);
	struct rl_shape *sh = &s->v[i];
	double *m = realloc(sh->ms, (sh->n + 1) * sizeof(*m));
	if (!m)
		abort();
	sh->ms = m;
	sh->ms[sh->n++] = ms;
}

static void samples_release(struct rl_samples *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].mode);
		free(s->v[i].op);
		free(s->v[i].ms);
	}
	free(s->v);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Does s hold the word "CPU" (the demo's backend: "CPU cc")? */
static bool names_cpu(const char *s)
{
	for (const char *p = s; p && *p; p++)
		if ((p == s || p[-1] == ' ') && !strncasecmp(p, "cpu", 3) &&
		    (p[3] == '\0' || p[3] == ' '))
			return true;
	return false;
}

/* The reasons no shape was modelled, each once (twelve shapes of one op
 * without a cost model are one reason), "; " between. */
struct reasons {
	struct sb text;
	char **seen;
	size_t n;
};

static void add_reason(struct reasons *r, const char *why)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->seen[i], why))
			return;
	r->seen = xrealloc(r->seen, (r->n + 1) * sizeof(*r->seen));
	r->seen[r->n++] = xstrdup(why);
	sb_addf(&r->text, "%s%s", r->text.len ? "; " : "", why);
}

static void reasons_release(struct reasons *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->seen[i]);
	free(r->seen);
	sb_release(&r->text);
}

/* The run's peaks into r->peaks; r->skipped says why when there are none. */
static void run_peaks(const struct contract *c, struct store *st, int run_id,
		      const char *peaks_path, struct roofline *r)
{
	struct err e = {0};
	struct probe_reading pr;
	struct store_env env = {0};
	char *gpu = NULL;
	if (measure_probe_get(st, run_id, "before", &pr, NULL) == 0) {
		if (pr.available && pr.ngpus && pr.gpus[0].name)
			gpu = xstrdup(pr.gpus[0].name);
		probe_reading_release(&pr);
	}
	bool have_env = store_run_env(st, run_id, &env, NULL) == 0;
	const char *device = gpu ? gpu : have_env ? env.device : NULL;
	int rc = device ? roofline_peaks_find(peaks_path, device, &r->peaks, &e) : ERR_NOTFOUND;
	if (rc == ERR_NOTFOUND && !gpu && have_env && (names_cpu(env.backend) || names_cpu(env.device))) {
		roofline_peaks_measure_cpu(&r->peaks);
		rc = 0;
	}
	if (c && c->peak && *c->peak) {
		struct err oe = {0};
		if (roofline_peaks_override(peaks_path, c->peak, &r->peaks, &oe) < 0) {
			roofline_peaks_release(&r->peaks);
			r->skipped = xasprintf("%s", oe.msg);
		}
	} else if (rc == ERR_NOTFOUND) {
		r->skipped = xasprintf("no peaks for %s: add a row to assets/peaks.tsv or a Peak: "
				       "line to the contract",
				       device ? device : "an unknown device (no probe, no Machine line)");
	} else if (rc < 0) {
		r->skipped = xasprintf("%s", e.msg);
	}
	if (have_env)
		store_env_release(&env);
	free(gpu);
}

int loop_roofline_of_run(const struct contract *c, struct store *st, int run_id,
			 struct roofline *out, struct err *e)
{
	struct rl_samples s = {0};
	struct roofline_cost_spec spec;
	bool have_spec = false;
	memset(out, 0, sizeof(*out));
	int rc = store_run_samples(st, run_id, take_sample, &s, e);
	if (rc < 0)
		return rc;
	char *peaks_path = assets_path("peaks.tsv", NULL), *costs_path = assets_path("costs.tsv", NULL);
	struct err ce = {0};
	if (c && c->cost && *c->cost) {
		if (roofline_cost_spec_parse(c->cost, &spec, &ce) < 0 && !out->skipped)
			out->skipped = xasprintf("%s", ce.msg);
		have_spec = !out->skipped;
	}
	/* the peaks only where some shape has a cost model: measuring a CPU's
	 * costs a tenth of a second that a run nothing models would waste */
	bool modelled = false;
	for (size_t i = 0; i < s.n && !modelled && !out->skipped; i++) {
		struct roofline_cost cost;
		struct err fe = {0};
		if (roofline_cost_find(costs_path, s.v[i].op, s.v[i].mode, have_spec ? &spec : NULL,
				       &cost, &fe) == 0) {
			modelled = true;
			roofline_cost_release(&cost);
		}
	}
	if (modelled)
		run_peaks(c, st, run_id, peaks_path, out);
	struct reasons none = {.text = SB_INIT};
	for (size_t i = 0; i < s.n && (out->peaks.have || !modelled); i++) {
		struct rl_shape *sh = &s.v[i];
		struct roofline_cost cost;
		struct roofline_shape one;
		if (roofline_cost_find(costs_path, sh->op, sh->mode, have_spec ? &spec : NULL, &cost,
				       &ce) < 0) {
			add_reason(&none, ce.msg);
			continue;
		}
		double ms = median(sh->ms, sh->n);
		if (roofline_shape_eval(&cost, &sh->row, sh->key, ms, &out->peaks, &one, &ce) == 0)
			roofline_add(out, &one);
		else
			add_reason(&none, ce.msg);
		roofline_cost_release(&cost);
	}
	if (none.text.len && !out->skipped)
		out->skipped = sb_detach(&none.text);
	if (!s.n && !out->skipped)
		out->skipped = xstrdup("the run timed no shape");
	reasons_release(&none);
	if (have_spec)
		roofline_cost_spec_release(&spec);
	free(peaks_path);
	free(costs_path);
	samples_release(&s);
	return 0;
}

int loop_roofline_record(const struct contract *c, struct store *st, int run_id, struct err *e)
{
	char *verdict = NULL, *txt = NULL;
	unsigned flags = 0;
	struct err ve = {0};
	int rc = store_verdict_get(st, run_id, &verdict, &flags, &txt, &ve);
	/* a confirm's run has no verdict of its own (its session has one):
	 * its roofline is kept beside "none", nothing compared */
	bool bare = rc == ERR_NOTFOUND;
	if (bare) {
		verdict = xstrdup(stats_verdict_name(SV_NONE));
		rc = 0;
	} else if (rc < 0) {
		if (e)
			*e = ve;
		return rc;
	}
	struct roofline r;
	rc = loop_roofline_of_run(c, st, run_id, &r, e);
	if (rc == 0 && bare && !r.n) { /* no shape has a cost model: nothing to keep */
		roofline_release(&r);
	} else if (rc == 0) {
		json_t *d = txt ? json_loads(txt, 0, NULL) : NULL;
		if (!json_is_object(d)) {
			json_decref(d);
			d = json_object();
		}
		json_object_set_new(d, "roofline", roofline_json(&r));
		if (r.nimpossible)
			flags |= SF_IMPOSSIBLE;
		json_object_set_new(d, "flags", stats_flags_json(flags));
		char *dump = json_dumps(d, JSON_COMPACT);
		int iter = 0, scope = 0;
		char *tree = NULL;
		rc = store_run_info(st, run_id, &iter, &tree, &scope, e);
		if (rc == 0)
			rc = store_verdict_put(st, run_id, iter, verdict, flags, dump, e);
		/* the trap the flag catches: a speedup from work skipped */
		if (rc == 0 && r.nimpossible)
			rc = guards_trap_mark(st, iter, "implausible-speedup", TRAP_HIT, "roofline", e);
		free(tree);
		free(dump);
		json_decref(d);
		roofline_release(&r);
	}
	free(verdict);
	free(txt);
	return rc;
}

/* Where the baseline stood at shape key, on the same peaks: ", from 61%
 * at the baseline" (its share of the bandwidth peak when mem, else of the
 * FLOP peak) appended to out; nothing when it has no such shape. */
static void baseline_share(const struct contract *c, struct store *st, const char *key, bool mem,
			   struct sb *out)
{
	int run = 0;
	struct roofline z;
	if (store_iter_run(st, 0, &run, NULL, NULL) < 0 || !run ||
	    loop_roofline_of_run(c, st, run, &z, NULL) < 0)
		return;
	for (size_t i = 0; i < z.n; i++) {
		double share = mem ? z.v[i].bw_share : z.v[i].flop_share;
		if (!strcmp(z.v[i].key, key) && isfinite(share))
			sb_addf(out, ", from %.0f%% at the baseline", 100 * share);
	}
	roofline_release(&z);
}

int loop_roofline_floor(const struct contract *c, struct store *st, char **bound, struct err *e)
{
	struct measure_best b;
	*bound = NULL;
	int rc = measure_best(st, &b, e);
	if (rc < 0)
		return rc;
	if (!b.have || !b.run_id) {
		measure_best_release(&b);
		return err_set(e, ERR_REFUSED, "stop refused: no best with a measured run to compute "
					       "a floor from (give the bound with --bound)");
	}
	struct roofline r;
	rc = loop_roofline_of_run(c, st, b.run_id, &r, e);
	if (rc < 0) {
		measure_best_release(&b);
		return rc;
	}
	double margin = r.peaks.measured ? ROOFLINE_MARGIN_MEASURED : ROOFLINE_MARGIN;
	const struct roofline_shape *at = NULL;
	double top = -1;
	for (size_t i = 0; i < r.n; i++) {
		const struct roofline_shape *s = &r.v[i];
		bool launch = s->bound == RB_LAUNCH;
		double share = s->bound == RB_COMPUTE ? s->flop_share : s->bw_share;
		double rank = launch ? 1e9 - s->ms : share;
		if (rules_at_floor(launch, share, margin) && rank > top)
			top = rank, at = s;
	}
	struct sb w = SB_INIT, line = SB_INIT;
	if (at && at->bound == RB_LAUNCH) {
		sb_addf(&w, "launch-bound at %.1f us per call, below the %.1f us launch floor of the "
			    "%s (%s, the best's run %d)",
			at->ms * 1e3, r.peaks.launch_s * 1e6, r.peaks.name, at->key, b.run_id);
	} else if (at) {
		bool mem = at->bound != RB_COMPUTE;
		struct sb pk = SB_INIT, from = SB_INIT;
		roofline_fmt_rate(mem ? r.peaks.bw : at->flop_peak, mem ? "B/s" : "FLOP/s", &pk);
		sb_init(&from);
		if (b.iter != 0)
			baseline_share(c, st, at->key, mem, &from);
		sb_addf(&w, "%s-bound at %.0f%% of the %s's %s%s%s%s (%s, the best's run %d)",
			mem ? "memory" : "compute", 100 * (mem ? at->bw_share : at->flop_share),
			r.peaks.name, pk.buf, mem ? " HBM" : " ", mem ? "" : roofline_dtype_name(at->dtype),
			from.buf, at->key, b.run_id);
		sb_release(&pk);
		sb_release(&from);
	} else {
		roofline_line(&r, &line);
		rc = err_set(e, ERR_REFUSED,
			     "stop refused: no shape of the best (iteration %d) is at a limit: none is "
			     "launch-bound or at %.0f%% of a peak (roofline: %s). Name another bound "
			     "with its number: --bound TEXT",
			     b.iter, 100 * RULES_FLOOR_SHARE, line.buf);
	}
	if (rc == 0)
		*bound = sb_detach(&w);
	sb_release(&w);
	sb_release(&line);
	roofline_release(&r);
	measure_best_release(&b);
	return rc;
}
