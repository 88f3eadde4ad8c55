/*
 * loop_session — benchmark-only measuring sessions outside verify:
 * `optloop noise` (the current best K times, to seed the noise band) and
 * `optloop confirm` (best and candidate interleaved in one session; only
 * these numbers size a win, and only a FAST confirm promotes).
 *
 * Both swap kernel states in the work tree: the candidate is saved as a git
 * tree first (and recorded in the store), the best is checked out from its
 * commit for its runs, and the candidate is restored afterwards, also when
 * a run fails.  A confirm cut off by a crash is noticed by the next confirm
 * or noise, which restores the candidate before anything else.
 *
 * Both go in steps (begin, fds, pump, cancel, end): the noise and confirm
 * jobs of loop_job.c.  Each run is a real run of the measuring command (the contract's validation
 * command with --no-gate, or the command given), parsed with the
 * workspace's pattern set, stored as a run of kind "noise" or "confirm"
 * with its samples, a probe reading before and after, and its session.
 */
#include "core/loop.h"
#include "core/measure.h"
#include "core/stats.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/fsutil.h"
#include "core/loop_impl.h"
#include "core/measure.h"
#include "core/parse.h"
#include "core/probe.h"
#include "core/patset.h"
#include "core/run.h"
#include "core/sb.h"
#include "core/rules.h"
#include "core/store.h"
#include "core/vcs.h"
#include "core/workspace.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ctx {
	struct loop *l;
	struct store *st;
	struct vcs *vcs; /* the loop's */
	struct loop_status status;
	const struct contract *contract; /* the loop's, held */
	char *command;
	const struct loop_session_opts *o;
	int session;
	int nruns;
	double secs; /* wall seconds of the session's finished runs */
	bool busy;   /* a probe before some run saw the GPU busy */
};

/* One run of the measuring command while it goes (the run engine's). */
struct mrun {
	struct ctx *c;
	enum run_kind kind;
	const char *role;
	struct run *r;
};

static void ctx_release(struct ctx *c)
{
	loop_status_release(&c->status);
	if (c->contract)
		loop_contract_put(c->contract);
	free(c->command);
	memset(c, 0, sizeof(*c));
}

static const char *const *kpaths(const struct ctx *c)
{
	return (const char *const *)c->status.kernel;
}

/* Where an unquoted shell comment starts in cmd ("# ..." at the start of a
 * word, outside quotes), or NULL.  Words appended after it would be part of
 * the comment. */
static const char *shell_comment(const char *cmd)
{
	char q = 0;
	for (const char *p = cmd; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
			else if (q == '"' && *p == '\\' && p[1])
				p++;
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '#' && (p == cmd || strchr(" \t\n;&|(", p[-1]))) {
			return p;
		}
	}
	return NULL;
}

static int ctx_init(struct ctx *c, struct loop *l, const struct loop_session_opts *o, const char *what,
		    struct err *e)
{
	memset(c, 0, sizeof(*c));
	c->l = l;
	c->o = o;
	c->st = l->ws.store;
	if (loop_readonly(l))
		return err_set(e, ERR_BUSY, "%s refused: the workspace is open read-only", what);
	int rc = loop_writable(l, what, e);
	if (rc == 0)
		rc = vcs_operation_check(l->ws.vcs, what, what, e);
	if (rc == 0)
		rc = loop_status(l, &c->status, e);
	if (rc < 0)
		return rc;
	if (!c->status.nkernel)
		return err_set(e, ERR_REFUSED, "%s refused: the workspace names no kernel paths", what);
	c->contract = loop_contract_get(l);
	c->vcs = l->ws.vcs;
	if (o && o->command) {
		c->command = xstrdup(o->command);
	} else {
		const char *v = c->contract->v[CF_VALIDATION];
		if (!v)
			return err_set(e, ERR_REFUSED,
				       "%s refused: the contract has no validation command (optloop "
				       "contract --set validation=CMD)",
				       what);
		if (!strstr(v, "--no-gate") && shell_comment(v))
			return err_set(e, ERR_REFUSED,
				       "%s refused: the validation command ends in a shell comment "
				       "(from '%.40s'), which would swallow the --no-gate optloop "
				       "appends for a benchmark-only run; remove the comment (optloop "
				       "contract --set validation=CMD) or give the command with --cmd",
				       what, shell_comment(v));
		c->command = strstr(v, "--no-gate") ? xstrdup(v) : xasprintf("%s --no-gate", v);
	}
	return 0;
}

static void mrun_release(struct mrun *m)
{
	run_free(m->r);
	memset(m, 0, sizeof(*m));
}

/* Start one run of the measuring command on whatever the work tree holds
 * now: recorded as incomplete until mrun_finish. */
static int mrun_start(struct ctx *c, struct mrun *m, enum run_kind kind, const char *role,
		      struct err *e)
{
	char tree[VCS_OID_HEX];
	const struct patset *ps;
	memset(m, 0, sizeof(*m));
	m->c = c;
	m->kind = kind;
	m->role = role;
	int rc = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, tree, e);
	if (rc == 0)
		rc = loop_patset(c->l, &ps, e);
	if (rc < 0)
		return rc;
	struct run_spec spec = {
		.kind = kind,
		.iter = c->status.iteration,
		.command = c->command,
		.cwd = loop_repo_dir(c->l),
		.trace_dir = c->l->ws.trace_dir,
		.timeout_s = c->o ? c->o->timeout_s : 0,
		.scope = SCOPE_UNKNOWN,
		.tree = tree,
		.alloc = loop_run_alloc(c->l),
		.ps = ps,
		.output = c->o ? c->o->output : NULL,
		.event = c->o ? c->o->event : NULL,
		.ctx = c->o ? c->o->ctx : NULL,
	};
	rc = run_start(c->st, &spec, &m->r, e);
	if (rc < 0)
		return rc;
	int id = run_record(m->r)->id;
	if (!c->session)
		c->session = id;
	struct probe_reading pr;
	if (measure_probe_get(c->st, id, "before", &pr, NULL) == 0) {
		c->busy |= pr.busy;
		probe_reading_release(&pr);
	}
	return 0;
}

static int mrun_pump(struct mrun *m, int timeout_ms)
{
	return run_pump(m->r, timeout_ms);
}

static int session_in_tx(void *ctx, struct store *st, struct store_run *r, struct err *e)
{
	struct mrun *m = ctx;
	int rc = store_session_put(st, r->id, m->c->session, m->role, e);
	/* a confirm's runs are bench runs like verify's: each on the roofline */
	if (rc == 0 && m->kind == RUN_CONFIRM)
		rc = loop_roofline_record(m->c->contract, st, r->id, e);
	return rc;
}

/* A session role ("best", "cand", "pair") as the user reads it: with
 * confirm --baseline the reference side is the baseline and the side
 * measured is the best. */
static const char *role_word(const struct loop_session_opts *o, const char *role)
{
	if (!o || !o->baseline || !role)
		return role;
	return !strcmp(role, "best") ? "baseline" : !strcmp(role, "cand") ? "best" : role;
}

/* Record the ended run with its session role; a run without a usable
 * number stops the session. */
static int mrun_finish(struct ctx *c, struct mrun *m, struct err *e)
{
	struct run_end_hooks h = {.in_tx = session_in_tx, .ctx = m};
	int rc = run_end(m->r, &h, e);
	const struct store_run *run = run_record(m->r);
	const struct parse_result *res = run_result(m->r);
	if (rc == 0 && (run->gate == GATE_INCOMPLETE || run->gate == GATE_FAIL ||
			run->gate == GATE_ERROR || res->nrows == 0 || !isfinite(run->bench_ms)))
		rc = err_set(e, ERR_HARNESS,
			     "%s run %d of '%s' %s (raw output: %s); fix the benchmark and "
			     "run it again",
			     run_kind_name(m->kind), run->id, c->command,
			     run->gate == GATE_INCOMPLETE ? "was stopped before it finished"
			     : run->gate == GATE_FAIL     ? "failed its gate"
			     : run->gate == GATE_ERROR    ? "ended in a harness error"
							  : "printed no usable result table",
			     run->log_path);
	c->nruns++;
	if (run->t_end > run->t_start)
		c->secs += run->t_end - run->t_start;
	if (rc == 0 && c->o && c->o->progress) {
		char *line = xasprintf("%s run %d (%s): %.4g ms geomean over %zu shape(s)",
				       run_kind_name(m->kind),
				       c->nruns, role_word(c->o, m->role), run->bench_ms, res->nrows);
		c->o->progress(c->o->ctx, line);
		free(line);
	}
	mrun_release(m);
	return rc;
}

char *loop_with_best(const char *s, const char *sha)
{
	struct sb out = SB_INIT;
	sb_init(&out);
	for (const char *p; (p = strstr(s, "{best}")); s = p + 6) {
		sb_add(&out, s, (size_t)(p - s));
		sb_adds(&out, sha);
	}
	sb_adds(&out, s);
	return sb_detach(&out);
}

/* s past its leading environment assignments (NAME=VALUE, the value maybe
 * quoted) and blanks: init puts PYTEST_ADDOPTS='-n N' before the validation
 * command, not before the benchmark command. */
static const char *past_assignments(const char *s)
{
	for (;;) {
		while (*s == ' ')
			s++;
		const char *p = s;
		if (!(isalpha((unsigned char)*p) || *p == '_'))
			return s;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (*p != '=')
			return s;
		p++;
		if (*p == '\'' || *p == '"') {
			const char *q = strchr(p + 1, *p);
			if (!q)
				return s;
			p = q + 1;
		}
		while (*p && *p != ' ')
			p++;
		s = p;
	}
}

/* Does the contract say that the harness pairs: a benchmark command that is
 * the validation command with --base REF after it (init writes one for the
 * harnesses it knows to take --base; a user writes it for their own)? */
static bool bench_pairs(const struct contract *k)
{
	const char *v = k ? k->v[CF_VALIDATION] : NULL, *b = k ? k->v[CF_BENCHMARK] : NULL;
	if (!v || !b)
		return false;
	v = past_assignments(v);
	b = past_assignments(b);
	size_t n = strlen(v);
	while (n && v[n - 1] == ' ')
		n--;
	if (strncmp(b, v, n) != 0 || (b[n] && b[n] != ' '))
		return false;
	for (const char *p = b + n; (p = strstr(p, "--base")); p += 6)
		if (p[-1] == ' ' && (p[6] == ' ' || p[6] == '='))
			return true;
	return false;
}

/* The command of a run that times the best's commit beside the work tree:
 * the commit at {best}, else appended as --base (FLA's verify, the demo's,
 * optloop_ab.py). */
static char *paired_command(const char *cmd, const char *sha)
{
	return strstr(cmd, "{best}") ? loop_with_best(cmd, sha)
				     : xasprintf("%s --base %s", cmd, sha);
}

/* Finish a confirm that a crash cut off: put its candidate back. */
/* A swap puts the best in the tree while the candidate waits as a snapshot
 * tree that nothing in git refers to: a ref keeps it from git gc until the
 * candidate is back (loop.c's reconcile drops it after a crash). */
static char *swap_ref(struct ctx *c)
{
	return loop_ref(c->l, "swap");
}

static int swap_begin(struct ctx *c, int iter, const char *snap, const char *best_commit,
		      int *intent, struct err *e)
{
	char *ref = swap_ref(c);
	int rc = vcs_keep(c->vcs, ref, snap, e);
	free(ref);
	return rc < 0 ? rc : store_intent_begin(c->st, INTENT_SWAP, iter, snap, best_commit, intent, e);
}

static int swap_end(struct ctx *c, int intent, struct err *e)
{
	int rc = intent ? store_intent_end(c->st, intent, e) : 0;
	if (rc == 0) {
		char *ref = swap_ref(c);
		vcs_unkeep(c->vcs, ref);
		free(ref);
		vcs_clear_keeps(c->vcs, kpaths(c), c->status.nkernel, NULL);
	}
	return rc;
}

static int recover(struct ctx *c, struct err *e)
{
	struct store_confirm u;
	char now[VCS_OID_HEX];
	int rc = store_confirm_unfinished(c->st, &u, NULL);
	if (rc < 0)
		return 0;
	rc = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, now, e);
	/* Only when the tree still holds the best: anything else is the user's
	 * own work and stays. */
	bool restore = u.cand_snapshot && u.best_tree && strcmp(now, u.best_tree) == 0;
	if (rc == 0 && restore)
		rc = vcs_restore(c->vcs, u.cand_snapshot, kpaths(c), c->status.nkernel, e);
	if (rc == 0 && restore) {
		char *ref = swap_ref(c);
		vcs_unkeep(c->vcs, ref);
		free(ref);
		vcs_clear_keeps(c->vcs, kpaths(c), c->status.nkernel, NULL);
	}
	if (rc == 0)
		rc = measure_confirm_end(c->st, u.id, NULL, false, e);
	if (rc == 0 && restore)
		rc = store_event(c->st, u.iter, "confirm.recovered",
				 "a cut-off confirm run left the best in the work tree; the "
				 "candidate was restored", e);
	store_confirm_release(&u);
	if (rc == 0) {
		loop_status_release(&c->status);
		rc = loop_status(c->l, &c->status, e);
	}
	return rc;
}

void loop_session_release(struct loop_session *r)
{
	free(r->why);
	free(r->flags_text);
	free(r->worst);
	for (size_t i = 0; i < r->nmissing; i++)
		free(r->missing[i]);
	free(r->missing);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

/* What a front-end reads of a confirm's comparison and its Target part. */
static void session_fill(struct loop_session *r, const struct stats_cmp *cmp,
			 const struct measure_target *t)
{
	r->verdict = stats_verdict_name(cmp->verdict);
	r->why = cmp->why ? xstrdup(cmp->why) : NULL;
	r->speedup = cmp->speedup;
	r->ncommon = cmp->ncommon;
	if (cmp->flags) {
		struct sb f = SB_INIT;
		sb_init(&f);
		stats_flags_text(cmp->flags, &f);
		r->flags_text = sb_detach(&f);
	}
	r->busy_gpu = cmp->flags & SF_BUSY_GPU;
	r->held = cmp->verdict == SV_FAST && !r->promoted &&
		  !(cmp->flags & (SF_BUSY_GPU | SF_SUBSET_GATE));
	r->worst_speedup = NAN;
	if (cmp->worst >= 0) {
		r->worst = xstrdup(cmp->shapes[cmp->worst].key);
		r->worst_speedup = cmp->shapes[cmp->worst].speedup;
	}
	r->ntargets = t->ntargets;
	r->target_speedup = t->cmp.speedup;
	r->target_ncommon = t->cmp.ncommon;
	r->target_verdict = stats_verdict_name(t->cmp.verdict);
	r->nmissing = t->nmissing;
	r->missing = xcalloc(t->nmissing ? t->nmissing : 1, sizeof(*r->missing));
	for (size_t i = 0; i < t->nmissing; i++)
		r->missing[i] = xstrdup(t->missing[i]);
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

/* ---- noise, in steps ------------------------------------------------------ */

struct loop_noise_run {
	struct ctx c;
	struct loop_session_opts o; /* the caller's, copied */
	struct measure_best b;
	char snap[VCS_OID_HEX];
	int runs;            /* how many are asked for */
	bool paired;         /* A/A: each run the best against itself in one process */
	bool swapped;        /* the best was checked out for the runs */
	int intent;          /* the swap intent, 0 when none */
	struct mrun m;
	bool going;          /* m holds a started run */
	bool cancelled, finished;
	int rc;              /* the first failure */
	struct err err;
};

static void noise_fail(struct loop_noise_run *s, int rc, const struct err *e)
{
	if (s->rc == 0 && rc < 0) {
		s->rc = rc;
		if (e)
			s->err = *e;
	}
	s->finished = true;
}

static void noise_next(struct loop_noise_run *s)
{
	struct err e = {0};
	int rc = mrun_start(&s->c, &s->m, RUN_NOISE, s->paired ? "pair" : "noise", &e);
	if (rc < 0) {
		noise_fail(s, rc, &e);
		return;
	}
	s->going = true;
}

/* The best's spread in this session, per shape, as JSON; the noise event. */
static int noise_result(struct loop_noise_run *s, struct loop_session *r, struct err *e)
{
	struct ctx *c = &s->c;
	struct stats_set set = {0}, pairs = {0};
	r->iter = c->status.iteration;
	r->session = c->session;
	r->nruns = c->nruns;
	r->gpu_s = c->secs;
	int rc = measure_tree_set(c->st, s->b.tree, NULL, c->session, NULL, &set, e);
	if (rc == 0 && s->paired)
		rc = measure_pair_set(c->st, set.env, 0, &pairs, e);
	json_t *j = json_object(), *shapes = json_array();
	json_object_set_new(j, "paired", json_boolean(s->paired));
	json_object_set_new(j, "best_iter", json_integer(s->b.iter));
	json_object_set_new(j, "runs", json_integer(c->nruns));
	json_object_set_new(j, "session", json_integer(c->session));
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
		json_t *o = json_object();
		json_object_set_new(o, "shape", json_string(sh->key));
		json_object_set_new(o, "n", json_integer((json_int_t)sum.n));
		json_object_set_new(o, "median_ms", json_real(sum.median));
		json_object_set_new(o, "min_ms", json_real(sum.min));
		json_object_set_new(o, "max_ms", json_real(sum.max));
		json_object_set_new(o, "noise", json_real(nz.sigma));
		json_object_set_new(o, "noise_raw",
				    isfinite(nz.raw) ? json_real(nz.raw) : json_null());
		json_object_set_new(o, "unstable", json_boolean(nz.unstable));
		/* the A/A ratios of this session: the noise of one pair */
		const struct stats_shape *pr = stats_set_find(&pairs, sh->key);
		double *lr = xmalloc((pr && pr->n ? pr->n : 1) * sizeof(*lr));
		size_t m = 0;
		for (size_t k = 0; pr && k < pr->n; k++)
			if (pr->session[k] == c->session)
				lr[m++] = log(pr->ms[k]);
		double ps = m >= 2 ? stats_spread(lr, m) : NAN;
		json_object_set_new(o, "pair_noise", isfinite(ps) ? json_real(ps) : json_null());
		json_object_set_new(o, "pair_median",
				    m ? json_real(stats_median(lr, m)) : json_null());
		free(lr);
		json_array_append_new(shapes, o);
		stats_set_release(&one);
	}
	json_object_set_new(j, "shapes", shapes);
	r->json = j;
	stats_set_release(&set);
	stats_set_release(&pairs);
	store_event(c->st, c->status.iteration, "noise",
		    s->paired ? "best against itself, in-process pairs (A/A)"
			      : "best measured in one session",
		    NULL);
	return rc;
}

int loop_noise_begin(struct loop *l, const struct loop_session_opts *o,
		     struct loop_noise_run **out, struct err *e)
{
	struct loop_noise_run *s = xcalloc(1, sizeof(*s));
	struct ctx *c = &s->c;
	char cur[VCS_OID_HEX];
	*out = NULL;
	if (o)
		s->o = *o;
	s->runs = s->o.runs > 0 ? s->o.runs : 5;
	int rc = ctx_init(c, l, &s->o, "noise", e);
	if (rc == 0 && c->status.state == ST_VERIFYING)
		rc = err_set(e, ERR_REFUSED, "noise refused: a verify run is going");
	if (rc == 0)
		rc = recover(c, e);
	if (rc == 0)
		rc = best_commit(c, &s->b, "noise", e);
	if (rc == 0)
		rc = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, cur, e);
	if (rc == 0)
		rc = vcs_snapshot(c->vcs, kpaths(c), c->status.nkernel, s->snap, e);
	/* A/A: the harness measures the best's commit beside the work tree,
	 * which holds the best too; each run's ratio is what one pair spreads */
	s->paired = rc == 0 && (s->o.paired || strstr(c->command, "{best}"));
	if (s->paired) {
		char *cmd = paired_command(c->command, s->b.commit);
		free(c->command);
		c->command = cmd;
	}
	if (rc == 0 && strcmp(cur, s->b.tree ? s->b.tree : "") != 0) {
		rc = swap_begin(c, c->status.iteration, s->snap, s->b.commit, &s->intent, e);
		if (rc == 0)
			rc = vcs_swap(c->vcs, s->b.commit, kpaths(c), c->status.nkernel, e);
		s->swapped = s->intent != 0;
	}
	if (rc == 0) {
		noise_next(s);
		rc = s->rc;
		if (rc < 0 && e)
			*e = s->err;
	}
	if (rc < 0) {
		struct loop_session r;
		s->finished = true;
		if (s->rc == 0) {
			s->rc = rc;
			if (e)
				s->err = *e;
		}
		loop_noise_end(s, &r, e);
		return rc;
	}
	*out = s;
	return 0;
}

int loop_noise_fds(const struct loop_noise_run *s, int fds[2])
{
	return s && s->going ? run_fds(s->m.r, fds) : 0;
}

int loop_noise_pump(struct loop_noise_run *s, int timeout_ms)
{
	if (!s || s->finished)
		return 0;
	if (mrun_pump(&s->m, timeout_ms) > 0)
		return 1;
	struct err e = {0};
	s->going = false;
	int rc = mrun_finish(&s->c, &s->m, &e);
	if (rc < 0)
		noise_fail(s, rc, &e);
	else if (s->cancelled)
		noise_fail(s,
			   err_set(&e, ERR_HARNESS,
				   "noise stopped after %d of %d runs; the kernel is back as it "
				   "was",
				   s->c.nruns, s->runs),
			   &e);
	else if (s->c.nruns >= s->runs)
		s->finished = true;
	else
		noise_next(s);
	return s->finished ? 0 : 1;
}

void loop_noise_cancel(struct loop_noise_run *s)
{
	if (!s || s->finished || s->cancelled)
		return;
	s->cancelled = true;
	if (s->going)
		run_cancel(s->m.r);
}

void loop_noise_progress(const struct loop_noise_run *s, struct loop_job_progress *p)
{
	p->iter = s->c.status.iteration;
	p->run = s->c.nruns + (s->going ? 1 : 0);
	p->nruns = s->runs;
	p->role = s->paired ? "pair" : "noise";
	p->running = !s->finished;
	p->command = s->c.command;
	p->result = s->going ? run_result(s->m.r) : NULL;
}

int loop_noise_end(struct loop_noise_run *s, struct loop_session *r, struct err *e)
{
	struct ctx *c = &s->c;
	memset(r, 0, sizeof(*r));
	loop_noise_cancel(s);
	while (loop_noise_pump(s, 200) > 0)
		;
	int rc = s->rc;
	if (rc < 0 && e)
		*e = s->err;
	/* the candidate goes back whatever happened */
	if (s->swapped) {
		struct err e2 = {0};
		int rc2 = vcs_restore(c->vcs, s->snap, kpaths(c), c->status.nkernel, &e2);
		if (rc2 == 0)
			rc2 = swap_end(c, s->intent, &e2);
		if (rc == 0 && rc2 < 0) {
			if (e)
				*e = e2;
			rc = rc2;
		}
	}
	if (rc == 0)
		rc = noise_result(s, r, e);
	if (rc < 0)
		loop_session_release(r);
	measure_best_release(&s->b);
	ctx_release(c);
	free(s);
	return rc;
}

/* ---- confirm, in steps ---------------------------------------------------- */

struct loop_confirm_run {
	int intent;          /* the swap intent (store_intent_begin), 0 before it */
	struct ctx c;
	struct loop_session_opts o; /* the caller's, copied */
	struct measure_best b;
	int rec_id;            /* the stats_confirms record */
	int iter;              /* the candidate's iteration (the best's with --baseline) */
	char snap[VCS_OID_HEX], cand[VCS_OID_HEX];
	size_t max_pairs;
	size_t pairs;          /* pairs in the comparisons so far */
	int planned;           /* runs planned so far (2 per pair) */
	bool best_turn;        /* the run going measures the best */
	bool paired;           /* each run is a pair: the harness's base column is
				* the best's commit, its new column the tree */
	bool paired_by_itself; /* chosen without --paired (store_paired_proven) */
	bool paired_declared;  /* by itself: the contract's benchmark command (bench_pairs) */
	struct mrun m;
	bool going;            /* m holds a started run */
	struct stats_cmp cmp;
	struct measure_target target;
	bool have_cmp;
	bool cancelled, finished;
	int rc;                /* the first failure */
	struct err err;
};

static void fail(struct loop_confirm_run *s, int rc, const struct err *e)
{
	if (s->rc == 0 && rc < 0) {
		s->rc = rc;
		if (e)
			s->err = *e;
	}
	s->finished = true;
}

/* Put the kernel state for the next run in the tree and start the run. */
static void start_next(struct loop_confirm_run *s, bool best)
{
	struct ctx *c = &s->c;
	struct err e = {0};
	int rc = 0;
	if (s->paired) /* the candidate stays; the harness measures the best itself */
		best = false;
	else
		rc = vcs_swap(c->vcs, best ? s->b.commit : s->snap, kpaths(c), c->status.nkernel,
			      &e);
	if (rc == 0)
		rc = mrun_start(c, &s->m, RUN_CONFIRM, s->paired ? "pair" : best ? "best" : "cand",
				&e);
	if (rc < 0) {
		fail(s, rc, &e);
		return;
	}
	s->best_turn = best;
	s->going = true;
}

/* The first paired run of a confirm must have measured the best: a base
 * time at every shape its new column has; and its pair must tell the story
 * the candidate's other runs tell (its verify against the best's history).
 * A base column that is really the work tree reads no change where the
 * screen read one (any shift of this session moves both columns alike, so
 * it cancels); a gap past the threshold and a 99 % band is refused.
 * Checked once: a harness does not change its ref between runs. */
static int paired_check(struct loop_confirm_run *s, struct err *e)
{
	struct ctx *c = &s->c;
	struct stats_set bs = {0}, cs = {0};
	int rc = measure_tree_set(c->st, s->b.tree, NULL, c->session, "best", &bs, e);
	if (rc == 0)
		rc = measure_tree_set(c->st, s->cand, NULL, c->session, "cand", &cs, e);
	for (size_t i = 0; rc == 0 && i < cs.nshapes; i++) {
		const struct stats_shape *b = stats_set_find(&bs, cs.shapes[i].key);
		bool ok = b && b->n == cs.shapes[i].n;
		for (size_t k = 0; ok && k < b->n; k++)
			ok = stats_time_ok(b->ms[k]);
		if (!ok && s->paired_declared)
			rc = err_set(e, ERR_HARNESS,
				     "paired run %d printed no base time for %s: the harness did not "
				     "measure the best's commit beside the candidate, though the "
				     "contract's benchmark command passes --base (which makes confirm "
				     "pair by itself); set the benchmark command to what the harness "
				     "runs (optloop contract --set benchmark=CMD), or confirm --no-paired",
				     c->nruns, cs.shapes[i].key);
		else if (!ok)
			rc = err_set(e, ERR_HARNESS,
				     "paired run %d printed no base time for %s: the harness did not "
				     "measure the best's commit beside the candidate; confirm without "
				     "--paired (or without {best} in the command)",
				     c->nruns, cs.shapes[i].key);
	}
	stats_set_release(&bs);
	stats_set_release(&cs);
	return rc;
}

static int paired_agrees(struct loop_confirm_run *s, struct err *e)
{
	const struct stats_cmp *m = &s->cmp;
	if (!isfinite(m->screen_gap) || m->screen_gap - m->screen_tol < log1p(m->threshold))
		return 0;
	return err_set(e, ERR_HARNESS,
		       "paired run %d reads %+.1f%% (its base column against the work tree), "
		       "%.1f%% away from what the candidate's verify read against the best's own "
		       "runs, beyond the threshold and the noise: its base column did not measure "
		       "the best's commit %.12s (a harness that benchmarks the installed package "
		       "instead of the ref does this), or the run met interference; confirm "
		       "--paired again, or confirm without --paired",
		       s->c.nruns, 100 * m->gain, 100 * expm1(m->screen_gap), s->b.commit);
}

/* The comparison over the pairs so far; false when no more are needed. */
static bool compare(struct loop_confirm_run *s)
{
	struct ctx *c = &s->c;
	struct err e = {0};
	if (s->paired && s->pairs == 1) {
		int rp = paired_check(s, &e);
		if (rp < 0) {
			fail(s, rp, &e);
			return false;
		}
	}
	if (s->have_cmp) {
		stats_cmp_release(&s->cmp);
		measure_target_release(&s->target);
		s->have_cmp = false;
	}
	int rc = measure_confirm_compare(c->st, s->b.tree, s->cand, c->session,
					 c->contract->threshold, contract_target_text(c->contract),
					 s->o.baseline ? "the baseline" : NULL, &s->cmp, &s->target, &e);
	if (rc < 0) {
		fail(s, rc, &e);
		return false;
	}
	s->have_cmp = true;
	/* A harness an earlier paired confirm of this command proved (by itself)
	 * is not doubted on one loaded pair: its base column is the best's, and
	 * a pair that misreads leans to no win, never to a false one. */
	if (s->paired && !s->paired_by_itself && s->pairs == 1 && (rc = paired_agrees(s, &e)) < 0) {
		fail(s, rc, &e);
		return false;
	}
	bool more = stats_confirm_more(&s->cmp, s->pairs, s->max_pairs);
	if (c->o && c->o->progress) {
		const char *next = more		       ? ", one more pair"
				   : s->cmp.decided	       ? ", decided"
				   : s->pairs >= s->max_pairs ? ", undecided at the cap of pairs"
							       : "";
		char *line = xasprintf("after pair %zu: %s%s (%s)", s->pairs,
				       stats_verdict_name(s->cmp.verdict), next, s->cmp.why);
		c->o->progress(c->o->ctx, line);
		free(line);
	}
	return more;
}

/* The run going has ended: record it and start the next one, if any. */
static void run_ended(struct loop_confirm_run *s)
{
	struct ctx *c = &s->c;
	struct err e = {0};
	bool first = c->nruns == 0;
	s->going = false;
	int rc = mrun_finish(c, &s->m, &e);
	if (first && c->session) {
		struct err se = {0};
		int rs = store_confirm_session(c->st, s->rec_id, c->session, &se);
		if (rc == 0 && rs < 0) {
			rc = rs;
			e = se;
		}
	}
	if (s->cancelled) {
		s->finished = true;
		return;
	}
	if (rc < 0) {
		fail(s, rc, &e);
		return;
	}
	if (s->best_turn) {
		fault_point("confirm.best_in_tree");
		start_next(s, false);
		return;
	}
	s->pairs++;
	if (!compare(s)) {
		s->finished = true;
		return;
	}
	s->planned += s->paired ? 1 : 2;
	start_next(s, true);
}

static void confirm_run_free(struct loop_confirm_run *s)
{
	if (s->going)
		mrun_release(&s->m);
	if (s->have_cmp) {
		stats_cmp_release(&s->cmp);
		measure_target_release(&s->target);
	}
	measure_best_release(&s->b);
	ctx_release(&s->c);
	free(s);
}

/* confirm --baseline: the best, in the tree with the loop at rest, is the
 * candidate; the baseline row's commit is the other side. */
static int baseline_begin(struct loop_confirm_run *s, struct err *e)
{
	struct ctx *c = &s->c;
	struct measure_best best;
	enum loop_state st = c->status.state;
	if (st == ST_VERIFYING || st == ST_MEASURED || st == ST_LOGGED)
		return err_set(e, ERR_REFUSED,
			       "confirm --baseline refused: iteration %d is %s; finish it first (the "
			       "baseline comparison measures the best with the loop at rest)",
			       c->status.iteration, loop_state_name(st));
	int rc = best_commit(c, &best, "confirm --baseline", e);
	if (rc < 0)
		return rc;
	if (best.iter == 0) {
		measure_best_release(&best);
		return err_set(e, ERR_REFUSED,
			       "confirm --baseline refused: the best is the baseline itself; there is "
			       "nothing to compare with it yet");
	}
	rc = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, s->cand, e);
	if (rc == 0 && (!best.tree || strcmp(s->cand, best.tree)))
		rc = err_set(e, ERR_REFUSED,
			     "confirm --baseline refused: the kernel in the tree is not the best "
			     "(iteration %d); undo the edit (git checkout -- <kernel paths>) first",
			     best.iter);
	struct log_rows *rs;
	if (rc == 0 && (rc = store_rows_get(c->st, &rs, e)) == 0) {
		const struct log_row *b0 = rs->n && rs->v[0].status == RS_BASE ? &rs->v[0] : NULL;
		memset(&s->b, 0, sizeof(s->b));
		if (!b0 || !b0->commit)
			rc = err_set(e, ERR_REFUSED,
				     "confirm --baseline refused: the baseline row has no commit yet");
		else {
			s->b.have = true;
			s->b.iter = b0->iter;
			s->b.bench_ms = b0->bench_ms;
			s->b.commit = xstrdup(b0->commit);
			rc = store_iter_run(c->st, b0->iter, &s->b.run_id, &s->b.tree, e);
		}
		log_rows_put(rs);
	}
	s->iter = best.iter;
	measure_best_release(&best);
	return rc;
}

/* A confirm sizes a win; a candidate whose gate did not pass has none. */
static int gate_passed(struct ctx *c, struct err *e)
{
	struct loop_measurement m;
	int rc = loop_measurement(c->l, &m, e);
	if (rc < 0)
		return rc;
	if (!rules_run_measured(m.gate, m.bench_ms))
		rc = err_set(e, ERR_REFUSED,
			     "confirm refused: iteration %d's gate is %s%s; only a candidate that "
			     "passed its gate with a bench number can be a win (log it as drop or "
			     "revert)",
			     m.iter, gate_verdict_name(m.gate),
			     m.gate == GATE_PASS ? " but it has no bench number" : "");
	loop_measurement_release(&m);
	return rc;
}

int loop_confirm_begin(struct loop *l, const struct loop_session_opts *o, struct loop_confirm_run **out,
			  struct err *e)
{
	struct loop_confirm_run *s = xcalloc(1, sizeof(*s));
	struct ctx *c = &s->c;
	struct store_confirm rec = {0};
	*out = NULL;
	if (o)
		s->o = *o;
	s->max_pairs = o && o->max_pairs ? o->max_pairs : STATS_CONFIRM_MAX_PAIRS;
	s->cmp.worst = -1;

	int rc = ctx_init(c, l, &s->o, "confirm", e);
	if (rc == 0)
		rc = recover(c, e);
	if (rc == 0 && s->o.baseline) {
		rc = baseline_begin(s, e);
		goto begun;
	}
	if (rc == 0 && c->status.state != ST_MEASURED)
		rc = err_set(e, ERR_REFUSED,
			     "confirm refused: iteration %d is %s; a confirm run measures a verified "
			     "candidate before it is logged (run optloop verify first)",
			     c->status.iteration, loop_state_name(c->status.state));
	if (rc == 0 && c->status.telescoped)
		rc = err_set(e, ERR_REFUSED,
			     "confirm refused: the kernel changed since it was measured; revert the "
			     "extra change or re-verify first");
	if (rc == 0)
		rc = gate_passed(c, e);
	s->iter = c->status.iteration;
	if (rc == 0)
		rc = best_commit(c, &s->b, "confirm", e);
	if (rc == 0)
		rc = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, s->cand, e);
	if (rc == 0 && s->b.tree && !strcmp(s->cand, s->b.tree))
		rc = err_set(e, ERR_REFUSED,
			     "confirm refused: the kernel is the best itself (iteration %d); there is "
			     "nothing to confirm",
			     s->b.iter);
begun:
	if (rc == 0)
		rc = vcs_snapshot(c->vcs, kpaths(c), c->status.nkernel, s->snap, e);
	if (rc == 0) {
		rec.iter = s->iter;
		rec.best_iter = s->b.iter;
		rec.best_tree = s->b.tree;
		rec.cand_tree = s->cand;
		rec.cand_snapshot = s->snap;
		rc = store_confirm_begin(c->st, &rec, e);
		s->rec_id = rec.id;
	}
	/* the swaps to come: recorded before the first file is written, so a
	 * session cut off has its candidate put back by the next writer */
	/* the harness's own pair: {best} in the command, or --paired, or by
	 * itself where an earlier paired confirm of this command reached a
	 * verdict (the harness is known to measure the best's commit beside
	 * the tree: a pair cancels what a fresh process shifts, which turns
	 * alternating runs would need many pairs to see through) */
	bool free_to = rc == 0 && !s->o.paired && !s->o.unpaired && !strstr(c->command, "{best}") &&
		       s->b.commit;
	bool declared = free_to && bench_pairs(c->contract);
	bool by_itself = free_to && (declared || store_paired_proven(c->st, c->command));
	if (rc == 0 && (strstr(c->command, "{best}") || s->o.paired || by_itself)) {
		if (!s->b.commit) {
			rc = err_set(e, ERR_REFUSED,
				     "confirm refused: a paired run needs the best's commit, and "
				     "iteration %d is not committed yet (optloop commit)",
				     s->b.iter);
		} else {
			char *cmd = paired_command(c->command, s->b.commit);
			free(c->command);
			c->command = cmd;
			s->paired = true;
			s->paired_by_itself = by_itself;
			s->paired_declared = declared;
			if (by_itself && c->o && c->o->progress)
				c->o->progress(c->o->ctx,
					       declared
						       ? "paired by itself: the contract's benchmark "
							 "command passes --base, so the harness times a "
							 "commit beside the tree: each run times the best's "
							 "commit beside the candidate (--no-paired measures "
							 "them in turns)"
						       : "paired by itself: an earlier paired confirm of "
							 "this command reached a verdict, so each run times "
							 "the best's commit beside the candidate (--no-paired "
							 "measures them in turns)");
		}
	}
	if (rc == 0 && !s->paired)
		rc = swap_begin(c, s->iter, s->snap, s->b.commit, &s->intent, e);
	if (rc < 0) {
		confirm_run_free(s);
		return rc;
	}
	s->planned = s->paired ? 1 : 2;
	start_next(s, true);
	if (s->rc < 0) {
		struct loop_session r;
		rc = loop_confirm_end(s, &r, e);
		loop_session_release(&r);
		return rc;
	}
	*out = s;
	return 0;
}

int loop_confirm_fds(const struct loop_confirm_run *s, int fds[2])
{
	return s && s->going ? run_fds(s->m.r, fds) : 0;
}

int loop_confirm_pump(struct loop_confirm_run *s, int timeout_ms)
{
	if (!s || s->finished)
		return 0;
	if (mrun_pump(&s->m, timeout_ms) == 0)
		run_ended(s);
	return s->finished ? 0 : 1;
}

void loop_confirm_cancel(struct loop_confirm_run *s)
{
	if (!s || s->finished || s->cancelled)
		return;
	s->cancelled = true;
	if (s->going)
		run_cancel(s->m.r);
	else
		s->finished = true;
}

void loop_confirm_progress(const struct loop_confirm_run *s, struct loop_job_progress *p)
{
	p->iter = s->iter;
	p->run = s->c.nruns + (s->going ? 1 : 0);
	p->nruns = s->planned;
	p->role = role_word(&s->o, s->paired ? "pair" : s->best_turn ? "best" : "cand");
	p->pairs = s->pairs;
	p->running = !s->finished;
	p->command = s->c.command;
	p->result = s->going ? run_result(s->m.r) : NULL;
}

int loop_confirm_end(struct loop_confirm_run *s, struct loop_session *r, struct err *e)
{
	struct ctx *c = &s->c;
	memset(r, 0, sizeof(*r));
	if (!s->finished)
		loop_confirm_cancel(s);
	while (loop_confirm_pump(s, 200) > 0)
		;
	int rc = s->rc;
	if (rc < 0 && e)
		*e = s->err;
	/* The candidate goes back whatever happened. */
	struct err e2 = {0};
	char now[VCS_OID_HEX];
	int rc2 = vcs_kernel_hash(c->vcs, kpaths(c), c->status.nkernel, NULL, now, &e2);
	if (rc2 == 0 && strcmp(now, s->cand) != 0)
		rc2 = vcs_restore(c->vcs, s->snap, kpaths(c), c->status.nkernel, &e2);
	if (rc2 == 0 && s->intent)
		rc2 = swap_end(c, s->intent, &e2);
	if (rc == 0 && rc2 < 0) {
		if (e)
			*e = e2;
		rc = rc2;
	}
	r->iter = s->iter;
	r->session = c->session;
	r->nruns = c->nruns;
	r->gpu_s = c->secs;
	r->pairs = s->pairs;
	if (rc == 0 && s->cancelled) {
		/* No verdict from a cut-short session: closed, not promoted. */
		r->cancelled = true;
		rc = measure_confirm_end(c->st, s->rec_id, NULL, false, e);
		if (rc == 0) {
			char *d = xasprintf("cancelled after %d of %d runs; the candidate is back",
					    c->nruns, s->planned);
			store_event(c->st, r->iter, "confirm.cancelled", d, NULL);
			free(d);
		}
		json_t *j = json_object();
		json_object_set_new(j, "iter", json_integer(r->iter));
		json_object_set_new(j, "cancelled", json_true());
		json_object_set_new(j, "runs", json_integer(c->nruns));
		json_object_set_new(j, "session", json_integer(c->session));
		json_object_set_new(j, "promoted", json_false());
		r->json = j;
	} else if (rc == 0 && s->have_cmp) {
		/* A busy GPU before any run of the session can reject, never promote. */
		if (c->busy)
			s->cmp.flags |= SF_BUSY_GPU;
		/* a candidate whose verify time was impossible never promotes */
		s->cmp.flags |= measure_impossible(c->st, s->iter, NULL);
		/* an explanation recorded before the session counts as one after it
		 * would (measure_explain): keep already accepts it as explained */
		r->promoted = rules_promotes(s->cmp.verdict, s->cmp.flags,
					     measure_explanations(c->st, s->iter, NULL) > 0);
		rc = measure_confirm_end(c->st, s->rec_id, &s->cmp, r->promoted, e);
		if (rc == 0)
			store_event(c->st, r->iter, "confirm",
				    r->promoted ? "promoted" : stats_verdict_name(s->cmp.verdict), NULL);
		json_t *j = stats_cmp_json(&s->cmp);
		json_object_set_new(j, "iter", json_integer(r->iter));
		json_object_set_new(j, "best_iter", json_integer(s->b.iter));
		json_object_set_new(j, "pairs", json_integer((json_int_t)s->pairs));
		json_object_set_new(j, "runs", json_integer(c->nruns));
		json_object_set_new(j, "max_pairs", json_integer((json_int_t)s->max_pairs));
		json_object_set_new(j, "gpu_s", json_real(c->secs));
		json_object_set_new(j, "session", json_integer(c->session));
		json_object_set_new(j, "promoted", json_boolean(r->promoted));
		json_object_set_new(j, "paired", json_boolean(s->cmp.paired));
		json_object_set_new(j, "paired_by_itself", json_boolean(s->paired_by_itself));
		json_object_set_new(j, "confirms", json_integer(s->cmp.spent + 1));
		json_object_set_new(j, "target", measure_target_json(&s->target));
		r->json = j;
		session_fill(r, &s->cmp, &s->target);
	} else {
		measure_confirm_end(c->st, s->rec_id, NULL, false, NULL);
		if (rc == 0)
			rc = err_set(e, ERR_HARNESS, "confirm ended without a comparison");
	}
	confirm_run_free(s);
	return rc;
}
