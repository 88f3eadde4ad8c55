/*
 * measure — store rows in, stats_set values out, verdicts and evidence back
 * in.  See measure.h.  Every query tolerates a database whose stats_*
 * tables do not exist yet (a read-only open of an older workspace): it then
 * behaves as if they were empty.
 */
#include "core/measure.h"
#include "core/measure_memo.h"
#include "core/lint.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/parse.h"
#include "core/probe.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/rules.h"
#include "core/buildid.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- probe readings ---- */

int measure_probe_put(struct store *s, int run_id, const char *phase,
		      const struct probe_reading *r, struct err *e)
{
	json_t *j = probe_reading_json(r);
	char *txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	int rc = store_probe_put(s, run_id, phase, r->t, r->available, r->busy, txt, e);
	free(txt);
	return rc;
}

int measure_probe_get(struct store *s, int run_id, const char *phase, struct probe_reading *out,
		      struct err *e)
{
	char *txt;
	memset(out, 0, sizeof(*out));
	out->compute_procs = -1;
	int rc = store_probe_json(s, run_id, phase, &txt, e);
	if (rc < 0)
		return rc;
	json_t *j = json_loads(txt, 0, NULL);
	rc = probe_reading_from_json(j, out, e);
	json_decref(j);
	free(txt);
	return rc;
}

static char *meta_or_env(struct store *s, const char *key, const char *env)
{
	const char *v = getenv(env);
	char *m = NULL;
	if (v)
		return xstrdup(v);
	if (store_meta_get(s, key, &m, NULL) == 0 && m)
		return m;
	return NULL;
}

void measure_probe_commands(const char **cmd, const char **apps, bool *from_env)
{
	const char *c = getenv("OPTLOOP_PROBE"), *a = getenv("OPTLOOP_PROBE_APPS");
	if (from_env)
		*from_env = c || a;
	*cmd = c ? c : PROBE_DEFAULT_COMMAND;
	*apps = a ? a : PROBE_DEFAULT_APPS_COMMAND;
}

int measure_probe_take(struct store *s, int run_id, const char *phase,
		       const struct probe_opts *where, struct err *e)
{
	struct probe_reading r;
	const char *cmd, *apps;
	measure_probe_commands(&cmd, &apps, NULL);
	char *util = meta_or_env(s, "probe.busy_util", "OPTLOOP_PROBE_BUSY_UTIL");
	char *settle = meta_or_env(s, "probe.settle_s", "OPTLOOP_PROBE_SETTLE");
	char *timeout = meta_or_env(s, "probe.timeout_s", "OPTLOOP_PROBE_TIMEOUT");
	struct probe_opts o = {.command = cmd, .apps_command = apps,
			       .busy_util = util ? atof(util) : 0,
			       .timeout_s = timeout ? atof(timeout) : 0};
	free(timeout);
	if (where) {
		o.wrap = where->wrap;
		o.node = where->node;
		o.capture = where->capture;
		o.capture_ctx = where->capture_ctx;
	}
	/* Only a pre-run reading is a claim about other work on the GPU; an
	 * after-run reading is meant to show our own run. */
	if (!strcmp(phase, "before"))
		o.settle_s = settle ? atof(settle) : PROBE_SETTLE_S;
	int rc = probe_run(&o, &r, e);
	free(util);
	free(settle);
	if (rc < 0)
		return rc;
	rc = measure_probe_put(s, run_id, phase, &r, e);
	probe_reading_release(&r);
	return rc;
}

/* ---- sessions and sets ---- */

static void add_part(struct sb *k, const char *label, const char *v)
{
	if (!v || !*v)
		return;
	if (k->len)
		sb_adds(k, " | ");
	if (label)
		sb_adds(k, label);
	sb_adds(k, v);
}

int measure_env_key(struct store *s, int run_id, char **key, struct err *e)
{
	struct store_env v;
	struct sb k = SB_INIT;
	if (store_run_env_key(s, run_id, key))
		return 0;
	int rc = store_run_env(s, run_id, &v, e);
	if (rc == ERR_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	add_part(&k, NULL, v.device);
	add_part(&k, NULL, v.backend);
	add_part(&k, "PyTorch ", v.pytorch);
	add_part(&k, "Triton ", v.triton);
	store_env_release(&v);
	if (k.len) {
		/* The driver is part of the environment; it comes from the probe. */
		struct probe_reading p;
		if (measure_probe_get(s, run_id, "before", &p, NULL) == 0) {
			if (p.available && p.ngpus && p.gpus[0].driver)
				add_part(&k, "driver ", p.gpus[0].driver);
			probe_reading_release(&p);
		}
		*key = sb_detach(&k);
	}
	sb_release(&k);
	store_run_env_key_put(s, run_id, *key);
	return 0;
}

char *measure_shape_key(const struct parse_row *r)
{
	struct sb k = SB_INIT;
	sb_adds(&k, r->mode ? r->mode : "-");
	if (r->B >= 0)
		sb_addf(&k, " B=%ld", r->B);
	if (r->T >= 0)
		sb_addf(&k, " T=%ld", r->T);
	if (r->H >= 0)
		sb_addf(&k, " H=%ld", r->H);
	if (r->D >= 0)
		sb_addf(&k, " D=%ld", r->D);
	if (r->L >= 0)
		sb_addf(&k, " L=%ld", r->L);
	if (r->op)
		sb_addf(&k, " %s", r->op);
	return sb_detach(&k);
}

struct run_ref {
	int id, session;
	char *env;
	bool base; /* a paired run: this tree's times are its base column */
};

/* Runs of a tree: ids, sessions and environments. */
static int tree_runs(struct store *s, const char *tree, int session_only, const char *role,
		     int upto, struct run_ref **out, size_t *n, struct err *e)
{
	struct store_tree_run *read = NULL; /* (read here, without a memo) */
	const struct store_tree_run *v;
	char *const *menv = NULL; /* the memo's environments, when one is open */
	size_t nv;
	*out = NULL;
	*n = 0;
	/* one session's runs are read by their session, not out of the tree's */
	bool on = measure_memo_on() && session_only <= 0;
	int rc = on ? measure_memo_tree(s, tree, &v, &menv, &nv, e)
	       : session_only > 0 ? store_session_tree_runs(s, tree, session_only, &read, &nv, e)
				  : store_tree_runs(s, tree, &read, &nv, e);
	if (rc == ERR_NOTFOUND && session_only > 0)
		rc = store_tree_runs(s, tree, &read, &nv, e);
	if (rc < 0)
		return rc;
	if (!on)
		v = read;
	*out = xcalloc(nv ? nv : 1, sizeof(**out));
	for (size_t i = 0; i < nv; i++) {
		if (session_only > 0 && v[i].session != session_only)
			continue;
		if (session_only < 0 && v[i].session == -session_only)
			continue;
		if (upto > 0 && v[i].id > upto)
			continue;
		if (role && (!v[i].role || strcmp(v[i].role, role) != 0))
			continue;
		(*out)[*n].id = v[i].id;
		(*out)[*n].session = v[i].session;
		(*out)[*n].base = v[i].base;
		(*out)[*n].env = on && menv[i] ? xstrdup(menv[i]) : NULL;
		(*n)++;
	}
	if (on)
		return 0;
	store_tree_runs_release(read, nv);
	for (size_t i = 0; i < *n; i++)
		if ((rc = measure_env_key(s, (*out)[i].id, &(*out)[i].env, e)) < 0)
			return rc;
	return 0;
}

static void free_runs(struct run_ref *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].env);
	free(r);
}

struct sample_sink {
	struct stats_set *set;
	int session;
};

static void add_sample(void *ctx, const struct parse_row *r, double ms)
{
	struct sample_sink *k = ctx;
	char *key = measure_shape_key(r);
	stats_set_add_run(k->set, key, ms, k->session);
	free(key);
}

static int add_run_samples(struct store *s, int run_id, int session, struct stats_set *out,
			   struct err *e)
{
	struct sample_sink k = {out, session};
	return store_run_samples(s, run_id, add_sample, &k, e);
}

static int add_side_samples(struct store *s, const struct run_ref *r, struct stats_set *out,
			    struct err *e)
{
	struct sample_sink k = {out, r->session};
	if (!measure_memo_on())
		return store_run_side_samples(s, r->id, r->base, add_sample, &k, e);
	const struct memo_sample *v;
	size_t n;
	int rc = measure_memo_samples(s, r->id, r->base, &v, &n, e);
	for (size_t i = 0; rc == 0 && i < n; i++)
		stats_set_add_run(out, v[i].key, v[i].ms, r->session);
	return rc;
}

static bool same_env(const char *a, const char *b)
{
	return !a || !b || strcmp(a, b) == 0;
}

int measure_tree_set(struct store *s, const char *tree, const char *env, int session_only,
		     const char *role, struct stats_set *out, struct err *e)
{
	return measure_tree_set_upto(s, tree, env, session_only, role, 0, out, e);
}

int measure_tree_set_upto(struct store *s, const char *tree, const char *env, int session_only,
			  const char *role, int upto, struct stats_set *out, struct err *e)
{
	struct run_ref *runs;
	size_t n;
	memset(out, 0, sizeof(*out));
	if (!tree)
		return 0;
	int rc = tree_runs(s, tree, session_only, role, upto, &runs, &n, e);
	if (rc < 0)
		return rc;
	bool any_match = false;
	for (size_t i = 0; env && i < n; i++)
		if (runs[i].env && strcmp(runs[i].env, env) == 0)
			any_match = true;
	/* Without a run in env, the set keeps the first environment it has, so
	 * the comparison can say the environment changed. */
	const char *use = any_match ? env : NULL;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (use && !same_env(runs[i].env, use))
			continue;
		if (!use && runs[i].env) {
			use = runs[i].env;
		}
		if (!out->env && runs[i].env)
			stats_set_env(out, runs[i].env);
		rc = add_side_samples(s, &runs[i], out, e);
	}
	free_runs(runs, n);
	return rc;
}

/* ---- best ---- */

void measure_best_release(struct measure_best *b)
{
	free(b->tree);
	free(b->commit);
	memset(b, 0, sizeof(*b));
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

static bool in_set(const int *v, size_t n, int iter)
{
	return n && bsearch(&iter, v, n, sizeof(*v), cmp_int) != NULL;
}

int measure_best(struct store *s, struct measure_best *b, struct err *e)
{
	struct log_rows *rs;
	const struct log_row *r;
	memset(b, 0, sizeof(*b));
	int rc = store_rows_best(s, &rs, &r, e);
	if (rc < 0)
		return rc;
	if (r) {
		b->have = true;
		b->iter = r->iter;
		b->bench_ms = r->bench_ms;
		b->confirmed = r->status == RS_KEEP && store_confirm_promoted(s, r->iter);
		b->unconfirmed = r->unconfirmed != NULL;
		b->commit = xstrdup(r->commit);
		rc = store_iter_run(s, r->iter, &b->run_id, &b->tree, e);
	}
	log_rows_put(rs);
	return rc;
}

static bool full_pass(const struct store_run *r)
{
	return r->gate == GATE_PASS && r->scope == SCOPE_FULL && isfinite(r->bench_ms) &&
	       r->bench_ms > 0;
}

int measure_best_full_gate(struct store *s, const struct measure_best *b)
{
	struct store_run r;
	int found = 0;
	if (!b->have)
		return 0;
	if (b->run_id && store_run_get(s, b->run_id, &r, NULL) == 0) {
		if (full_pass(&r))
			found = b->run_id;
		store_run_release(&r);
	}
	if (found || !b->tree)
		return found;
	/* the same kernel verified again, with the full gate */
	int *ids;
	enum run_kind *kinds;
	size_t n;
	store_runs_of_tree(s, b->tree, &ids, &kinds, &n);
	for (size_t i = n; i-- > 0 && !found;) {
		if (kinds[i] == RUN_VERIFY && store_run_get(s, ids[i], &r, NULL) == 0) {
			if (full_pass(&r))
				found = ids[i];
			store_run_release(&r);
		}
	}
	free(ids);
	free(kinds);
	return found;
}

int measure_best_claimable(struct store *s, const char *what, int *iter, int *gate_run,
			   struct err *e)
{
	struct measure_best b;
	int rc = measure_best(s, &b, e);
	if (rc < 0)
		return rc;
	int full = measure_best_full_gate(s, &b);
	if (!b.have || !b.confirmed)
		rc = err_set(e, ERR_REFUSED,
			     "%s refused: there is no confirmed win (the best is %s); confirm a "
			     "faster candidate with optloop confirm, or write a no-go",
			     what,
			     !b.have		? "not measured yet"
			     : b.iter == 0	? "the baseline"
			     : b.unconfirmed	? "a keep logged --unconfirmed, with no win beyond noise"
						: "a keep whose confirm did not promote it");
	else if (!full)
		rc = err_set(e, ERR_REFUSED,
			     "%s refused: the best (iteration %d) passed only a -k subset of the "
			     "gate; verify the same kernel with the full gate (optloop verify with "
			     "no --gate-k): that run counts for it",
			     what, b.iter);
	if (iter)
		*iter = b.iter;
	if (gate_run)
		*gate_run = full;
	measure_best_release(&b);
	return rc;
}

/* ---- verdicts ---- */

/* The kernel states measured in env that can show a spread (store_spread_trees),
 * as history groups: the others add nothing to a pooled noise. */
static int history_sets(struct store *s, const char *env, const char *skip1, const char *skip2,
			int session_only, int upto, struct stats_set **out, size_t *n,
			struct err *e)
{
	char **trees;
	size_t nt;
	*out = NULL;
	*n = 0;
	int rc = store_spread_trees(s, &trees, &nt, e);
	if (rc < 0)
		return rc;
	*out = xcalloc(nt ? nt : 1, sizeof(**out));
	for (size_t i = 0; i < nt; i++) {
		const char *t = trees[i];
		if (rc == 0 && !(skip1 && !strcmp(t, skip1)) && !(skip2 && !strcmp(t, skip2))) {
			rc = measure_tree_set_upto(s, t, env, session_only, NULL, upto, &(*out)[*n],
						   e);
			(*n)++;
		}
		free(trees[i]);
	}
	free(trees);
	return rc;
}

int measure_history(struct store *s, const char *env, int skip_session, int upto,
		    struct stats_set **out, size_t *n, struct err *e)
{
	return history_sets(s, env, NULL, NULL, skip_session > 0 ? -skip_session : 0, upto, out, n,
			    e);
}

void measure_history_release(struct stats_set *h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		stats_set_release(&h[i]);
	free(h);
}

/* Pointers to n sets, as stats_opts takes its groups (caller frees). */
static const struct stats_set **set_ptrs(const struct stats_set *v, size_t n)
{
	const struct stats_set **p = xcalloc(n ? n : 1, sizeof(*p));
	for (size_t i = 0; i < n; i++)
		p[i] = &v[i];
	return p;
}

int measure_pair_set(struct store *s, const char *env, int upto, struct stats_set *out,
		     struct err *e)
{
	int *ids, *sess;
	size_t n;
	memset(out, 0, sizeof(*out));
	if (env)
		stats_set_env(out, env);
	int rc = store_pair_runs(s, upto, &ids, &sess, &n, e);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char *renv = NULL;
		struct stats_set base = {0}, nw = {0};
		struct run_ref side = {.id = ids[i], .base = true};
		rc = measure_env_key(s, ids[i], &renv, e);
		bool same = rc == 0 && (!env || !renv || strcmp(env, renv) == 0);
		free(renv);
		if (rc == 0 && same)
			rc = add_side_samples(s, &side, &base, e);
		if (rc == 0 && same)
			rc = add_run_samples(s, ids[i], 0, &nw, e);
		for (size_t j = 0; rc == 0 && same && j < nw.nshapes; j++) {
			const struct stats_shape *c = &nw.shapes[j];
			const struct stats_shape *b = stats_set_find(&base, c->key);
			if (b && b->n && c->n && stats_time_ok(b->ms[0]) && stats_time_ok(c->ms[0]))
				stats_set_add_run(out, c->key, b->ms[0] / c->ms[0], sess[i]);
		}
		stats_set_release(&base);
		stats_set_release(&nw);
	}
	free(ids);
	free(sess);
	return rc;
}

/* upto: the session's last run (store_session_last_run) */
static int confirm_compare(struct store *s, const char *best_tree, const char *cand_tree,
			   int session, int upto, double threshold, const char *target,
			   const char *against, struct stats_cmp *cmp, struct measure_target *mt,
			   struct err *e)
{
	struct stats_set bs = {0}, cs = {0}, bo = {0}, co = {0}, pairs = {0}, *hist = NULL,
			 *others = NULL;
	size_t nh = 0, no = 0;
	struct measure_memo *mm = measure_memo_open();
	int rc = measure_tree_set(s, best_tree, NULL, session, "best", &bs, e);
	if (rc == 0)
		rc = measure_tree_set(s, cand_tree, NULL, session, "cand", &cs, e);
	if (rc == 0)
		rc = measure_history(s, bs.env, session, upto, &hist, &nh, e);
	/* the same two kernels over their other sessions: the screen the
	 * session must agree with while it is short */
	if (rc == 0)
		rc = measure_tree_set_upto(s, best_tree, bs.env, -session, NULL, upto, &bo, e);
	if (rc == 0)
		rc = measure_tree_set_upto(s, cand_tree, bs.env, -session, NULL, upto, &co, e);
	/* its noise: every session of every kernel, this one's too (the spread
	 * between sessions is what a screen meets) */
	if (rc == 0)
		rc = history_sets(s, bs.env, NULL, NULL, 0, upto, &others, &no, e);
	/* a session of in-process pairs: their noise is what pairs spread */
	bool inproc = rc == 0 && store_session_paired(s, session);
	if (inproc)
		rc = measure_pair_set(s, bs.env, upto, &pairs, e);
	if (rc == 0) {
		const struct stats_set **h = set_ptrs(hist, nh), **ho = set_ptrs(others, no);
		/* the screen's noise from the other sessions (the history), so a
		 * session that went wrong cannot widen the band it is checked
		 * against; from all of them only while the others alone have
		 * repeated nothing */
		struct stats_cmp screen;
		struct stats_opts oo = {.threshold = threshold, .history = h, .nhistory = nh};
		stats_compare(&bo, &co, &oo, &screen);
		if (screen.flags & SF_NOISE_ASSUMED) {
			stats_cmp_release(&screen);
			oo.history = ho;
			oo.nhistory = no;
			stats_compare(&bo, &co, &oo, &screen);
		}
		struct stats_opts so = {.threshold = threshold,
					.history = h,
					.nhistory = nh,
					.sequential = true,
					.spent = (unsigned)store_confirms_before(s, best_tree,
										cand_tree, session),
					.screen = &screen,
					.across = ho,
					.nacross = no,
					.pairs = inproc ? &pairs : NULL,
					.against = against};
		stats_compare(&bs, &cs, &so, cmp);
		if (mt) {
			/* the target's shapes against the same screen over those
			 * shapes (the whole confirm must promote too).  The whole
			 * comparison decides when the confirm stops; once it has,
			 * the target shapes are read at that stop by their 95 %
			 * interval (the looks are the whole's, not theirs). */
			struct measure_target ts;
			measure_target_compare(&bo, &co, target, &oo, &ts);
			struct stats_opts to = so;
			to.screen = &ts.cmp;
			to.sequential = !cmp->decided;
			measure_target_compare(&bs, &cs, target, &to, mt);
			measure_target_release(&ts);
		}
		stats_cmp_release(&screen);
		free(h);
		free(ho);
	}
	measure_history_release(hist, nh);
	measure_history_release(others, no);
	stats_set_release(&bs);
	stats_set_release(&cs);
	stats_set_release(&bo);
	stats_set_release(&co);
	stats_set_release(&pairs);
	measure_memo_close(mm);
	return rc;
}

static json_t *strings_pack(char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static bool strings_unpack(const json_t *a, char ***v, size_t *n)
{
	*n = json_array_size(a);
	*v = *n ? xcalloc(*n, sizeof(**v)) : NULL;
	for (size_t i = 0; i < *n; i++) {
		const char *x = json_string_value(json_array_get(a, i));
		if (!x) {
			*n = i;
			return false;
		}
		(*v)[i] = xstrdup(x);
	}
	return json_is_array(a);
}

/* A confirm's comparison as the store keeps it: {"cmp": stats_cmp_pack,
 * "target": {"named", "missing", "cmp"}}, exact to the bit. */
static char *compare_pack(const struct stats_cmp *cmp, const struct measure_target *mt)
{
	json_t *j = json_pack("{s:o, s:{s:o, s:o, s:o}}", "cmp", stats_cmp_pack(cmp), "target",
			      "named", strings_pack(mt->named, mt->ntargets), "missing",
			      strings_pack(mt->missing, mt->nmissing), "cmp",
			      stats_cmp_pack(&mt->cmp));
	char *txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return txt;
}

static bool compare_unpack(const char *txt, struct stats_cmp *cmp, struct measure_target *mt)
{
	json_t *j = json_loads(txt, 0, NULL);
	const json_t *t = json_object_get(j, "target");
	memset(cmp, 0, sizeof(*cmp));
	memset(mt, 0, sizeof(*mt));
	bool ok = stats_cmp_unpack(json_object_get(j, "cmp"), cmp) == 0;
	if (ok) {
		ok = strings_unpack(json_object_get(t, "named"), &mt->named, &mt->ntargets);
		ok = strings_unpack(json_object_get(t, "missing"), &mt->missing, &mt->nmissing) &&
		     ok;
		ok = ok && stats_cmp_unpack(json_object_get(t, "cmp"), &mt->cmp) == 0;
		if (!ok) {
			stats_cmp_release(cmp);
			measure_target_release(mt);
		}
	}
	json_decref(j);
	return ok;
}

/* A confirm's comparison is made from the runs up to its session's last one
 * (what the store held when that run ended: the same numbers whenever it is
 * read again, later sessions or not) and the confirms before it.  The
 * store keeps the one this build of optloop made (schema 17), for as long
 * as none of that changes; any doubt, and it is made again. */
int measure_confirm_compare(struct store *s, const char *best_tree, const char *cand_tree,
			    int session, double threshold, const char *target, const char *against,
			    struct stats_cmp *cmp, struct measure_target *mt, struct err *e)
{
	struct store_compare_key k = {.session = session,
				      .upto = store_session_last_run(s, session),
				      .best_tree = best_tree,
				      .cand_tree = cand_tree,
				      .threshold = threshold,
				      .target = target,
				      .against = against,
				      .build = build_id()};
	struct measure_target own;
	long long gen;
	char *kept = NULL;
	bool keep = k.build && k.upto > 0 && best_tree && cand_tree &&
		    store_compare_gen(s, &gen) == 0;
	if (keep && store_compare_get(s, &k, &kept) == 0 && kept) {
		struct stats_cmp c;
		bool ok = compare_unpack(kept, &c, &own);
		free(kept);
		if (ok) {
			*cmp = c;
			if (mt)
				*mt = own;
			else
				measure_target_release(&own);
			return 0;
		}
	}
	struct measure_target *t = mt ? mt : &own;
	int rc = confirm_compare(s, best_tree, cand_tree, session, k.upto, threshold, target,
				 against, cmp, t, e);
	if (rc == 0 && keep) {
		char *txt = compare_pack(cmp, t);
		store_compare_put(s, &k, gen, txt);
		free(txt);
	}
	if (rc == 0 && !mt)
		measure_target_release(&own);
	return rc;
}

static int verdict_put(struct store *s, int run_id, int iter, const struct stats_cmp *c,
		       struct err *e)
{
	json_t *j = stats_cmp_json(c);
	char *txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	int rc = store_verdict_put(s, run_id, iter, stats_verdict_name(c->verdict), c->flags, txt, e);
	free(txt);
	return rc;
}

int measure_judge_run(struct store *s, int run_id, double threshold, struct stats_cmp *out,
		      struct err *e)
{
	struct measure_best best;
	struct stats_set bset = {0}, cset = {0}, *hist = NULL;
	size_t nh = 0;
	char *tree = NULL, *env = NULL;
	int iter = 0, scope = 0;
	struct stats_cmp c;

	int rc = store_run_info(s, run_id, &iter, &tree, &scope, e);
	if (rc < 0)
		return rc;
	rc = measure_best(s, &best, e);
	if (rc == 0)
		rc = measure_env_key(s, run_id, &env, e);
	/* The candidate: this run only (its own session). */
	if (rc == 0) {
		int sess = store_run_session(s, run_id);
		if (env)
			stats_set_env(&cset, env);
		rc = add_run_samples(s, run_id, sess, &cset, e);
	}
	/* A run that timed the best beside the tree in one process (the
	 * validation command's {best}): the verdict is that pair, its base
	 * column the best, judged by the noise of such pairs. */
	int rsess = store_run_session(s, run_id);
	bool inproc = rc == 0 && best.have && best.tree && store_session_paired(s, rsess);
	struct stats_set pairs = {0};
	if (inproc) {
		struct run_ref me = {.id = run_id, .session = rsess, .base = true};
		if (env)
			stats_set_env(&bset, env);
		rc = add_side_samples(s, &me, &bset, e);
		if (rc == 0)
			rc = measure_pair_set(s, env, 0, &pairs, e);
	} else if (rc == 0 && best.have && best.tree) {
		rc = measure_tree_set(s, best.tree, env, 0, NULL, &bset, e);
	}
	if (rc == 0)
		rc = history_sets(s, env, best.tree, tree, 0, 0, &hist, &nh, e);
	if (rc == 0) {
		const struct stats_set **h = set_ptrs(hist, nh);
		struct stats_opts o = {.threshold = threshold,
				       .history = h,
				       .nhistory = nh,
				       .pairs = inproc ? &pairs : NULL};
		stats_compare(best.have ? &bset : NULL, &cset, &o, &c);
		free(h);
		if (scope == SCOPE_SUBSET)
			c.flags |= SF_SUBSET_GATE;
		struct probe_reading p;
		if (measure_probe_get(s, run_id, "before", &p, NULL) == 0) {
			if (p.busy)
				c.flags |= SF_BUSY_GPU;
			probe_reading_release(&p);
		}
		rc = store_readonly(s) ? 0 : verdict_put(s, run_id, iter, &c, e);
		if (out)
			*out = c;
		else
			stats_cmp_release(&c);
	}
	for (size_t i = 0; i < nh; i++)
		stats_set_release(&hist[i]);
	free(hist);
	stats_set_release(&bset);
	stats_set_release(&cset);
	stats_set_release(&pairs);
	measure_best_release(&best);
	free(tree);
	free(env);
	return rc;
}

/* One spread tree's terms of the pooled noise band in env (history_sets'
 * set of the tree, and stats_noise_term of each of its shapes): kept ones,
 * else made and kept.  Caller frees with store_noise_terms_release. */
static int tree_terms(struct store *s, const char *tree, const char *env, long long gen,
		      struct store_noise_term **t, size_t *n, struct err *e)
{
	bool kept;
	struct stats_set set;
	int rc = store_noise_terms_get(s, tree, env, t, n, &kept, e);
	if (rc < 0 || kept)
		return rc;
	if ((rc = measure_tree_set_upto(s, tree, env, 0, NULL, 0, &set, e)) < 0)
		return rc;
	bool exact = true;
	*t = xcalloc(set.nshapes ? set.nshapes : 1, sizeof(**t));
	for (size_t i = 0; i < set.nshapes; i++) {
		struct stats_noise_term x;
		stats_noise_term(&set, env, set.shapes[i].key, &x);
		if (!x.dof)
			continue;
		/* (the database keeps no NaN) */
		exact = exact && isfinite(x.ss);
		(*t)[(*n)++] = (struct store_noise_term){xstrdup(set.shapes[i].key), x.ss, x.dof, x.runs};
	}
	stats_set_release(&set);
	if (exact && gen >= 0)
		store_noise_terms_put(s, tree, env, gen, *t, *n);
	return 0;
}

/* The terms of every spread tree but skip, oldest first (history_sets'
 * groups). */
static int history_terms(struct store *s, const char *env, const char *skip,
			 struct store_noise_term ***t, size_t **nt, size_t *n, struct err *e)
{
	char **trees;
	size_t ntrees;
	long long gen;
	*t = NULL;
	*nt = NULL;
	*n = 0;
	/* read before anything the terms are made from */
	if (store_noise_gen(s, &gen) < 0)
		gen = -1;
	int rc = store_spread_trees(s, &trees, &ntrees, e);
	if (rc < 0)
		return rc;
	*t = xcalloc(ntrees ? ntrees : 1, sizeof(**t));
	*nt = xcalloc(ntrees ? ntrees : 1, sizeof(**nt));
	for (size_t i = 0; i < ntrees; i++) {
		if (rc == 0 && !(skip && !strcmp(trees[i], skip))) {
			rc = tree_terms(s, trees[i], env, gen, &(*t)[*n], &(*nt)[*n], e);
			(*n)++;
		}
		free(trees[i]);
	}
	free(trees);
	return rc;
}

static const struct store_noise_term *term_of(const struct store_noise_term *t, size_t n,
					      const char *shape)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].shape, shape))
			return &t[i];
	return NULL;
}

int measure_noise_band(struct store *s, const char *shape, double centre, struct loop_noise *out,
		       struct err *e)
{
	struct measure_best best;
	struct stats_set bset = {0};
	struct store_noise_term **hist = NULL;
	size_t nh = 0, *nth = NULL;
	double sum = 0;
	int n = 0;

	memset(out, 0, sizeof(*out));
	out->sigma = out->lo_ms = out->hi_ms = out->half = NAN;
	int rc = measure_best(s, &best, e);
	if (rc == 0 && best.have && best.tree && stats_time_ok(best.bench_ms))
		rc = measure_tree_set(s, best.tree, NULL, 0, NULL, &bset, e);
	if (rc == 0 && bset.nshapes)
		rc = history_terms(s, bset.env, best.tree, &hist, &nth, &nh, e);
	if (rc == 0 && bset.nshapes) {
		/* the groups a verdict against the best pools, less the
		 * candidate: the best's own, then each spread tree's terms
		 * (stats_noise_pool's figures, from the kept terms) */
		struct stats_noise_term *g = xcalloc(nh + 1, sizeof(*g));
		for (size_t i = 0; i < bset.nshapes; i++) {
			struct stats_noise nz;
			const char *key = bset.shapes[i].key;
			if (shape && strcmp(key, shape))
				continue;
			stats_noise_term(&bset, bset.env, key, &g[0]);
			for (size_t k = 0; k < nh; k++) {
				const struct store_noise_term *x = term_of(hist[k], nth[k], key);
				g[k + 1] = x ? (struct stats_noise_term){x->ss, x->dof, x->runs}
					     : (struct stats_noise_term){0};
			}
			stats_noise_pool_terms(g, nh + 1, &nz);
			if (isfinite(nz.sigma)) {
				sum += nz.sigma;
				n++;
				out->assumed |= nz.assumed;
				if (n == 1 || nz.runs < out->runs)
					out->runs = nz.runs;
			}
		}
		free(g);
	}
	if (!isfinite(centre))
		centre = best.bench_ms;
	if (rc == 0 && n && stats_time_ok(centre)) {
		out->have = true;
		out->sigma = sum / n;
		out->lo_ms = centre * exp(-2 * out->sigma);
		out->hi_ms = centre * exp(2 * out->sigma);
		out->half = (out->hi_ms - out->lo_ms) / 2 / centre;
	}
	for (size_t i = 0; i < nh; i++)
		store_noise_terms_release(hist[i], nth[i]);
	free(hist);
	free(nth);
	stats_set_release(&bset);
	measure_best_release(&best);
	return rc;
}

void measure_noise_words(const struct loop_noise *n, struct sb *out)
{
	if (!n->have) {
		sb_adds(out, "none yet");
		return;
	}
	if (n->assumed)
		sb_addf(out, "\xc2\xb1%.1f%% (assumed)", n->half * 100);
	else
		sb_addf(out, "\xc2\xb1%.1f%% (%d runs)", n->half * 100, n->runs);
}

const json_t *measure_run_roofline(struct store *s, int run_id, json_t **detail)
{
	*detail = NULL;
	if (run_id <= 0 || measure_verdict_get(s, run_id, NULL, NULL, detail, NULL) < 0 || !*detail)
		return NULL;
	const json_t *rl = json_object_get(*detail, "roofline");
	return json_array_size(json_object_get(rl, "shapes")) ? rl : NULL;
}

int measure_verdict_get(struct store *s, int run_id, char **verdict, unsigned *flags,
			json_t **detail, struct err *e)
{
	char *v, *txt;
	unsigned f;
	if (verdict)
		*verdict = NULL;
	if (flags)
		*flags = 0;
	if (detail)
		*detail = NULL;
	int rc = store_verdict_get(s, run_id, &v, &f, &txt, e);
	if (rc < 0)
		return rc;
	if (verdict)
		*verdict = v;
	else
		free(v);
	if (flags)
		*flags = f;
	if (detail)
		*detail = txt ? json_loads(txt, 0, NULL) : NULL;
	free(txt);
	return 0;
}

static double json_num(json_t *j, const char *key)
{
	json_t *v = j ? json_object_get(j, key) : NULL;
	return json_is_number(v) ? json_number_value(v) : NAN;
}

int measure_win(struct store *s, int iter, int run_id, struct measure_win *w, struct err *e)
{
	struct store_confirm c;
	char *v = NULL;
	unsigned flags = 0;
	json_t *d = NULL;
	memset(w, 0, sizeof(*w));
	w->vs_best = NAN;
	int rc = run_id ? measure_verdict_get(s, run_id, &v, &flags, &d, e) : ERR_NOTFOUND;
	if (rc < 0 && rc != ERR_NOTFOUND)
		return rc;
	bool have_v = rc == 0;
	unsigned conf_flags = 0;
	if (store_confirm_as_candidate(s, iter, &c, NULL) == 0) {
		if (c.done && c.verdict) {
			conf_flags = c.flags;
			json_t *j = c.json ? json_loads(c.json, 0, NULL) : NULL;
			w->source = EVIDENCE_CONFIRM;
			w->verdict = stats_verdict_parse(c.verdict);
			w->vs_best = json_num(j, "vs_best");
			w->win = w->verdict == SV_FAST && !(c.flags & SF_BUSY_GPU);
			if (!w->win)
				w->why = xasprintf("the confirm of iteration %d says %s%s", iter,
						   c.verdict,
						   c.flags & SF_BUSY_GPU ? " on a busy GPU" : "");
			json_decref(j);
		}
		store_confirm_release(&c);
	}
	if (!w->source && have_v) {
		w->source = EVIDENCE_VERIFY;
		w->verdict = stats_verdict_parse(v);
		w->vs_best = json_num(d, "vs_best");
		bool fast = w->verdict == SV_FAST;
		w->win = fast && !(flags & (SF_NOISE_ASSUMED | SF_BUSY_GPU));
		if (!w->win)
			w->why = fast && (flags & SF_NOISE_ASSUMED)
					 ? xasprintf("iteration %d's verdict is fast, but against an "
						     "assumed noise band (no repeated run of the best "
						     "yet)",
						     iter)
				 : fast ? xasprintf("iteration %d's verdict is fast, but on a busy GPU",
						    iter)
					: xasprintf("iteration %d's verdict is %s", iter, v);
	}
	if (!w->source)
		w->why = xasprintf("iteration %d has no verdict against the best", iter);
	/* the flags of the evidence judged: the confirm's when one ran (it
	 * measured best and candidate interleaved), else the verify's */
	unsigned odd = w->source == EVIDENCE_CONFIRM ? conf_flags
		       : have_v				       ? flags
								       : 0;
	if ((odd & SF_IMPLAUSIBLE_MASK) && measure_explanations(s, iter, NULL) == 0) {
		struct sb f = SB_INIT;
		w->implausible = odd & SF_IMPLAUSIBLE_MASK;
		w->win = false;
		stats_flags_text(w->implausible, &f);
		/* "implausible, implausible_aggregate, ...": the group's name once */
		const char *detail = !strncmp(f.buf, "implausible, ", 13) ? f.buf + 13 : f.buf;
		free(w->why);
		w->why = xasprintf("iteration %d's speedup is flagged implausible (%s) and not "
				   "explained (a result that skipped work reads fast)",
				   iter, detail);
		sb_release(&f);
	}
	/* a time the hardware cannot reach: no win, and no explanation lifts
	 * it (rules_explain_lifts) */
	if (have_v && !rules_explain_lifts(flags)) {
		const json_t *why = json_array_get(
			json_object_get(json_object_get(d, "roofline"), "impossible_why"), 0);
		w->implausible |= SF_IMPOSSIBLE;
		w->win = false;
		free(w->why);
		w->why = xasprintf("iteration %d's time is impossible (%s): it skipped work or timed "
				   "the wrong thing",
				   iter, json_string_value(why) ? json_string_value(why)
								: "above the peak");
	}
	json_decref(d);
	free(v);
	return 0;
}

unsigned measure_impossible(struct store *s, int iter, char **why)
{
	struct store_run r;
	unsigned out = 0;
	if (why)
		*why = NULL;
	if (store_run_last(s, iter, RUN_VERIFY, &r, NULL) < 0)
		return 0;
	char *v = NULL;
	unsigned f = 0;
	json_t *d = NULL;
	if (measure_verdict_get(s, r.id, &v, &f, &d, NULL) == 0 && !rules_explain_lifts(f)) {
		out = SF_IMPOSSIBLE;
		const json_t *w = json_array_get(
			json_object_get(json_object_get(d, "roofline"), "impossible_why"), 0);
		if (why)
			*why = xstrdup(json_string_value(w) ? json_string_value(w) : "above the peak");
	}
	json_decref(d);
	free(v);
	store_run_release(&r);
	return out;
}

void measure_win_release(struct measure_win *w)
{
	free(w->why);
	memset(w, 0, sizeof(*w));
}

/* ---- confirm ---- */

int measure_confirm_end(struct store *s, int id, const struct stats_cmp *cmp, bool promoted,
			struct err *e)
{
	char *txt = NULL;
	if (cmp) {
		json_t *j = stats_cmp_json(cmp);
		txt = json_dumps(j, JSON_COMPACT);
		json_decref(j);
	}
	int rc = store_confirm_end(s, id, cmp ? stats_verdict_name(cmp->verdict) : NULL,
				   cmp ? cmp->flags : 0, promoted, txt, e);
	free(txt);
	return rc;
}

/* ---- stall ---- */

int measure_stall_count(struct store *s, int after_iter, int *count, struct err *e)
{
	int *nc = NULL;
	size_t nnc = 0, n = 0, cap = 0;
	struct rules_stall_row *sr = NULL;
	*count = 0;
	int rc = store_uncounted_iters(s, &nc, &nnc, e);
	/* The count stops at the newest baseline or win: the rows are read
	 * back from the newest a page at a time until one is found, newest
	 * first into sr, then turned to the log's order for the rule. */
	bool stop = false;
	for (int before = INT_MAX; rc == 0 && !stop;) {
		struct log_rows *rs;
		if ((rc = store_rows_before(s, before, 32, false, &rs, e)) < 0)
			break;
		for (size_t i = rs->n; i-- > 0 && !stop;) {
			const struct log_row *r = &rs->v[i];
			if (n == cap)
				sr = xrealloc(sr, (cap = cap ? 2 * cap : 32) * sizeof(*sr));
			/* a re-assessment restarts the count like a baseline */
			sr[n].base = r->status == RS_BASE || r->iter <= after_iter;
			sr[n].win = log_row_is_win(r);
			sr[n].not_comparable = in_set(nc, nnc, r->iter);
			stop = sr[n].base || sr[n].win;
			n++;
		}
		stop = stop || rs->n < 32;
		before = rs->n ? rs->v[0].iter : before;
		log_rows_put(rs);
	}
	for (size_t i = 0; i < n / 2; i++) {
		struct rules_stall_row t = sr[i];
		sr[i] = sr[n - 1 - i];
		sr[n - 1 - i] = t;
	}
	if (rc == 0)
		*count = rules_stall_count(sr, n);
	free(sr);
	free(nc);
	return rc;
}

/* ---- target shapes ---- */

static bool under_any(const struct contract_shape *t, size_t nt, const char *key)
{
	for (size_t i = 0; i < nt; i++)
		if (contract_shape_matches(&t[i], key))
			return true;
	return false;
}

/* The shapes of in that fall under a target, with every run and session. */
static void restrict_set(const struct stats_set *in, const struct contract_shape *t, size_t nt,
			 struct stats_set *out)
{
	memset(out, 0, sizeof(*out));
	if (!in)
		return;
	if (in->env)
		stats_set_env(out, in->env);
	for (size_t i = 0; i < in->nshapes; i++) {
		const struct stats_shape *sh = &in->shapes[i];
		if (!under_any(t, nt, sh->key))
			continue;
		for (size_t k = 0; k < sh->n; k++)
			stats_set_add_run(out, sh->key, sh->ms[k], sh->session[k]);
	}
}

static bool measured_by(const struct stats_set *set, const struct contract_shape *t)
{
	for (size_t i = 0; set && i < set->nshapes; i++)
		if (set->shapes[i].n && contract_shape_matches(t, set->shapes[i].key))
			return true;
	return false;
}

void measure_target_compare(const struct stats_set *best, const struct stats_set *cand,
			    const char *target, const struct stats_opts *o,
			    struct measure_target *out)
{
	struct contract_shape *t;
	size_t nt = contract_target_shapes(target, &t);
	memset(out, 0, sizeof(*out));
	out->ntargets = nt;
	if (nt == 0) {
		stats_compare(best, cand, o, &out->cmp);
		return;
	}
	out->named = xcalloc(nt, sizeof(char *));
	for (size_t i = 0; i < nt; i++) {
		out->named[i] = contract_shape_name(&t[i]);
		if (!measured_by(best, &t[i]) || !measured_by(cand, &t[i])) {
			out->missing = xrealloc(out->missing, (out->nmissing + 1) * sizeof(char *));
			out->missing[out->nmissing++] = xstrdup(out->named[i]);
		}
	}
	struct stats_set fb, fc;
	restrict_set(best, t, nt, &fb);
	restrict_set(cand, t, nt, &fc);
	stats_compare(best ? &fb : NULL, cand ? &fc : NULL, o, &out->cmp);
	stats_set_release(&fb);
	stats_set_release(&fc);
	contract_shapes_free(t, nt);
}

void measure_target_release(struct measure_target *t)
{
	for (size_t i = 0; i < t->ntargets; i++)
		free(t->named[i]);
	free(t->named);
	for (size_t i = 0; i < t->nmissing; i++)
		free(t->missing[i]);
	free(t->missing);
	stats_cmp_release(&t->cmp);
	memset(t, 0, sizeof(*t));
}

static json_t *num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

json_t *measure_target_json(const struct measure_target *t)
{
	json_t *j = json_object(), *named = json_array(), *missing = json_array();
	const struct stats_cmp *c = &t->cmp;
	for (size_t i = 0; i < t->ntargets; i++)
		json_array_append_new(named, json_string(t->named[i]));
	for (size_t i = 0; i < t->nmissing; i++)
		json_array_append_new(missing, json_string(t->missing[i]));
	json_object_set_new(j, "named", named);
	json_object_set_new(j, "missing", missing);
	json_object_set_new(j, "shapes", json_integer((json_int_t)c->ncommon));
	json_object_set_new(j, "verdict", json_string(stats_verdict_name(c->verdict)));
	json_object_set_new(j, "speedup", num_or_null(c->speedup));
	json_object_set_new(j, "vs_best", num_or_null(c->gain));
	json_object_set_new(j, "interval", json_pack("[oo]", num_or_null(c->lo), num_or_null(c->hi)));
	json_object_set_new(j, "worst_shape", c->worst >= 0 && (size_t)c->worst < c->nshapes
							 ? json_string(c->shapes[c->worst].key)
							 : json_null());
	return j;
}

/* ---- promotion ---- */

/* The stored roofline of run_id (its verdict's detail) read as evidence:
 * the shape nearest a limit, in words ("memory-bound at 45% of the H200's
 * HBM at fwd B=..."), into *words (NULL when the run has no modelled shape).
 * True when that shape reaches RULES_ROOFLINE_READING of the peak. */
static bool roofline_reading(struct store *s, int run_id, char **words)
{
	json_t *d;
	*words = NULL;
	const json_t *rl = measure_run_roofline(s, run_id, &d);
	if (!rl) {
		json_decref(d);
		return false;
	}
	const char *peak = json_string_value(json_object_get(json_object_get(rl, "peaks"), "name"));
	const json_t *v, *top = NULL;
	double best = -1;
	size_t i;
	json_array_foreach(json_object_get(rl, "shapes"), i, v) {
		const char *bound = json_string_value(json_object_get(v, "bound"));
		bool mem = bound && !strcmp(bound, "memory"), comp = bound && !strcmp(bound, "compute");
		double share = json_number_value(json_object_get(v, mem ? "bw_share" : "flop_share"));
		if ((mem || comp) && isfinite(share) && share > best) {
			best = share;
			top = v;
		}
	}
	if (top) {
		bool mem = !strcmp(json_string_value(json_object_get(top, "bound")), "memory");
		*words = xasprintf("%s-bound at %.0f%% of the %s%s %s peak (%s)",
				   mem ? "memory" : "compute", 100 * best, peak && *peak ? peak : "device",
				   peak && *peak ? "'s" : "", mem ? "bandwidth" : "FLOP",
				   json_string_value(json_object_get(top, "shape")));
	}
	json_decref(d);
	return top && best >= RULES_ROOFLINE_READING;
}

static void check(json_t *arr, struct sb *out, bool *all, const char *name, bool ok,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void check(json_t *arr, struct sb *out, bool *all, const char *name, bool ok,
		  const char *fmt, ...)
{
	va_list ap;
	struct sb d = SB_INIT;
	va_start(ap, fmt);
	sb_vaddf(&d, fmt, ap);
	va_end(ap);
	sb_addf(out, "%-8s %s: %s\n", ok ? "ok" : "MISSING", name, d.buf);
	json_t *j = json_object();
	json_object_set_new(j, "name", json_string(name));
	json_object_set_new(j, "ok", json_boolean(ok));
	json_object_set_new(j, "detail", json_string(d.buf));
	json_array_append_new(arr, j);
	if (!ok)
		*all = false;
	sb_release(&d);
}

/* Trap-lint findings on the kept iterations (the best's lineage) that were
 * never acknowledged: verify lints every measured diff, log asks for --ack. */
static void lint_check(struct store *s, json_t *arr, struct sb *out, bool *all)
{
	struct log_rows *rs;
	struct sb open = SB_INIT;
	size_t nack = 0;
	if (store_rows_get(s, &rs, NULL) < 0)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		const struct log_row *r = &rs->v[i];
		struct lint_findings f;
		bool acked;
		if (r->status != RS_KEEP)
			continue;
		store_findings(s, r->iter, &f);
		acked = store_findings_acked(s, r->iter);
		for (size_t k = 0; k < f.n; k++) {
			if (acked)
				nack++;
			else
				sb_addf(&open, "%s%s (iteration %d, %s:%d)", open.len ? "; " : "",
					f.v[k].lint, r->iter, f.v[k].file, f.v[k].line);
		}
		lint_findings_release(&f);
	}
	log_rows_put(rs);
	if (open.len)
		check(arr, out, all, "lint findings", false,
		      "unacknowledged: %s; review each (optloop lint) and acknowledge it with the row "
		      "(log --ack), or undo the change",
		      open.buf);
	else
		check(arr, out, all, "lint findings", true, "%s",
		      nack ? "every finding on the kept iterations was acknowledged at log"
			   : "none on the kept iterations");
	sb_release(&open);
}

/* The Target's speedup over the baseline, on its scope (every shape or the
 * geomean), from the confirm that measured the best against the baseline. */
static void target_speedup_check(const struct contract *k, const struct store_confirm *c,
				 const struct measure_target *mt, json_t *arr, struct sb *out,
				 bool *all)
{
	struct contract_target t;
	struct err e = {0};
	if (contract_target_speedup(contract_target_text(k), &t, &e) < 0) {
		check(arr, out, all, "target speedup", false, "%s", e.msg);
		return;
	}
	if (!c || !mt) {
		check(arr, out, all, "target speedup", false,
		      "no confirm measured the best against the baseline (optloop confirm)");
		return;
	}
	if (c->best_iter != 0) {
		check(arr, out, all, "target speedup", false,
		      "the Target (%.3gx) is a speedup over the baseline, but the confirm of "
		      "iteration %d measured it against iteration %d: run optloop confirm "
		      "--baseline (the best against the baseline, interleaved in one session)",
		      t.speedup, c->iter, c->best_iter);
		return;
	}
	const struct stats_cmp *m = &mt->cmp;
	if (t.scope == TARGET_GEOMEAN) {
		check(arr, out, all, "target speedup", isfinite(m->speedup) && m->speedup >= t.speedup,
		      "geomean %.3fx over %zu shape%s against the baseline; the Target asks %.3gx of "
		      "the geomean",
		      m->speedup, m->ncommon, m->ncommon == 1 ? "" : "s", t.speedup);
		return;
	}
	long worst = -1;
	for (size_t i = 0; i < m->nshapes; i++)
		if (m->shapes[i].in_best && m->shapes[i].in_cand &&
		    (worst < 0 || m->shapes[i].speedup < m->shapes[worst].speedup))
			worst = (long)i;
	if (worst < 0) {
		check(arr, out, all, "target speedup", false,
		      "no shape was measured on both sides of the confirm");
		return;
	}
	const struct stats_shape_cmp *w = &m->shapes[worst];
	check(arr, out, all, "target speedup", w->speedup >= t.speedup,
	      "worst shape %s at %.3fx against the baseline; the Target asks %.3gx of every shape",
	      w->key, w->speedup, t.speedup);
}

/* The target-shape line of the promotion check (json: the comparison). */
static int check_targets(struct store *s, const struct contract *k, bool have_conf,
			 const struct store_confirm *c, json_t *arr, struct sb *out, bool *all,
			 json_t **tj, struct err *e)
{
	const char *target = contract_target_text(k);
	struct contract_shape *t;
	size_t nt = contract_target_shapes(target, &t);
	contract_shapes_free(t, nt);
	*tj = NULL;
	if (!have_conf || !c->session || !c->best_tree || !c->cand_tree) {
		if (nt)
			check(arr, out, all, "target shapes", false,
			      "no confirm run to measure the %zu target shape%s on (optloop confirm)",
			      nt, nt == 1 ? "" : "s");
		else
			check(arr, out, all, "target shapes", true,
			      "the contract's Target names no shapes: every measured shape counts");
		target_speedup_check(k, NULL, NULL, arr, out, all);
		return 0;
	}
	struct stats_cmp whole;
	struct measure_target mt;
	int rc = measure_confirm_compare(s, c->best_tree, c->cand_tree, c->session,
					 k ? k->threshold : 0, target, NULL, &whole, &mt, e);
	if (rc < 0)
		return rc;
	stats_cmp_release(&whole);
	const struct stats_cmp *m = &mt.cmp;
	if (mt.ntargets == 0) {
		check(arr, out, all, "target shapes", true,
		      "the contract's Target names no shapes: every measured shape counts (%zu in "
		      "the confirm)", m->ncommon);
	} else if (mt.nmissing) {
		struct sb names = SB_INIT;
		sb_init(&names);
		for (size_t i = 0; i < mt.nmissing; i++)
			sb_addf(&names, "%s%s", i ? ", " : "", mt.missing[i]);
		check(arr, out, all, "target shapes", false,
		      "%s %s not measured in the confirm of iteration %d (make the benchmark cover "
		      "every target shape, then verify and confirm again)",
		      names.buf, mt.nmissing == 1 ? "was" : "were", c->iter);
		sb_release(&names);
	} else {
		bool ok = m->verdict == SV_FAST;
		struct sb d = SB_INIT;
		sb_init(&d);
		if (!ok)
			sb_addf(&d, "the confirm of iteration %d shows %s: ", c->iter,
				stats_verdict_name(m->verdict));
		sb_addf(&d, "%+.1f%% over %zu target shape%s (", 100 * m->gain, m->ncommon,
			m->ncommon == 1 ? "" : "s");
		stats_level_text(m, &d);
		sb_addf(&d, " interval %+.1f%% .. %+.1f%%, threshold %.1f%%)", 100 * m->lo,
			100 * m->hi, 100 * m->threshold);
		sb_adds(&d, ok ? ", a win beyond the threshold and the noise band"
			       : "; a win must clear the threshold and the noise band on the target "
				 "shapes");
		check(arr, out, all, "target shapes", ok, "%s", d.buf);
		sb_release(&d);
	}
	target_speedup_check(k, c, &mt, arr, out, all);
	*tj = measure_target_json(&mt);
	measure_target_release(&mt);
	return 0;
}

/* The profiler evidence of the best b: an attached artifact that is still
 * there, else the roofline its own run gives (roofline_reading). */
static void evidence_check(struct store *s, const char *workspace_dir, const struct measure_best *bp,
			   json_t *arr, struct sb *out, bool *allp)
{
	struct sb arts = SB_INIT;
	int nart = bp->have ? measure_artifacts(s, bp->iter, &arts) : 0;
	bool art_ok = false;
	if (nart) {
		const char *p = arts.buf;
		while (*p && !art_ok) {
			const char *nl = strchr(p, '\n');
			char *one = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
			char *abs = one[0] == '/' ? xstrdup(one) : fsutil_join(workspace_dir, one);
			art_ok = fsutil_exists(abs);
			free(abs);
			free(one);
			p = nl ? nl + 1 : p + strlen(p);
		}
	}
	/* without an attached one, the roofline the best's own run gives */
	char *reading = NULL;
	bool read_ok = !art_ok && bp->have && bp->run_id && roofline_reading(s, bp->run_id, &reading);
	if (art_ok)
		check(arr, out, allp, "profiler evidence", true, "%s",
		      "a profiler or roofline artifact is attached");
	else if (read_ok)
		check(arr, out, allp, "profiler evidence", true,
		      "the roofline computed from the best's run: %s (an attached profile is still "
		      "welcome: optloop promote --attach FILE)",
		      reading);
	else
		check(arr, out, allp, "profiler evidence", false, "%s%s%s%s",
		      nart ? "the attached artifact is gone: attach it again"
			   : "attach a profiler or roofline reading (optloop promote --attach FILE)",
		      reading ? "; the roofline computed from the best's run reads " : "",
		      reading ? reading : "",
		      reading ? ", too far from any limit to explain the time" : "");
	free(reading);
	sb_release(&arts);
}

int measure_promote_check(struct store *s, const char *workspace_dir, const struct contract *k,
			  struct sb *out, json_t **json, struct err *e)
{
	struct measure_best b;
	struct store_run run = {0};
	struct store_confirm c = {0};
	json_t *arr = json_array();
	bool all = true;
	int rc = measure_best(s, &b, e);
	if (rc < 0) {
		json_decref(arr);
		return rc;
	}
	bool have_run = b.have && b.run_id && store_run_get(s, b.run_id, &run, NULL) == 0;
	bool have_conf = b.have && store_confirm_last(s, b.iter, &c, NULL) == 0;

	if (b.have && b.unconfirmed) {
		check(arr, out, &all, "confirmed win", false,
		      "the best (iteration %d) was kept unconfirmed, without a win beyond noise: "
		      "promote a kernel whose confirm is fast (optloop confirm before log)",
		      b.iter);
	} else if (!b.have || b.iter == 0 || (!b.confirmed && !(have_conf && c.done))) {
		check(arr, out, &all, "confirmed win", false,
		      "no confirmed win yet: the best is %s (run optloop confirm on a measured "
		      "candidate whose verdict is fast or ambiguous)",
		      !b.have ? "not measured" : b.iter == 0 ? "the baseline" : "a keep with no "
										  "confirm");
	} else if (have_conf && c.done && !c.promoted) {
		/* the last confirm is the promotion's verdict, a confirm --baseline
		 * of the best included: the best is logged, so only that one can
		 * run again */
		enum stats_verdict v = stats_verdict_parse(c.verdict);
		const char *todo = "run optloop confirm --baseline (the best against the "
				   "baseline), or keep looking for a win";
		if (rules_promotes(v, c.flags, true))
			todo = measure_explanations(s, b.iter, NULL) == 0
				       ? "its implausible flags are not explained (optloop "
					 "promote --explain TEXT)"
				       /* a session ended before explanations counted there */
				       : "it ran before its flags were explained; record the "
					 "explanation again to release it (optloop promote "
					 "--explain TEXT)";
		else if (v == SV_FAST && (c.flags & SF_BUSY_GPU))
			todo = "it ran on a busy GPU; run optloop confirm --baseline on an "
			       "idle one";
		char against[48] = "the baseline";
		if (c.best_iter != 0)
			snprintf(against, sizeof(against), "iteration %d", c.best_iter);
		check(arr, out, &all, "confirmed win", false,
		      "iteration %d's confirm against %s says %s and did not promote it: %s",
		      b.iter, against, c.verdict ? c.verdict : "nothing (no verdict)", todo);
	} else {
		check(arr, out, &all, "confirmed win", have_conf && c.promoted,
		      "iteration %d: confirm verdict %s (%s)", b.iter,
		      have_conf && c.verdict ? c.verdict : "?",
		      "best and candidate interleaved in one session; the win's size comes "
		      "from these numbers only");
	}
	json_t *tj = NULL;
	rc = check_targets(s, k, b.have && have_conf && c.done, &c, arr, out, &all, &tj, e);
	if (rc < 0) {
		json_decref(arr);
		goto out;
	}
	int full = measure_best_full_gate(s, &b);
	if (full && full == b.run_id)
		check(arr, out, &all, "full gate", true, "the best's verify passed the full gate");
	else if (full)
		check(arr, out, &all, "full gate", true,
		      "the best's kernel passed the full gate when verified again (run %d)", full);
	else
		check(arr, out, &all, "full gate", false, "%s",
		      !have_run ? "no verify run for the best"
		      : run.scope == SCOPE_SUBSET
			      ? "the best's verify ran a -k subset: verify the same kernel with the "
				"full gate (optloop verify with no --gate-k; that run counts for it)"
			      : "the best's verify did not pass the gate");
	/* Implausible flags on the screen verdict or the confirm must be explained. */
	unsigned flags = have_conf ? c.flags : 0;
	unsigned vflags = 0;
	if (have_run)
		measure_verdict_get(s, b.run_id, NULL, &vflags, NULL, NULL);
	flags |= vflags;
	int nexp = b.have ? measure_explanations(s, b.iter, NULL) : 0;
	struct sb names = SB_INIT;
	stats_flags_text(flags & SF_IMPLAUSIBLE_MASK, &names);
	if (!(flags & SF_IMPLAUSIBLE_MASK))
		check(arr, out, &all, "implausible flags", true, "none raised");
	else
	{
		struct sb why = SB_INIT;
		sb_init(&why);
		measure_explanations(s, b.iter, &why);
		sb_trim(&why);
		check(arr, out, &all, "implausible flags", nexp > 0, "%s raised; %s%s%s", names.buf,
		      nexp ? "explained: \"" : "explain them first (optloop promote --explain TEXT)",
		      nexp ? why.buf : "", nexp ? "\" (in report final's Evidence)" : "");
		sb_release(&why);
	}
	sb_release(&names);
	check(arr, out, &all, "busy GPU", !(flags & SF_BUSY_GPU),
	      "%s", flags & SF_BUSY_GPU ? "a run was measured on a busy GPU: re-measure on an idle one"
					: "no run measured on a busy GPU");
	lint_check(s, arr, out, &all);
	evidence_check(s, workspace_dir, &b, arr, out, &all);

	if (json) {
		*json = json_object();
		json_object_set_new(*json, "ok", json_boolean(all));
		json_object_set_new(*json, "iter", b.have ? json_integer(b.iter) : json_null());
		json_object_set_new(*json, "checks", arr);
		json_object_set_new(*json, "target", tj ? tj : json_null());
	} else {
		json_decref(arr);
		json_decref(tj);
	}
out:
	if (have_run)
		store_run_release(&run);
	if (have_conf)
		store_confirm_release(&c);
	measure_best_release(&b);
	if (rc == 0 && !all)
		rc = err_set(e, ERR_FAIL, "promotion check failed: %s",
			     "see the MISSING lines for what to do");
	return rc;
}
