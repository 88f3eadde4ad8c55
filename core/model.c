/* model — names of states and statuses, and release helpers for rows. */
#include "core/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void log_row_release(struct log_row *r)
{
	free(r->direction);
	free(r->gate);
	free(r->axis);
	free(r->commit);
	free(r->unconfirmed);
	free(r->notes);
	r->direction = r->gate = r->axis = r->commit = r->unconfirmed = r->notes = NULL;
}

void trap_release(struct trap *t)
{
	free(t->id);
	free(t->title);
	free(t->fact);
	free(t->why);
	free(t->how);
	t->id = t->title = t->fact = t->why = t->how = NULL;
}

void dispatch_row_release(struct dispatch_row *d)
{
	free(d->bucket);
	free(d->entry);
	free(d->why);
	free(d->evidence);
	d->bucket = d->entry = d->why = d->evidence = NULL;
}

const char *loop_state_name(enum loop_state s)
{
	static const char *const n[] = {
		[ST_NO_CONTRACT] = "no_contract", [ST_NEED_BASELINE] = "need_baseline",
		[ST_READY] = "ready",             [ST_EDITING] = "editing",
		[ST_VERIFYING] = "verifying",     [ST_MEASURED] = "measured",
		[ST_LOGGED] = "logged",           [ST_STALLED] = "stalled",
		[ST_STOPPING] = "stopping",
	};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "unknown";
}

const char *loop_state_meaning(enum loop_state s)
{
	static const char *const m[] = {
		[ST_NO_CONTRACT] = "docs/draft.md is missing or a required field is empty: only the "
				   "contract can be edited",
		[ST_NEED_BASELINE] = "the contract is complete, no baseline yet: verify the unmodified "
				     "kernel (full gate) for row 0",
		[ST_READY] = "the last iteration is logged and committed: make one change",
		[ST_EDITING] = "the kernel differs from HEAD: verify it",
		[ST_VERIFYING] = "the verify command is running: watch it, or cancel it",
		[ST_MEASURED] = "verified and parsed: log the row (a further kernel edit is refused "
				"until it is undone or set aside)",
		[ST_LOGGED] = "the row is in OPT_LOG.md and the database: commit it",
		[ST_STALLED] = "as many rows in a row without a win as the stall limit: the "
			       "re-assessment comes before the next iteration",
		[ST_STOPPING] = "a stop condition holds or was asked for: promote, or record the no-go",
	};
	return (unsigned)s < sizeof(m) / sizeof(m[0]) ? m[s] : "";
}

const char *gate_verdict_name(enum gate_verdict g)
{
	static const char *const n[] = {
		[GATE_NONE] = "none",         [GATE_PASS] = "pass",
		[GATE_FAIL] = "fail",         [GATE_ERROR] = "error",
		[GATE_INCOMPLETE] = "incomplete", [GATE_UNVERIFIED] = "unverified",
	};
	return (unsigned)g < sizeof(n) / sizeof(n[0]) ? n[g] : "unknown";
}

const char *row_status_name(enum row_status s)
{
	static const char *const n[] = {
		[RS_NONE] = "",       [RS_BASE] = "base", [RS_KEEP] = "keep",
		[RS_REVERT] = "revert", [RS_DROP] = "drop", [RS_FLOOR] = "floor",
	};
	return (unsigned)s < sizeof(n) / sizeof(n[0]) ? n[s] : "";
}

enum row_status row_status_parse(const char *w)
{
	for (int s = RS_BASE; s <= RS_FLOOR; s++)
		if (w && strcasecmp(w, row_status_name(s)) == 0)
			return s;
	return RS_NONE;
}

const char *evidence_source_name(enum evidence_source s)
{
	return s == EVIDENCE_CONFIRM ? "confirm" : s == EVIDENCE_VERIFY ? "verify" : NULL;
}

const char *run_kind_name(enum run_kind k)
{
	static const char *const n[] = {
		[RUN_VERIFY] = "verify", [RUN_NOISE] = "noise", [RUN_CONFIRM] = "confirm",
		[RUN_OTHER] = "other",
	};
	return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "other";
}

enum run_kind run_kind_parse(const char *w)
{
	if (!w)
		return RUN_VERIFY;
	for (int k = RUN_VERIFY; k < RUN_OTHER; k++)
		if (strcmp(w, run_kind_name(k)) == 0)
			return k;
	return RUN_OTHER;
}

const char *tree_intent_name(enum tree_intent k)
{
	static const char *const n[] = {
		[INTENT_RESTORE] = "restore", [INTENT_SWAP] = "swap", [INTENT_ASIDE] = "aside",
		[INTENT_BACK] = "back", [INTENT_OTHER] = "other",
	};
	return (unsigned)k < sizeof(n) / sizeof(n[0]) ? n[k] : "other";
}

enum tree_intent tree_intent_parse(const char *w)
{
	for (int k = INTENT_RESTORE; k < INTENT_OTHER; k++)
		if (w && strcmp(w, tree_intent_name(k)) == 0)
			return k;
	return INTENT_OTHER;
}

const char *tree_intent_what(enum tree_intent k)
{
	return k == INTENT_SWAP ? "confirm or noise swap" : k == INTENT_OTHER ? "move" : tree_intent_name(k);
}

const char *trap_state_name(enum trap_state s)
{
	switch (s) {
	case TRAP_CHECKED:
		return "checked";
	case TRAP_HIT:
		return "hit";
	default:
		return "unchecked";
	}
}

void problems_release(struct problems *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].msg);
	free(p->v);
	memset(p, 0, sizeof(*p));
}
