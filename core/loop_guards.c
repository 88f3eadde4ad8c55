/*
 * loop_guards — the guards' part of loop.h: each call lends the open loop's
 * workspace to the rule in core/guards.c.
 */
#include "core/guards.h"

#include "core/err.h"
#include "core/sb.h"
#include "core/loop_impl.h"
#include "core/store.h"

#include <stdlib.h>
#include <string.h>

int loop_traps(struct loop *l, int iter, struct traps_doc *d, struct problems *probs,
	       struct err *e)
{
	return guards_traps(&l->ws, iter, d, probs, e);
}

int loop_trap_mark(struct loop *l, int iter, const char *trap, enum trap_state st,
		   const char *source, struct err *e)
{
	return guards_trap_mark(l->ws.store, iter, trap, st, source, e);
}

int loop_trap_add(struct loop *l, const char *title, const char *fact, const char *why,
		  const char *how, char **id, struct err *e)
{
	return guards_trap_add(&l->ws, title, fact, why, how, id, e);
}

int loop_lint(struct loop *l, int iter, struct lint_findings *out, struct err *e)
{
	return guards_lint(&l->ws, iter, out, e);
}

/* After a re-assessment or a stop was recorded: OPT_LOG.md lists it under
 * the table.  The record stands whatever the write does; a file that could
 * not be written is said, and the next write brings it up to date. */
static void optlog_event_written(struct loop *l, const char *what)
{
	struct err we = {0};
	if (l->ws.readonly || l->lost_rows > 0)
		return;
	if (loop_write_optlog(l, &we) < 0)
		loop_problem(l,
			"the %s is recorded, but OPT_LOG.md could not be written (%s): the next "
			"optloop command that writes it lists the %s under the table",
			what, we.msg, what);
}

int loop_reassess(struct loop *l, const struct loop_reassess *r, struct err *e)
{
	int rc = guards_reassess(&l->ws, r, e);
	if (rc == 0)
		optlog_event_written(l, "re-assessment");
	return rc;
}

int loop_axes_summary(struct loop *l, struct sb *out, struct err *e)
{
	return guards_axes_summary(&l->ws, out, e);
}

int loop_stop(struct loop *l, const char *reason, const char *bound, char **recorded,
	      struct err *e)
{
	char *computed = NULL;
	if (recorded)
		*recorded = NULL;
	/* a floor without --bound: computed from the best's runs */
	if (reason && !strcmp(reason, "floor") && (!bound || !*bound)) {
		int rc = loop_roofline_floor(&l->contract->c, l->ws.store, &computed, e);
		if (rc < 0)
			return rc;
		bound = computed;
	}
	int rc = guards_stop(&l->ws, reason, bound, e);
	if (rc == 0)
		optlog_event_written(l, "stop");
	if (rc == 0 && recorded && bound && *bound)
		*recorded = xstrdup(bound);
	free(computed);
	/* no run follows a stop: a Slurm allocation held for them goes back */
	if (rc == 0)
		loop_allocation_end(l, "the loop was stopped (optloop stop)", false, NULL, NULL);
	return rc;
}

int loop_nogo(struct loop *l, struct sb *md, json_t **json, struct err *e)
{
	/* the named bound, where the stop named none: what the best's runs
	 * show on the roofline, or why they show none */
	char *computed = NULL;
	struct err fe = {0};
	const char *why = NULL;
	struct store_stop sr;
	bool named = store_stop_last(l->ws.store, &sr) && guards_bound_ok(sr.bound);
	store_stop_release(&sr);
	if (!named &&
	    loop_roofline_floor(&l->contract->c, l->ws.store, &computed, &fe) == ERR_REFUSED) {
		why = fe.msg;
		if (!strncmp(why, "stop refused: ", 14))
			why += 14;
	}
	int rc = guards_nogo(&l->ws, computed, why, md, json, e);
	free(computed);
	return rc;
}

int loop_dispatch_add(struct loop *l, const struct dispatch_row *r, struct err *e)
{
	return guards_dispatch_add(&l->ws, r, e);
}

int loop_dispatch_rows(struct loop *l, struct dispatch_doc *d, struct err *e)
{
	return guards_dispatch_rows(&l->ws, d, e);
}
