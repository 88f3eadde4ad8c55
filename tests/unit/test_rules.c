/* Unit tests for rules: every judgment answers once, from plain values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/contract.h"
#include "core/rules.h"
#include "core/stats.h"

#include <math.h>
#include <string.h>

static void a_measured_run_passed_with_a_positive_bench(void **state)
{
	assert_true(rules_run_measured(GATE_PASS, 1.25));
	assert_false(rules_run_measured(GATE_PASS, 0));     /* a forged or broken number */
	assert_false(rules_run_measured(GATE_PASS, -1));
	assert_false(rules_run_measured(GATE_PASS, NAN));
	assert_false(rules_run_measured(GATE_FAIL, 1.25));
	assert_false(rules_run_measured(GATE_NONE, 1.25));
	assert_false(rules_run_measured(GATE_UNVERIFIED, 1.25));
	assert_false(rules_run_measured(GATE_INCOMPLETE, 1.25));
}

static void only_fast_or_ambiguous_can_still_win(void **state)
{
	assert_true(rules_confirm_can_win(SV_FAST));
	assert_true(rules_confirm_can_win(SV_AMBIGUOUS));
	assert_false(rules_confirm_can_win(SV_SAME));
	assert_false(rules_confirm_can_win(SV_SLOW));
	assert_false(rules_confirm_can_win(SV_MISSING));
	assert_false(rules_confirm_can_win(SV_NOT_COMPARABLE));
	assert_false(rules_confirm_can_win(SV_NONE));
}

static void the_keep_rule(void **state)
{
	/* no measurement: never, whatever else is said */
	assert_int_equal(rules_keep(GATE_PASS, 0, true, SV_FAST, true), RULES_KEEP_NOT_MEASURED);
	assert_int_equal(rules_keep(GATE_FAIL, 2.0, true, SV_FAST, true), RULES_KEEP_NOT_MEASURED);
	assert_int_equal(rules_keep(GATE_PASS, NAN, false, SV_NONE, true),
			 RULES_KEEP_NOT_MEASURED);
	/* a win beyond noise */
	assert_int_equal(rules_keep(GATE_PASS, 2.0, true, SV_FAST, false), RULES_KEEP_WIN);
	/* no win: a confirm may still show one, or cannot */
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_AMBIGUOUS, false),
			 RULES_KEEP_CONFIRM);
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_FAST, false), RULES_KEEP_CONFIRM);
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_SAME, false), RULES_KEEP_NO_WIN);
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_SLOW, false), RULES_KEEP_NO_WIN);
	/* the recorded exception */
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_SLOW, true),
			 RULES_KEEP_UNCONFIRMED);
	assert_true(rules_keep_allowed(RULES_KEEP_WIN));
	assert_true(rules_keep_allowed(RULES_KEEP_UNCONFIRMED));
	assert_false(rules_keep_allowed(RULES_KEEP_CONFIRM));
	assert_false(rules_keep_allowed(RULES_KEEP_NO_WIN));
	assert_false(rules_keep_allowed(RULES_KEEP_NOT_MEASURED));
}

static void one_default_threshold(void **state)
{
	/* the contract's default and the statistics' are the same number */
	struct contract c;
	const char *text = "## Op\nchunk_linear_attn\n";
	contract_parse(text, strlen(text), &c, NULL);
	assert_true(c.threshold == RULES_THRESHOLD);
	contract_release(&c);
	struct stats_set a = {0}, b = {0};
	stats_set_add_run(&a, "s", 1.0, 1);
	stats_set_add_run(&b, "s", 0.9, 2);
	struct stats_cmp cmp;
	stats_compare(&a, &b, &(struct stats_opts){0}, &cmp);
	assert_true(cmp.threshold == RULES_THRESHOLD);
	stats_cmp_release(&cmp);
	stats_set_release(&a);
	stats_set_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_measured_run_passed_with_a_positive_bench),
		cmocka_unit_test(only_fast_or_ambiguous_can_still_win),
		cmocka_unit_test(the_keep_rule),
		cmocka_unit_test(one_default_threshold),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
