/*
 * run — the one run engine for verify, noise and confirm.  See run.h.
 */
#include "core/run.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/measure.h"
#include "core/parse.h"
#include "core/runner.h"
#include "core/sb.h"
#include "core/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

struct run {
	struct store *st;
	struct store_run rec; /* owned strings */
	struct parser *p;
	struct runner *r;
	run_output_fn output;
	run_event_fn event;
	void *ctx;
	int io_rc; /* a raw-log write failure: the run was stopped */
	struct err io_err;
	bool ended;
};

static double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void on_data(void *ctx, const char *buf, size_t len)
{
	struct run *r = ctx;
	parser_feed(r->p, buf, len);
	if (r->output)
		r->output(r->ctx, buf, len);
}

static void on_event(void *ctx, const struct parse_event *ev)
{
	struct run *r = ctx;
	if (r->event)
		r->event(r->ctx, ev);
}

static int insert(struct run *r, const char *start_event, struct err *e)
{
	int rc = store_begin(r->st, e);
	if (rc == 0)
		rc = store_run_insert(r->st, &r->rec, e);
	if (rc == 0 && start_event)
		rc = store_event(r->st, r->rec.iter, start_event, r->rec.command, e);
	if (rc == 0)
		rc = store_commit(r->st, e);
	else
		store_rollback(r->st);
	return rc;
}

int run_start(struct store *st, const struct run_spec *s, struct run **out, struct err *e)
{
	*out = NULL;
	if (s->trace_dir) {
		int rc = fsutil_mkdir_p(s->trace_dir, e);
		if (rc < 0)
			return rc;
	}
	struct run *r = xcalloc(1, sizeof(*r));
	r->st = st;
	r->output = s->output;
	r->event = s->event;
	r->ctx = s->ctx;
	struct store_run *rec = &r->rec;
	rec->iter = s->iter;
	rec->kind = xstrdup(s->kind);
	rec->command = xstrdup(s->command);
	rec->cwd = dup_or_null(s->cwd);
	rec->log_path = dup_or_null(s->log_path);
	rec->head = dup_or_null(s->head);
	rec->tree = dup_or_null(s->tree);
	rec->t_start = now();
	rec->bench_ms = rec->vs_best = NAN;
	rec->pid = (int)getpid();
	rec->scope = s->scope;
	rec->gate = GATE_INCOMPLETE; /* until it ends */
	int rc = insert(r, s->start_event, e);
	if (rc < 0) {
		run_free(r);
		return rc;
	}
	if (!rec->log_path) { /* named by its id */
		rec->log_path = xasprintf("%s/%s-%d-run%d.log", s->trace_dir ? s->trace_dir : ".",
					  s->kind, s->iter, rec->id);
		store_run_update(st, rec, NULL);
	}
	/* evidence, never a gate: a probe problem does not stop a run */
	measure_probe_take(st, rec->id, "before", NULL);
	r->p = parser_new(s->ps, on_event, r);
	/* the tag names the workspace and the run: a harness that outlives a
	 * killed optloop is found by it (loop.c, reconcile_orphans) */
	char *tag = xasprintf("%s#%d", s->trace_dir ? s->trace_dir : ".", rec->id);
	struct runner_spec spec = {
		.command = rec->command,
		.cwd = rec->cwd,
		.log_path = rec->log_path,
		.timeout_s = s->timeout_s,
		.tag = tag,
	};
	rc = runner_start(&spec, on_data, r, &r->r, e);
	free(tag);
	if (rc < 0) {
		/* it never started: a harness error, recorded as such */
		rec->t_end = now();
		rec->gate = GATE_ERROR;
		rec->exit_status = -1;
		store_run_update(st, rec, NULL);
		r->ended = true;
		run_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

int run_fds(const struct run *r, int fds[2])
{
	return r && r->r && !r->ended ? runner_fds(r->r, fds) : 0;
}

int run_pump(struct run *r, int timeout_ms)
{
	if (!r || !r->r || r->ended)
		return 0;
	struct err le = {0};
	int rc = runner_pump(r->r, timeout_ms, &le);
	if (rc < 0) {
		if (!r->io_rc) {
			r->io_rc = rc;
			r->io_err = le;
			runner_cancel(r->r);
		}
		return 1;
	}
	return rc;
}

void run_cancel(struct run *r)
{
	if (r && r->r && !r->ended)
		runner_cancel(r->r);
}

bool run_going(const struct run *r)
{
	return r && r->r && !r->ended;
}

const struct parse_result *run_result(const struct run *r)
{
	return r && r->p ? parser_result(r->p) : NULL;
}

struct store_run *run_record(struct run *r)
{
	return &r->rec;
}

/* How it ended, by the rules in run.h. */
static void settle(struct run *r, const struct runner_outcome *oc, const struct parse_result *res)
{
	struct store_run *rec = &r->rec;
	bool killed = runner_outcome_killed(oc) || r->io_rc;
	rec->t_start = oc->t_start > 0 ? oc->t_start : rec->t_start;
	rec->t_end = oc->t_end > 0 ? oc->t_end : now();
	rec->exit_status = oc->exit_status;
	rec->signal = oc->signal;
	rec->timed_out = oc->timed_out;
	rec->cancelled = oc->cancelled && !r->io_rc;
	rec->gate = killed && res->gate != GATE_FAIL ? GATE_INCOMPLETE : res->gate;
	if (res->scope != SCOPE_UNKNOWN)
		rec->scope = res->scope;
	bool counts = rec->gate == GATE_PASS || rec->gate == GATE_NONE ||
		      rec->gate == GATE_UNVERIFIED;
	rec->bench_ms = counts ? parse_bench_ms(res) : NAN;
	json_t *j = parse_result_json(res);
	free(rec->result_json);
	rec->result_json = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
}

int run_end(struct run *r, const struct run_end_hooks *h, struct err *e)
{
	if (r->ended)
		return err_set(e, ERR_REFUSED, "the %s run %d has already ended", r->rec.kind,
			       r->rec.id);
	while (run_pump(r, 200) > 0)
		;
	const struct runner_outcome *oc = runner_outcome(r->r);
	bool killed = runner_outcome_killed(oc) || r->io_rc;
	parser_finish(r->p, oc->exit_status, killed);
	const struct parse_result *res = parser_result(r->p);
	settle(r, oc, res);
	r->ended = true;
	measure_probe_take(r->st, r->rec.id, "after", NULL);

	int rc = h && h->fill ? h->fill(h->ctx, &r->rec, res, e) : 0;
	if (rc == 0)
		rc = store_begin(r->st, e);
	if (rc == 0) {
		rc = store_run_record(r->st, &r->rec, &res->env, res->rows, res->nrows, e);
		if (rc == 0 && h && h->in_tx)
			rc = h->in_tx(h->ctx, r->st, &r->rec, e);
		if (rc == 0)
			rc = store_commit(r->st, e);
		else
			store_rollback(r->st);
	}
	if (rc == 0 && r->io_rc) {
		if (e)
			*e = r->io_err;
		rc = r->io_rc;
	}
	return rc;
}

void run_free(struct run *r)
{
	if (!r)
		return;
	if (r->r && !r->ended)
		runner_cancel(r->r);
	runner_free(r->r);
	parser_free(r->p);
	store_run_release(&r->rec);
	free(r);
}
