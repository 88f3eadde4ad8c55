/*
 * run — the one run engine for verify, noise and confirm.  See run.h.
 */
#include "core/run.h"

#include "core/alloc.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/measure.h"
#include "core/parse.h"
#include "core/probe.h"
#include "core/runner.h"
#include "core/sb.h"
#include "core/slurm.h"
#include "core/store.h"

#include <math.h>
#include <signal.h>
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
	/* through Slurm */
	struct alloc *alloc;
	bool waiting;          /* for the allocation; the command not started yet */
	char *tag;
	double timeout_s, deadline;
	bool we_cancelled, we_timed_out;
	struct slurm_scan scan;
	int alloc_rc;          /* the allocation could not be had: why in alloc_err */
	struct err alloc_err;
	char *probe_wrap;
	struct probe_opts probe_at; /* the probe through the allocation's probe step */
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
	if (r->alloc)
		slurm_scan_feed(&r->scan, buf, len);
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

/* The probe, then the command: here, or as Slurm steps on the allocation's
 * node. */
static int start_command(struct run *r, struct err *e)
{
	struct store_run *rec = &r->rec;
	struct sb cmd = SB_INIT, wrap = SB_INIT;
	const char *node = NULL;
	if (r->alloc) {
		node = alloc_node(r->alloc);
		slurm_probe_prefix(alloc_job(r->alloc), node, &wrap);
		r->probe_wrap = sb_detach(&wrap);
		r->probe_at = (struct probe_opts){.wrap = r->probe_wrap, .node = node,
						  .capture = alloc_probe_capture,
						  .capture_ctx = r->alloc};
		slurm_step_command(alloc_job(r->alloc), node, rec->command, &cmd);
		alloc_touch(r->alloc);
	}
	/* evidence, never a gate: a probe problem does not stop a run */
	measure_probe_take(r->st, rec->id, "before", r->alloc ? &r->probe_at : NULL, NULL);
	struct runner_spec spec = {
		.command = r->alloc ? cmd.buf : rec->command,
		.cwd = rec->cwd,
		.log_path = rec->log_path,
		/* through Slurm the timeout is ours: the step is cancelled with
		 * scancel, not only srun stopped */
		.timeout_s = r->alloc ? 0 : r->timeout_s,
		.tag = r->tag,
	};
	int rc = runner_start(&spec, on_data, r, &r->r, e);
	sb_release(&cmd);
	sb_release(&wrap);
	return rc;
}

/* It never started: a harness error, recorded as such; frees r. */
static int never_started(struct run *r, int rc)
{
	struct store_run *rec = &r->rec;
	rec->t_end = now();
	rec->gate = GATE_ERROR;
	rec->exit_status = -1;
	store_run_update(r->st, rec, NULL);
	r->ended = true;
	run_free(r);
	return rc;
}

int run_start(struct store *st, const struct run_spec *s, struct run **out, struct err *e)
{
	*out = NULL;
	if (s->trace_dir) {
		int rc = fsutil_own_dir(s->trace_dir, e);
		if (rc == 0)
			rc = fsutil_mkdir_p(s->trace_dir, e);
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
	rec->kind = s->kind;
	rec->command = xstrdup(s->command);
	rec->cwd = dup_or_null(s->cwd);
	rec->log_path = dup_or_null(s->log_path);
	rec->head = dup_or_null(s->head);
	rec->branch = dup_or_null(s->branch);
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
					  run_kind_name(s->kind), s->iter, rec->id);
		store_run_update(st, rec, NULL);
	}
	r->p = parser_new(s->ps, on_event, r);
	/* the tag names the workspace and the run: a harness that outlives a
	 * killed optloop is found by it (loop.c, reconcile_orphans) */
	r->tag = xasprintf("%s#%d", s->trace_dir ? s->trace_dir : ".", rec->id);
	r->timeout_s = s->timeout_s;
	r->alloc = s->alloc;
	if (r->alloc) {
		slurm_scan_init(&r->scan);
		if (s->timeout_s > 0)
			r->deadline = now() + s->timeout_s;
		rc = alloc_begin(r->alloc, r->output, r->ctx, e);
		if (rc == 0) {
			r->waiting = true;
			*out = r;
			return 0;
		}
		if (rc < 0)
			return never_started(r, rc);
	}
	rc = start_command(r, e);
	if (rc < 0)
		return never_started(r, rc);
	*out = r;
	return 0;
}

int run_fds(const struct run *r, int fds[2])
{
	if (r && r->waiting && !r->ended)
		return alloc_fds(r->alloc, fds);
	return r && r->r && !r->ended ? runner_fds(r->r, fds) : 0;
}

/* Waiting for the allocation: 1 while it waits, 0 once the command is
 * going or the wait failed (run_end records it). */
static int pump_alloc(struct run *r, int timeout_ms)
{
	struct err e = {0};
	if (r->deadline > 0 && now() > r->deadline && !r->we_timed_out) {
		r->we_timed_out = true;
		alloc_cancel_request(r->alloc);
	}
	int rc = alloc_pump(r->alloc, timeout_ms, &e);
	if (rc > 0)
		return 1;
	r->waiting = false;
	if (rc == 0)
		rc = start_command(r, &e);
	if (rc < 0) {
		r->alloc_rc = rc;
		r->alloc_err = e;
		return 0;
	}
	return 1;
}

/* Stop the step: scancel it (the step named by its first line, or every
 * step of the job before it named one), and srun with it. */
static void cancel_step(struct run *r)
{
	if (r->alloc)
		alloc_cancel_steps(r->alloc, r->scan.step);
	runner_cancel(r->r);
}

int run_pump(struct run *r, int timeout_ms)
{
	if (r && r->waiting && !r->ended)
		return pump_alloc(r, timeout_ms);
	if (!r || !r->r || r->ended)
		return 0;
	if (r->alloc && r->deadline > 0 && !r->we_timed_out && !r->we_cancelled &&
	    now() > r->deadline) {
		r->we_timed_out = true;
		cancel_step(r);
	}
	struct err le = {0};
	int rc = runner_pump(r->r, timeout_ms, &le);
	if (rc < 0) {
		if (!r->io_rc) {
			r->io_rc = rc;
			r->io_err = le;
			if (r->alloc)
				cancel_step(r);
			else
				runner_cancel(r->r);
		}
		return 1;
	}
	return rc;
}

void run_cancel(struct run *r)
{
	if (!r || r->ended)
		return;
	if (r->waiting) {
		r->we_cancelled = true;
		alloc_cancel_request(r->alloc);
	} else if (r->r && r->alloc) {
		if (!r->we_cancelled && !r->we_timed_out)
			cancel_step(r);
		r->we_cancelled = true;
	} else if (r->r) {
		runner_cancel(r->r);
	}
}

bool run_going(const struct run *r)
{
	return r && (r->r || r->waiting) && !r->ended;
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
	if (j && r->scan.marked) {
		/* where it ran, beside the environment the harness printed */
		json_object_set_new(j, "slurm",
				    json_pack("{s:s, s:s, s:s, s:s}", "job", r->scan.job, "step",
					      r->scan.step, "node", r->scan.node, "gpus",
					      r->scan.gpus));
	}
	free(rec->result_json);
	rec->result_json = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
}

/* How the Slurm step ended (or why it never started): the cause into
 * step, the outcome made to say "stopped" when Slurm stopped it. */
static void settle_step(struct run *r, struct runner_outcome *oc, struct store_step *step)
{
	struct sb why = SB_INIT;
	enum slurm_cause c;
	memset(step, 0, sizeof(*step));
	step->run_id = r->rec.id;
	if (!r->r) { /* no allocation: the request failed or was cancelled */
		c = r->we_timed_out ? SC_TIMEOUT : r->we_cancelled ? SC_CANCELLED : SC_GONE;
		sb_adds(&why, r->alloc_err.msg[0] ? r->alloc_err.msg : "no Slurm allocation");
		oc->cancelled = r->we_cancelled;
		oc->timed_out = r->we_timed_out;
		oc->exit_status = -1;
	} else {
		struct slurm_job after;
		slurm_scan_finish(&r->scan);
		bool ask = oc->exit_status != 0 || oc->signal;
		if (ask && alloc_job(r->alloc))
			alloc_query(alloc_job(r->alloc), &after, NULL);
		struct slurm_step_end in = {
			.scan = &r->scan,
			.exit_status = oc->exit_status,
			.signal = oc->signal,
			.we_cancelled = r->we_cancelled,
			.we_timed_out = r->we_timed_out,
			.job_after = ask && alloc_job(r->alloc) ? &after : NULL,
			.after_signal = alloc_last_cause(r->alloc) == SC_SIGNAL,
			.time_left = alloc_time_left(r->alloc),
		};
		c = slurm_step_cause(&in, NULL);
		/* A job scancel'd from outside ends its steps before squeue stops
		 * showing it RUNNING (seconds, on a loaded controller), and srun may
		 * die before it says why: a step killed while its job still runs is
		 * looked at again for up to 6 s (also while squeue does not answer)
		 * before it is taken for a signal to the step alone, or for a step
		 * that could not start (the job revoked while it started). */
		for (int i = 0; (c == SC_SIGNAL || c == SC_LAUNCH) && in.job_after &&
				(after.phase == SJ_RUNNING || after.phase == SJ_UNKNOWN) && i < 30;
		     i++) {
			usleep(200 * 1000);
			alloc_query(alloc_job(r->alloc), &after, NULL);
			c = slurm_step_cause(&in, NULL);
		}
		c = slurm_step_cause(&in, &why);
		if (r->we_timed_out) {
			oc->timed_out = true;
			oc->cancelled = false;
		} else if (c == SC_CANCELLED) {
			oc->cancelled = true;
		} else if (c != SC_OK && !runner_outcome_killed(oc)) {
			oc->signal = oc->signal ? oc->signal : SIGKILL; /* stopped by Slurm */
		}
		alloc_step_ended(r->alloc, c, why.buf ? why.buf : "");
	}
	step->job = xstrdup(r->scan.job[0] ? r->scan.job
			    : alloc_job(r->alloc) ? alloc_job(r->alloc) : "");
	step->step = r->scan.step[0] ? xstrdup(r->scan.step) : NULL;
	step->node = r->scan.node[0] ? xstrdup(r->scan.node) : NULL;
	step->gpus = r->scan.gpus[0] ? xstrdup(r->scan.gpus) : NULL;
	step->cause = xstrdup(slurm_cause_name(c));
	step->why = why.len ? sb_detach(&why) : NULL;
	sb_release(&why);
}

int run_end(struct run *r, const struct run_end_hooks *h, struct err *e)
{
	if (r->ended)
		return err_set(e, ERR_REFUSED, "the %s run %d has already ended", run_kind_name(r->rec.kind),
			       r->rec.id);
	while (run_pump(r, 200) > 0)
		;
	struct runner_outcome oc = {.exit_status = -1};
	struct store_step step = {0};
	if (r->r)
		oc = *runner_outcome(r->r);
	if (r->alloc)
		settle_step(r, &oc, &step);
	bool killed = runner_outcome_killed(&oc) || r->io_rc || (r->alloc && !r->r);
	parser_finish(r->p, oc.exit_status, killed);
	const struct parse_result *res = parser_result(r->p);
	settle(r, &oc, res);
	if (r->alloc && !r->r)
		r->rec.gate = GATE_INCOMPLETE;
	r->ended = true;
	/* the after-probe on a node only while the allocation is still there */
	if (!r->alloc) {
		measure_probe_take(r->st, r->rec.id, "after", NULL, NULL);
	} else if (r->r && alloc_job(r->alloc)) {
		r->probe_at.node = alloc_node(r->alloc);
		measure_probe_take(r->st, r->rec.id, "after", &r->probe_at, NULL);
	}

	int rc = h && h->fill ? h->fill(h->ctx, &r->rec, res, e) : 0;
	if (rc == 0)
		rc = store_begin(r->st, e);
	if (rc == 0) {
		rc = store_run_record(r->st, &r->rec, &res->env, res->rows, res->nrows, e);
		if (rc == 0 && r->alloc)
			rc = store_step_put(r->st, &step, e);
		if (rc == 0 && h && h->in_tx)
			rc = h->in_tx(h->ctx, r->st, &r->rec, e);
		if (rc == 0)
			rc = store_commit(r->st, e);
		else
			store_rollback(r->st);
	}
	store_step_release(&step);
	if (rc == 0 && r->io_rc) {
		if (e)
			*e = r->io_err;
		rc = r->io_rc;
	}
	if (rc == 0 && r->alloc_rc && !r->we_cancelled && !r->we_timed_out) {
		/* recorded as an attempt; say why there was no run at all */
		if (e)
			*e = r->alloc_err;
		rc = r->alloc_rc;
	}
	return rc;
}

void run_free(struct run *r)
{
	if (!r)
		return;
	if (r->waiting && !r->ended)
		alloc_cancel_request(r->alloc);
	if (r->r && !r->ended)
		run_cancel(r);
	runner_free(r->r);
	free(r->tag);
	free(r->probe_wrap);
	parser_free(r->p);
	store_run_release(&r->rec);
	free(r);
}
