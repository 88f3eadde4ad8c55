/*
 * session — optloop noise and optloop confirm: real benchmark runs of the
 * best and the candidate, swapped in and out of the work tree through git
 * trees, recorded with their samples, probes and session.  See session.h.
 */
#include "core/session.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/measure.h"
#include "core/parse.h"
#include "core/probe.h"
#include "core/patset.h"
#include "core/runner.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/vcs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx {
	struct loop *l;
	struct store *st;
	struct vcs *vcs;
	struct patset *ps;
	struct loop_status status;
	struct contract contract;
	char *command;
	const struct session_opts *o;
	int session;
	int nruns;
	bool busy; /* a probe before some run saw the GPU busy */
};

static void ctx_release(struct ctx *c)
{
	vcs_free(c->vcs);
	patset_free(c->ps);
	loop_status_release(&c->status);
	contract_release(&c->contract);
	free(c->command);
	memset(c, 0, sizeof(*c));
}

static const char *const *kpaths(const struct ctx *c)
{
	return (const char *const *)c->status.kernel;
}

static int ctx_init(struct ctx *c, struct loop *l, const struct session_opts *o, const char *what,
		    struct err *e)
{
	struct sb text = SB_INIT;
	memset(c, 0, sizeof(*c));
	c->l = l;
	c->o = o;
	c->st = loop_store(l);
	if (loop_readonly(l))
		return err_set(e, ERR_BUSY, "%s refused: the workspace is open read-only", what);
	int rc = loop_status(l, &c->status, e);
	if (rc < 0)
		return rc;
	if (!c->status.nkernel)
		return err_set(e, ERR_REFUSED, "%s refused: the workspace names no kernel paths", what);
	rc = fsutil_read_file(loop_contract_path(l), &text, e);
	if (rc == 0)
		rc = contract_parse(text.buf, text.len, &c->contract, e);
	sb_release(&text);
	if (rc < 0)
		return rc;
	if (o && o->command) {
		c->command = xstrdup(o->command);
	} else {
		const char *v = c->contract.v[CF_VALIDATION];
		if (!v)
			return err_set(e, ERR_REFUSED,
				       "%s refused: the contract has no validation command (optloop "
				       "contract --set validation=CMD)",
				       what);
		c->command = strstr(v, "--no-gate") ? xstrdup(v) : xasprintf("%s --no-gate", v);
	}
	if ((rc = vcs_open(loop_repo_dir(l), &c->vcs, e)) < 0)
		return rc;
	char *extra = xasprintf("%s/patterns", loop_dir(l));
	rc = patset_load(NULL, fsutil_is_dir(extra) ? extra : NULL, &c->ps, e);
	free(extra);
	if (rc == 0)
		rc = measure_schema(c->st, e);
	return rc;
}

static void feed(void *p, const char *buf, size_t len)
{
	parser_feed(p, buf, len);
}

static double bench_of(const struct parse_result *r)
{
	double s = 0;
	int k = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		double v = isfinite(r->rows[i].new_ms) ? r->rows[i].new_ms : r->rows[i].base_ms;
		if (stats_time_ok(v)) {
			s += log(v);
			k++;
		}
	}
	return k ? exp(s / k) : NAN;
}

/* One run of the measuring command on whatever the work tree holds now. */
static int measure_once(struct ctx *c, const char *kind, const char *role, int *run_id,
			struct err *e)
{
	struct store_run run = {0};
	struct runner_outcome oc = {0};
	char tree[VCS_OID_HEX];
	int rc = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, tree, e);
	if (rc < 0)
		return rc;
	char *trace = xasprintf("%s/trace", loop_dir(c->l));
	if ((rc = fsutil_mkdir_p(trace, e)) < 0) {
		free(trace);
		return rc;
	}
	run.iter = c->status.iteration;
	run.kind = (char *)kind;
	run.command = c->command;
	run.cwd = (char *)loop_repo_dir(c->l);
	run.t_start = 0;
	run.bench_ms = run.vs_best = NAN;
	run.tree = tree;
	run.pid = (int)getpid();
	run.gate = GATE_INCOMPLETE; /* until it finishes */
	if ((rc = store_run_insert(c->st, &run, e)) < 0) {
		free(trace);
		return rc;
	}
	*run_id = run.id;
	if (!c->session) {
		c->session = run.id;
	}
	run.log_path = xasprintf("%s/%s-%d-run%d.log", trace, kind, run.iter, run.id);
	free(trace);
	measure_probe_take(c->st, run.id, "before", NULL);
	struct probe_reading pr;
	if (measure_probe_get(c->st, run.id, "before", &pr, NULL) == 0) {
		c->busy |= pr.busy;
		probe_reading_release(&pr);
	}

	struct parser *p = parser_new(c->ps, NULL, NULL);
	struct runner_spec spec = {
		.command = c->command,
		.cwd = loop_repo_dir(c->l),
		.log_path = run.log_path,
		.timeout_s = c->o ? c->o->timeout_s : 0,
	};
	rc = runner_run(&spec, feed, p, &oc, e);
	if (rc == 0) {
		bool killed = oc.signal != 0 || oc.timed_out || oc.cancelled;
		parser_finish(p, oc.exit_status, killed);
		const struct parse_result *res = parser_result(p);
		int env_id = 0;
		run.t_start = oc.t_start;
		run.t_end = oc.t_end;
		run.exit_status = oc.exit_status;
		run.signal = oc.signal;
		run.timed_out = oc.timed_out;
		run.cancelled = oc.cancelled;
		run.gate = killed ? GATE_INCOMPLETE : res->gate;
		run.scope = res->scope;
		run.bench_ms = bench_of(res);
		json_t *j = parse_result_json(res);
		run.result_json = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		measure_probe_take(c->st, run.id, "after", NULL);
		rc = store_begin(c->st, e);
		if (rc == 0)
			rc = store_env_id(c->st, &res->env, &env_id, e);
		run.env_id = env_id;
		if (rc == 0)
			rc = store_run_update(c->st, &run, e);
		if (rc == 0)
			rc = store_samples_add(c->st, run.id, env_id, res->rows, res->nrows, e);
		if (rc == 0)
			rc = measure_session_put(c->st, run.id, c->session, role, e);
		if (rc == 0)
			rc = store_commit(c->st, e);
		else
			store_rollback(c->st);
		if (rc == 0 && (killed || res->nrows == 0 || !isfinite(run.bench_ms)))
			rc = err_set(e, ERR_HARNESS,
				     "%s run %d of '%s' %s (raw output: %s); fix the benchmark and "
				     "run it again",
				     kind, run.id, c->command,
				     killed ? "was killed before it finished"
					    : "printed no usable result table",
				     run.log_path);
		free(run.result_json);
		c->nruns++;
		if (rc == 0 && c->o && c->o->progress) {
			char *line = xasprintf("%s run %d (%s): %.4g ms geomean over %zu shape(s)",
					       kind, c->nruns, role, run.bench_ms, res->nrows);
			c->o->progress(c->o->ctx, line);
			free(line);
		}
	}
	runner_outcome_release(&oc);
	parser_free(p);
	free(run.log_path);
	return rc;
}

/* Finish a confirm that a crash cut off: put its candidate back. */
static int recover(struct ctx *c, struct err *e)
{
	struct measure_confirm u;
	char now[VCS_OID_HEX];
	int rc = measure_confirm_unfinished(c->st, &u, NULL);
	if (rc < 0)
		return 0;
	rc = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, now, e);
	/* Only when the tree still holds the best: anything else is the user's
	 * own work and stays. */
	bool restore = u.cand_snapshot && u.best_tree && strcmp(now, u.best_tree) == 0;
	if (rc == 0 && restore)
		rc = vcs_restore(c->vcs, u.cand_snapshot, kpaths(c), c->status.nkernel, e);
	if (rc == 0)
		rc = measure_confirm_end(c->st, u.id, NULL, false, e);
	if (rc == 0 && restore)
		rc = store_event(c->st, u.iter, "confirm.recovered",
				 "a cut-off confirm run left the best in the work tree; the "
				 "candidate was restored", e);
	measure_confirm_release(&u);
	if (rc == 0) {
		loop_status_release(&c->status);
		rc = loop_status(c->l, &c->status, e);
	}
	return rc;
}

void session_result_release(struct session_result *r)
{
	stats_cmp_release(&r->cmp);
	measure_target_release(&r->target);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

static int best_commit(struct ctx *c, struct measure_best *b, const char *what, struct err *e)
{
	int rc = measure_best(c->st, b, e);
	if (rc < 0)
		return rc;
	if (!b->have)
		return err_set(e, ERR_REFUSED,
			       "%s refused: there is no best yet (measure and log the baseline "
			       "first: optloop verify, then optloop log)",
			       what);
	if (!b->commit)
		return err_set(e, ERR_REFUSED,
			       "%s refused: the best (iteration %d) is not committed yet (run optloop "
			       "commit)",
			       what, b->iter);
	return 0;
}

int session_noise(struct loop *l, const struct session_opts *o, struct session_result *r,
		  struct err *e)
{
	struct ctx c;
	struct measure_best b = {0};
	char snap[VCS_OID_HEX], cur[VCS_OID_HEX];
	int runs = o && o->runs > 0 ? o->runs : 5;
	memset(r, 0, sizeof(*r));
	int rc = ctx_init(&c, l, o, "noise", e);
	if (rc == 0 && c.status.state == ST_VERIFYING)
		rc = err_set(e, ERR_REFUSED, "noise refused: a verify run is going");
	if (rc == 0)
		rc = recover(&c, e);
	if (rc == 0)
		rc = best_commit(&c, &b, "noise", e);
	if (rc == 0)
		rc = vcs_kernel_hash(c.vcs, kpaths(&c), c.status.nkernel, NULL, cur, e);
	if (rc == 0)
		rc = vcs_snapshot(c.vcs, kpaths(&c), c.status.nkernel, snap, e);
	bool swapped = false;
	if (rc == 0 && strcmp(cur, b.tree ? b.tree : "") != 0) {
		rc = vcs_restore(c.vcs, b.commit, kpaths(&c), c.status.nkernel, e);
		swapped = rc == 0;
	}
	for (int i = 0; rc == 0 && i < runs; i++) {
		int id;
		rc = measure_once(&c, "noise", "noise", &id, e);
	}
	if (swapped) {
		struct err e2 = {0};
		int rc2 = vcs_restore(c.vcs, snap, kpaths(&c), c.status.nkernel, &e2);
		if (rc == 0 && rc2 < 0) {
			*e = e2;
			rc = rc2;
		}
	}
	if (rc == 0) {
		struct stats_set set = {0};
		r->iter = c.status.iteration;
		r->session = c.session;
		r->nruns = c.nruns;
		rc = measure_tree_set(c.st, b.tree, NULL, c.session, NULL, &set, e);
		json_t *j = json_object(), *shapes = json_array();
		json_object_set_new(j, "best_iter", json_integer(b.iter));
		json_object_set_new(j, "runs", json_integer(c.nruns));
		json_object_set_new(j, "session", json_integer(c.session));
		json_object_set_new(j, "env", set.env ? json_string(set.env) : json_null());
		for (size_t i = 0; rc == 0 && i < set.nshapes; i++) {
			const struct stats_shape *sh = &set.shapes[i];
			const struct stats_set *g[] = {&set};
			struct stats_noise nz;
			struct stats_summary sum;
			/* within this session: every run its own sample */
			struct stats_set one = {0};
			for (size_t k = 0; k < sh->n; k++)
				stats_set_add(&one, sh->key, sh->ms[k]);
			g[0] = &one;
			stats_noise_pool(g, 1, NULL, sh->key, &nz);
			stats_summarize(sh->ms, sh->n, &sum);
			json_t *s = json_object();
			json_object_set_new(s, "shape", json_string(sh->key));
			json_object_set_new(s, "n", json_integer((json_int_t)sum.n));
			json_object_set_new(s, "median_ms", json_real(sum.median));
			json_object_set_new(s, "min_ms", json_real(sum.min));
			json_object_set_new(s, "max_ms", json_real(sum.max));
			json_object_set_new(s, "noise", json_real(nz.sigma));
			json_object_set_new(s, "noise_raw", isfinite(nz.raw) ? json_real(nz.raw)
									    : json_null());
			json_object_set_new(s, "unstable", json_boolean(nz.unstable));
			json_array_append_new(shapes, s);
			stats_set_release(&one);
		}
		json_object_set_new(j, "shapes", shapes);
		r->json = j;
		stats_set_release(&set);
		store_event(c.st, c.status.iteration, "noise", "best measured in one session", NULL);
	}
	measure_best_release(&b);
	ctx_release(&c);
	return rc;
}

int session_confirm(struct loop *l, const struct session_opts *o, struct session_result *r,
		    struct err *e)
{
	struct ctx c;
	struct measure_best b = {0};
	struct measure_confirm rec = {0};
	char snap[VCS_OID_HEX], cand[VCS_OID_HEX];
	size_t max_pairs = o && o->max_pairs ? o->max_pairs : STATS_CONFIRM_MAX_PAIRS;
	struct stats_cmp cmp = {.worst = -1};
	struct measure_target target = {0};
	bool have_cmp = false;
	memset(r, 0, sizeof(*r));

	int rc = ctx_init(&c, l, o, "confirm", e);
	if (rc == 0)
		rc = recover(&c, e);
	if (rc == 0 && c.status.state != ST_MEASURED)
		rc = err_set(e, ERR_REFUSED,
			     "confirm refused: iteration %d is %s; a confirm run measures a verified "
			     "candidate before it is logged (run optloop verify first)",
			     c.status.iteration, loop_state_name(c.status.state));
	if (rc == 0 && c.status.telescoped)
		rc = err_set(e, ERR_REFUSED,
			     "confirm refused: the kernel changed since it was measured; revert the "
			     "extra change or re-verify first");
	if (rc == 0)
		rc = best_commit(&c, &b, "confirm", e);
	if (rc == 0)
		rc = vcs_kernel_hash(c.vcs, kpaths(&c), c.status.nkernel, NULL, cand, e);
	if (rc == 0 && b.tree && !strcmp(cand, b.tree))
		rc = err_set(e, ERR_REFUSED,
			     "confirm refused: the kernel is the best itself (iteration %d); there is "
			     "nothing to confirm",
			     b.iter);
	if (rc == 0)
		rc = vcs_snapshot(c.vcs, kpaths(&c), c.status.nkernel, snap, e);
	if (rc == 0) {
		rec.iter = c.status.iteration;
		rec.best_iter = b.iter;
		rec.best_tree = b.tree;
		rec.cand_tree = cand;
		rec.cand_snapshot = snap;
		rc = measure_confirm_begin(c.st, &rec, e);
		rec.best_tree = rec.cand_tree = rec.cand_snapshot = NULL;
	}
	size_t pairs = 0;
	bool started = rc == 0;
	while (rc == 0) {
		for (int i = 0; rc == 0 && i < STATS_CONFIRM_PAIRS; i++) {
			int id;
			rc = vcs_restore(c.vcs, b.commit, kpaths(&c), c.status.nkernel, e);
			if (rc == 0)
				rc = measure_once(&c, "confirm", "best", &id, e);
			if (rc == 0 && pairs == 0 && i == 0)
				rc = measure_session_set(c.st, rec.id, c.session, e);
			fault_point("confirm.best_in_tree");
			if (rc == 0)
				rc = vcs_restore(c.vcs, snap, kpaths(&c), c.status.nkernel, e);
			if (rc == 0)
				rc = measure_once(&c, "confirm", "cand", &id, e);
		}
		if (rc < 0)
			break;
		pairs += STATS_CONFIRM_PAIRS;
		struct stats_set bs = {0}, cs = {0};
		rc = measure_tree_set(c.st, b.tree, NULL, c.session, "best", &bs, e);
		if (rc == 0)
			rc = measure_tree_set(c.st, cand, NULL, c.session, "cand", &cs, e);
		if (rc == 0) {
			if (have_cmp) {
				stats_cmp_release(&cmp);
				measure_target_release(&target);
			}
			struct stats_opts so = {.threshold = c.contract.threshold};
			stats_compare(&bs, &cs, &so, &cmp);
			measure_target_compare(&bs, &cs, c.contract.v[CF_TARGET], &so, &target);
			have_cmp = true;
		}
		stats_set_release(&bs);
		stats_set_release(&cs);
		if (rc < 0 || !stats_confirm_more(&cmp, pairs, max_pairs))
			break;
	}
	if (started) {
		/* The candidate goes back whatever happened. */
		struct err e2 = {0};
		char now[VCS_OID_HEX];
		int rc2 = vcs_kernel_hash(c.vcs, kpaths(&c), c.status.nkernel, NULL, now, &e2);
		if (rc2 == 0 && strcmp(now, cand) != 0)
			rc2 = vcs_restore(c.vcs, snap, kpaths(&c), c.status.nkernel, &e2);
		if (rc == 0 && rc2 < 0) {
			*e = e2;
			rc = rc2;
		}
	}
	if (rc == 0 && have_cmp) {
		/* A busy GPU before any run of the session can reject, never promote. */
		if (c.busy)
			cmp.flags |= SF_BUSY_GPU;
		r->promoted = stats_promotes(&cmp);
		rc = measure_confirm_end(c.st, rec.id, &cmp, r->promoted, e);
		if (rc == 0)
			store_event(c.st, c.status.iteration, "confirm",
				    r->promoted ? "promoted" : stats_verdict_name(cmp.verdict), NULL);
		r->iter = c.status.iteration;
		r->session = c.session;
		r->nruns = c.nruns;
		json_t *j = stats_cmp_json(&cmp);
		json_object_set_new(j, "iter", json_integer(r->iter));
		json_object_set_new(j, "best_iter", json_integer(b.iter));
		json_object_set_new(j, "pairs", json_integer((json_int_t)pairs));
		json_object_set_new(j, "runs", json_integer(c.nruns));
		json_object_set_new(j, "session", json_integer(c.session));
		json_object_set_new(j, "promoted", json_boolean(r->promoted));
		json_object_set_new(j, "paired", json_boolean(cmp.paired));
		json_object_set_new(j, "target", measure_target_json(&target));
		r->json = j;
		r->cmp = cmp;
		r->target = target;
		have_cmp = false;
	} else if (started) {
		measure_confirm_end(c.st, rec.id, NULL, false, NULL);
	}
	if (have_cmp) {
		stats_cmp_release(&cmp);
		measure_target_release(&target);
	}
	measure_best_release(&b);
	ctx_release(&c);
	return rc;
}
