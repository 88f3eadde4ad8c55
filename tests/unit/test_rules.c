/* Unit tests for rules: every judgment answers once, from plain values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/contract.h"
#include "core/err.h"
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

static void an_impossible_time_is_never_kept_or_promoted(void **state)
{
	/* before the implausible rule, and --unconfirmed does not help */
	assert_int_equal(rules_keep(GATE_PASS, 0.001, true, SV_FAST, SF_IMPOSSIBLE, true),
			 RULES_KEEP_IMPOSSIBLE);
	assert_int_equal(rules_keep(GATE_PASS, 0.001, false, SV_FAST,
				    SF_IMPOSSIBLE | SF_IMPLAUSIBLE_AGG, false),
			 RULES_KEEP_IMPOSSIBLE);
	assert_false(rules_keep_allowed(RULES_KEEP_IMPOSSIBLE));
	/* no confirm is offered for it */
	assert_false(rules_implausible_confirm(RULES_KEEP_IMPOSSIBLE, EVIDENCE_VERIFY, SV_FAST));
	/* an explanation lifts the implausible group, never this */
	assert_true(rules_explain_lifts(SF_IMPLAUSIBLE_MASK));
	assert_false(rules_explain_lifts(SF_IMPOSSIBLE | SF_IMPLAUSIBLE_AGG));
	assert_true(rules_promotes(SV_FAST, SF_IMPLAUSIBLE_AGG, true));
	assert_false(rules_promotes(SV_FAST, SF_IMPOSSIBLE, true));
	assert_false(rules_promotes(SV_FAST, SF_IMPOSSIBLE, false));
	/* a failed gate is still "not measured" first */
	assert_int_equal(rules_keep(GATE_FAIL, 0.001, false, SV_FAST, SF_IMPOSSIBLE, false),
			 RULES_KEEP_NOT_MEASURED);
}

static void lints_need_an_ack_only_where_the_kernel_stays(void **state)
{
	assert_true(rules_lints_need_ack(RS_BASE));
	assert_true(rules_lints_need_ack(RS_KEEP));
	assert_false(rules_lints_need_ack(RS_REVERT));
	assert_false(rules_lints_need_ack(RS_DROP));
	assert_false(rules_lints_need_ack(RS_FLOOR));
}

static void the_keep_rule(void **state)
{
	/* no measurement: never, whatever else is said */
	assert_int_equal(rules_keep(GATE_PASS, 0, true, SV_FAST, false, true), RULES_KEEP_NOT_MEASURED);
	assert_int_equal(rules_keep(GATE_FAIL, 2.0, true, SV_FAST, false, true), RULES_KEEP_NOT_MEASURED);
	assert_int_equal(rules_keep(GATE_PASS, NAN, false, SV_NONE, false, true),
			 RULES_KEEP_NOT_MEASURED);
	/* a win beyond noise */
	assert_int_equal(rules_keep(GATE_PASS, 2.0, true, SV_FAST, false, false), RULES_KEEP_WIN);
	/* no win: a confirm may still show one, or cannot */
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_AMBIGUOUS, false, false),
			 RULES_KEEP_CONFIRM);
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_FAST, false, false), RULES_KEEP_CONFIRM);
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_SAME, false, false), RULES_KEEP_NO_WIN);
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_SLOW, false, false), RULES_KEEP_NO_WIN);
	/* an unexplained implausible speedup: not even --unconfirmed, never a win */
	assert_int_equal(rules_keep(GATE_PASS, 0.01, false, SV_FAST, true, true),
			 RULES_KEEP_IMPLAUSIBLE);
	assert_false(rules_keep_allowed(RULES_KEEP_IMPLAUSIBLE));
	/* but a failed gate is said first */
	assert_int_equal(rules_keep(GATE_FAIL, 0.01, false, SV_FAST, true, false),
			 RULES_KEEP_NOT_MEASURED);
	/* the recorded exception */
	assert_int_equal(rules_keep(GATE_PASS, 2.0, false, SV_SLOW, false, true),
			 RULES_KEEP_UNCONFIRMED);
	assert_true(rules_keep_allowed(RULES_KEEP_WIN));
	assert_true(rules_keep_allowed(RULES_KEEP_UNCONFIRMED));
	assert_false(rules_keep_allowed(RULES_KEEP_CONFIRM));
	assert_false(rules_keep_allowed(RULES_KEEP_NO_WIN));
	assert_false(rules_keep_allowed(RULES_KEEP_NOT_MEASURED));
}

/* An implausible reading of one verify sends the iteration to a confirm
 * when the verdict can still turn; a confirm's own implausible reading, or a
 * verdict that cannot turn, does not. */
static void an_implausible_verify_is_confirmed_first(void **state)
{
	assert_true(rules_implausible_confirm(RULES_KEEP_IMPLAUSIBLE, EVIDENCE_VERIFY, SV_FAST));
	assert_true(rules_implausible_confirm(RULES_KEEP_IMPLAUSIBLE, EVIDENCE_VERIFY, SV_AMBIGUOUS));
	assert_false(rules_implausible_confirm(RULES_KEEP_IMPLAUSIBLE, EVIDENCE_CONFIRM, SV_FAST));
	assert_false(rules_implausible_confirm(RULES_KEEP_IMPLAUSIBLE, EVIDENCE_VERIFY, SV_SLOW));
	assert_false(rules_implausible_confirm(RULES_KEEP_IMPLAUSIBLE, EVIDENCE_NONE, SV_FAST));
	assert_false(rules_implausible_confirm(RULES_KEEP_CONFIRM, EVIDENCE_VERIFY, SV_FAST));
	assert_string_equal(evidence_source_name(EVIDENCE_CONFIRM), "confirm");
	assert_string_equal(evidence_source_name(EVIDENCE_VERIFY), "verify");
	assert_null(evidence_source_name(EVIDENCE_NONE));
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

/* DESIGN §2's table: exactly one step is open in each state of the loop, and
 * the contract gates all three. */
static void the_protocol_opens_one_step_per_state(void **state)
{
	static const struct {
		enum loop_state st;
		bool verify, log, commit;
	} want[] = {
		{ST_NO_CONTRACT, false, false, false}, {ST_NEED_BASELINE, true, false, false},
		{ST_READY, true, false, false},        {ST_EDITING, true, false, false},
		{ST_VERIFYING, false, false, false},   {ST_MEASURED, false, true, false},
		{ST_LOGGED, false, false, true},       {ST_STALLED, true, false, false},
		{ST_STOPPING, true, false, false},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(rules_step_refusal(want[i].st, STEP_VERIFY) == REFUSE_NONE,
				 want[i].verify);
		assert_int_equal(rules_step_refusal(want[i].st, STEP_LOG) == REFUSE_NONE, want[i].log);
		assert_int_equal(rules_step_refusal(want[i].st, STEP_COMMIT) == REFUSE_NONE,
				 want[i].commit);
	}
}

/* One wording per refusal, whichever step is refused: the step due is named. */
static void a_refusal_names_the_step_that_is_due(void **state)
{
	struct err e = {0};
	struct rules_facts f = {.iter = 4, .missing = "Target"};
	assert_int_equal(rules_step_check(ST_MEASURED, STEP_LOG, &f, &e), 0);
	assert_int_equal(rules_step_check(ST_MEASURED, STEP_VERIFY, &f, &e), ERR_REFUSED);
	assert_string_equal(e.msg, "verify refused: iteration 4 is measured but OPT_LOG.md has no "
				   "row for it yet (run optloop log first)");
	err_clear(&e);
	assert_int_equal(rules_step_check(ST_MEASURED, STEP_COMMIT, &f, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "commit refused: iteration 4 is measured"));
	err_clear(&e);
	assert_int_equal(rules_step_check(ST_NO_CONTRACT, STEP_COMMIT, &f, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "contract is incomplete: Target"));
	err_clear(&e);
	assert_int_equal(rules_step_check(ST_READY, STEP_COMMIT, &f, &e), ERR_REFUSED);
	assert_string_equal(e.msg, "commit refused: nothing is logged to commit (iteration 4: ready)");
	err_clear(&e);
	/* an attempt is named as one, in place of "not measured" */
	f.attempt = "the harness broke";
	assert_int_equal(rules_step_check(ST_EDITING, STEP_LOG, &f, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "was an attempt, not an iteration: the harness broke"));
	err_clear(&e);
	assert_int_equal(rules_step_check(ST_LOGGED, STEP_LOG, &f, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "already logged; commit it"));
	err_clear(&e);
}

static void stall_counts_rows_since_the_last_confirmed_win(void **state)
{
	struct rules_stall_row r[] = {
		{.base = true},
		{.win = true}, /* 1: a keep backed by a win beyond noise */
		{0},                     /* 2: revert */
		{0},                     /* 3: a keep never confirmed: still counts */
		{.not_comparable = true},/* 4: environment changed: not counted */
		{0},                     /* 5 */
	};
	assert_int_equal(rules_stall_count(r, 6), 3);
	assert_int_equal(rules_stall_count(r, 5), 2);
	assert_int_equal(rules_stall_count(r, 2), 0);
	assert_int_equal(rules_stall_count(r, 1), 0);
	assert_int_equal(rules_stall_count(r + 2, 4), 3); /* no baseline in view */
	assert_int_equal(rules_stall_count(NULL, 0), 0);
	assert_false(rules_stalled(2));
	assert_true(rules_stalled(RULES_STALL_AFTER));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_measured_run_passed_with_a_positive_bench),
		cmocka_unit_test(only_fast_or_ambiguous_can_still_win),
		cmocka_unit_test(an_impossible_time_is_never_kept_or_promoted),
		cmocka_unit_test(lints_need_an_ack_only_where_the_kernel_stays),
		cmocka_unit_test(the_keep_rule),
		cmocka_unit_test(an_implausible_verify_is_confirmed_first),
		cmocka_unit_test(one_default_threshold),
		cmocka_unit_test(stall_counts_rows_since_the_last_confirmed_win),
		cmocka_unit_test(the_protocol_opens_one_step_per_state),
		cmocka_unit_test(a_refusal_names_the_step_that_is_due),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
