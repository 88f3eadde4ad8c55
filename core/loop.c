/* loop — the state machine of a workspace: which step is due, verify / log /
 * commit with their refusals, start-up reconciliation of OPT_LOG.md, the
 * database and git history, and the telescoping set-aside. */
#include "core/loop.h"
#include "core/vis.h"
#include "core/loop_core.h"
#include "core/loop_impl.h"
#include "core/measure.h"
#include "core/chart.h"
#include "core/contract.h"
#include "core/alloc.h"
#include "core/err.h"
#include "core/fault.h"
#include "core/flaref.h"
#include "core/fsutil.h"
#include "core/guards.h"
#include "core/lint.h"
#include "core/optlog.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/rules.h"
#include "core/run.h"
#include "core/runner.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/vcs.h"
#include "core/workspace.h"

#include <jansson.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static const char *const *kpaths(const struct loop *l)
{
	return (const char *const *)l->kernel;
}

/* What the guards see of this workspace (borrowed pointers). */
struct guards_ctx loop_guards(struct loop *l)
{
	return (struct guards_ctx){
		.store = l->store,
		.vcs = l->vcs,
		.ws = &l->ws,
		.kernel = kpaths(l),
		.nkernel = l->nkernel,
		.frozen = (const char *const *)l->frozen,
		.nfrozen = l->nfrozen,
		.contract = &l->contract->c,
	};
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Split newline-separated text into a list (empty lines dropped). */
static void split_lines(const char *text, char ***out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		if (len) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 4;
				*out = xrealloc(*out, cap * sizeof(char *));
			}
			(*out)[(*n)++] = xstrndup(text, len);
		}
		text += len + (nl ? 1 : 0);
	}
}

/* ---- contract --------------------------------------------------------------- */

static void contract_put_shared(struct shared_contract *sc)
{
	if (sc && --sc->refs == 0) {
		contract_release(&sc->c);
		free(sc->text);
		free(sc);
	}
}

const struct contract *loop_contract_get(struct loop *l)
{
	l->contract->refs++;
	return &l->contract->c;
}

void loop_contract_put(const struct contract *c)
{
	/* c is the first member of the shared_contract loop_contract_get lent */
	contract_put_shared((struct shared_contract *)(uintptr_t)c);
}

int loop_reassess_profile_check(struct loop *l, const char *path, struct err *e)
{
	struct guards_ctx g = loop_guards(l);
	return guards_profile_check(&g, path, NULL, e);
}

int loop_contract_missing(struct loop *l, struct loop_contract_field **out, size_t *n,
			  struct err *e)
{
	const struct shared_contract *sc = l->contract;

	*out = NULL;
	*n = 0;
	for (int f = 0; f < CF_NFIELDS; f++) {
		if (sc->c.v[f])
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = (struct loop_contract_field){
			.field = f,
			.name = contract_field_name(f),
			.heading = contract_field_heading(f),
			.hint = contract_hint(sc->text, sc->text ? sc->len : 0, f),
		};
	}
	return 0;
}

void loop_contract_fields_free(struct loop_contract_field *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].hint);
	free(v);
}

static struct shared_contract *read_contract(const char *path)
{
	struct sb text = SB_INIT;
	struct shared_contract *sc = xcalloc(1, sizeof(*sc));
	sc->refs = 1;
	contract_parse("", 0, &sc->c, NULL);
	int rc = fsutil_read_file(path, &text, &sc->err);
	if (rc == ERR_NOTFOUND)
		sc->missing = true;
	else if (rc < 0)
		sc->rc = rc;
	else {
		sc->rc = contract_parse(text.buf, text.len, &sc->c, &sc->err);
		sc->len = text.len;
		sc->text = sb_detach(&text);
	}
	sb_release(&text);
	return sc;
}

static bool same_text(const struct shared_contract *a, const struct shared_contract *b)
{
	return a->missing == b->missing && a->rc == 0 && b->rc == 0 && a->len == b->len &&
	       (a->len == 0 || !memcmp(a->text, b->text, a->len));
}

/* Why kernel path p (relative to the work tree repo) can hold no kernel,
 * or NULL: it is the whole work tree (the gate test, its reference and
 * profile/ with it), or it lies in git's own directory gitdir, which no
 * commit holds, so an edit there goes unseen and every commit is empty.
 * Read from the text and from the real path (a link to either). */
const char *loop_kernel_path_unusable(const char *repo, const char *gitdir, const char *p)
{
	static const char whole[] =
		"is the whole repository (it holds the gate test, what the test compares "
		"against and optloop's own profile/)";
	static const char git[] =
		"lies in git's own directory, which no commit holds (kernel edits there would "
		"go unseen and every commit would be empty)";
	const char *q = p, *why = NULL;
	while (q[0] == '.' && q[1] == '/')
		q += 2;
	size_t n = strlen(q);
	while (n && q[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && q[0] == '.'))
		return whole;
	for (size_t i = 0; i < n;) {
		size_t k = strcspn(q + i, "/");
		if (k > n - i)
			k = n - i;
		if (k == 4 && !strncmp(q + i, ".git", 4))
			return git;
		i += k;
		while (i < n && q[i] == '/')
			i++;
	}
	char *full = fsutil_join(repo, p);
	char *real = realpath(full, NULL), *top = realpath(repo, NULL);
	char *gd = gitdir ? realpath(gitdir, NULL) : NULL;
	if (real && top && !strcmp(real, top))
		why = whole;
	else if (real && gd && (fsutil_path_under(real, gd) || !strcmp(real, gd)))
		why = git;
	free(full);
	free(real);
	free(top);
	free(gd);
	return why;
}

/* A Target shape named the registry's way that the registry does not have:
 * the benchmark never runs it, so the target could never be judged. */
static void target_shapes_unknown(struct loop *l, struct sb *why)
{
	const char *target = l->contract ? l->contract->c.v[CF_TARGET] : NULL;
	char **named = NULL, **known = NULL;
	size_t nn = contract_registry_names(target, &named);
	long nk = nn ? workspace_fla_shape_names(l->ws.repo, &known) : -1;
	for (size_t i = 0; nk >= 0 && i < nn; i++) {
		bool have = false;
		for (long k = 0; k < nk; k++)
			have |= !strcmp(named[i], known[k]);
		if (have)
			continue;
		struct sb list = SB_INIT;
		for (long k = 0; k < nk; k++)
			sb_addf(&list, "%s%s", k ? ", " : "", known[k]);
		sb_addf(why,
			"Target: %s is no shape of benchmarks/ops/registry.py (it has: %s), so the "
			"benchmark never runs it; name one of those, or add it to SHAPE_CONFIGS "
			"first\n",
			named[i], nk ? list.buf : "none");
		sb_release(&list);
	}
	for (size_t i = 0; i < nn; i++)
		free(named[i]);
	free(named);
	for (long k = 0; k < nk; k++)
		free(known[k]);
	free(known);
}

/* What the frozen and kernel paths lack on disk, one line each: a path
 * that does not exist, a kernel path inside the frozen scope; and a
 * Target shape the registry does not have. */
static void paths_missing(struct loop *l, struct sb *why)
{
	target_shapes_unknown(l, why);
	for (size_t i = 0; i < l->nfrozen; i++) {
		char *full = fsutil_join(l->ws.repo, l->frozen[i]);
		if (!fsutil_exists(full))
			sb_addf(why, "Frozen: %s does not exist (restore it, or correct the list: "
				     "optloop contract --set frozen=PATHS)\n",
				l->frozen[i]);
		free(full);
	}
	for (size_t i = 0; i < l->nkernel; i++) {
		char *full = fsutil_join(l->ws.repo, l->kernel[i]);
		if (!fsutil_exists(full))
			sb_addf(why, "kernel path %s does not exist (restore it, or make a new "
				     "workspace with the right --kernel)\n",
				l->kernel[i]);
		free(full);
		const char *bad = loop_kernel_path_unusable(l->ws.repo, vcs_gitdir(l->vcs), l->kernel[i]);
		if (bad)
			sb_addf(why, "kernel path %s %s; make a new workspace with --kernel naming "
				     "the kernel's own files\n",
				l->kernel[i], bad);
		for (size_t j = 0; j < l->nfrozen; j++)
			if (fsutil_path_under(l->kernel[i], l->frozen[j]))
				sb_addf(why, "kernel path %s is frozen (it is or lies in %s): the "
					     "gate would check a change against itself\n",
					l->kernel[i], l->frozen[j]);
	}
}

/* Read docs/draft.md again; parsed again only when its text changed.  What
 * is missing is worked out every time (a path can go without the text
 * changing). */
static int load_contract(struct loop *l, struct err *e)
{
	struct sb why = SB_INIT;
	struct shared_contract *sc = read_contract(l->ws.contract_path);

	if (l->contract && same_text(l->contract, sc)) {
		contract_put_shared(sc);
	} else {
		contract_put_shared(l->contract);
		l->contract = sc;
		free_list(l->frozen, l->nfrozen);
		l->frozen = NULL;
		l->nfrozen = 0;
		if (sc->c.v[CF_FROZEN])
			l->nfrozen = contract_list_items(sc->c.v[CF_FROZEN], &l->frozen);
		/* profile/ and the frozen files are never part of a kernel commit */
		size_t nx = l->nfrozen + 1;
		const char **x = xcalloc(nx, sizeof(char *));
		x[0] = "profile";
		for (size_t i = 0; i < l->nfrozen; i++)
			x[i + 1] = l->frozen[i];
		vcs_set_exclude(l->vcs, x, nx);
		free(x);
	}
	sc = l->contract;
	free(l->missing);
	l->missing = NULL;
	if (sc->missing) {
		l->missing = xasprintf("docs/draft.md is missing (run optloop contract to see the "
				       "fields, or restore the file)");
		return 0;
	}
	if (sc->rc < 0) {
		if (e)
			*e = sc->err;
		return sc->rc;
	}
	contract_missing(&sc->c, &why);
	paths_missing(l, &why);
	if (why.len) {
		sb_trim(&why);
		l->missing = sb_detach(&why);
	}
	sb_release(&why);
	return 0;
}

/* The pattern set the parser reads runs with: the built-in one and the
 * workspace's patterns/ folder, loaded once. */
int loop_patset(struct loop *l, const struct patset **ps, struct err *e)
{
	if (!l->patset) {
		char *extra = xasprintf("%s/patterns", l->ws.dir);
		int rc = patset_load(NULL, fsutil_is_dir(extra) ? extra : NULL, &l->patset, e);
		free(extra);
		if (rc < 0)
			return rc;
	}
	*ps = l->patset;
	return 0;
}

/* ---- best and rows ---------------------------------------------------------- */

/* The rows, shared with the store (read-only): put back with
 * log_rows_put(*sr).  On error *sr is NULL and there are no rows. */
static int rows_get(struct store *s, struct log_rows **sr, const struct log_row **rows,
		    size_t *n, struct err *e)
{
	int rc = store_rows_get(s, sr, e);
	*rows = rc < 0 ? NULL : (*sr)->v;
	*n = rc < 0 ? 0 : (*sr)->n;
	return rc;
}

int loop_rows(struct loop *l, struct log_rows **rows, struct err *e)
{
	return store_rows_get(l->store, rows, e);
}

int loop_chart(struct loop *l, const char *shape, struct chart *c, struct err *e)
{
	int rc = chart_load(l->store, shape, c, e);
	c->op = xstrdup(loop_workspace(l)->op);
	return rc;
}

void loop_chart_release(struct chart *c)
{
	chart_release(c);
}

json_t *loop_chart_json(const struct chart *c)
{
	json_t *j = chart_json(c);
	json_object_set_new(j, "op", c->op ? json_string(c->op) : json_null());
	return j;
}

/* ---- OPT_LOG.md --------------------------------------------------------------- */

/* OPT_LOG.md as the database has it, into out; unless have is given and
 * already says exactly that: then true, and out is left alone. */
static bool render_optlog(struct loop *l, const struct log_row *rows, size_t n,
			  const struct sb *have, struct sb *out)
{
	bool same = false;
	struct optlog_doc d;
	struct sb bl = SB_INIT;
	char *env = NULL;

	memset(&d, 0, sizeof(d));
	d.op = l->ws.op;
	/* Env: the environment of the latest logged row whose run printed one
	 * (unlogged runs do not change the file, so it only moves on log) */
	for (size_t i = n; i-- > 0 && !env;) {
		struct store_run r;
		int run_id = 0;
		if (store_iter_run(l->store, rows[i].iter, &run_id, NULL, NULL) != 0 || !run_id ||
		    store_run_get(l->store, run_id, &r, NULL) != 0)
			continue;
		json_t *j = r.result_json ? json_loads(r.result_json, 0, NULL) : NULL;
		json_t *en = j ? json_object_get(j, "env") : NULL;
		const char *raw = en ? json_string_value(json_object_get(en, "raw")) : NULL;
		json_t *sl = j ? json_object_get(j, "slurm") : NULL;
		const char *node = sl ? json_string_value(json_object_get(sl, "node")) : NULL;
		if (raw && *raw && node && *node) /* where it ran, when not here */
			env = xasprintf("%s | node %s, GPU %s (Slurm job %s)", raw, node,
					json_string_value(json_object_get(sl, "gpus")),
					json_string_value(json_object_get(sl, "job")));
		else if (raw && *raw)
			env = xstrdup(raw);
		json_decref(j);
		store_run_release(&r);
	}
	d.env = env;
	if (n > 0 && rows[0].status == RS_BASE) {
		optlog_fmt_bench(rows[0].bench_ms, &bl);
		if (isfinite(rows[0].bench_ms))
			sb_adds(&bl, " ms");
		sb_addf(&bl, " (iter 0%s%.7s)", rows[0].commit ? ", " : "",
			rows[0].commit ? rows[0].commit : "");
		d.baseline = bl.buf;
	}
	d.target = l->contract->c.v[CF_TARGET];
	d.rows = (struct log_row *)rows;
	d.nrows = n;
	if (have)
		same = optlog_render_same(&d, have->buf, have->len);
	if (!same)
		optlog_render(&d, out);
	sb_release(&bl);
	free(env);
	return same;
}

static int write_optlog(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	struct sb text = SB_INIT;
	int rc = rows_get(l->store, &sr, &rows, &n, e);
	if (rc < 0)
		return rc;
	render_optlog(l, rows, n, NULL, &text);
	rc = fsutil_write_atomic(l->ws.optlog_path, text.buf, text.len, e);
	sb_release(&text);
	log_rows_put(sr);
	return rc;
}

/* ---- state ------------------------------------------------------------------------- */

static int kernel_changed(struct loop *l, bool *changed, char work[VCS_OID_HEX], struct err *e)
{
	char head[VCS_OID_HEX];
	int rc = vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, "HEAD", head, e);
	if (rc == 0)
		rc = vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, NULL, work, e);
	if (rc == 0)
		*changed = strcmp(head, work) != 0;
	return rc;
}

static int where_now(struct loop *l, struct where *w, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	char work[VCS_OID_HEX];
	int rc;

	memset(w, 0, sizeof(*w));
	w->stall = -1;
	if ((rc = rows_get(l->store, &sr, &rows, &n, e)) < 0)
		return rc;
	w->nrows = (int)n;
	if ((rc = kernel_changed(l, &w->kernel_changed, work, e)) < 0) {
		log_rows_put(sr);
		return rc;
	}
	if (n > 0 && !rows[n - 1].commit) {
		char *tree = NULL;
		w->state = ST_LOGGED;
		w->iter = rows[n - 1].iter;
		if (store_iter_run(l->store, w->iter, &w->run_id, &tree, NULL) == 0 && tree)
			w->telescoped = strcmp(tree, work) != 0;
		free(tree);
		log_rows_put(sr);
		if (l->missing)
			w->state = ST_NO_CONTRACT;
		return 0;
	}
	log_rows_put(sr);
	w->iter = (int)n;
	if (l->missing) {
		w->state = ST_NO_CONTRACT;
		return 0;
	}
	if (l->verifying) {
		w->state = ST_VERIFYING;
		return 0;
	}
	struct store_run r;
	if (store_run_last(l->store, w->iter, "verify", &r, NULL) == 0) {
		bool attempt = r.t_end > 0 && run_is_attempt(r.iter, r.gate, r.scope, r.bench_ms);
		if (attempt) {
			w->attempt_run = r.id;
		} else if (r.t_end <= 0) {
			/* another optloop is running it (a crashed one is
			 * settled by reconciliation when a writer opens) */
			w->run_id = r.id;
			w->state = ST_VERIFYING;
		} else {
			w->run_id = r.id;
			w->state = ST_MEASURED;
			w->telescoped = r.tree && strcmp(r.tree, work) != 0;
			/* a confirm going has swapped the best in: not a second change */
			struct store_run u;
			if (store_run_unfinished(l->store, &u, NULL) == 0) {
				if (u.kind && (!strcmp(u.kind, "confirm") || !strcmp(u.kind, "noise"))) {
					snprintf(w->session, sizeof(w->session), "%s", u.kind);
					w->telescoped = false;
				}
				store_run_release(&u);
			}
		}
		store_run_release(&r);
		if (!attempt)
			return 0;
	}
	if (n == 0)
		w->state = ST_NEED_BASELINE;
	else
		w->state = w->kernel_changed ? ST_EDITING : ST_READY;
	/* a recorded stop, or a stall, overrides READY/EDITING */
	struct guards_ctx g = loop_guards(l);
	return guards_state(&g, &w->state, &w->stall, e);
}

/* Why run_id was an attempt and where its raw output is, in words. */
static char *attempt_words(struct loop *l, int run_id)
{
	struct store_run r;
	if (!run_id || store_run_get(l->store, run_id, &r, NULL) != 0)
		return NULL;
	const char *why;
	switch (r.gate) {
	case GATE_ERROR:
		why = r.exit_status == 2 ? "the gate test was not found (exit 2)"
		      : r.exit_status == 126 || r.exit_status == 127
			  ? "the validation command could not be run (the shell's exit 126/127: not "
			    "found or not executable)"
		      : r.exit_status < 0 ? "the validation command could not start"
					  : "the harness broke before a gate verdict";
		break;
	case GATE_INCOMPLETE:
		why = r.timed_out ? "it ran past its timeout"
		      : r.cancelled ? "it was cancelled"
				    : "it was killed before a gate verdict";
		break;
	case GATE_FAIL:
		why = "the unmodified kernel failed its own gate";
		break;
	case GATE_PASS:
		why = r.scope == SCOPE_SUBSET ? "it ran a -k subset of the gate"
					      : "it printed no bench number";
		break;
	default:
		why = "its output had no gate verdict";
		break;
	}
	/* a Slurm step that Slurm ended, or no allocation: its cause says more */
	struct store_step sp;
	char *slurm = NULL;
	if (store_step_get(l->store, run_id, &sp, NULL) == 0) {
		if (sp.why && strcmp(sp.cause, "ok"))
			slurm = xasprintf("%s: %s", why, sp.why);
		store_step_release(&sp);
	}
	char *s = xasprintf("%s (gate %s; raw output in %s)", slurm ? slurm : why,
			    gate_verdict_name(r.gate), r.log_path ? r.log_path : "trace/");
	free(slurm);
	store_run_release(&r);
	return s;
}

/* The MEASURED step, with the status the evidence supports. */
static char *measured_step(struct loop *l, const struct where *w, struct due *d)
{
	struct store_run r;
	struct measure_win win;
	d->due = DUE_LOG;
	if (store_run_get(l->store, w->run_id, &r, NULL) != 0)
		return xasprintf("log iteration %d: optloop log --direction TEXT --status "
				 "keep|revert|drop|floor",
				 w->iter);
	char *s;
	if (!rules_run_measured(r.gate, r.bench_ms)) {
		d->suggest = RS_DROP;
		d->why = xasprintf("the gate is %s%s: a row that did not pass cannot be kept; drop "
				   "(or revert) puts the best kernel back",
				   gate_verdict_name(r.gate), r.gate == GATE_PASS ? " but no bench number" : "");
		s = xasprintf("log iteration %d as drop (or revert): optloop log --direction TEXT "
			      "--status drop (gate %s%s: it cannot be kept; the kernel goes back to "
			      "the best)",
			      w->iter, gate_verdict_name(r.gate),
			      r.gate == GATE_PASS ? ", no bench number" : "");
	} else if (measure_win(l->store, w->iter, r.id, &win, NULL) < 0) {
		s = xasprintf("log iteration %d: optloop log --direction TEXT --status "
			      "keep|revert|drop|floor",
			      w->iter);
	} else {
		enum rules_keep k = rules_keep(r.gate, r.bench_ms, win.win, win.verdict, false);
		if (k == RULES_KEEP_WIN) {
			d->suggest = RS_KEEP;
			d->why = xasprintf("a win beyond noise, by its %s", win.source);
			s = xasprintf("log iteration %d: optloop log --direction TEXT --status keep "
				      "(a win beyond noise, by its %s)",
				      w->iter, win.source);
		} else if (k == RULES_KEEP_CONFIRM) {
			d->due = DUE_CONFIRM;
			d->suggest = RS_REVERT;
			d->why = xasprintf("%s: no win beyond noise yet, so not keep (a confirm can show "
					   "one)",
					   win.why);
			s = xasprintf("confirm iteration %d before keeping it: optloop confirm (%s); "
				      "or log it: optloop log --direction TEXT --status revert|drop",
				      w->iter, win.why);
		} else {
			d->suggest = RS_REVERT;
			d->why = xasprintf("%s: not a win, so not keep", win.why ? win.why : "no verdict");
			s = xasprintf("log iteration %d: optloop log --direction TEXT --status "
				      "revert|drop|floor (%s: not a win)",
				      w->iter, win.why ? win.why : "no verdict");
		}
		measure_win_release(&win);
	}
	store_run_release(&r);
	return s;
}

static char *next_step(struct loop *l, const struct where *w, struct due *d)
{
	d->due = DUE_NONE;
	d->suggest = RS_NONE;
	d->why = NULL;
	char *why = w->attempt_run && (w->state == ST_NEED_BASELINE || w->state == ST_READY ||
				       w->state == ST_EDITING)
			    ? attempt_words(l, w->attempt_run)
			    : NULL;
	if (why) {
		d->due = DUE_RETRY;
		char *s = w->iter == 0
				  ? xasprintf("the baseline run was an attempt, not the baseline: %s; "
					      "fix what stopped it, then run optloop verify again on "
					      "the unmodified kernel (full gate)",
					      why)
				  : xasprintf("iteration %d's last run was an attempt, not an "
					      "iteration: %s; it gets no row: fix what stopped it, "
					      "then run optloop verify again",
					      w->iter, why);
		free(why);
		return s;
	}
	if (l->lost_rows > 0) {
		d->due = DUE_REBUILD;
		return xasprintf("OPT_LOG.md holds %d row%s the database lost: rebuild it with "
				 "optloop repair --rebuild (nothing is written until then)",
				 l->lost_rows, l->lost_rows == 1 ? "" : "s");
	}
	switch (w->state) {
	case ST_NO_CONTRACT:
		d->due = DUE_CONTRACT;
		return xasprintf("complete the task contract in %s/docs/draft.md (optloop contract "
				 "--check lists what is missing; optloop contract --set FIELD=VALUE "
				 "fills a field)",
				 l->ws.rel);
	case ST_NEED_BASELINE:
		d->due = DUE_BASELINE;
		return xstrdup("measure the baseline: run optloop verify on the unmodified kernel "
			       "(full gate); it becomes iteration 0");
	case ST_READY:
		d->due = DUE_EDIT;
		return xasprintf("make one change to the kernel, then run optloop verify "
				 "(iteration %d)",
				 w->iter);
	case ST_EDITING:
		d->due = DUE_VERIFY;
		return xasprintf("run optloop verify to measure iteration %d", w->iter);
	case ST_VERIFYING:
		d->due = DUE_WAIT;
		return xasprintf("wait for the verify run of iteration %d to finish (or cancel it)",
				 w->iter);
	case ST_MEASURED:
		if (w->session[0]) {
			d->due = DUE_WAIT;
			return xasprintf("wait for the %s of iteration %d to finish (or cancel it)",
					 w->session, w->iter);
		}
		if (w->telescoped)
			d->due = DUE_SET_ASIDE;
		if (w->telescoped)
			return xasprintf("the kernel changed after iteration %d was measured: undo "
					 "the extra change, or set it aside with optloop log "
					 "--set-aside (it comes back after the commit)",
					 w->iter);
		if (w->iter == 0) {
			d->due = DUE_LOG;
			d->suggest = RS_BASE;
			return xstrdup("log the baseline: optloop log --direction TEXT (status base)");
		}
		return measured_step(l, w, d);
	case ST_LOGGED:
		d->due = w->telescoped ? DUE_SET_ASIDE : DUE_COMMIT;
		if (w->telescoped)
			return xasprintf("the kernel changed after iteration %d was measured: undo "
					 "the extra change, or set it aside with optloop commit "
					 "--set-aside (it comes back after the commit)",
					 w->iter);
		return xasprintf("commit iteration %d: optloop commit", w->iter);
	default: {
		struct guards_ctx g = loop_guards(l);
		d->due = w->state == ST_STALLED ? DUE_REASSESS : DUE_STOP;
		char *s = guards_next_step(&g, w->state);
		return s ? s : xstrdup("see optloop status");
	}
	}
}

/* ---- reconciliation ----------------------------------------------------------------- */

static void problem(struct loop *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct loop *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&l->problems, fmt, ap);
	va_end(ap);
	sb_addc(&l->problems, '\n');
}

/* A verify run without an end was cut off (optloop killed mid-run). */
/* A harness whose optloop was killed keeps running in its own process
 * group, measuring on the GPU and writing its raw log: every process
 * tagged with this workspace's runs (run.c) is stopped before anything else
 * is reconciled.  Only a writer gets here, so no live optloop owns one. */
static void reconcile_orphans(struct loop *l)
{
	char *prefix = xasprintf("%s#", l->ws.trace_dir);
	int pid = 0, n = runner_kill_tagged(prefix, 5.0, &pid);
	free(prefix);
	if (n > 0) {
		char *d = xasprintf("%d process(es), the first pid %d", n, pid);
		store_event(l->store, -1, "harness.orphan", d, NULL);
		free(d);
		problem(l,
			"a harness left running by an optloop that was killed (pid %d%s) was "
			"stopped",
			pid, n > 1 ? " and its children" : "");
	}
}

/* Runs whose optloop was killed never ended: each is recorded incomplete
 * (an attempt; a confirm or noise session with it has no verdict). */
static int settle_interrupted_runs(struct loop *l, struct err *e)
{
	struct store_run r;
	int rc = 0;

	while (rc == 0 && store_run_unfinished(l->store, &r, NULL) == 0) {
		char work[VCS_OID_HEX], snap[VCS_OID_HEX];
		bool verify = !r.kind || !strcmp(r.kind, "verify");
		r.t_end = now();
		r.gate = GATE_INCOMPLETE;
		r.exit_status = -1;
		if (verify && vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, NULL, work, NULL) == 0) {
			free(r.tree);
			r.tree = xstrdup(work);
		}
		if (verify && vcs_snapshot(l->vcs, kpaths(l), l->nkernel, snap, NULL) == 0) {
			free(r.snapshot);
			r.snapshot = xstrdup(snap);
		}
		char *what = xasprintf("%s run cut off; recorded as incomplete", verify ? "verify" : r.kind);
		rc = store_begin(l->store, e);
		if (rc == 0)
			rc = store_run_update(l->store, &r, e);
		if (rc == 0)
			rc = store_event(l->store, r.iter, verify ? "verify.interrupted" : "run.interrupted",
					 what, e);
		if (rc == 0)
			rc = store_commit(l->store, e);
		else
			store_rollback(l->store);
		free(what);
		if (rc == 0 && verify)
			problem(l,
				"the verify run of iteration %d was cut off before it finished; it is "
				"recorded as an incomplete attempt, not an iteration (run optloop "
				"verify again)",
				r.iter);
		else if (rc == 0)
			problem(l, "a %s run of iteration %d was cut off; it is recorded as incomplete",
				r.kind, r.iter);
		store_run_release(&r);
	}
	return rc;
}

/* A move of the kernel in the work tree that optloop recorded (a
 * revert/drop restore, a confirm or noise swap, a set-aside) and did not
 * finish: a crash cut it off.  Where the files stand decides:
 *   a swap (confirm, noise)        the candidate comes back unless it is
 *                                  there;
 *   a restore                      one cut off half-way is finished; one
 *                                  not begun or done is left to
 *                                  guards_after_commit, which commits it;
 *   a set-aside                    the measured kernel is put in place;
 *   a bring-back ("back")          the set-aside change is put back after
 *                                  its iteration's commit;
 *   a file neither's               edited by hand since: left alone, and
 *                                  said, with the command to finish by hand. */
static int reconcile_intents(struct loop *l, struct err *e)
{
	struct store_intent in;
	int rc = 0;

	while (rc == 0 && store_intent_pending(l->store, &in, NULL) == 0) {
		enum vcs_between at = VCS_ELSEWHERE;
		bool swap = !strcmp(in.kind, "swap");
		/* a swap goes back to where it came from; the others go forward */
		const char *target = swap ? in.from : in.to;
		rc = vcs_kernel_between(l->vcs, kpaths(l), l->nkernel, in.from, in.to, &at, e);
		if (rc < 0) {
			/* a tree that is gone (gc, a rewritten history): nothing to finish */
			problem(l, "an unfinished %s of the kernel (iteration %d) cannot be checked: %s",
				in.kind, in.iter, e->msg);
			err_clear(e);
			rc = 0;
		} else if (at == VCS_ELSEWHERE) {
			problem(l,
				"a %s of the kernel during iteration %d was cut off, and the kernel was "
				"edited since, so optloop left it alone; to finish it by hand: git "
				"checkout %.12s -- <kernel paths>",
				swap ? "confirm or noise swap" : in.kind, in.iter, target);
		} else if (swap ? at != VCS_AT_FROM
			   : !strcmp(in.kind, "restore") ? at == VCS_BETWEEN
							 : at != VCS_AT_TO) {
			if ((rc = vcs_restore(l->vcs, target, kpaths(l), l->nkernel, e)) == 0) {
				char *d = xasprintf("a %s cut off by a crash was %s", in.kind,
						    swap ? "undone: the candidate is back" : "finished");
				store_event(l->store, in.iter, "intent.recovered", d, NULL);
				problem(l, "%s (iteration %d)", d, in.iter);
				free(d);
			}
		}
		/* a restore that reached the best is committed by guards_after_commit */
		if (rc == 0)
			rc = store_intent_end(l->store, in.id, e);
		if (rc == 0 && swap && at != VCS_ELSEWHERE) { /* the candidate is back */
			char *ref = xasprintf("refs/optloop/swap/%s", l->ws.op);
			vcs_unkeep(l->vcs, ref);
			free(ref);
			vcs_clear_keeps(l->vcs, kpaths(l), l->nkernel, NULL);
		}
		store_intent_release(&in);
	}
	return rc;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

/* What the history check below depends on: HEAD, where the walk stops and
 * every row's commit.  Commits never change, so while this key stays the
 * same a walk that found nothing to report would find nothing again. */
static char *git_key(struct loop *l, const struct log_row *rows, size_t n)
{
	char head[VCS_OID_HEX];
	unsigned long long h = 14695981039346656037ULL;

	if (vcs_head(l->vcs, head, NULL) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		/* the bytes of "%d:", written without printf (once per row) */
		char it[24], *q = it + sizeof(it);
		long long v = rows[i].iter;
		unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
		*--q = ':';
		do
			*--q = (char)('0' + u % 10);
		while (u /= 10);
		if (v < 0)
			*--q = '-';
		for (const char *p = q; p < it + sizeof(it); p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		for (const char *p = rows[i].commit ? rows[i].commit : "-"; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ ';') * 1099511628211ULL;
	}
	return xasprintf("%s %s %zu %016llx", head, l->init_head ? l->init_head : "-", n, h);
}

static int reconcile_git(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n, nc;
	struct vcs_iter_commit *cs;
	char *key, *seen = NULL;
	int rc = rows_get(l->store, &sr, &rows, &n, e);
	if (rc < 0)
		return rc;
	key = git_key(l, rows, n);
	if (key && store_meta_get(l->store, "reconciled_git", &seen, NULL) == 0 && seen &&
	    !strcmp(seen, key)) {
		free(seen);
		free(key);
		log_rows_put(sr);
		return 0;
	}
	free(seen);
	size_t problems_before = l->problems.len;
	bool adopted = false;
	rc = vcs_iter_commits(l->vcs, l->ws.op, l->init_head, 0, &cs, &nc, e);
	if (rc < 0) {
		free(key);
		log_rows_put(sr);
		return rc;
	}
	/* Sorted indexes: one history walk answers for every row, where a
	 * reachability query per row walked the history n times. */
	const char **shas = xmalloc((nc ? nc : 1) * sizeof(*shas));
	int *iters = xmalloc((n ? n : 1) * sizeof(*iters));
	for (size_t k = 0; k < nc; k++)
		shas[k] = cs[k].sha;
	qsort(shas, nc, sizeof(*shas), strp_cmp);
	for (size_t i = 0; i < n; i++)
		iters[i] = rows[i].iter;
	qsort(iters, n, sizeof(*iters), cmp_int);
	for (size_t i = 0; i < n; i++) {
		const struct log_row *r = &rows[i];
		if (!r->commit) {
			/* committed but the database missed it (killed between the two) */
			for (size_t k = 0; k < nc; k++) {
				if (cs[k].iter != r->iter ||
				    (cs[k].direction && r->direction &&
				     strcmp(cs[k].direction, r->direction)))
					continue;
				if (!l->readonly &&
				    store_iter_set_commit(l->store, r->iter, cs[k].sha, e) == 0) {
					vcs_index_reset(l->vcs, kpaths(l), l->nkernel, NULL);
					store_event(l->store, r->iter, "reconcile.adopt", cs[k].sha, NULL);
					adopted = true;
				}
				break;
			}
		} else if (!bsearch(&r->commit, shas, nc, sizeof(*shas), strp_cmp) &&
			   !vcs_commit_in_history(l->vcs, r->commit)) {
			problem(l,
				"row %d cites commit %.12s, which is not in the history of HEAD "
				"(reset or rebased?); repair: run optloop repair to re-link it to the "
				"commit that carries Optloop-Iter: %d, or restore the branch (git "
				"reset --hard %.12s)",
				r->iter, r->commit, r->iter, r->commit);
		}
	}
	for (size_t k = 0; k < nc; k++) {
		if (!bsearch(&cs[k].iter, iters, n, sizeof(*iters), cmp_int))
			problem(l,
				"commit %.12s carries iteration %d, but OPT_LOG.md and the database have "
				"no row for it; repair: run optloop repair to rebuild the row from the "
				"commit's trailers (rows must follow in order; later rows are kept)",
				cs[k].sha, cs[k].iter);
	}
	free(shas);
	free(iters);
	/* Remember a clean answer (an adoption changed the rows: walk again). */
	if (key && !adopted && l->problems.len == problems_before)
		store_meta_set(l->store, "reconciled_git", key, NULL);
	free(key);
	vcs_iter_commits_free(cs, nc);
	log_rows_put(sr);
	return 0;
}

/* OPT_LOG.md has rows the database lacks: a database replaced, emptied or
 * cut short (or rows added by hand).  Re-rendering would drop them, so the
 * workspace is held until repair --rebuild takes them back. */
static void lost_rows_found(struct loop *l, const struct log_row *rows, size_t n,
			    const struct sb *have)
{
	struct optlog_doc d;
	memset(&d, 0, sizeof(d));
	if (optlog_parse(have->buf, have->len, &d, NULL, NULL) == 0) {
		int extra = 0;
		for (size_t i = 0; i < d.nrows; i++) {
			bool known = false;
			for (size_t k = 0; k < n && !known; k++)
				known = rows[k].iter == d.rows[i].iter;
			extra += !known;
		}
		l->lost_rows = extra;
	}
	optlog_doc_release(&d);
	if (l->lost_rows > 0)
		problem(l,
			"OPT_LOG.md holds %d row%s the database does not (optloop.db was replaced, "
			"emptied or cut short, or rows were added by hand); nothing is written until "
			"they are taken back: optloop repair --rebuild rebuilds the database from "
			"OPT_LOG.md and the commits' Optloop trailers",
			l->lost_rows, l->lost_rows == 1 ? "" : "s");
	else
		problem(l, "OPT_LOG.md differs from the database (edited by hand?); the database is "
			   "the record: the next optloop log re-renders OPT_LOG.md from it");
}

int loop_writable(struct loop *l, const char *verb, struct err *e)
{
	if (l->lost_rows > 0)
		return err_set(e, ERR_REFUSED,
			       "%s refused: OPT_LOG.md holds %d row%s that optloop.db does not; "
			       "writing now would drop them.  Rebuild the database first: optloop "
			       "repair --rebuild",
			       verb, l->lost_rows, l->lost_rows == 1 ? "" : "s");
	return 0;
}

static int reconcile_optlog(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	struct sb want = SB_INIT, have = SB_INIT;
	int rc = rows_get(l->store, &sr, &rows, &n, e);
	if (rc < 0)
		return rc;
	struct err re = {0};
	rc = fsutil_read_file(l->ws.optlog_path, &have, &re);
	if (rc < 0 && rc != ERR_NOTFOUND) {
		/* not a file optloop may read (a FIFO, a device, too big): said,
		 * and left alone until it is replaced */
		problem(l,
			"%s; the database keeps every row: move it aside and the next optloop "
			"command renders OPT_LOG.md again",
			re.msg);
		rc = 0;
	} else if (render_optlog(l, rows, n, rc == 0 ? &have : NULL, &want)) {
		rc = 0;
	} else {
		struct optlog_doc d;
		bool behind = rc == ERR_NOTFOUND;
		rc = 0;
		if (!behind) {
			memset(&d, 0, sizeof(d));
			if (optlog_parse(have.buf, have.len, &d, NULL, NULL) == 0 && d.nrows <= n) {
				behind = true;
				for (size_t i = 0; i < d.nrows && behind; i++)
					behind = d.rows[i].iter == rows[i].iter;
			} else if (d.nrows == 0) {
				behind = true;
			}
			optlog_doc_release(&d);
		}
		if (behind && !l->readonly) {
			rc = fsutil_write_atomic(l->ws.optlog_path, want.buf, want.len, e);
			if (rc == 0)
				store_event(l->store, -1, "reconcile.optlog", "re-rendered", NULL);
		} else if (!behind) {
			lost_rows_found(l, rows, n, &have);
		}
	}
	sb_release(&want);
	sb_release(&have);
	log_rows_put(sr);
	return rc;
}

/* A change set aside during an iteration comes back once that iteration is
 * committed; after a crash this finishes the job. */
/* The tree iteration iter measured (its logged run's snapshot), or NULL. */
static char *measured_tree(struct loop *l, int iter)
{
	int run_id = 0;
	char *tree = NULL, *snap = NULL;
	struct store_run r;
	if (store_iter_run(l->store, iter, &run_id, &tree, NULL) == 0 && run_id &&
	    store_run_get(l->store, run_id, &r, NULL) == 0) {
		snap = r.snapshot ? xstrdup(r.snapshot) : NULL;
		store_run_release(&r);
	}
	free(tree);
	return snap;
}

/* Bring back the edit set aside during iter: only the edit, the change from
 * what iter measured to the aside state, onto the kernel as it is now (the
 * best, after a drop or revert).  With intent, the move is recorded first so
 * a bring-back cut off is finished by the next writer.  When the edit
 * overlaps what changed since, nothing is written, the aside is settled
 * with its ref kept, and ERR_REFUSED says how to apply it by hand. */
static int bring_back(struct loop *l, int iter, const char *sha, const char *ref, bool intent,
		      struct err *e)
{
	char *measured = measured_tree(l, iter);
	char merged[VCS_OID_HEX], head[VCS_OID_HEX];
	int id = 0, rc = 0;
	if (measured)
		rc = vcs_aside_merge(l->vcs, measured, sha, kpaths(l), l->nkernel, merged, e);
	else
		snprintf(merged, sizeof(merged), "%s", sha);
	if (rc == ERR_FAIL) {
		store_aside_done(l->store, sha, NULL);
		rc = err_set(e, ERR_REFUSED,
			     "the edit set aside during iteration %d overlaps the change that was "
			     "measured, so optloop did not bring it back onto the kernel; it is kept "
			     "as commit %.12s (ref %s): apply it by hand with git diff %.12s %.12s -- "
			     "<kernel paths> | git apply -3",
			     iter, sha, ref ? ref : "none", measured, sha);
	}
	if (rc == 0 && intent && (rc = vcs_head(l->vcs, head, e)) == 0)
		rc = store_intent_begin(l->store, "back", iter, head, merged, &id, e);
	if (rc == 0)
		rc = vcs_bring_back(l->vcs, merged, ref, kpaths(l), l->nkernel, e);
	fault_point("commit.after_restore");
	if (rc == 0)
		rc = store_aside_done(l->store, sha, e);
	if (rc == 0 && id)
		rc = store_intent_end(l->store, id, e);
	free(measured);
	return rc;
}

static int reconcile_aside(struct loop *l, struct err *e)
{
	int iter = 0, rc;
	char *sha, *ref;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;

	if (store_aside_pending(l->store, &iter, &sha, &ref, NULL) != 0)
		return 0;
	rc = rows_get(l->store, &sr, &rows, &n, e);
	bool committed = false;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (rows[i].iter == iter && rows[i].commit)
			committed = true;
	if (rc == 0 && committed) {
		char work[VCS_OID_HEX], aside[VCS_OID_HEX], head[VCS_OID_HEX];
		vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, NULL, work, NULL);
		vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, sha, aside, NULL);
		vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, "HEAD", head, NULL);
		if (!strcmp(work, aside)) {
			rc = store_aside_done(l->store, sha, e);
		} else if (!strcmp(work, head)) {
			struct err be = {0};
			rc = bring_back(l, iter, sha, ref, false, &be);
			if (rc == 0)
				problem(l, "the change set aside during iteration %d is back in the "
					   "work tree",
					iter);
			else if (rc == ERR_REFUSED) {
				problem(l, "%s", be.msg);
				rc = 0;
			} else if (e)
				*e = be;
		} else {
			problem(l,
				"a change set aside during iteration %d (commit %.12s) is still waiting; "
				"the kernel has other edits now, so optloop left it: bring it back with "
				"git checkout %.12s -- <kernel paths>",
				iter, sha, sha);
		}
	}
	log_rows_put(sr);
	free(sha);
	free(ref);
	return rc;
}

/* An optloop commit killed while git wrote its index leaves the kernel's
 * index entries as they were before it: a drop's or revert's left the
 * dropped kernel staged (the next git commit of the user's would put the
 * dropped change back), a keep's left the kernel before it (the next git
 * commit would undo the kept change).  Once the lock is gone, and only
 * while the index holds one of those two kernels exactly (never what the
 * user staged), the kernel's index entries go back to HEAD's. */
static void reconcile_index(struct loop *l)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	if (vcs_index_locked(l->vcs) || rows_get(l->store, &sr, &rows, &n, NULL) < 0)
		return;
	const struct log_row *last = n ? &rows[n - 1] : NULL;
	char idx[VCS_OID_HEX], row[VCS_OID_HEX], head[VCS_OID_HEX], before[VCS_OID_HEX];
	if (last && last->commit &&
	    vcs_index_kernel_hash(l->vcs, kpaths(l), l->nkernel, idx, NULL) == 0 &&
	    vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, "HEAD", head, NULL) == 0 &&
	    strcmp(idx, head) != 0) {
		bool dropped = (last->status == RS_DROP || last->status == RS_REVERT) &&
			       vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, last->commit, row,
					       NULL) == 0 &&
			       !strcmp(idx, row);
		char *parent = xasprintf("%s~1", last->commit);
		bool stale = !dropped &&
			     vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, parent, before, NULL) == 0 &&
			     !strcmp(idx, before);
		free(parent);
		if ((dropped || stale) && vcs_index_reset(l->vcs, kpaths(l), l->nkernel, NULL) == 0)
			problem(l,
				"git's index held iteration %d's %s (a commit cut off while writing "
				"the index); its kernel entries are back to HEAD, so a git commit "
				"cannot %s",
				last->iter, dropped ? "dropped kernel" : "kernel from before its commit",
				dropped ? "bring the dropped change back" : "undo that commit's change");
	}
	log_rows_put(sr);
}

/* ---- open / close ---------------------------------------------------------------- */

/* What a writer does first: stop what a killed optloop left running, settle
 * its runs, finish or undo its kernel moves, and bring the database, git
 * and OPT_LOG.md into step. */
static int reconcile_writer(struct loop *l, struct err *e)
{
	int rc;
	reconcile_orphans(l);
	if (vcs_index_locked(l->vcs))
		problem(l, "git's lock file .git/index.lock is there: a git command is running, or "
			   "one that was killed left it behind; when no git command is running, "
			   "remove it (rm .git/index.lock, in the repository) so that git status "
			   "and git commit work again");
	/* a write killed before its rename left NAME.tmp.PID beside the file */
	char *docs = xasprintf("%s/docs", l->ws.dir);
	int ntemps = fsutil_clear_atomic_temps(l->ws.dir) + fsutil_clear_atomic_temps(docs);
	free(docs);
	if (ntemps)
		problem(l, "%d temp file%s of a write cut off before its rename %s removed (the "
			   "files themselves are whole: the old or the new)",
			ntemps, ntemps == 1 ? "" : "s", ntemps == 1 ? "was" : "were");
	if ((rc = settle_interrupted_runs(l, e)) < 0 || (rc = reconcile_intents(l, e)) < 0 ||
	    (rc = vcs_clear_temps(l->vcs, kpaths(l), l->nkernel, e)) < 0 ||
	    (rc = reconcile_git(l, e)) < 0 || (rc = reconcile_aside(l, e)) < 0 ||
	    (rc = reconcile_optlog(l, e)) < 0)
		return rc;
	/* finish a revert/drop restore cut off by a crash */
	struct guards_ctx g = loop_guards(l);
	struct err ge = {0};
	if (guards_after_commit(&g, NULL, &ge) < 0)
		problem(l, "%s", ge.msg);
	else
		reconcile_index(l);
	return 0;
}

int loop_open(const char *cwd, const char *op, int flags, struct loop **out, struct err *e)
{
	struct loop *l = xcalloc(1, sizeof(*l));
	char *kernel = NULL;
	int rc;

	sb_init(&l->problems);
	if ((rc = vcs_open(cwd, &l->vcs, e)) < 0)
		goto fail;
	if ((rc = workspace_find(vcs_workdir(l->vcs), op, &l->ws, e)) < 0)
		goto fail;
	l->readonly = flags & LOOP_READONLY;
	rc = store_open(l->ws.db_path,
			l->readonly		       ? STORE_READONLY
			: (flags & LOOP_TRY_WRITE) ? STORE_NOWAIT
						   : 0,
			&l->store, e);
	if ((rc == ERR_BUSY || rc == ERR_READONLY) && (flags & LOOP_TRY_WRITE)) {
		l->readonly = true;
		l->readonly_why = rc == ERR_BUSY ? "another optloop is writing"
						 : "this user may not write the workspace";
		rc = store_open(l->ws.db_path, STORE_READONLY, &l->store, e);
	}
	if (rc < 0)
		goto fail;
	store_meta_get(l->store, "kernel", &kernel, NULL);
	split_lines(kernel, &l->kernel, &l->nkernel);
	free(kernel);
	store_meta_get(l->store, "init_head", &l->init_head, NULL);
	if ((rc = load_contract(l, e)) < 0)
		goto fail;
	if (l->readonly) {
		struct store_intent in;
		if ((rc = reconcile_optlog(l, e)) < 0)
			goto fail;
		if (store_intent_pending(l->store, &in, NULL) == 0) {
			/* a move a live writer is making is not cut off */
			if (!store_writer_busy(l->store))
				problem(l,
					"a %s of the kernel during iteration %d was cut off; the next "
					"optloop command that writes (verify, log, commit, confirm) "
					"finishes it",
					!strcmp(in.kind, "swap") ? "confirm or noise swap" : in.kind,
					in.iter);
			store_intent_release(&in);
		}
	} else if ((rc = reconcile_writer(l, e)) < 0) {
		goto fail;
	}
	*out = l;
	return 0;
fail:
	loop_close(l);
	return rc;
}

int loop_writer(struct loop *l, bool on, struct err *e)
{
	struct store *st;
	int rc;

	if (on != l->readonly)
		return 0; /* already so */
	if (!on && l->verifying)
		return 0; /* the run going keeps it */
	rc = store_open(l->ws.db_path, on ? STORE_NOWAIT : STORE_READONLY, &st, e);
	if (rc < 0)
		return rc; /* ERR_BUSY names the writer; the loop stays as it was */
	store_close(l->store);
	l->store = st;
	l->readonly = !on;
	if (!on)
		return 0;
	/* what another writer did meanwhile, and what a crashed one left */
	char *kernel = NULL;
	free_list(l->kernel, l->nkernel);
	store_meta_get(l->store, "kernel", &kernel, NULL);
	split_lines(kernel, &l->kernel, &l->nkernel);
	free(kernel);
	free(l->init_head);
	l->init_head = NULL;
	store_meta_get(l->store, "init_head", &l->init_head, NULL);
	sb_reset(&l->problems);
	l->lost_rows = 0;
	if ((rc = load_contract(l, e)) == 0)
		rc = reconcile_writer(l, e);
	if (rc < 0) {
		struct err ignored = {0};
		loop_writer(l, false, &ignored);
	}
	return rc;
}

int loop_workspaces(const char *cwd, struct loop_summary **out, size_t *n, struct err *e)
{
	struct vcs *v;
	char **ops = NULL;
	size_t nops = 0;
	*out = NULL;
	*n = 0;
	int rc = vcs_open(cwd, &v, e);
	if (rc < 0)
		return rc;
	rc = workspace_list(vcs_workdir(v), &ops, &nops, e);
	char *repo = xstrdup(vcs_workdir(v));
	vcs_free(v);
	if (rc < 0) {
		free(repo);
		return rc;
	}
	*out = xcalloc(nops ? nops : 1, sizeof(**out));
	for (size_t i = 0; i < nops; i++) {
		struct loop_summary *s = &(*out)[(*n)++];
		struct loop *l;
		struct err le = {0};
		s->op = ops[i];
		s->best_ms = s->base_ms = NAN;
		if (loop_open(repo, ops[i], LOOP_READONLY, &l, &le) < 0) {
			s->error = xstrdup(le.msg);
			continue;
		}
		struct loop_status st;
		if (loop_status(l, &st, &le) == 0) {
			s->state = st.state;
			s->iteration = st.iteration;
			s->has_best = st.has_best;
			s->best_iter = st.best_iter;
			s->best_ms = st.best_ms;
			s->best_unconfirmed = st.best_unconfirmed;
			loop_status_release(&st);
		} else {
			s->error = xstrdup(le.msg);
		}
		struct log_rows *rs;
		if (store_rows_get(l->store, &rs, NULL) == 0) {
			if (rs->n && rs->v[0].status == RS_BASE)
				s->base_ms = rs->v[0].bench_ms;
			log_rows_put(rs);
		}
		loop_close(l);
	}
	free(ops); /* the names now belong to the summaries */
	free(repo);
	return 0;
}

void loop_summaries_release(struct loop_summary *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].op);
		free(v[i].error);
	}
	free(v);
}

void loop_close(struct loop *l)
{
	if (!l)
		return;
	run_free(l->vrun);
	free(l->vcmd);
	alloc_free(l->alloc);
	patset_free(l->patset);
	store_close(l->store);
	vcs_free(l->vcs);
	workspace_release(&l->ws);
	free_list(l->kernel, l->nkernel);
	free_list(l->frozen, l->nfrozen);
	contract_put_shared(l->contract);
	free(l->missing);
	free(l->init_head);
	sb_release(&l->problems);
	free(l);
}

struct alloc *loop_run_alloc(struct loop *l)
{
	struct slurm_runner r;
	const char *v = l->contract ? l->contract->c.runner : NULL;
	if (slurm_runner_parse(v, &r, NULL) < 0 || !r.slurm) {
		slurm_runner_release(&r);
		alloc_free(l->alloc);
		l->alloc = NULL;
		/* back to local: an allocation held for the old Runner is given back */
		if (!l->readonly)
			alloc_release_recorded(l->store, l->ws.dir, "the contract's Runner is local now",
					       NULL, NULL);
		return NULL;
	}
	l->alloc_used = true;
	if (!l->alloc)
		l->alloc = alloc_new(l->store, l->ws.dir, &r);
	else if (strcmp(alloc_runner(l->alloc), r.canon)) {
		alloc_free(l->alloc);
		l->alloc = alloc_new(l->store, l->ws.dir, &r);
	}
	slurm_runner_release(&r);
	return l->alloc;
}

bool loop_allocation_used(const struct loop *l)
{
	return l->alloc_used;
}

bool loop_readonly(const struct loop *l)
{
	return l->readonly;
}

struct vcs *loop_vcs(struct loop *l)
{
	return l->vcs;
}

struct store *loop_store(struct loop *l)
{
	return l->store;
}

const struct workspace *loop_workspace(const struct loop *l)
{
	return &l->ws;
}

const char *loop_repo_dir(const struct loop *l)
{
	return l->ws.repo;
}

const char *loop_dir(const struct loop *l)
{
	return l->ws.dir;
}

const char *loop_contract_path(const struct loop *l)
{
	return l->ws.contract_path;
}

int loop_event(struct loop *l, const char *kind, const char *detail, struct err *e)
{
	return store_event(l->store, -1, kind, detail, e);
}

/* ---- init ---------------------------------------------------------------------- */

/* ---- init: the frozen scope ------------------------------------------------ */

/* ---- status -------------------------------------------------------------------- */

static char **dup_list(char *const *v, size_t n)
{
	char **out = xcalloc(n ? n : 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

void loop_probe_commands(const char **probe, const char **apps)
{
	measure_probe_commands(probe, apps, NULL);
}

int loop_status(struct loop *l, struct loop_status *st, struct err *e)
{
	struct where w;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int rc;

	memset(st, 0, sizeof(*st));
	if (!l->verifying && (rc = load_contract(l, e)) < 0)
		return rc;
	if ((rc = where_now(l, &w, e)) < 0)
		return rc;
	if ((rc = rows_get(l->store, &sr, &rows, &n, e)) < 0)
		return rc;
	st->state = w.state;
	st->iteration = w.iter;
	struct due d;
	st->next = next_step(l, &w, &d);
	st->due = d.due;
	st->suggest = d.suggest;
	st->suggest_why = d.why;
	const struct log_row *best = log_rows_best(rows, n);
	st->has_best = best != NULL;
	if (best) {
		st->best_iter = best->iter;
		st->best_ms = best->bench_ms;
		st->best_vs_best = best->vs_best;
		st->best_unconfirmed = best->unconfirmed != NULL;
	}
	log_rows_put(sr);
	st->op = xstrdup(l->ws.op);
	st->workspace = xstrdup(l->ws.dir);
	st->repo = xstrdup(l->ws.repo);
	st->kernel = dup_list(l->kernel, l->nkernel);
	st->nkernel = l->nkernel;
	st->frozen = dup_list(l->frozen, l->nfrozen);
	st->nfrozen = l->nfrozen;
	st->missing = l->missing ? xstrdup(l->missing) : NULL;
	st->problems = l->problems.len ? xstrdup(l->problems.buf) : NULL;
	st->telescoped = w.telescoped;
	st->readonly = l->readonly;
	st->readonly_why = l->readonly_why;
	st->last_run = w.run_id;
	st->attempt_run = w.attempt_run;
	struct guards_ctx g = loop_guards(l);
	st->stall = w.stall >= 0 ? w.stall : guards_stall(&g);
	st->stall_limit = GUARDS_STALL_AFTER;
	st->attempt = attempt_words(l, w.attempt_run);
	const char *pc, *pa;
	measure_probe_commands(&pc, &pa, &st->probe_env);
	st->validation = l->contract->c.v[CF_VALIDATION] ? xstrdup(l->contract->c.v[CF_VALIDATION])
							  : NULL;
	st->probe = xstrdup(pc);
	st->probe_apps = xstrdup(pa);
	return 0;
}

void loop_status_release(struct loop_status *st)
{
	free(st->next);
	free(st->suggest_why);
	free(st->op);
	free(st->workspace);
	free(st->repo);
	free_list(st->kernel, st->nkernel);
	free_list(st->frozen, st->nfrozen);
	free(st->missing);
	free(st->problems);
	free(st->attempt);
	free(st->validation);
	free(st->probe);
	free(st->probe_apps);
	memset(st, 0, sizeof(*st));
}

/* ---- verify -------------------------------------------------------------------- */

void loop_measurement_release(struct loop_measurement *m)
{
	free(m->command);
	free(m->log_path);
	free(m->tree);
	free(m->result_json);
	memset(m, 0, sizeof(*m));
}

static void shell_quote(struct sb *s, const char *arg)
{
	sb_addc(s, '\'');
	for (const char *p = arg; *p; p++) {
		if (*p == '\'')
			sb_adds(s, "'\\''");
		else
			sb_addc(s, *p);
	}
	sb_addc(s, '\'');
}

static int refuse_unless(struct loop *l, const char *verb, const struct where *w, struct err *e)
{
	switch (w->state) {
	case ST_NO_CONTRACT:
		return err_set(e, ERR_REFUSED,
			       "%s refused: the task contract is incomplete: %s (only contract "
			       "editing is allowed until it is complete)",
			       verb, l->missing ? l->missing : "fields missing");
	case ST_MEASURED:
		return err_set(e, ERR_REFUSED,
			       "%s refused: iteration %d is measured but OPT_LOG.md has no row for it "
			       "yet (run optloop log)",
			       verb, w->iter);
	case ST_LOGGED:
		return err_set(e, ERR_REFUSED,
			       "%s refused: iteration %d is logged but not committed (run optloop "
			       "commit)",
			       verb, w->iter);
	case ST_VERIFYING:
		return err_set(e, ERR_REFUSED,
			       "%s refused: the verify run of iteration %d is still going (wait for "
			       "it or cancel it)",
			       verb, w->iter);
	default:
		return 0;
	}
}

/* An attempt's raw output stays in trace/ as evidence: it moves from
 * iter-N.log (which the next run of the iteration writes) to
 * iter-N.attempt-<run>.log, and the store follows it. */
static int keep_attempt_log(struct loop *l, int run_id, struct err *e)
{
	struct store_run r;
	int rc = store_run_get(l->store, run_id, &r, e);
	if (rc < 0)
		return rc;
	char *to = xasprintf("%s/iter-%d.attempt-%d.log", l->ws.trace_dir, r.iter, r.id);
	if (r.log_path && strcmp(r.log_path, to) && fsutil_exists(r.log_path)) {
		if (rename(r.log_path, to) < 0)
			rc = err_set(e, ERR_IO, "cannot keep the attempt's raw output %s as %s: %s",
				     r.log_path, to, strerror(errno));
		else {
			free(r.log_path);
			r.log_path = to;
			to = NULL;
			rc = store_run_update(l->store, &r, e);
		}
	}
	free(to);
	store_run_release(&r);
	return rc;
}

/* A kernel change committed by hand since the last row: HEAD's kernel is not
 * the one optloop left (the last row's, or the best's after a drop or
 * revert).  Measured now, it would count as no change, and a drop's restore
 * would quietly undo it: refused, with the two ways on. */
static int hand_commit_check(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int rc = rows_get(l->store, &sr, &rows, &n, e);
	if (rc < 0)
		return rc;
	const struct log_row *last = n ? &rows[n - 1] : NULL, *best = log_rows_best(rows, n);
	bool back = last && (last->status == RS_DROP || last->status == RS_REVERT);
	const char *expect = !last || !last->commit ? NULL : back ? (best ? best->commit : NULL)
								 : last->commit;
	char want[VCS_OID_HEX], head[VCS_OID_HEX];
	if (expect && vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, expect, want, NULL) == 0 &&
	    vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, "HEAD", head, NULL) == 0 &&
	    strcmp(want, head))
		rc = err_set(e, ERR_REFUSED,
			     "verify refused: a commit made since iteration %d changed the kernel "
			     "(HEAD's kernel is not the one optloop left: %s commit %.12s), so a verify "
			     "would see no change and a drop would quietly undo it; make it this "
			     "iteration's change (git reset --soft to optloop's last commit: the "
			     "change stays in the tree, uncommitted, then optloop verify), or undo "
			     "it (git revert)",
			     last->iter, back ? "the best's" : "that iteration's", expect);
	log_rows_put(sr);
	return rc;
}

/* A change outside the kernel and the frozen scope would be measured with
 * the kernel, but never committed, and left in the tree by a drop: shown
 * and refused, or made part of the kernel with the user's consent
 * (--include PATH, for each of them). */
static int outside_check(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	size_t nkeep = l->nkernel + l->nfrozen + (o ? o->ninclude : 0);
	const char **keep = xcalloc(nkeep + 1, sizeof(*keep));
	size_t k = 0;
	for (size_t i = 0; i < l->nkernel; i++)
		keep[k++] = l->kernel[i];
	for (size_t i = 0; i < l->nfrozen; i++)
		keep[k++] = l->frozen[i];
	for (size_t i = 0; o && i < o->ninclude; i++)
		keep[k++] = o->include[i];
	struct vcs_change *ch = NULL;
	size_t n = 0;
	int rc = vcs_changes_outside(l->vcs, keep, k, &ch, &n, e);
	free(keep);
	if (rc == 0 && n) {
		struct sb list = SB_INIT, flags = SB_INIT;
		for (size_t i = 0; i < n; i++) {
			sb_addf(&list, "%s%s (%s)", i ? ", " : "", ch[i].path, ch[i].what);
			sb_addf(&flags, " --include %s", ch[i].path);
		}
		rc = err_set(e, ERR_REFUSED,
			     "verify refused: %zu file%s outside the kernel and the frozen scope "
			     "changed: %s. The run would measure %s with the kernel, but %s no "
			     "kernel change: never committed, and left in the tree by a drop. Undo "
			     "%s (git checkout -- PATH, or remove a new file); git-ignore %s if %s "
			     "no code the run uses (notes, scratch: .git/info/exclude); or make "
			     "%s part of the kernel: optloop verify%s",
			     n, n == 1 ? "" : "s", list.buf, n == 1 ? "it" : "them",
			     n == 1 ? "it is" : "they are", n == 1 ? "it" : "them",
			     n == 1 ? "it" : "them", n == 1 ? "it is" : "they are",
			     n == 1 ? "it" : "them", flags.buf);
		sb_release(&list);
		sb_release(&flags);
	}
	vcs_changes_free(ch, n);
	return rc;
}

/* The user's --include paths: not frozen, a path of the repository, and
 * as the best has it in HEAD (a drop puts back the best's version: one
 * committed after the best would be lost). */
static int include_check(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	if (!o || !o->ninclude)
		return 0;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int rc = rows_get(l->store, &sr, &rows, &n, e);
	if (rc < 0)
		return rc;
	const struct log_row *best = log_rows_best(rows, n);
	for (size_t i = 0; rc == 0 && i < o->ninclude; i++) {
		const char *p = o->include[i];
		for (size_t j = 0; rc == 0 && j < l->nfrozen; j++)
			if (fsutil_path_under(p, l->frozen[j]))
				rc = err_set(e, ERR_REFUSED,
					     "verify refused: --include %s is frozen (it is or lies in "
					     "%s): a change there is undone before any run, never "
					     "measured",
					     p, l->frozen[j]);
		if (rc < 0)
			break;
		if (!*p || strstr(p, "..") || p[0] == '/') {
			rc = err_set(e, ERR_USAGE,
				     "--include %s: give a path of the repository, relative to its "
				     "root",
				     p);
			break;
		}
		const char *one[] = {p};
		char at_best[VCS_OID_HEX], at_head[VCS_OID_HEX];
		if (best && best->commit &&
		    vcs_kernel_hash(l->vcs, one, 1, best->commit, at_best, NULL) == 0 &&
		    vcs_kernel_hash(l->vcs, one, 1, "HEAD", at_head, NULL) == 0 &&
		    strcmp(at_best, at_head) != 0)
			rc = err_set(e, ERR_REFUSED,
				     "verify refused: --include %s: a commit after the best (iteration "
				     "%d, %.12s) changed it, so a drop would put back the best's "
				     "version and lose that commit's; include it in a workspace made "
				     "after that commit, or undo this iteration's edit to it",
				     p, best->iter, best->commit);
	}
	log_rows_put(sr);
	return rc;
}

/* The --include paths join the kernel (the workspace's kernel list), said
 * in an event. */
static int include_in_kernel(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	if (!o || !o->ninclude)
		return 0;
	struct sb list = SB_INIT, added = SB_INIT;
	for (size_t i = 0; i < l->nkernel; i++)
		sb_addf(&list, "%s%s", i ? "\n" : "", l->kernel[i]);
	for (size_t i = 0; i < o->ninclude; i++) {
		bool have = false;
		for (size_t j = 0; j < l->nkernel; j++)
			have |= fsutil_path_under(o->include[i], l->kernel[j]);
		if (have)
			continue;
		sb_addf(&list, "%s%s", list.len ? "\n" : "", o->include[i]);
		sb_addf(&added, "%s%s", added.len ? ", " : "", o->include[i]);
	}
	int rc = 0;
	if (added.len) {
		rc = store_begin(l->store, e);
		if (rc == 0)
			rc = store_meta_set(l->store, "kernel", list.buf, e);
		if (rc == 0) {
			char *d = xasprintf("made part of the kernel by --include: %s", added.buf);
			rc = store_event(l->store, -1, "kernel.include", d, e);
			free(d);
		}
		if (rc == 0)
			rc = store_commit(l->store, e);
		else
			store_rollback(l->store);
		if (rc == 0) {
			free_list(l->kernel, l->nkernel);
			split_lines(list.buf, &l->kernel, &l->nkernel);
		}
	}
	sb_release(&list);
	sb_release(&added);
	return rc;
}

int loop_verify_begin(struct loop *l, const struct loop_verify_opts *o, struct err *e)
{
	struct where w;
	struct sb cmd = SB_INIT;
	char head[VCS_OID_HEX] = "";
	char *log_path = NULL;
	const struct patset *ps;
	int rc;

	if (loop_writable(l, "verify", e) < 0)
		return ERR_REFUSED;

	if (l->readonly)
		return err_set(e, ERR_BUSY,
			       "verify refused: this optloop opened the workspace read-only "
			       "(another one is writing to it)");
	if ((rc = load_contract(l, e)) < 0 || (rc = where_now(l, &w, e)) < 0)
		return rc;
	if ((rc = refuse_unless(l, "verify", &w, e)) < 0)
		return rc;
	if (w.state == ST_NEED_BASELINE) {
		if (o && o->gate_k)
			return err_set(e, ERR_REFUSED,
				       "verify refused: the baseline (iteration 0) needs the full "
				       "gate; run optloop verify without --gate-k");
		if (w.kernel_changed)
			return err_set(e, ERR_REFUSED,
				       "verify refused: the baseline must be measured on the "
				       "unmodified kernel, but the kernel differs from HEAD (commit "
				       "or stash the change first, then run optloop verify)");
	}
	/* the frozen scope (hashed at the baseline), then stall and stop */
	struct guards_ctx g = loop_guards(l);
	int pending;
	if (guards_restore_pending(&g, &pending))
		return err_set(e, ERR_REFUSED,
			       "verify refused: iteration %d's drop or revert is committed but the "
			       "restore of the best kernel after it is not%s, so the tree is not "
			       "the next iteration's change; %s, then run optloop status (it "
			       "commits the restore)",
			       pending, vcs_index_locked(l->vcs) ? " (git's index is locked)" : "",
			       vcs_index_locked(l->vcs)
				       ? "when no git command is running, remove .git/index.lock"
				       : "see optloop status for what stopped it");
	if ((rc = hand_commit_check(l, e)) < 0 || (rc = guards_verify_check(&g, e)) < 0 ||
	    (rc = include_check(l, o, e)) < 0 || (rc = outside_check(l, o, e)) < 0 ||
	    (rc = include_in_kernel(l, o, e)) < 0)
		return rc;
	/* {best} in the validation command: the harness times the best's
	 * commit beside the work tree in one process (assets/bench/
	 * optloop_ab.py), and the verdict reads that pair; before a best
	 * exists (the baseline) the commit is HEAD, the tree itself */
	const char *val = l->contract->c.v[CF_VALIDATION];
	l->vpaired = strstr(val, "{best}") != NULL;
	if (l->vpaired) {
		struct measure_best b;
		char sha[VCS_OID_HEX] = "";
		if ((rc = measure_best(l->store, &b, e)) == 0 && b.have && !b.commit)
			rc = err_set(e, ERR_REFUSED,
				     "verify refused: the validation command times the best at "
				     "{best}, and the best (iteration %d) is not committed yet (run "
				     "optloop commit)",
				     b.iter);
		if (rc == 0 && !b.have)
			rc = vcs_head(l->vcs, sha, e);
		if (rc == 0) {
			char *v = loop_with_best(val, b.have ? b.commit : sha);
			sb_adds(&cmd, v);
			free(v);
		}
		measure_best_release(&b);
		if (rc < 0)
			goto out;
	} else {
		sb_adds(&cmd, val);
	}
	if (o && o->gate_k) {
		sb_adds(&cmd, " --gate-k ");
		shell_quote(&cmd, o->gate_k);
	}
	if (o && o->base) {
		sb_adds(&cmd, " --base ");
		shell_quote(&cmd, o->base);
	}
	if (o && o->profile)
		sb_adds(&cmd, " --profile");
	if (w.attempt_run && (rc = keep_attempt_log(l, w.attempt_run, e)) < 0)
		goto out;
	if ((rc = loop_patset(l, &ps, e)) < 0)
		goto out;
	vcs_head(l->vcs, head, NULL);
	log_path = xasprintf("%s/iter-%d.log", l->ws.trace_dir, w.iter);
	struct run_spec spec = {
		.kind = "verify",
		.iter = w.iter,
		.command = cmd.buf,
		.cwd = l->ws.repo,
		.log_path = log_path,
		.trace_dir = l->ws.trace_dir,
		.timeout_s = o ? o->timeout_s : 0,
		.scope = o && o->gate_k ? SCOPE_SUBSET : SCOPE_FULL,
		.head = head[0] ? head : NULL,
		.start_event = "verify.start",
		.alloc = loop_run_alloc(l),
		.ps = ps,
		.output = o ? o->output : NULL,
		.event = o ? o->event : NULL,
		.ctx = o ? o->ctx : NULL,
	};
	run_free(l->vrun);
	l->vrun = NULL;
	if ((rc = run_start(l->store, &spec, &l->vrun, e)) == 0) {
		l->verifying = true;
		free(l->vcmd);
		l->vcmd = xstrdup(cmd.buf);
	}
out:
	free(log_path);
	sb_release(&cmd);
	return rc;
}

int loop_verify_fds(const struct loop *l, int fds[2])
{
	return l->verifying ? run_fds(l->vrun, fds) : 0;
}

int loop_verify_pump(struct loop *l, int timeout_ms, struct err *e)
{
	(void)e; /* a raw-log write failure stops the run; loop_verify_end reports it */
	return l->verifying ? run_pump(l->vrun, timeout_ms) : 0;
}

void loop_verify_cancel(struct loop *l)
{
	if (l->verifying)
		run_cancel(l->vrun);
}

const char *loop_verify_command(const struct loop *l)
{
	return l->vcmd;
}

static void fill_measurement(const struct store_run *r, struct loop_measurement *m)
{
	memset(m, 0, sizeof(*m));
	m->iter = r->iter;
	m->run_id = r->id;
	m->gate = r->gate;
	m->scope = r->scope;
	m->bench_ms = r->bench_ms;
	m->vs_best = r->vs_best;
	m->exit_status = r->exit_status;
	m->timed_out = r->timed_out;
	m->cancelled = r->cancelled;
	m->no_change = r->no_change;
	m->attempt = run_is_attempt(r->iter, r->gate, r->scope, r->bench_ms);
	m->seconds = r->t_end > r->t_start ? r->t_end - r->t_start : 0;
	m->command = r->command ? xstrdup(r->command) : NULL;
	m->log_path = r->log_path ? xstrdup(r->log_path) : NULL;
	m->tree = r->tree ? xstrdup(r->tree) : NULL;
	m->result_json = r->result_json ? xstrdup(r->result_json) : NULL;
}

/* What only the loop knows of a verify run, filled before it is recorded:
 * the kernel tree it measured, the snapshot of it, whether it changed
 * anything (vs best is the verdict's: verify_in_tx). */
static int verify_fill(void *ctx, struct store_run *r, const struct parse_result *res,
		       struct err *e)
{
	struct loop *l = ctx;
	char work[VCS_OID_HEX], head[VCS_OID_HEX], snap[VCS_OID_HEX];
	(void)res;
	r->vs_best = NAN; /* the verdict's, set inside the run's transaction */
	int rc = vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, NULL, work, e);
	if (rc == 0)
		rc = vcs_kernel_hash(l->vcs, kpaths(l), l->nkernel, "HEAD", head, e);
	if (rc == 0)
		rc = vcs_snapshot(l->vcs, kpaths(l), l->nkernel, snap, e);
	if (rc == 0) {
		free(r->tree);
		r->tree = xstrdup(work);
		free(r->snapshot);
		r->snapshot = xstrdup(snap);
		r->no_change = !strcmp(work, head);
	}
	return rc;
}

/* Inside the run's transaction: its verdict against the best, and with it
 * the run's one "vs best" figure, so no reader ever sees another. */
static int verify_in_tx(void *ctx, struct store *st, struct store_run *r, struct err *e)
{
	struct loop *l = ctx;
	struct stats_cmp c;
	/* a pair in one process: the run is its own session, role "pair" */
	if (l->vpaired && r->gate != GATE_FAIL) {
		int rc = store_session_put(st, r->id, r->id, "pair", e);
		if (rc < 0)
			return rc;
	}
	if (measure_judge_run(st, r->id, l->contract->c.threshold, &c, NULL) == 0) {
		r->vs_best = c.gain;
		stats_cmp_release(&c);
		if (isfinite(r->vs_best)) {
			int rc = store_run_update(st, r, e);
			if (rc < 0)
				return rc;
		}
	}
	return store_event(st, r->iter, "verify.end", gate_verdict_name(r->gate), e);
}

int loop_verify_end(struct loop *l, struct loop_measurement *m, struct err *e)
{
	if (!l->verifying)
		return err_set(e, ERR_REFUSED, "no verify run is going");
	struct run_end_hooks h = {.fill = verify_fill, .in_tx = verify_in_tx, .ctx = l};
	int rc = run_end(l->vrun, &h, e);
	l->verifying = false;
	struct store_run *r = run_record(l->vrun);
	if (rc < 0)
		return rc;
	/* the trap lints over the measured diff, at verify: evidence beside the
	 * verdict, not a gate (log asks for the acknowledgement) */
	struct guards_ctx g = loop_guards(l);
	struct lint_findings lf = {0};
	int nlints = 0;
	if (!run_is_attempt(r->iter, r->gate, r->scope, r->bench_ms) &&
	    guards_lint(&g, r->iter, &lf, NULL) == 0)
		nlints = (int)lf.n;
	lint_findings_release(&lf);
	if (m) {
		fill_measurement(r, m);
		m->nlints = nlints;
	}
	return 0;
}

int loop_verify(struct loop *l, const struct loop_verify_opts *o, struct loop_measurement *m,
		struct err *e)
{
	int rc = loop_verify_begin(l, o, e);
	if (rc < 0)
		return rc;
	while ((rc = loop_verify_pump(l, -1, NULL)) > 0)
		;
	return loop_verify_end(l, m, e);
}

int loop_measurement(struct loop *l, struct loop_measurement *m, struct err *e)
{
	struct where w;
	struct store_run r;
	int rc = where_now(l, &w, e);
	if (rc < 0)
		return rc;
	if (w.state != ST_MEASURED && w.state != ST_LOGGED)
		return err_set(e, ERR_NOTFOUND, "iteration %d has no measurement yet", w.iter);
	if (w.state == ST_LOGGED)
		rc = w.run_id ? store_run_get(l->store, w.run_id, &r, e)
			      : err_set(e, ERR_NOTFOUND, "no run");
	else
		rc = store_run_last(l->store, w.iter, "verify", &r, e);
	if (rc < 0)
		return rc;
	fill_measurement(&r, m);
	/* the iteration's one "vs best" figure, the one its row carries: the
	 * confirm's when one ran (measure_win) */
	struct measure_win win;
	if (measure_win(l->store, w.iter, r.id, &win, NULL) == 0) {
		if (isfinite(win.vs_best))
			m->vs_best = win.vs_best;
		measure_win_release(&win);
	}
	store_run_release(&r);
	return 0;
}

/* ---- set aside (telescoping) ------------------------------------------------------- */

int loop_set_aside(struct loop *l, struct err *e)
{
	struct where w;
	struct store_run r;
	char sha[VCS_OID_HEX];
	int rc;

	if (loop_writable(l, "set-aside", e) < 0)
		return ERR_REFUSED;

	if (l->readonly)
		return err_set(e, ERR_BUSY, "set-aside refused: the workspace is open read-only");
	if ((rc = where_now(l, &w, e)) < 0)
		return rc;
	if (!(w.state == ST_MEASURED || w.state == ST_LOGGED) || !w.telescoped)
		return err_set(e, ERR_REFUSED,
			       "nothing to set aside: the kernel is as it was measured");
	rc = w.state == ST_LOGGED && w.run_id ? store_run_get(l->store, w.run_id, &r, e)
					       : store_run_last(l->store, w.iter, "verify", &r, e);
	if (rc < 0)
		return rc;
	if (!r.snapshot) {
		store_run_release(&r);
		return err_set(e, ERR_REFUSED,
			       "set-aside refused: iteration %d's run has no snapshot of the measured "
			       "kernel; undo the extra change by hand",
			       w.iter);
	}
	char *msg = xasprintf("optloop(%s): change set aside during iteration %d\n\nThe kernel "
			      "changed after iteration %d was measured; optloop keeps the change "
			      "here and brings it back after the iteration's commit.\n",
			      l->ws.op, w.iter, w.iter);
	char *ref = xasprintf("%s/%s/%d", ASIDE_REF, l->ws.op, w.iter);
	/* the change is saved and the move recorded before any file is written:
	 * a set-aside cut off is finished by the next writer (reconcile_intents) */
	int intent = 0;
	rc = vcs_aside_save(l->vcs, kpaths(l), l->nkernel, ref, msg, sha, e);
	if (rc == 0) {
		rc = store_begin(l->store, e);
		if (rc == 0)
			rc = store_aside_add(l->store, w.iter, sha, ref, e);
		if (rc == 0)
			rc = store_intent_begin(l->store, "aside", w.iter, sha, r.snapshot, &intent, e);
		if (rc == 0)
			rc = store_event(l->store, w.iter, "aside", sha, e);
		if (rc == 0)
			rc = store_commit(l->store, e);
		else
			store_rollback(l->store);
	}
	if (rc == 0)
		rc = vcs_restore(l->vcs, r.snapshot, kpaths(l), l->nkernel, e);
	if (rc == 0)
		rc = store_intent_end(l->store, intent, e);
	free(msg);
	free(ref);
	store_run_release(&r);
	return rc;
}

/* ---- log --------------------------------------------------------------------------- */

static char *one_line(const char *s)
{
	char *t = xstrdup(s);
	for (char *p = t; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	struct sb b = SB_INIT;
	sb_adds(&b, t);
	sb_trim(&b);
	free(t);
	return sb_detach(&b);
}

/* Text a row stores goes into OPT_LOG.md, the commit message and the
 * database, and from there onto every terminal that shows them: ESC would
 * start an escape sequence there.  Tab, CR and LF are folded into spaces
 * (one_line); any other C0 control, DEL, or C1 control in its UTF-8
 * spelling (U+0080..U+009F; U+009B is a CSI), a bidirectional control and
 * bytes that are not UTF-8 are refused (ERR_USAGE). */
static int row_text_check(const char *opt, const char *s, struct err *e)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; s && p[i]; i++) {
		unsigned c = p[i];
		size_t n = vis_utf8_len(p + i);
		if (n == 0)
			return err_set(e, ERR_USAGE,
				       "%s is not valid UTF-8 (byte 0x%02x at byte %zu); give the text in "
				       "UTF-8",
				       opt, c, i + 1);
		if (vis_is_bidi(p + i, n))
			return err_set(e, ERR_USAGE,
				       "%s holds a bidirectional control character (at byte %zu), which "
				       "makes a terminal show the text in another order than it is "
				       "stored; give plain text",
				       opt, i + 1);
		if (n > 1 && !(c == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)) {
			i += n - 1;
			continue;
		}
		bool c1 = c == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f;
		if (!c1 && ((c >= 0x20 && c != 0x7f) || c == '\t' || c == '\n' || c == '\r'))
			continue;
		char what[32];
		if (c1)
			snprintf(what, sizeof(what), "U+%04X", p[i + 1]);
		else if (c == 0x1b)
			snprintf(what, sizeof(what), "ESC");
		else if (c == 0x7f)
			snprintf(what, sizeof(what), "DEL");
		else
			snprintf(what, sizeof(what), "0x%02x", c);
		return err_set(e, ERR_USAGE,
			       "%s holds a control character (%s, at byte %zu), which would be "
			       "written as it is into OPT_LOG.md and the commit message, where a "
			       "terminal acts on it; give plain text",
			       opt, what, i + 1);
	}
	return 0;
}

static int telescoped_refusal(const char *verb, int iter, struct err *e)
{
	return err_set(e, ERR_REFUSED,
		       "%s refused: the kernel changed after iteration %d was measured (a second "
		       "change telescoped into this iteration); undo it, or run optloop %s "
		       "--set-aside to keep it aside until the commit (nothing is lost: it "
		       "comes back as the next iteration's change)",
		       verb, iter, verb);
}

/* keep needs a passing gate with a bench number, and a win beyond noise
 * (measure_win) or an explicit, recorded --unconfirmed reason. */
static int keep_check(struct loop *l, const struct store_run *r, const struct measure_win *win,
		      const struct loop_log_opts *o, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int best = -1;
	if (rows_get(l->store, &sr, &rows, &n, NULL) == 0) {
		const struct log_row *b = log_rows_best(rows, n);
		best = b ? b->iter : -1;
		log_rows_put(sr);
	}
	char restore[64] = "";
	if (best >= 0)
		snprintf(restore, sizeof(restore), " (iteration %d)", best);
	enum rules_keep k = rules_keep(r->gate, r->bench_ms, win->win, win->verdict,
				       o->unconfirmed && *o->unconfirmed);
	if (k == RULES_KEEP_NOT_MEASURED)
		return err_set(e, ERR_REFUSED,
			       "keep refused: iteration %d's gate is %s%s; a kept row needs a "
			       "passing gate and a bench number. Log it as drop (or revert): the "
			       "row records what happened and the kernel goes back to the best%s",
			       r->iter, gate_verdict_name(r->gate),
			       r->gate == GATE_PASS ? " but it has no bench number" : "", restore);
	if (rules_keep_allowed(k))
		return 0;
	bool worth = k == RULES_KEEP_CONFIRM;
	return err_set(e, ERR_REFUSED,
		       "keep refused: iteration %d is not a win beyond noise: %s. %s; or keep it "
		       "anyway with --unconfirmed \"why\" (recorded, and shown as unconfirmed "
		       "everywhere)",
		       r->iter, win->why ? win->why : "no verdict",
		       worth ? "Run optloop confirm (best and candidate interleaved in one "
			       "session) and log again, or log it as revert/drop"
			     : "Log it as revert or drop: the kernel goes back to the best");
}

int loop_log(struct loop *l, const struct loop_log_opts *o, struct log_row *out, struct err *e)
{
	struct where w;
	struct store_run r;
	struct log_row row;
	struct sb gate = SB_INIT;
	int rc;

	if (loop_writable(l, "log", e) < 0)
		return ERR_REFUSED;

	if (l->readonly)
		return err_set(e, ERR_BUSY, "log refused: the workspace is open read-only");
	if ((rc = load_contract(l, e)) < 0 || (rc = where_now(l, &w, e)) < 0)
		return rc;
	switch (w.state) {
	case ST_MEASURED:
		break;
	case ST_LOGGED:
		return err_set(e, ERR_REFUSED,
			       "log refused: iteration %d is already logged; commit it (run optloop "
			       "commit)",
			       w.iter);
	case ST_NO_CONTRACT:
	case ST_VERIFYING:
		return refuse_unless(l, "log", &w, e);
	case ST_NEED_BASELINE:
		if (!w.attempt_run)
			return err_set(e, ERR_REFUSED,
				       "log refused: the baseline has not been measured yet (run "
				       "optloop verify on the unmodified kernel)");
		/* fall through */
	default: {
		char *why = attempt_words(l, w.attempt_run);
		if (why) {
			rc = err_set(e, ERR_REFUSED,
				     "log refused: the last run of iteration %d was an attempt, not "
				     "an iteration: %s; an attempt gets no row (fix what stopped it, "
				     "then run optloop verify again)",
				     w.iter, why);
			free(why);
			return rc;
		}
		return err_set(e, ERR_REFUSED,
			       "log refused: iteration %d has not been measured yet (run optloop "
			       "verify)",
			       w.iter);
	}
	}
	if (w.telescoped)
		return telescoped_refusal("log", w.iter, e);
	if (!o->direction || !o->direction[strspn(o->direction, " \t\r\n")])
		return err_set(e, ERR_USAGE, "log needs --direction TEXT (one line: what changed)%s",
			       o->direction && *o->direction ? "; a blank one says nothing" : "");
	if ((rc = row_text_check("--direction", o->direction, e)) < 0 ||
	    (rc = row_text_check("--axis", o->axis, e)) < 0 ||
	    (rc = row_text_check("--unconfirmed", o->unconfirmed, e)) < 0)
		return rc;
	enum row_status status = o->status;
	if (w.iter == 0) {
		if (status != RS_NONE && status != RS_BASE)
			return err_set(e, ERR_USAGE,
				       "iteration 0 is the baseline: its status is base (leave out "
				       "--status)");
		status = RS_BASE;
	} else if (status == RS_NONE) {
		return err_set(e, ERR_USAGE,
			       "log needs --status keep|revert|drop|floor for iteration %d", w.iter);
	} else if (status == RS_BASE) {
		return err_set(e, ERR_USAGE,
			       "status base is only for the baseline (iteration 0); use "
			       "keep|revert|drop|floor");
	}
	struct guards_ctx g = loop_guards(l);
	if (o->commit_next && ((rc = vcs_commit_check(l->vcs, e)) < 0 ||
			       (rc = guards_frozen_check(&g, "log --commit", e)) < 0))
		return rc;
	if (o->unconfirmed && status != RS_KEEP)
		return err_set(e, ERR_USAGE,
			       "--unconfirmed is the reason for keeping a row without a win beyond "
			       "noise; it goes with --status keep only");
	if ((rc = store_run_last(l->store, w.iter, "verify", &r, e)) < 0)
		return rc;
	struct measure_win win;
	if ((rc = measure_win(l->store, w.iter, r.id, &win, e)) < 0) {
		store_run_release(&r);
		return rc;
	}
	if (status == RS_KEEP && (rc = keep_check(l, &r, &win, o, e)) < 0)
		goto refused;
	/* lint the measured diff; findings need an acknowledgement (recorded) */
	if ((rc = guards_log_check(&g, w.iter, o->ack_lints, e)) < 0)
		goto refused;
	memset(&row, 0, sizeof(row));
	row.iter = w.iter;
	row.direction = one_line(o->direction);
	optlog_fmt_gate(r.gate, r.scope, &gate);
	row.gate = sb_detach(&gate);
	row.gate_v = r.gate;
	row.scope = r.scope;
	row.bench_ms = r.bench_ms;
	/* one number per comparison: the confirm's when one ran, else the verify's */
	row.vs_best = isfinite(win.vs_best) ? win.vs_best : r.vs_best;
	row.status = status;
	row.axis = o->axis ? one_line(o->axis) : NULL;
	if (status == RS_KEEP && !win.win)
		row.unconfirmed = one_line(o->unconfirmed);
	measure_win_release(&win);

	fault_point("log.begin");
	rc = store_begin(l->store, e);
	if (rc == 0)
		rc = store_iter_add(l->store, &row, r.id, r.tree, e);
	if (rc == 0)
		rc = store_event(l->store, w.iter, "log", row.direction, e);
	if (rc == 0)
		rc = store_commit(l->store, e);
	else
		store_rollback(l->store);
	store_run_release(&r);
	if (rc < 0) {
		log_row_release(&row);
		return rc;
	}
	fault_point("log.after_db");
	rc = write_optlog(l, e);
	fault_point("log.after_render");
	if (rc == 0 && out)
		*out = row;
	else
		log_row_release(&row);
	sb_release(&gate);
	return rc;
refused:
	measure_win_release(&win);
	store_run_release(&r);
	return rc;
}

/* ---- commit ------------------------------------------------------------------------ */

static void add_trailer(struct sb *m, const char *key, const char *val)
{
	sb_addf(m, "Optloop-%s: ", key);
	for (const char *p = val; *p; p++)
		sb_addc(m, *p == '\n' ? ' ' : *p);
	sb_addc(m, '\n');
}

static char *commit_message(const char *op, const struct log_row *r)
{
	struct sb m = SB_INIT, bench = SB_INIT, vs = SB_INIT, gate = SB_INIT;
	char iter[16];

	optlog_fmt_bench(r->bench_ms, &bench);
	optlog_fmt_vs_best(r->vs_best, &vs);
	optlog_fmt_gate(r->gate_v, r->scope, &gate);
	snprintf(iter, sizeof(iter), "%d", r->iter);
	sb_addf(&m, "optloop(%s): iter %d %s%s: %.60s\n\n", op, r->iter, row_status_name(r->status),
		r->status == RS_KEEP && r->unconfirmed ? " (unconfirmed)" : "", r->direction);
	sb_addf(&m, "Gate %s, bench %s ms, vs best %s.\n\n", gate.buf, bench.buf, vs.buf);
	add_trailer(&m, "Op", op);
	add_trailer(&m, "Iter", iter);
	add_trailer(&m, "Direction", r->direction);
	add_trailer(&m, "Gate", gate.buf);
	add_trailer(&m, "Bench", bench.buf);
	add_trailer(&m, "Vs-Best", vs.buf);
	add_trailer(&m, "Status", row_status_name(r->status));
	if (r->status == RS_KEEP && r->unconfirmed)
		add_trailer(&m, "Unconfirmed", r->unconfirmed);
	if (r->axis)
		add_trailer(&m, "Axis", r->axis);
	sb_release(&bench);
	sb_release(&vs);
	sb_release(&gate);
	return sb_detach(&m);
}

int loop_commit(struct loop *l, char sha[41], struct err *e)
{
	struct where w;
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	int rc;

	if (loop_writable(l, "commit", e) < 0)
		return ERR_REFUSED;

	if (l->readonly)
		return err_set(e, ERR_BUSY, "commit refused: the workspace is open read-only");
	if ((rc = load_contract(l, e)) < 0 || (rc = where_now(l, &w, e)) < 0)
		return rc;
	if (w.state != ST_LOGGED) {
		if (w.state == ST_MEASURED)
			return err_set(e, ERR_REFUSED,
				       "commit refused: iteration %d is measured but OPT_LOG.md has "
				       "no row for it yet (run optloop log first)",
				       w.iter);
		if (w.state == ST_NO_CONTRACT)
			return refuse_unless(l, "commit", &w, e);
		return err_set(e, ERR_REFUSED,
			       "commit refused: nothing is logged to commit (iteration %d: %s)",
			       w.iter, loop_state_name(w.state));
	}
	if (w.telescoped)
		return telescoped_refusal("commit", w.iter, e);
	if ((rc = vcs_commit_check(l->vcs, e)) < 0)
		return rc;
	struct guards_ctx g = loop_guards(l);
	if ((rc = guards_frozen_check(&g, "commit", e)) < 0)
		return rc;
	if ((rc = rows_get(l->store, &sr, &rows, &n, e)) < 0)
		return rc;
	char *msg = commit_message(l->ws.op, &rows[n - 1]);
	int iter = rows[n - 1].iter;
	log_rows_put(sr);

	fault_point("commit.begin");
	rc = vcs_commit_kernel(l->vcs, kpaths(l), l->nkernel, msg, sha, e);
	free(msg);
	if (rc < 0)
		return rc;
	fault_point("commit.after_git");
	rc = store_begin(l->store, e);
	if (rc == 0)
		rc = store_iter_set_commit(l->store, iter, sha, e);
	if (rc == 0)
		rc = store_event(l->store, iter, "commit", sha, e);
	if (rc == 0)
		rc = store_commit(l->store, e);
	else
		store_rollback(l->store);
	if (rc < 0)
		return rc;
	fault_point("commit.after_db");
	/* the commit sha appears in the Baseline line of OPT_LOG.md */
	if (iter == 0 && (rc = write_optlog(l, e)) < 0)
		return rc;
	fault_point("commit.after_render");
	/* revert/drop: the kernel goes back to the best, in a commit of its own */
	if ((rc = guards_after_commit(&g, NULL, e)) < 0)
		return err_prefix(e, "iteration %d is committed (%.12s), but the restore of the best "
				     "kernel that follows failed (the next optloop command finishes it): ",
				  iter, sha);
	/* bring back a change set aside during this iteration, recorded first
	 * so that a bring-back cut off is finished by the next writer */
	int aiter;
	char *asha, *aref;
	if (store_aside_pending(l->store, &aiter, &asha, &aref, NULL) == 0) {
		if (aiter == iter) {
			rc = bring_back(l, iter, asha, aref, true, e);
			if (rc == ERR_REFUSED)
				err_prefix(e, "iteration %d is committed (%.12s), but ", iter, sha);
			else if (rc < 0)
				err_prefix(e, "iteration %d is committed (%.12s), but bringing back the "
					      "change set aside failed (the next optloop command brings it "
					      "back): ",
					   iter, sha);
		}
		free(asha);
		free(aref);
	}
	return rc;
}

/* ---- repair ---------------------------------------------------------------------- */

/* repair --rebuild: the rows OPT_LOG.md holds and the database lost go back
 * into the database, in order, each linked to the commit that carries its
 * iteration with the same direction (Optloop-Iter and Optloop-Direction:
 * after a new init the history can hold two commits of one iteration). */
/* The commit that carries row r (the oldest: the log's own), or NULL. */
static const struct vcs_iter_commit *row_commit(const struct vcs_iter_commit *cs, size_t nc,
						const struct log_row *r)
{
	for (size_t k = nc; k-- > 0;)
		if (cs[k].iter == r->iter &&
		    (!cs[k].direction || !r->direction || !strcmp(cs[k].direction, r->direction)))
			return &cs[k];
	return NULL;
}

static int rebuild_rows(struct loop *l, struct sb *done, int *fixed, struct err *e)
{
	struct sb text = SB_INIT;
	struct optlog_doc d;
	struct log_rows *sr = NULL;
	const struct log_row *rows;
	struct vcs_iter_commit *cs = NULL;
	size_t n = 0, nc = 0;
	int rc;

	if (l->nkernel == 0)
		return err_set(e, ERR_REFUSED,
			       "repair --rebuild refused: the database lost the workspace's settings "
			       "too (its kernel paths, which only it holds); move %s aside, run "
			       "optloop init --op %s --kernel PATH ... again with the options it was "
			       "made with, then optloop repair --rebuild",
			       l->ws.db_path, l->ws.op);
	memset(&d, 0, sizeof(d));
	if ((rc = fsutil_read_file(l->ws.optlog_path, &text, e)) < 0)
		return rc;
	if ((rc = optlog_parse(text.buf, text.len, &d, NULL, e)) < 0)
		goto out;
	if ((rc = rows_get(l->store, &sr, &rows, &n, e)) < 0 ||
	    (rc = vcs_iter_commits(l->vcs, l->ws.op, NULL, 0, &cs, &nc, e)) < 0)
		goto out;
	int next = (int)n;
	const char *first = n ? rows[0].commit : NULL;
	/* A base or keep row whose run the database does not hold and that no
	 * commit carries has nothing behind its number: taken back it would be
	 * the best.  Refuse before anything is written. */
	for (size_t i = 0; rc == 0 && i < d.nrows; i++) {
		const struct log_row *r = &d.rows[i];
		if (r->iter >= next && (r->status == RS_BASE || r->status == RS_KEEP) &&
		    !row_commit(cs, nc, r))
			rc = err_set(e, ERR_REFUSED,
				     "repair --rebuild refused: OPT_LOG.md row %d (line %d, %s) has no "
				     "run in the database and no commit carries it, so nothing backs its "
				     "number and it cannot be the best. Set its Status to drop (or "
				     "remove the row) and run optloop repair --rebuild again; to keep "
				     "that kernel, verify it after the rebuild",
				     r->iter, r->lineno, row_status_name(r->status));
	}
	for (size_t i = 0; rc == 0 && i < d.nrows; i++) {
		struct log_row *r = &d.rows[i];
		if (r->iter < next)
			continue; /* the database has it */
		if (r->iter != next) {
			rc = err_set(e, ERR_REFUSED,
				     "repair --rebuild stopped: OPT_LOG.md jumps from iteration %d to %d "
				     "(line %d); fix the table so rows follow in order, then run it "
				     "again",
				     next - 1, r->iter, r->lineno);
			break;
		}
		const struct vcs_iter_commit *c = row_commit(cs, nc, r);
		free(r->commit);
		r->commit = c ? xstrdup(c->sha) : NULL;
		if (r->status == RS_KEEP && c && c->unconfirmed && !r->unconfirmed)
			r->unconfirmed = xstrdup(c->unconfirmed);
		rc = store_iter_add(l->store, r, 0, NULL, e);
		if (rc == 0)
			rc = store_event(l->store, r->iter, "repair.rebuild", c ? c->sha : NULL, e);
		if (rc == 0 && done)
			sb_addf(done, "row %d taken back from OPT_LOG.md%s%.12s\n", r->iter,
				c ? ", commit " : " (no commit carries it yet)", c ? c->sha : "");
		if (r->iter == 0)
			first = r->commit;
		(*fixed)++;
		next++;
	}
	/* the commits before the baseline are not the workspace's */
	char parent[VCS_OID_HEX];
	if (rc == 0 && first && vcs_parent(l->vcs, first, parent, NULL) == 0 && parent[0]) {
		rc = store_meta_set(l->store, "init_head", parent, e);
		if (rc == 0) {
			free(l->init_head);
			l->init_head = xstrdup(parent);
		}
	}
	if (rc == 0)
		l->lost_rows = 0;
out:
	vcs_iter_commits_free(cs, nc);
	log_rows_put(sr);
	optlog_doc_release(&d);
	sb_release(&text);
	return rc;
}

int loop_repair(struct loop *l, bool rebuild, struct sb *done, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n, nc;
	struct vcs_iter_commit *cs;
	int rc, fixed = 0;

	if (l->readonly)
		return err_set(e, ERR_BUSY, "repair refused: the workspace is open read-only");
	if (rebuild && l->lost_rows == 0)
		return err_set(e, ERR_REFUSED,
			       "repair --rebuild refused: the database holds every row OPT_LOG.md "
			       "does; there is nothing to take back (optloop repair fixes the rest)");
	if (!rebuild && l->lost_rows > 0)
		return err_set(e, ERR_REFUSED,
			       "repair refused: OPT_LOG.md holds %d row%s the database lost; take "
			       "them back first with optloop repair --rebuild",
			       l->lost_rows, l->lost_rows == 1 ? "" : "s");
	if (rebuild) {
		rc = store_begin(l->store, e);
		if (rc == 0)
			rc = rebuild_rows(l, done, &fixed, e);
		if (rc == 0)
			rc = store_commit(l->store, e);
		else
			store_rollback(l->store);
		if (rc < 0)
			return rc;
	}
	if ((rc = rows_get(l->store, &sr, &rows, &n, e)) < 0)
		return rc;
	if ((rc = vcs_iter_commits(l->vcs, l->ws.op, l->init_head, 0, &cs, &nc, e)) < 0) {
		log_rows_put(sr);
		return rc;
	}
	rc = store_begin(l->store, e);
	/* rows whose commit left the history: re-link to the commit that now
	 * carries their iteration */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!rows[i].commit || vcs_commit_in_history(l->vcs, rows[i].commit))
			continue;
		for (size_t k = 0; k < nc; k++) {
			/* the iteration and its direction: after a new init the
			 * history may hold another commit of the same number */
			if (cs[k].iter != rows[i].iter ||
			    (cs[k].direction && rows[i].direction &&
			     strcmp(cs[k].direction, rows[i].direction)))
				continue;
			rc = store_iter_set_commit(l->store, rows[i].iter, cs[k].sha, e);
			if (rc == 0)
				rc = store_event(l->store, rows[i].iter, "repair.relink", cs[k].sha, e);
			if (rc == 0 && done)
				sb_addf(done, "row %d now cites commit %.12s\n", rows[i].iter, cs[k].sha);
			fixed++;
			break;
		}
	}
	/* commits without a row: rebuilt from their trailers, in iteration
	 * order, when they continue the log */
	for (int next = (int)n; rc == 0;) {
		size_t k;
		for (k = 0; k < nc && cs[k].iter != next; k++)
			;
		if (k == nc)
			break;
		struct log_row r;
		memset(&r, 0, sizeof(r));
		r.iter = next;
		r.direction = xstrdup(cs[k].direction ? cs[k].direction : "(rebuilt from the commit)");
		r.gate = xstrdup(cs[k].gate ? cs[k].gate : "");
		if (!cs[k].gate || optlog_parse_gate(cs[k].gate, &r.gate_v, &r.scope) < 0)
			r.gate_v = GATE_NONE;
		if (!cs[k].bench || optlog_parse_bench(cs[k].bench, &r.bench_ms) < 0)
			r.bench_ms = NAN;
		if (!cs[k].vs_best || optlog_parse_vs_best(cs[k].vs_best, &r.vs_best) < 0)
			r.vs_best = NAN;
		if (!cs[k].status || optlog_parse_status(cs[k].status, &r.status) < 0)
			r.status = next == 0 ? RS_BASE : RS_DROP;
		if (r.status == RS_KEEP && cs[k].unconfirmed)
			r.unconfirmed = xstrdup(cs[k].unconfirmed);
		r.commit = xstrdup(cs[k].sha);
		rc = store_iter_add(l->store, &r, 0, NULL, e);
		if (rc == 0)
			rc = store_event(l->store, next, "repair.row", cs[k].sha, e);
		if (rc == 0 && done)
			sb_addf(done, "row %d rebuilt from commit %.12s\n", next, cs[k].sha);
		log_row_release(&r);
		fixed++;
		next++;
	}
	if (rc == 0)
		rc = store_commit(l->store, e);
	else
		store_rollback(l->store);
	vcs_iter_commits_free(cs, nc);
	log_rows_put(sr);
	if (rc == 0 && fixed)
		rc = write_optlog(l, e);
	if (rc == 0 && !fixed && done)
		sb_adds(done, "nothing optloop can repair by itself\n");
	if (rc == 0) {
		sb_reset(&l->problems);
		rc = reconcile_git(l, e);
	}
	return rc;
}
