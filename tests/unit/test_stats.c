/* Unit tests for stats: every estimator and verdict against values worked
 * out by hand (the comments show the arithmetic). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sb.h"
#include "core/rules.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-6
#define assert_close(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static void median_mean_std_by_hand(void **state)
{
	double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2};
	assert_close(stats_median(odd, 3), 2, EPS);
	assert_close(stats_median(even, 4), 2.5, EPS);
	assert_close(stats_mean(even, 4), 2.5, EPS);
	/* deviations ±1.5, ±0.5: (2.25+0.25+0.25+2.25)/3 = 5/3 */
	assert_close(stats_std(even, 4), sqrt(5.0 / 3.0), EPS);
	assert_true(isnan(stats_std(odd, 1)));
	assert_true(isnan(stats_median(odd, 0)));
	assert_true(isnan(stats_mean(odd, 0)));
}

static void quantiles_interpolate_linearly(void **state)
{
	double x[] = {5, 1, 4, 2, 3}, two[] = {20, 10}, one[] = {7};
	/* h = 4·0.1 = 0.4 → 1 + 0.4·(2−1); h = 3.6 → 4 + 0.6·(5−4) */
	assert_close(stats_quantile(x, 5, 0.1), 1.4, EPS);
	assert_close(stats_quantile(x, 5, 0.9), 4.6, EPS);
	assert_close(stats_quantile(two, 2, 0.1), 11, EPS);
	assert_close(stats_quantile(two, 2, 0.9), 19, EPS);
	assert_close(stats_quantile(one, 1, 0.1), 7, EPS);
	assert_close(stats_quantile(one, 1, 0.9), 7, EPS);
	assert_true(isnan(stats_quantile(x, 5, 1.5)));
}

static void summary_of_five(void **state)
{
	double x[] = {5, 1, 4, 2, 3};
	struct stats_summary s;
	stats_summarize(x, 5, &s);
	assert_int_equal(s.n, 5);
	assert_close(s.median, 3, EPS);
	assert_close(s.mean, 3, EPS);
	assert_close(s.std, sqrt(2.5), EPS); /* (4+1+0+1+4)/4 */
	assert_close(s.min, 1, EPS);
	assert_close(s.max, 5, EPS);
	assert_close(s.p10, 1.4, EPS);
	assert_close(s.p90, 4.6, EPS);
	stats_summarize(x, 1, &s); /* n = 1: a centre, no spread */
	assert_close(s.median, 5, EPS);
	assert_true(isnan(s.std));
	stats_summarize(x, 0, &s);
	assert_true(isnan(s.median));
}

static void spread_uses_range_over_d2_then_mad(void **state)
{
	double two[] = {0, 0.1128};
	double three[] = {0.05, 0, 0.1693};
	double four[] = {0, 1, 2, 2.059};
	double five[] = {1, 2, 3, 4, 100}; /* |x−3| = 2,1,0,1,97 → MAD 1 */
	assert_close(stats_d2(2), 1.128, EPS);
	assert_close(stats_d2(3), 1.693, EPS);
	assert_close(stats_d2(4), 2.059, EPS);
	assert_true(isnan(stats_d2(5)));
	assert_close(stats_spread(two, 2), 0.1, EPS);
	assert_close(stats_spread(three, 3), 0.1, EPS);
	assert_close(stats_spread(four, 4), 1.0, EPS);
	assert_close(stats_spread(five, 5), 1.4826, EPS); /* the outlier does not count */
	assert_true(isnan(stats_spread(two, 1)));
}

static void t_quantiles(void **state)
{
	assert_close(stats_t975(0), 1.959964, 1e-6);
	assert_close(stats_t975(1), 12.706, EPS);
	assert_close(stats_t975(4), 2.776, EPS);
	assert_close(stats_t975(30), 2.042, EPS);
	assert_close(stats_t975(40), 2.021, 0.001);
	assert_close(stats_t975(1000), 1.962, 0.001);
}

/* A set with one shape "s" and the given log times. */
static void set_logs(struct stats_set *s, const char *env, const char *key, const double *lg,
		     size_t n)
{
	if (env)
		stats_set_env(s, env);
	for (size_t i = 0; i < n; i++)
		stats_set_add(s, key, exp(lg[i]));
}

static void noise_pools_groups_per_environment(void **state)
{
	struct stats_set a = {0}, b = {0}, c = {0}, single = {0};
	double la[] = {0, 0.1128};            /* s = 0.1, 1 dof */
	double lb[] = {0, 0.1, 0.3386};       /* s = 0.3386/1.693 = 0.2, 2 dof */
	double lc[] = {0, 2.0, 1.0};          /* other environment: ignored */
	double ls[] = {0.5};                  /* n = 1: no spread, no dof */
	set_logs(&a, "H200", "s", la, 2);
	set_logs(&b, "H200", "s", lb, 3);
	set_logs(&c, "A100", "s", lc, 3);
	set_logs(&single, "H200", "s", ls, 1);
	const struct stats_set *g[] = {&a, &b, &c, &single};
	struct stats_noise n;

	stats_noise_pool(g, 4, "H200", "s", &n);
	/* (1·0.01 + 2·0.04) / 3 = 0.03 */
	assert_close(n.raw, sqrt(0.03), EPS);
	assert_close(n.sigma, sqrt(0.03), EPS);
	assert_int_equal(n.dof, 3);
	assert_false(n.assumed);
	assert_true(n.unstable); /* cv ≈ 17 % */
	assert_close(n.cv, sqrt(expm1(0.03)), EPS);

	stats_noise_pool(g, 4, "H200", "other-shape", &n);
	assert_true(n.assumed);
	assert_close(n.sigma, 0.02, EPS);
	assert_int_equal(n.dof, 0);
	assert_false(n.unstable);

	stats_noise_pool(g + 3, 1, "H200", "s", &n); /* only n = 1 */
	assert_true(n.assumed);

	stats_set_release(&a);
	stats_set_release(&b);
	stats_set_release(&c);
	stats_set_release(&single);
}

static void noise_has_a_floor(void **state)
{
	struct stats_set a = {0};
	double la[] = {0, 0.001128}; /* s = 0.001 */
	set_logs(&a, NULL, "s", la, 2);
	const struct stats_set *g[] = {&a};
	struct stats_noise n;
	stats_noise_pool(g, 1, NULL, "s", &n);
	assert_close(n.raw, 0.001, EPS);
	assert_close(n.sigma, 0.005, EPS);
	assert_false(n.unstable);
	stats_set_release(&a);
}

static void one_vs_one_with_assumed_noise(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&best, "s", 1.0);
	stats_set_add(&cand, "s", 0.9);
	stats_compare(&best, &cand, NULL, &c);
	/* d = ln(1/0.9) = 0.105361; band = 1.959964·0.02·√2 = 0.055437;
	 * d − band = 0.049924 ≥ −ln(0.97) = 0.030459 → fast */
	assert_int_equal(c.verdict, SV_FAST);
	assert_close(c.gain, 0.1, EPS);
	assert_close(c.speedup, 1 / 0.9, EPS);
	assert_close(c.band, 1.959964 * 0.02 * sqrt(2), 1e-6);
	assert_close(c.lo, 1 - exp(-(log(1 / 0.9) - c.band)), EPS);
	assert_true(c.flags & SF_NOISE_ASSUMED);
	assert_false(c.flags & SF_IMPLAUSIBLE_MASK);
	assert_true(strstr(c.why, "noise assumed 2%") != NULL);
	assert_true(rules_confirm_can_win(c.verdict));
	assert_true(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);

	/* 2 % faster: below the 3 % threshold, so too small to matter however
	 * wide the band: same, and no confirm is offered for it */
	stats_set_release(&cand);
	stats_set_add(&cand, "s", 0.98);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_SAME);
	assert_true(strstr(c.why, "below the threshold") != NULL);
	assert_false(rules_confirm_can_win(c.verdict));
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);

	/* 4 % faster: big enough, but the assumed band (±5.5 %) reaches back
	 * inside the threshold: ambiguous, a confirm decides */
	stats_set_release(&cand);
	stats_set_add(&cand, "s", 0.96);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_AMBIGUOUS);
	assert_true(rules_confirm_can_win(c.verdict));
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);

	/* the same 4 % slower is not a win either way */
	stats_set_release(&cand);
	stats_set_add(&cand, "s", 1.04);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_AMBIGUOUS);
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

/* History of n runs per group with a known spread, so the band is narrow. */
static void quiet_history(struct stats_set *h, const char *key)
{
	double lg[] = {0, 0.005 * 1.128}; /* s = 0.005 */
	for (int i = 0; i < 10; i++) {
		stats_set_add(h, key, exp(lg[0]));
		stats_set_add(h, key, exp(lg[1]));
	}
}

static void same_below_threshold_slow_needs_the_band(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0};
	struct stats_cmp c;
	quiet_history(&hist, "s");
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1};
	for (int i = 0; i < 3; i++)
		stats_set_add(&best, "s", 1.0);
	stats_set_add(&cand, "s", 1.005);
	stats_compare(&best, &cand, &o, &c);
	/* pooled spread ≈ 0.4 % → floor 0.5 %; band ≈ 2.08·0.005·sqrt(4/3) =
	 * 1.2 %: −0.5 % ± 1.2 % lies inside ±3 % */
	assert_int_equal(c.verdict, SV_SAME);
	assert_false(c.flags & SF_NOISE_ASSUMED);
	assert_false(rules_confirm_can_win(c.verdict));
	stats_cmp_release(&c);

	stats_set_release(&cand);
	stats_set_add(&cand, "s", 1.2);
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.verdict, SV_SLOW);
	assert_close(c.gain, -0.2, EPS);
	stats_cmp_release(&c);

	/* With no history (noise assumed 2 %) a 0.5 % change is still below
	 * the threshold: same, with nothing to confirm. */
	stats_set_release(&cand);
	stats_set_add(&cand, "s", 1.005);
	stats_set_release(&best);
	stats_set_add(&best, "s", 1.0);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_SAME);
	assert_true(c.flags & SF_NOISE_ASSUMED);
	assert_false(rules_confirm_can_win(c.verdict));
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
}

static void geomean_of_ratios_over_common_shapes(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&best, "A", 1.0);
	stats_set_add(&best, "B", 4.0);
	stats_set_add(&cand, "A", 0.5);
	stats_set_add(&cand, "B", 4.4);
	stats_compare(&best, &cand, NULL, &c);
	/* per shape 2 and 1/1.1: geomean sqrt(2/1.1) = 1.348399 */
	assert_close(c.speedup, sqrt(2 / 1.1), EPS);
	assert_int_equal(c.ncommon, 2);
	assert_int_equal(c.worst, 1); /* B got slower */
	assert_string_equal(c.shapes[c.worst].key, "B");
	assert_close(c.shapes[1].gain, -0.1, EPS);
	stats_cmp_release(&c);
	stats_set_release(&cand);

	/* B not measured: the aggregate is over A only (2.0, not the ratio of
	 * geomeans sqrt(1·4)/0.5 = 4), and the verdict says missing */
	stats_set_add(&cand, "A", 0.5);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_MISSING);
	assert_close(c.speedup, 2.0, EPS);
	assert_int_equal(c.ncommon, 1);
	assert_false(rules_confirm_can_win(c.verdict));
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void unequal_n_uses_medians_and_both_counts(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&best, "s", 1.0);
	stats_set_add(&best, "s", 1.2);
	stats_set_add(&best, "s", 1.1);
	stats_set_add(&cand, "s", 1.0);
	stats_compare(&best, &cand, NULL, &c);
	/* best median 1.1, candidate 1.0 */
	assert_close(c.shapes[0].best_ms, 1.1, EPS);
	assert_int_equal(c.shapes[0].n_best, 3);
	assert_int_equal(c.shapes[0].n_cand, 1);
	assert_close(c.speedup, 1.1, EPS);
	/* noise from the best's own 3 runs: range ln(1.2) / 1.693, 2 dof;
	 * se = s·sqrt((1.160²)/3 + 1): a median of 3 has 1.160 times the error
	 * of a mean of 3 */
	double s = log(1.2) / 1.693;
	assert_close(c.shapes[0].noise.sigma, s, EPS);
	assert_close(c.band, 4.303 * s * sqrt(1.160 * 1.160 / 3 + 1), EPS);
	assert_int_equal(c.dof, 2);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void changed_environment_is_not_comparable(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_env(&best, "NVIDIA H200 | CUDA 13.0 | PyTorch 2.11.0");
	stats_set_env(&cand, "NVIDIA H200 | CUDA 12.8 | PyTorch 2.11.0");
	stats_set_add(&best, "s", 1.0);
	stats_set_add(&cand, "s", 0.5);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_NOT_COMPARABLE);
	assert_true(c.flags & SF_ENV_CHANGED);
	assert_true(strstr(c.why, "re-measure the best") != NULL);
	assert_false(rules_confirm_can_win(c.verdict));
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void changed_shape_set_is_not_comparable(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&best, "A", 1.0);
	stats_set_add(&cand, "A", 0.9);
	stats_set_add(&cand, "C", 0.9);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_NOT_COMPARABLE);
	assert_true(c.flags & SF_SHAPES_CHANGED);
	stats_cmp_release(&c);
	stats_set_release(&cand);
	stats_set_add(&cand, "C", 0.9); /* nothing in common at all */
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_NOT_COMPARABLE);
	assert_int_equal(c.ncommon, 0);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void zero_negative_and_nan_times(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&best, "s", 1.0);
	stats_set_add(&cand, "s", 0.0);
	stats_compare(&best, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_MISSING);
	assert_true(c.flags & SF_BAD_TIME);
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);

	stats_set_add(&cand, "s", NAN);
	stats_set_add(&cand, "s", -1.0);
	stats_set_add(&cand, "s", 0.9);
	stats_compare(&best, &cand, NULL, &c);
	/* the one usable time is measured, the rest flagged */
	assert_int_equal(c.shapes[0].n_cand, 1);
	assert_close(c.speedup, 1 / 0.9, EPS);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.flags & SF_BAD_TIME);
	assert_false(rules_promotes(c.verdict, c.flags, false)); /* fast, but a bad time blocks it */
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void implausible_speedups_are_flagged(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&best, "s", 1.0);
	stats_set_add(&cand, "s", 0.6); /* 1.67× */
	stats_compare(&best, &cand, NULL, &c);
	assert_true(c.flags & SF_IMPLAUSIBLE_AGG);
	assert_false(c.flags & SF_IMPLAUSIBLE_SHAPE);
	assert_int_equal(c.verdict, SV_FAST);
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);

	/* one shape 3.5×, three unchanged: aggregate 3.5^¼ = 1.368 (not > 1.5)
	 * but that shape is implausible and the win is confined to it */
	const char *k[] = {"A", "B", "C", "D"};
	for (int i = 0; i < 4; i++) {
		stats_set_add(&best, k[i], 1.0);
		stats_set_add(&cand, k[i], i == 0 ? 1 / 3.5 : 1.0);
	}
	stats_compare(&best, &cand, NULL, &c);
	assert_close(c.speedup, pow(3.5, 0.25), EPS);
	assert_false(c.flags & SF_IMPLAUSIBLE_AGG);
	assert_true(c.flags & SF_IMPLAUSIBLE_SHAPE);
	assert_true(c.flags & SF_CONFINED);
	json_t *f = stats_flags_json(c.flags);
	assert_string_equal(json_string_value(json_array_get(f, 0)), "implausible");
	assert_int_equal(stats_flags_parse(f), c.flags);
	json_decref(f);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);

	/* two shapes both 10 % faster: not confined */
	stats_set_add(&best, "A", 1.0);
	stats_set_add(&best, "B", 1.0);
	stats_set_add(&cand, "A", 0.9);
	stats_set_add(&cand, "B", 0.9);
	stats_compare(&best, &cand, NULL, &c);
	assert_false(c.flags & SF_IMPLAUSIBLE_MASK);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void collapsed_noise_is_flagged(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0};
	struct stats_cmp c;
	double lh[] = {0, 0.05 * 1.693 / 2, 0.05 * 1.693}; /* s = 0.05 */
	set_logs(&hist, NULL, "s", lh, 3);
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1};
	stats_set_add(&best, "s", 1.0);
	for (int i = 0; i < 3; i++)
		stats_set_add(&cand, "s", 0.8);
	stats_compare(&best, &cand, &o, &c);
	assert_true(c.flags & SF_COLLAPSED);
	stats_cmp_release(&c);

	/* one shape collapsed and another measured normally: not flagged */
	double lo[] = {0, 0.04, 0.08};
	set_logs(&hist, NULL, "t", lh, 3);
	stats_set_add(&best, "t", 1.0);
	set_logs(&cand, NULL, "t", lo, 3);
	stats_compare(&best, &cand, &o, &c);
	assert_false(c.flags & SF_COLLAPSED);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_add(&best, "s", 1.0);

	/* a candidate with an ordinary spread is not flagged */
	stats_set_release(&cand);
	double lc[] = {log(0.8), log(0.8) + 0.04, log(0.8) + 0.08};
	set_logs(&cand, NULL, "s", lc, 3);
	stats_compare(&best, &cand, &o, &c);
	assert_false(c.flags & SF_COLLAPSED);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
}

static void unstable_noise_is_flagged(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	double lb[] = {0, 0.15 * 1.128}; /* s = 0.15: cv ≈ 15 % */
	set_logs(&best, NULL, "s", lb, 2);
	stats_set_add(&cand, "s", 1.0);
	stats_compare(&best, &cand, NULL, &c);
	assert_true(c.flags & SF_UNSTABLE);
	struct sb t = SB_INIT;
	stats_flags_text(c.flags, &t);
	assert_string_equal(t.buf, "unstable");
	sb_release(&t);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void no_best_and_no_candidate(void **state)
{
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&cand, "s", 1.0);
	stats_compare(NULL, &cand, NULL, &c);
	assert_int_equal(c.verdict, SV_NONE);
	stats_cmp_release(&c);
	stats_set_add(&best, "s", 1.0);
	stats_compare(&best, NULL, NULL, &c);
	assert_int_equal(c.verdict, SV_MISSING);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

static void threshold_is_configurable(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0};
	struct stats_cmp c;
	quiet_history(&hist, "s");
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1, .threshold = 0.03};
	for (int i = 0; i < 3; i++)
		stats_set_add(&best, "s", 1.0);
	/* band: pooled spread floored to 0.5 %, se = 0.005·sqrt(1.16²/3 + 1),
	 * t(21) = 2.080 → 0.0124; d = −ln 0.955 = 0.0460, d − band = 0.0336 ≥
	 * −ln 0.97 = 0.0305 → fast */
	stats_set_add(&cand, "s", 0.955);
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.verdict, SV_FAST);
	stats_cmp_release(&c);
	o.threshold = 0.07; /* d + band = 0.058 < −ln 0.93 = 0.0726: inside ±7 % */
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.verdict, SV_SAME);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
}

static void names_round_trip_and_json(void **state)
{
	for (int v = SV_NONE; v <= SV_NOT_COMPARABLE; v++)
		assert_int_equal(stats_verdict_parse(stats_verdict_name(v)), v);
	assert_string_equal(stats_verdict_name(SV_NOT_COMPARABLE), "not_comparable");
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	stats_set_add(&best, "s", 1.0);
	stats_set_add(&cand, "s", 0.9);
	stats_compare(&best, &cand, NULL, &c);
	json_t *j = stats_cmp_json(&c);
	assert_string_equal(json_string_value(json_object_get(j, "verdict")), "fast");
	assert_close(json_real_value(json_object_get(j, "vs_best")), 0.1, EPS);
	assert_string_equal(json_string_value(json_object_get(j, "worst_shape")), "s");
	json_decref(j);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

/* Quantiles and spreads selected without sorting give a sort's figures to
 * the last bit: every size to 40 and a large one, values with many ties,
 * every quantile the statistics read. */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void quantiles_match_a_sort_to_the_last_bit(void **state)
{
	static const double ps[] = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1};
	unsigned r = 777;
	(void)state;
	for (size_t n = 1; n <= 1001; n = n < 40 ? n + 1 : n + 961) {
		for (int trial = 0; trial < 20; trial++) {
			double *x = malloc(n * sizeof(*x)), *v = malloc(n * sizeof(*v));
			for (size_t i = 0; i < n; i++) {
				r = r * 1103515245u + 12345u;
				/* few distinct values in odd trials: ties everywhere */
				unsigned q = (r >> 16) % (trial % 2 ? 4u : 100000u);
				x[i] = log(1.0 + q / 1000.0);
			}
			memcpy(v, x, n * sizeof(*v));
			qsort(v, n, sizeof(*v), cmp_dbl);
			for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
				double h = (double)(n - 1) * ps[k];
				size_t lo = (size_t)floor(h), hi = lo + 1 < n ? lo + 1 : lo;
				double want = v[lo] + (h - (double)lo) * (v[hi] - v[lo]);
				double got = stats_quantile(x, n, ps[k]);
				assert_memory_equal(&got, &want, sizeof(got));
			}
			if (n >= 5) {
				double med = v[(n - 1) / 2] + ((double)(n - 1) * 0.5 - (double)((n - 1) / 2)) *
								 (v[n / 2] - v[(n - 1) / 2]);
				for (size_t i = 0; i < n; i++)
					v[i] = fabs(v[i] - med);
				qsort(v, n, sizeof(*v), cmp_dbl);
				double h = (double)(n - 1) * 0.5;
				size_t lo = (size_t)floor(h), hi = lo + 1 < n ? lo + 1 : lo;
				double want = 1.4826 * (v[lo] + (h - (double)lo) * (v[hi] - v[lo]));
				double got = stats_spread(x, n);
				assert_memory_equal(&got, &want, sizeof(got));
			}
			free(x);
			free(v);
		}
	}
}

/* Runs of many sessions, interleaved, collapse into their sessions' centres
 * exactly as the same runs given session after session (in the order of
 * each session's first run): the same term to the last bit.  A run of no
 * session (0) is a centre of its own. */
static void interleaved_sessions_pool_as_grouped_ones(void **state)
{
	enum { NS = 300, PER = 3 };
	struct stats_set mixed = {0}, grouped = {0};
	int sess[NS * PER + 4];
	double ms[NS * PER + 4];
	size_t n = 0;
	unsigned r = 12345;

	(void)state;
	/* round-robin over sessions NS..1 (descending ids, so that id order
	 * and first-run order differ), with runs of no session among them */
	for (int k = 0; k < PER; k++)
		for (int j = 0; j < NS; j++) {
			r = r * 1103515245u + 12345u;
			sess[n] = NS - j;
			ms[n++] = 1.0 + (double)(r >> 16 & 0x3ff) / 4096.0;
			if (j == 7 && k < 2) {
				sess[n] = 0;
				ms[n++] = 1.1 + 0.01 * k;
			}
		}
	for (size_t i = 0; i < n; i++)
		stats_set_add_run(&mixed, "s", ms[i], sess[i]);
	/* grouped: each session's runs together, sessions in first-run order */
	bool *done = calloc(n, sizeof(*done));
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			if (!done[j] && (j == i || (sess[i] != 0 && sess[j] == sess[i]))) {
				stats_set_add_run(&grouped, "s", ms[j], sess[j]);
				done[j] = true;
			}
	}
	free(done);
	struct stats_noise_term a, b;
	stats_noise_term(&mixed, NULL, "s", &a);
	stats_noise_term(&grouped, NULL, "s", &b);
	assert_int_equal(a.runs, NS + 2); /* one centre a session, and the two lone runs */
	assert_int_equal(a.runs, b.runs);
	assert_int_equal(a.dof, b.dof);
	assert_memory_equal(&a.ss, &b.ss, sizeof(a.ss));
	stats_set_release(&mixed);
	stats_set_release(&grouped);
}

/* A history of earlier confirm sessions of another kernel state: within
 * each, two runs 0.8 % apart; between sessions, 5 % apart. */
static void session_history_at(struct stats_set *h, const char *key, double sigma)
{
	for (int k = 0; k < 4; k++) {
		double c = (k % 2) ? 1.05 : 1.0;
		stats_set_add_run(h, key, c, 100 + k);
		stats_set_add_run(h, key, c * exp(sigma * 1.128), 100 + k);
	}
}

static void session_history(struct stats_set *h, const char *key)
{
	session_history_at(h, key, 0.008);
}

/* One pair against a very noisy history under the bound for every look: the
 * interval's lower end is far below -1000 %, and is said so, not as a
 * number of 20 digits. */
static void a_far_lower_bound_reads_below_minus_1000(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0};
	struct stats_cmp c;
	session_history_at(&hist, "s", 1.5);
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true};
	stats_set_add_run(&best, "s", 1.0, 7);
	stats_set_add_run(&cand, "s", 0.6, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_true(c.lo < -10);
	assert_non_null(strstr(c.why, "interval below -1000% .. +"));
	assert_null(strstr(c.why, "00000"));
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
}

static void sequential_test_decides_after_each_pair(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0}, sb_ = {0}, sc_ = {0};
	struct stats_cmp c, screen;
	session_history_at(&hist, "s", 0.005);
	const struct stats_set *h[] = {&hist};
	/* the screen: the best over four sessions within 0.3 %, the
	 * candidate's verify 10 % faster: it vouches for a one-pair decision */
	for (int k = 0; k < 4; k++)
		stats_set_add_run(&sb_, "s", 1.0 + 0.001 * k, 200 + k);
	stats_set_add_run(&sc_, "s", 0.9, 210);
	stats_compare(&sb_, &sc_, NULL, &screen);
	struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true, .screen = &screen};

	/* One pair, 10 % faster, within-session noise measured at 0.5 % over 8
	 * runs: se = 0.005·√2, LLR = θ·(d − 1.5θ)/se² with θ = −ln 0.97. */
	stats_set_add_run(&best, "s", 1.0, 7);
	stats_set_add_run(&cand, "s", 0.9, 7);
	stats_compare(&best, &cand, &o, &c);
	double th = -log(0.97), d = log(1 / 0.9), se = 0.005 * sqrt(2);
	assert_true(c.paired);
	assert_int_equal(c.noise_runs, 8);
	assert_close(c.llr, th * (d - 1.5 * th) / (se * se), 1e-3);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.decided);
	assert_false(stats_confirm_more(&c, 1, 8));
	assert_true(rules_promotes(c.verdict, c.flags, false));
	assert_true(strstr(c.why, "sequential test accepts the win") != NULL);
	assert_true(strstr(c.why, "noise from 8 runs") != NULL);
	json_t *j = stats_cmp_json(&c);
	assert_true(json_is_true(json_object_get(json_object_get(j, "sequential"), "decided")));
	assert_int_equal(json_integer_value(json_object_get(j, "noise_runs")), 8);
	json_decref(j);
	stats_cmp_release(&c);

	/* With nothing to vouch for it (no screen) one pair decides no win. */
	o.screen = NULL;
	stats_compare(&best, &cand, &o, &c);
	assert_true(c.lone_pair);
	assert_int_equal(c.verdict, SV_AMBIGUOUS);
	assert_false(c.decided);
	assert_true(strstr(c.why, "one pair cannot decide a win here") != NULL);
	stats_cmp_release(&c);
	/* a second pair that shows the win too decides it */
	stats_set_add_run(&best, "s", 1.0, 7);
	stats_set_add_run(&cand, "s", 0.9, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_false(c.lone_pair);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.decided);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_add_run(&best, "s", 1.0, 7);
	stats_set_add_run(&cand, "s", 0.9, 7);

	/* Unchanged (and no screen saying otherwise): the ratio test rules a
	 * win of the threshold out at once. */
	stats_set_release(&cand);
	stats_set_add_run(&cand, "s", 1.001, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.verdict, SV_SAME);
	assert_true(c.decided);
	assert_true(c.llr <= log(STATS_SEQ_BETA / (1 - STATS_SEQ_ALPHA)));
	assert_false(stats_confirm_more(&c, 1, 8));
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);

	/* 4 % faster, right between the two hypotheses: undecided, so another
	 * pair, until the cap. */
	stats_set_release(&cand);
	stats_set_add_run(&cand, "s", 0.96, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_false(c.decided);
	assert_int_not_equal(c.verdict, SV_FAST);
	assert_true(strstr(c.why, "undecided") != NULL);
	assert_true(stats_confirm_more(&c, 1, 8));
	assert_false(stats_confirm_more(&c, 8, 8));
	assert_true(stats_confirm_more(&c, 1, 0)); /* 0: the default cap */
	assert_false(stats_confirm_more(&c, STATS_CONFIRM_MAX_PAIRS, 0));
	stats_cmp_release(&c);

	/* Without the sequential option the same data gives no ratio. */
	o.sequential = false;
	stats_compare(&best, &cand, &o, &c);
	assert_true(isnan(c.llr));
	assert_false(c.decided);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
	stats_set_release(&sb_);
	stats_set_release(&sc_);
	stats_cmp_release(&screen);
}

/* A win the ratio test accepts while the bound under every look, wide
 * with the noise measured by few runs, still reaches below the threshold:
 * the verdict names the 95 % interval that decided it, so a decided win
 * never reads as one whose only interval spans zero. */
static void a_ratio_test_win_names_the_interval_that_decided(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0};
	struct stats_cmp c;
	/* one earlier session, two runs 1.5 % apart: noise on one degree of
	 * freedom of history */
	stats_set_add_run(&hist, "s", 1.0, 100);
	stats_set_add_run(&hist, "s", 1.015, 100);
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true};
	for (int k = 0; k < 2; k++) {
		stats_set_add_run(&best, "s", 1.0 + 0.004 * k, 7);
		stats_set_add_run(&cand, "s", 0.9 + 0.004 * k, 7);
	}
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.decided);
	assert_true(c.lo < 0); /* the bound under every look spans zero */
	double d = log(1 / 0.9), t95 = stats_t975(c.dof);
	char want[160];
	snprintf(want, sizeof(want), "95%% interval at this look %+.1f%% .. %+.1f%% past the threshold",
		 100 * -expm1(-(d - t95 * c.se)), 100 * -expm1(-(d + t95 * c.se)));
	assert_non_null(strstr(c.why, "sequential test accepts the win (its ratio test"));
	assert_non_null(strstr(c.why, want));
	json_t *j = stats_cmp_json(&c), *sq = json_object_get(j, "sequential");
	assert_string_equal(json_string_value(json_object_get(sq, "accepted_by")), "ratio test");
	assert_true(json_real_value(json_array_get(json_object_get(sq, "interval95"), 0)) > 0.03);
	json_decref(j);
	stats_cmp_release(&c);

	/* A win far past the threshold clears the bound itself: accepted by
	 * the interval, and the verdict says nothing more. */
	stats_set_release(&cand);
	for (int k = 0; k < 2; k++)
		stats_set_add_run(&cand, "s", 0.5 + 0.002 * k, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.lo > 0.03);
	assert_null(strstr(c.why, "its ratio test"));
	j = stats_cmp_json(&c);
	sq = json_object_get(j, "sequential");
	assert_string_equal(json_string_value(json_object_get(sq, "accepted_by")), "interval");
	assert_null(json_object_get(sq, "interval95"));
	json_decref(j);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
	(void)state;
}

/* All confirms of one candidate share one error budget: the k-th decides at
 * alpha / 2^(k-1), so a result a first confirm accepts by its ratio test is
 * not accepted again by a fourth one ("confirm until fast" is no way to a
 * win), and its bound is wider. */
static void later_confirms_of_a_candidate_spend_less_alpha(void **state)
{
	struct stats_set hist = {0};
	assert_true(stats_alpha(0) == STATS_SEQ_ALPHA);
	assert_true(stats_alpha(1) == STATS_SEQ_ALPHA / 2);
	assert_true(stats_alpha(3) == STATS_SEQ_ALPHA / 8);
	stats_set_add_run(&hist, "s", 1.0, 100);
	stats_set_add_run(&hist, "s", 1.015, 100);
	const struct stats_set *h[] = {&hist};
	/* the same two pairs read by a first and by a fourth confirm, over
	 * candidates from 1 % to 30 % faster */
	int first_only = 0;
	for (int pct = 1; pct <= 30; pct++) {
		struct stats_set best = {0}, cand = {0};
		struct stats_cmp first, fourth;
		for (int k = 0; k < 2; k++) {
			stats_set_add_run(&best, "s", 1.0 + 0.004 * k, 7);
			stats_set_add_run(&cand, "s", 1.0 - 0.01 * pct + 0.004 * k, 7);
		}
		struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true};
		stats_compare(&best, &cand, &o, &first);
		o.spent = 3;
		stats_compare(&best, &cand, &o, &fourth);
		bool win1 = first.verdict == SV_FAST && first.decided;
		bool win4 = fourth.verdict == SV_FAST && fourth.decided;
		assert_true(fourth.level > first.level);
		assert_true(fourth.band > first.band);
		assert_false(win4 && !win1); /* never easier later */
		first_only += win1 && !win4;
		if (pct == 30) {
			json_t *j = stats_cmp_json(&fourth), *sq = json_object_get(j, "sequential");
			assert_int_equal(json_integer_value(json_object_get(sq, "confirms_before")), 3);
			assert_true(json_real_value(json_object_get(sq, "alpha")) == STATS_SEQ_ALPHA / 8);
			json_decref(j);
			struct sb t = SB_INIT;
			stats_level_text(&fourth, &t);
			assert_non_null(strstr(t.buf, "a later confirm of the candidate"));
			sb_release(&t);
		}
		stats_cmp_release(&first);
		stats_cmp_release(&fourth);
		stats_set_release(&best);
		stats_set_release(&cand);
	}
	/* somewhere the budget decides: a win the first confirm accepts that a
	 * fourth one does not */
	assert_true(first_only > 0);
	stats_set_release(&hist);
	(void)state;
}

static void a_short_session_must_agree_with_the_other_sessions(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0}, sb_ = {0}, sc_ = {0};
	struct stats_cmp screen, c;
	session_history(&hist, "s");
	const struct stats_set *h[] = {&hist};
	/* the screen: the candidate's verify read the same as the best's
	 * history, within 0.5 % */
	for (int k = 0; k < 4; k++)
		stats_set_add_run(&sb_, "s", 1.0 + 0.001 * k, 200 + k);
	stats_set_add_run(&sc_, "s", 1.0, 210);
	struct stats_opts so = {.history = h, .nhistory = 1};
	stats_compare(&sb_, &sc_, &so, &screen);
	assert_true(fabs(screen.gain) < 0.01);
	/* one pair where the best's run met interference (10 % slow) */
	struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true, .screen = &screen};
	stats_set_add_run(&best, "s", 1.1, 7);
	stats_set_add_run(&cand, "s", 1.0, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_true(c.disagrees);
	assert_false(c.decided);
	assert_int_equal(c.verdict, SV_AMBIGUOUS);
	assert_false(rules_promotes(c.verdict, c.flags, false));
	assert_true(stats_confirm_more(&c, 1, 8));
	assert_true(strstr(c.why, "disagrees with the candidate's other runs") != NULL);
	stats_cmp_release(&c);
	/* three more pairs read what the screen said: the Hodges-Lehmann
	 * estimate of the four pair differences outvotes the disturbed run
	 * (the median of the ten Walsh averages, 0.075 %: same), and no
	 * agreement is asked of four pairs */
	stats_set_add_run(&best, "s", 1.0, 7);
	stats_set_add_run(&cand, "s", 1.0, 7);
	stats_set_add_run(&best, "s", 1.002, 7);
	stats_set_add_run(&cand, "s", 1.001, 7);
	stats_set_add_run(&best, "s", 1.0, 7);
	stats_set_add_run(&cand, "s", 1.0, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_false(c.disagrees);
	double w = 0.5 * (log(1.002) - log(1.001)); /* (d2 + d3)/2, the fifth of ten; d3 the sixth */
	assert_close(log(c.speedup), 0.5 * (w + (log(1.002) - log(1.001))), 1e-9);
	assert_int_equal(c.verdict, SV_SAME);
	assert_false(rules_promotes(c.verdict, c.flags, false));
	stats_cmp_release(&c);
	stats_cmp_release(&screen);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
	stats_set_release(&sb_);
	stats_set_release(&sc_);
}

static void within_session_noise_falls_back_to_the_spread_between_sessions(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0};
	struct stats_cmp c;
	/* another kernel measured once in each of three sessions: only the
	 * spread between sessions is known */
	stats_set_add_run(&hist, "s", 1.00, 11);
	stats_set_add_run(&hist, "s", 1.02, 12);
	stats_set_add_run(&hist, "s", 0.99, 13);
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true};
	stats_set_add_run(&best, "s", 1.0, 7);
	stats_set_add_run(&cand, "s", 0.9, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.nshapes, 1);
	assert_false(c.shapes[0].noise.assumed);
	assert_true(c.shapes[0].noise.crossed);
	assert_int_equal(c.shapes[0].noise.runs, 3);
	assert_false(c.flags & SF_NOISE_ASSUMED);
	stats_cmp_release(&c);

	/* nothing repeated anywhere: assumed, and said so */
	stats_compare(&best, &cand, NULL, &c);
	assert_true(c.shapes[0].noise.assumed);
	assert_int_equal(c.noise_runs, 0);
	assert_true(strstr(c.why, "noise assumed 2%") != NULL);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
}

/* Noise measured under load must not outvote quiet measurements made
 * since: the newest sessions speak for the spread within a session. */
static void newer_quiet_sessions_outvote_an_older_loaded_one(void **state)
{
	struct stats_set best = {0}, cand = {0}, loaded = {0}, quiet = {0};
	struct stats_cmp c;
	/* a loaded period: eight runs of the best in one session, ±30 % */
	static const double lv[8] = {1.0, 1.4, 0.8, 1.3, 0.9, 1.6, 1.1, 0.75};
	for (int k = 0; k < 8; k++)
		stats_set_add_run(&loaded, "s", lv[k], 20);
	/* later, a quiet optloop noise: five runs within 0.7 % */
	static const double qv[5] = {1.000, 1.007, 0.996, 1.004, 0.993};
	for (int k = 0; k < 5; k++)
		stats_set_add_run(&quiet, "s", qv[k], 30);
	const struct stats_set *h[] = {&loaded, &quiet};
	struct stats_opts o = {.history = h, .nhistory = 2, .sequential = true};
	/* a confirm's first pair: 25 % faster */
	stats_set_add_run(&best, "s", 1.0, 40);
	stats_set_add_run(&cand, "s", 0.75, 40);
	stats_compare(&best, &cand, &o, &c);
	assert_true(c.paired);
	assert_int_equal(c.shapes[0].noise.runs, 5); /* the quiet session alone */
	assert_true(c.shapes[0].noise.sigma < 0.01);
	assert_true(c.lo > c.threshold); /* the interval is decided */
	stats_cmp_release(&c);

	/* the same sessions the other way round: the loaded one is the newer */
	struct stats_set loaded2 = {0};
	for (int k = 0; k < 8; k++)
		stats_set_add_run(&loaded2, "s", lv[k], 35);
	const struct stats_set *h2[] = {&quiet, &loaded2};
	o.history = h2;
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.shapes[0].noise.runs, 8);
	assert_true(c.shapes[0].noise.sigma > 0.1);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&loaded);
	stats_set_release(&loaded2);
	stats_set_release(&quiet);
}

/* The interval a confirm reports is the one it decides by: whenever it lies
 * wholly past the threshold the verdict is fast (the guards against a lone
 * or disagreeing pair aside), and it is the bound under every look. */
static void a_decided_interval_decides(void **state)
{
	uint64_t x = 0x2545F4914F6CDD1Dull;
	int decided_by_interval = 0;
	for (int trial = 0; trial < 400; trial++) {
		struct stats_set best = {0}, cand = {0}, hist = {0};
		struct stats_cmp c;
		double effect = 0.02 + 0.003 * (trial % 100), sigma = 0.01 + 0.002 * (trial / 100 * 10);
		session_history_at(&hist, "s", sigma);
		const struct stats_set *h[] = {&hist};
		struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true};
		for (int k = 0; k < 6; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			double u = (double)(x >> 11) / 9007199254740992.0 - 0.5;
			stats_set_add_run(&best, "s", exp(sigma * u), 50);
			stats_set_add_run(&cand, "s", (1 - effect) * exp(-sigma * u * 0.5), 50);
		}
		stats_compare(&best, &cand, &o, &c);
		assert_true(c.level > 0.99); /* under every look, not 95 % */
		if (c.lo >= c.threshold && !c.lone_pair && !c.disagrees) {
			assert_int_equal(c.verdict, SV_FAST);
			decided_by_interval++;
		}
		stats_cmp_release(&c);
		stats_set_release(&best);
		stats_set_release(&cand);
		stats_set_release(&hist);
	}
	assert_true(decided_by_interval > 10); /* the property was exercised */
	/* a single look reports 95 % */
	struct stats_set b = {0}, k = {0};
	struct stats_cmp c;
	stats_set_add_run(&b, "s", 1.0, 1);
	stats_set_add_run(&k, "s", 0.8, 2);
	stats_compare(&b, &k, NULL, &c);
	assert_true(fabs(c.level - 0.95) < 1e-9);
	assert_non_null(strstr(c.why, "95% interval"));
	stats_cmp_release(&c);
	stats_set_release(&b);
	stats_set_release(&k);
}

static void t_quantiles_and_the_bound_under_every_look(void **state)
{
	assert_close(stats_t_quantile(0.975, 0), 1.959964, 1e-5);
	assert_close(stats_t_quantile(0.975, 1), 12.7062, 1e-3);
	assert_close(stats_t_quantile(0.975, 2), 4.3027, 1e-3);
	assert_close(stats_t_quantile(0.975, 5), 2.5706, 0.02);
	assert_close(stats_t_quantile(0.975, 30), 2.0423, 0.002);
	assert_close(stats_t_quantile(0.995, 0), 2.575829, 1e-5);
	assert_close(stats_t_quantile(0.025, 0), -1.959964, 1e-5);
	/* far tails: wide, never narrow */
	assert_true(stats_t_quantile(1 - 0.005 / 16, 10) > 4.3);

	/* A 2x win under 15 % run-to-run noise: the ratio test (built around
	 * a change of 3 % against 6 %) is slow that far out; the bound that
	 * holds under every look accepts it once it clears the threshold. */
	struct stats_set best = {0}, cand = {0};
	struct stats_cmp c;
	const double f[] = {1.0, 1.22, 0.85, 1.08, 0.92, 1.18};
	for (int i = 0; i < 6; i++) {
		stats_set_add_run(&best, "s", 2.0 * f[i], 7);
		stats_set_add_run(&cand, "s", 1.0 * f[(i + 1) % 6], 7);
	}
	struct stats_opts o = {.sequential = true};
	stats_compare(&best, &cand, &o, &c);
	double thr_win = -log(0.97);
	assert_true(c.llr < log((1 - STATS_SEQ_BETA) / STATS_SEQ_ALPHA));
	assert_true(log(c.speedup) - stats_t_quantile(1 - STATS_SEQ_ALPHA / STATS_SEQ_LOOKS, c.dof) * c.se >=
		    thr_win);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.decided);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
}

/* In-process pairs: the noise of one pair is the spread of the pairs' own
 * log ratios within sessions (A/A), not what two runs of a side spread; one
 * pair then decides without the fresh-process guards. */
static void in_process_pairs_use_their_own_spread(void **state)
{
	(void)state;
	struct stats_set best = {0}, cand = {0}, pairs = {0}, hist = {0};
	struct stats_cmp c;
	/* the sides' own runs spread by 10 % between processes (a slow mode) */
	for (int k = 0; k < 4; k++)
		stats_set_add_run(&hist, "s", k % 2 ? 1.0 : 1.1, 30);
	/* five A/A pairs in session 40: ratios 1 ± 0.2 % */
	static const double aa[] = {1.002, 0.998, 1.001, 0.999, 1.0};
	for (int k = 0; k < 5; k++)
		stats_set_add_run(&pairs, "s", aa[k], 40);
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true, .pairs = &pairs};
	stats_set_add_run(&best, "s", 1.6, 7); /* this process is slow: both sides */
	stats_set_add_run(&cand, "s", 1.6 / 1.1, 7);
	stats_set_add_run(&pairs, "s", 1.1, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_true(c.paired);
	assert_true(c.shapes[0].noise.pairs);
	assert_int_equal(c.noise_runs, 5);
	/* the floor, 0.5 %, over the A/A spread */
	assert_close(c.se, 0.005, 1e-9);
	assert_int_equal(c.verdict, SV_FAST);
	assert_true(c.decided);
	assert_false(c.lone_pair);
	assert_true(strstr(c.why, "noise from 5 in-process pairs") != NULL);
	json_t *j = stats_cmp_json(&c);
	json_t *s0 = json_array_get(json_object_get(j, "shapes"), 0);
	assert_string_equal(json_string_value(json_object_get(s0, "noise_from")), "pairs");
	json_decref(j);
	stats_cmp_release(&c);
	/* without the pairs' spread the same pair is judged by the sides'
	 * 10 % and decides nothing */
	o.pairs = NULL;
	stats_compare(&best, &cand, &o, &c);
	assert_false(c.shapes[0].noise.pairs);
	assert_false(c.decided);
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&pairs);
	stats_set_release(&hist);
}

/* Every field of a comparison, compared exactly (doubles bit for bit). */
static void assert_same_cmp(const struct stats_cmp *a, const struct stats_cmp *b)
{
	assert_int_equal(a->verdict, b->verdict);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->ncommon, b->ncommon);
	assert_int_equal(a->spent, b->spent);
	assert_int_equal(a->dof, b->dof);
	assert_int_equal(a->paired, b->paired);
	assert_int_equal(a->decided, b->decided);
	assert_int_equal(a->disagrees, b->disagrees);
	assert_int_equal(a->lone_pair, b->lone_pair);
	assert_int_equal(a->noise_runs, b->noise_runs);
	assert_int_equal(a->worst, b->worst);
	const double *da[] = {&a->threshold, &a->speedup, &a->gain, &a->lo, &a->hi, &a->level,
			      &a->alpha, &a->band, &a->llr, &a->screen_gap, &a->screen_tol, &a->se};
	const double *db[] = {&b->threshold, &b->speedup, &b->gain, &b->lo, &b->hi, &b->level,
			      &b->alpha, &b->band, &b->llr, &b->screen_gap, &b->screen_tol, &b->se};
	for (size_t i = 0; i < sizeof(da) / sizeof(*da); i++)
		assert_true(memcmp(da[i], db[i], sizeof(double)) == 0 ||
			    (isnan(*da[i]) && isnan(*db[i])));
	assert_true((!a->why && !b->why) || !strcmp(a->why, b->why));
	assert_int_equal(a->nshapes, b->nshapes);
	for (size_t i = 0; i < a->nshapes; i++) {
		const struct stats_shape_cmp *x = &a->shapes[i], *y = &b->shapes[i];
		assert_string_equal(x->key, y->key);
		assert_int_equal(x->n_best, y->n_best);
		assert_int_equal(x->n_cand, y->n_cand);
		assert_int_equal(x->in_best, y->in_best);
		assert_int_equal(x->in_cand, y->in_cand);
		const double xs[] = {x->best_ms, x->cand_ms, x->speedup, x->gain, x->lo, x->hi,
				     x->noise.sigma, x->noise.raw, x->noise.cv};
		const double ys[] = {y->best_ms, y->cand_ms, y->speedup, y->gain, y->lo, y->hi,
				     y->noise.sigma, y->noise.raw, y->noise.cv};
		for (size_t k = 0; k < sizeof(xs) / sizeof(*xs); k++)
			assert_true(memcmp(&xs[k], &ys[k], sizeof(double)) == 0 ||
				    (isnan(xs[k]) && isnan(ys[k])));
		assert_int_equal(x->noise.dof, y->noise.dof);
		assert_int_equal(x->noise.runs, y->noise.runs);
		assert_int_equal(x->noise.assumed, y->noise.assumed);
		assert_int_equal(x->noise.crossed, y->noise.crossed);
		assert_int_equal(x->noise.unstable, y->noise.unstable);
		assert_int_equal(x->noise.pairs, y->noise.pairs);
	}
}

/* A comparison packed for the store, written out as text and read back, is
 * the one that was made to the last bit: the sequential test's figures, the
 * shapes only one side measured (NaN times), infinities, and a why. */
static void a_packed_comparison_reads_back_exactly(void **state)
{
	struct stats_set best = {0}, cand = {0}, hist = {0};
	struct stats_cmp c, back;
	session_history_at(&hist, "s", 0.004);
	session_history_at(&hist, "t", 0.011);
	const struct stats_set *h[] = {&hist};
	struct stats_opts o = {.history = h, .nhistory = 1, .sequential = true, .spent = 3};
	for (int k = 0; k < 3; k++) {
		stats_set_add_run(&best, "s", 1.0 / 3 + 0.0007 * k, 7);
		stats_set_add_run(&cand, "s", 0.29 + 0.0003 * k, 7);
		stats_set_add_run(&best, "t", 2.0 / 7, 7);
		stats_set_add_run(&cand, "t", 0.2857 - 1e-9 * k, 7);
	}
	stats_set_add_run(&best, "only the best's", 0.1, 7);
	stats_compare(&best, &cand, &o, &c);
	assert_int_equal(c.nshapes, 3);
	/* what JSON cannot spell as a number */
	c.screen_gap = INFINITY;
	c.screen_tol = -INFINITY;
	c.shapes[0].lo = -0.0;
	for (int round = 0; round < 2; round++) {
		json_t *j = stats_cmp_pack(&c);
		char *txt = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		json_t *r = json_loads(txt, 0, NULL);
		assert_non_null(r);
		assert_int_equal(stats_cmp_unpack(r, &back), 0);
		json_decref(r);
		assert_same_cmp(&c, &back);
		assert_true(signbit(back.shapes[0].lo));
		/* packed again, the same text */
		json_t *j2 = stats_cmp_pack(&back);
		char *txt2 = json_dumps(j2, JSON_COMPACT);
		json_decref(j2);
		assert_string_equal(txt, txt2);
		free(txt);
		free(txt2);
		stats_cmp_release(&back);
		/* and without a why or a worst shape */
		free(c.why);
		c.why = NULL;
		c.worst = -1;
	}
	/* what is not such a comparison: refused, nothing left to free */
	const char *bad[] = {"[]", "{\"verdict\": 1}", "null",
			     "{\"verdict\":1,\"flags\":0,\"ncommon\":0,\"spent\":0,\"dof\":0,"
			     "\"paired\":false,\"decided\":false,\"disagrees\":false,"
			     "\"lone_pair\":false,\"noise_runs\":0,\"worst\":2,\"shapes\":[]}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		json_t *r = json_loads(bad[i], JSON_DECODE_ANY, NULL);
		assert_int_equal(stats_cmp_unpack(r, &back), -1);
		assert_null(back.shapes);
		assert_null(back.why);
		json_decref(r);
	}
	stats_cmp_release(&c);
	stats_set_release(&best);
	stats_set_release(&cand);
	stats_set_release(&hist);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(median_mean_std_by_hand),
		cmocka_unit_test(a_packed_comparison_reads_back_exactly),
		cmocka_unit_test(quantiles_interpolate_linearly),
		cmocka_unit_test(summary_of_five),
		cmocka_unit_test(spread_uses_range_over_d2_then_mad),
		cmocka_unit_test(t_quantiles),
		cmocka_unit_test(noise_pools_groups_per_environment),
		cmocka_unit_test(noise_has_a_floor),
		cmocka_unit_test(one_vs_one_with_assumed_noise),
		cmocka_unit_test(same_below_threshold_slow_needs_the_band),
		cmocka_unit_test(geomean_of_ratios_over_common_shapes),
		cmocka_unit_test(unequal_n_uses_medians_and_both_counts),
		cmocka_unit_test(changed_environment_is_not_comparable),
		cmocka_unit_test(changed_shape_set_is_not_comparable),
		cmocka_unit_test(zero_negative_and_nan_times),
		cmocka_unit_test(implausible_speedups_are_flagged),
		cmocka_unit_test(collapsed_noise_is_flagged),
		cmocka_unit_test(unstable_noise_is_flagged),
		cmocka_unit_test(no_best_and_no_candidate),
		cmocka_unit_test(threshold_is_configurable),
		cmocka_unit_test(a_far_lower_bound_reads_below_minus_1000),
		cmocka_unit_test(sequential_test_decides_after_each_pair),
		cmocka_unit_test(within_session_noise_falls_back_to_the_spread_between_sessions),
		cmocka_unit_test(newer_quiet_sessions_outvote_an_older_loaded_one),
		cmocka_unit_test(interleaved_sessions_pool_as_grouped_ones),
		cmocka_unit_test(quantiles_match_a_sort_to_the_last_bit),
		cmocka_unit_test(a_decided_interval_decides),
		cmocka_unit_test(a_ratio_test_win_names_the_interval_that_decided),
	    cmocka_unit_test(later_confirms_of_a_candidate_spend_less_alpha),
		cmocka_unit_test(a_short_session_must_agree_with_the_other_sessions),
		cmocka_unit_test(t_quantiles_and_the_bound_under_every_look),
		cmocka_unit_test(names_round_trip_and_json),
		cmocka_unit_test(in_process_pairs_use_their_own_spread),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
