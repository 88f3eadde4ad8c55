/*
 * loop_slurm — the facade's calls about the Slurm allocation a workspace's
 * runs go through: what status shows, and giving it back.  The allocation
 * itself is core/alloc.c; the loop owns the handle (loop_run_alloc).
 */
#include "core/loop.h"
#include "core/loop_impl.h"

#include "core/alloc.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/sb.h"
#include "core/slurm.h"
#include "core/store.h"

#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

void loop_allocation_release(struct loop_allocation *a)
{
	free(a->runner);
	free(a->job);
	free(a->state);
	free(a->reason);
	free(a->node);
	free(a->last_job);
	free(a->last_why);
	memset(a, 0, sizeof(*a));
}

int loop_allocation(struct loop *l, struct loop_allocation *a, struct err *e)
{
	struct slurm_runner r;
	struct store_alloc rec;
	struct store *st = l->ws.store;
	memset(a, 0, sizeof(*a));
	const struct contract *c = loop_contract_get(l);
	if (slurm_runner_parse(c->runner, &r, NULL) == 0) {
		a->slurm = r.slurm;
		a->idle_s = r.idle_s;
	}
	a->runner = xstrdup(r.canon ? r.canon : "local");
	slurm_runner_release(&r);
	loop_contract_put(c);

	int rc = store_alloc_current(st, &rec, NULL);
	if (rc == 0 && rec.job) {
		struct slurm_job j;
		alloc_query_within(rec.job, ALLOC_LOOK_S, &j, NULL);
		if (j.phase == SJ_GONE || j.phase == SJ_ENDING) {
			if (!loop_readonly(l))
				alloc_check_recorded(st, loop_dir(l), true, &j, NULL);
			store_alloc_release(&rec);
			rc = ERR_NOTFOUND;
		} else {
			a->state = xstrdup(j.phase == SJ_UNKNOWN ? "UNKNOWN" : j.state);
			a->reason = j.phase == SJ_HELD
					    ? xasprintf("it keeps its nodes but runs nothing: scontrol "
							"resume %s, or scancel %s",
							rec.job, rec.job)
					    : dup_or_null(j.phase == SJ_PENDING || j.phase == SJ_UNKNOWN
								  ? j.reason
								  : NULL);
			a->node = dup_or_null(j.nodes[0] ? j.nodes : rec.node);
		}
	}
	if (rc == 0) {
		a->held = true;
		a->job = dup_or_null(rec.job);
		if (!a->state)
			a->state = xstrdup(rec.state ? rec.state : "requested");
		a->requested = rec.requested;
		a->granted = rec.granted;
		a->last_used = rec.last_used;
		store_alloc_release(&rec);
		return 0;
	}
	if (store_alloc_last(st, &rec, NULL) == 0) {
		a->last_job = dup_or_null(rec.job);
		a->last_why = dup_or_null(rec.why);
		store_alloc_release(&rec);
	}
	(void)e;
	return 0;
}

static void ago(struct sb *out, double t)
{
	double d = now() - t;
	if (d < 0)
		d = 0;
	if (d < 120)
		sb_addf(out, "%.0f s ago", d);
	else if (d < 7200)
		sb_addf(out, "%.0f min ago", d / 60);
	else
		sb_addf(out, "%.1f h ago", d / 3600);
}

void loop_allocation_words(const struct loop_allocation *a, struct sb *out)
{
	if (!a->slurm && !a->held) {
		sb_adds(out, "local (runs go to this machine)");
		return;
	}
	if (!a->held) {
		sb_adds(out, "none held; one is requested at the next run");
		if (a->last_job)
			sb_addf(out, " (the last, Slurm job %s: %s)", a->last_job,
				a->last_why ? a->last_why : "released");
		return;
	}
	if (!a->job) {
		sb_adds(out, "requested, waiting for salloc to name the job");
	} else {
		sb_addf(out, "Slurm job %s %s", a->job, a->state);
		if (a->reason)
			sb_addf(out, " (%s%s)", a->reason,
				a->state && !strcmp(a->state, "PENDING") ? ": waiting in the queue" : "");
		if (a->node)
			sb_addf(out, " on %s", a->node);
	}
	if (a->granted > 0 && a->last_used > 0) {
		sb_adds(out, ", last used ");
		ago(out, a->last_used);
	} else if (a->requested > 0) {
		sb_adds(out, ", requested ");
		ago(out, a->requested);
	}
	if (a->idle_s > 0)
		sb_addf(out, "; released after %.0f min unused", a->idle_s / 60);
	else
		sb_adds(out, "; held until optloop stop or its time limit");
}

int loop_allocation_end(struct loop *l, const char *why, bool only_used, bool *had,
			struct err *e)
{
	if (had)
		*had = false;
	if (loop_readonly(l))
		return err_set(e, ERR_BUSY,
			       "the allocation cannot be given back: this optloop opened the "
			       "workspace read-only (another one is writing to it)");
	if (only_used && !loop_allocation_used(l))
		return 0;
	return alloc_release_recorded(l->ws.store, loop_dir(l), why, had, e);
}
