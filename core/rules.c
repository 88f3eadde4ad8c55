/* rules — the loop's judgments in one place (see rules.h). */
#include "core/rules.h"

#include <math.h>

bool rules_run_measured(enum gate_verdict gate, double bench_ms)
{
	return gate == GATE_PASS && isfinite(bench_ms) && bench_ms > 0;
}

bool rules_confirm_can_win(enum stats_verdict v)
{
	return v == SV_FAST || v == SV_AMBIGUOUS;
}

enum rules_keep rules_keep(enum gate_verdict gate, double bench_ms, bool win,
			   enum stats_verdict verdict, bool unconfirmed)
{
	if (!rules_run_measured(gate, bench_ms))
		return RULES_KEEP_NOT_MEASURED;
	if (win)
		return RULES_KEEP_WIN;
	if (unconfirmed)
		return RULES_KEEP_UNCONFIRMED;
	return rules_confirm_can_win(verdict) ? RULES_KEEP_CONFIRM : RULES_KEEP_NO_WIN;
}

bool rules_keep_allowed(enum rules_keep k)
{
	return k == RULES_KEEP_WIN || k == RULES_KEEP_UNCONFIRMED;
}

bool log_row_can_be_best(const struct log_row *r)
{
	return (r->status == RS_BASE || r->status == RS_KEEP) && isfinite(r->bench_ms) &&
	       r->bench_ms > 0 && (r->gate_v == GATE_PASS || r->gate_v == GATE_NONE);
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

bool log_row_is_win(const struct log_row *r)
{
	return r->status == RS_KEEP && !r->unconfirmed && log_row_can_be_best(r);
}
