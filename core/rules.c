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
