/* rules — the loop's judgments in one place (see rules.h). */
#include "core/rules.h"
#include "core/err.h"

#include <math.h>

bool rules_run_measured(enum gate_verdict gate, double bench_ms)
{
	return gate == GATE_PASS && isfinite(bench_ms) && bench_ms > 0;
}

int rules_stall_count(const struct rules_stall_row *rows, size_t n)
{
	int count = 0;
	for (size_t i = n; i-- > 0;) {
		if (rows[i].base || rows[i].win)
			break;
		if (!rows[i].not_comparable)
			count++;
	}
	return count;
}

bool rules_promotes(enum stats_verdict v, unsigned flags, bool explained)
{
	if (v != SV_FAST || (flags & (SF_BUSY_GPU | SF_SUBSET_GATE | SF_IMPOSSIBLE)))
		return false;
	return explained || !(flags & SF_IMPLAUSIBLE_MASK);
}

bool rules_stalled(int stall_count)
{
	return stall_count >= RULES_STALL_AFTER;
}

bool rules_confirm_can_win(enum stats_verdict v)
{
	return v == SV_FAST || v == SV_AMBIGUOUS;
}

enum rules_keep rules_keep(enum gate_verdict gate, double bench_ms, bool win,
			   enum stats_verdict verdict, unsigned implausible, bool unconfirmed)
{
	if (!rules_run_measured(gate, bench_ms))
		return RULES_KEEP_NOT_MEASURED;
	if (implausible & SF_IMPOSSIBLE)
		return RULES_KEEP_IMPOSSIBLE;
	if (implausible)
		return RULES_KEEP_IMPLAUSIBLE;
	if (win)
		return RULES_KEEP_WIN;
	if (unconfirmed)
		return RULES_KEEP_UNCONFIRMED;
	return rules_confirm_can_win(verdict) ? RULES_KEEP_CONFIRM : RULES_KEEP_NO_WIN;
}

bool rules_at_floor(bool launch, double share, double margin)
{
	if (launch)
		return true;
	return isfinite(share) && share >= RULES_FLOOR_SHARE && share <= margin;
}

bool rules_explain_lifts(unsigned flags)
{
	return !(flags & SF_IMPOSSIBLE);
}

bool rules_keep_allowed(enum rules_keep k)
{
	return k == RULES_KEEP_WIN || k == RULES_KEEP_UNCONFIRMED;
}

bool rules_implausible_confirm(enum rules_keep k, enum evidence_source source,
			       enum stats_verdict verdict)
{
	return k == RULES_KEEP_IMPLAUSIBLE && source == EVIDENCE_VERIFY &&
	       rules_confirm_can_win(verdict);
}

bool log_row_can_be_best(const struct log_row *r)
{
	return (r->status == RS_BASE || r->status == RS_KEEP) && isfinite(r->bench_ms) &&
	       r->bench_ms > 0 && (r->gate_v == GATE_PASS || r->gate_v == GATE_NONE) &&
	       !r->full_gate_failed;
}

const struct log_row *log_rows_best(const struct log_row *rows, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (log_row_can_be_best(&rows[i]))
			return &rows[i];
	return NULL;
}

bool run_is_attempt(int iter, enum gate_verdict g, enum gate_scope scope, double bench_ms)
{
	if (g == GATE_ERROR || g == GATE_INCOMPLETE)
		return true;
	return iter == 0 && !(rules_run_measured(g, bench_ms) && scope != SCOPE_SUBSET);
}

bool rules_row_restores(enum row_status s)
{
	return s == RS_REVERT || s == RS_DROP || s == RS_FLOOR;
}

bool rules_lints_need_ack(enum row_status s)
{
	return !rules_row_restores(s);
}

bool rules_floor_allowed(enum gate_verdict gate, double bench_ms)
{
	return rules_run_measured(gate, bench_ms);
}

bool log_row_is_win(const struct log_row *r)
{
	return r->status == RS_KEEP && !r->unconfirmed && log_row_can_be_best(r);
}

/* ---- the protocol table ------------------------------------------------- */

static const char *const step_names[STEP_N] = {"verify", "log", "commit"};

/* DESIGN §2's "what is allowed" column, by step.  A stall or a stop does
 * not gate the steps here: verify's guard words them with their counts and
 * reasons (guards_verify_check), and a measured row is still logged and
 * committed. */
static const enum rules_refusal protocol[ST_STOPPING + 1][STEP_N] = {
	/*                    verify              log                    commit */
	[ST_NO_CONTRACT]   = {REFUSE_NO_CONTRACT, REFUSE_NO_CONTRACT,    REFUSE_NO_CONTRACT},
	[ST_NEED_BASELINE] = {REFUSE_NONE,        REFUSE_NO_BASELINE,    REFUSE_NOTHING_LOGGED},
	[ST_READY]         = {REFUSE_NONE,        REFUSE_NOT_MEASURED,   REFUSE_NOTHING_LOGGED},
	[ST_EDITING]       = {REFUSE_NONE,        REFUSE_NOT_MEASURED,   REFUSE_NOTHING_LOGGED},
	[ST_VERIFYING]     = {REFUSE_RUN_GOING,   REFUSE_RUN_GOING,      REFUSE_NOTHING_LOGGED},
	[ST_MEASURED]      = {REFUSE_ROW_DUE,     REFUSE_NONE,           REFUSE_ROW_DUE},
	[ST_LOGGED]        = {REFUSE_COMMIT_DUE,  REFUSE_ALREADY_LOGGED, REFUSE_NONE},
	[ST_STALLED]       = {REFUSE_NONE,        REFUSE_NOT_MEASURED,   REFUSE_NOTHING_LOGGED},
	[ST_STOPPING]      = {REFUSE_NONE,        REFUSE_NOT_MEASURED,   REFUSE_NOTHING_LOGGED},
};

const char *rules_step_name(enum rules_step step)
{
	return (unsigned)step < STEP_N ? step_names[step] : "?";
}

enum rules_refusal rules_step_refusal(enum loop_state st, enum rules_step step)
{
	if ((unsigned)st > ST_STOPPING || (unsigned)step >= STEP_N)
		return REFUSE_NONE;
	return protocol[st][step];
}

int rules_step_check(enum loop_state st, enum rules_step step, const struct rules_facts *f,
		     struct err *e)
{
	const char *verb = rules_step_name(step);
	enum rules_refusal r = rules_step_refusal(st, step);
	if (f->attempt && (r == REFUSE_NOT_MEASURED || r == REFUSE_NO_BASELINE))
		return err_set(e, ERR_REFUSED,
			       "%s refused: the last run of iteration %d was an attempt, not an "
			       "iteration: %s; an attempt gets no row (fix what stopped it, then run "
			       "optloop verify again)",
			       verb, f->iter, f->attempt);
	switch (r) {
	case REFUSE_NONE:
		return 0;
	case REFUSE_NO_CONTRACT:
		return err_set(e, ERR_REFUSED,
			       "%s refused: the task contract is incomplete: %s (only contract "
			       "editing is allowed until it is complete)",
			       verb, f->missing ? f->missing : "fields missing");
	case REFUSE_ROW_DUE:
		return err_set(e, ERR_REFUSED,
			       "%s refused: iteration %d is measured but OPT_LOG.md has no row for it "
			       "yet (run optloop log first)",
			       verb, f->iter);
	case REFUSE_COMMIT_DUE:
		return err_set(e, ERR_REFUSED,
			       "%s refused: iteration %d is logged but not committed (run optloop "
			       "commit)",
			       verb, f->iter);
	case REFUSE_RUN_GOING:
		return err_set(e, ERR_REFUSED,
			       "%s refused: the verify run of iteration %d is still going (wait for "
			       "it or cancel it)",
			       verb, f->iter);
	case REFUSE_NOT_MEASURED:
		return err_set(e, ERR_REFUSED,
			       "%s refused: iteration %d has not been measured yet (run optloop "
			       "verify)",
			       verb, f->iter);
	case REFUSE_NO_BASELINE:
		return err_set(e, ERR_REFUSED,
			       "%s refused: the baseline has not been measured yet (run optloop verify "
			       "on the unmodified kernel)",
			       verb);
	case REFUSE_ALREADY_LOGGED:
		return err_set(e, ERR_REFUSED,
			       "%s refused: iteration %d is already logged; commit it (run optloop "
			       "commit)",
			       verb, f->iter);
	case REFUSE_NOTHING_LOGGED:
		return err_set(e, ERR_REFUSED,
			       "%s refused: nothing is logged to commit (iteration %d: %s)", verb,
			       f->iter, loop_state_name(st));
	}
	return 0;
}
