/* Unit tests for expr and roofline: the formula evaluator, the peaks and
 * cost files, the arithmetic of one shape, the "impossible" flag, and a
 * replay of every real GPU run in the fixtures against the datasheets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/expr.h"
#include "core/fsutil.h"
#include "core/model.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/roofline.h"
#include "core/sb.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PEAKS "assets/peaks.tsv"
#define COSTS "assets/costs.tsv"

static double ev(const char *f)
{
	struct expr_var v[] = {{"B", 4}, {"T", 2048}, {"K", 64}, {"x", 2.5}};
	double out = -12345;
	struct err e = {0};
	int rc = expr_eval(f, v, 4, &out, &e);
	if (rc)
		fail_msg("%s: %s", f, e.msg);
	return out;
}

static void formulas_evaluate_with_precedence_and_functions(void **state)
{
	assert_true(ev("1 + 2 * 3") == 7);
	assert_true(ev("(1 + 2) * 3") == 9);
	assert_true(ev("2 ^ 3 ^ 2") == 512); /* right-associative */
	assert_true(ev("-2 ^ 2") == -4);
	assert_true(ev("B*T*K") == 4 * 2048 * 64);
	assert_true(ev("min(4*T, T*T, 7)") == 7);
	assert_true(ev("max(B, x)") == 4);
	assert_true(ev("ceil(x) + floor(x)") == 5);
	assert_true(ev("1e12 / 4") == 2.5e11);
	assert_true(isinf(ev("1/0")));
}

static void bad_formulas_say_where_and_what(void **state)
{
	struct expr_var v[] = {{"B", 1}};
	struct err e = {0};
	double x;
	assert_int_equal(expr_eval("B +", v, 1, &x, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "ends early"));
	assert_int_equal(expr_eval("B * Q", v, 1, &x, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "unknown variable \"Q\" at character 5"));
	assert_int_equal(expr_eval("system(1)", v, 1, &x, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "unknown function"));
	assert_int_equal(expr_eval("(B", v, 1, &x, &e), ERR_USAGE);
	assert_int_equal(expr_eval("B B", v, 1, &x, &e), ERR_USAGE);
	assert_int_equal(expr_eval("", v, 1, &x, &e), ERR_USAGE);
	char deep[400];
	memset(deep, '-', 300);
	strcpy(deep + 300, "1");
	assert_int_equal(expr_eval(deep, v, 1, &x, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "too deep"));
	const char *names[] = {"B", NULL};
	assert_int_equal(expr_check("B*2", names, &e), 0);
	assert_int_equal(expr_check("B*T", names, &e), ERR_USAGE);
}

static void the_probe_name_picks_the_datasheet_row(void **state)
{
	struct roofline_peaks p = {0};
	struct err e = {0};
	static const struct {
		const char *probe, *row;
		double bw;
	} cases[] = {
		{"NVIDIA H200", "H200", 4.8e12},
		{"NVIDIA H100 80GB HBM3", "H100 SXM", 3.35e12},
		{"NVIDIA H100 PCIe", "H100 PCIe", 2.0e12},
		{"NVIDIA H100 NVL", "H100 NVL", 3.9e12},
		{"NVIDIA A100-SXM4-80GB", "A100 80GB", 2.039e12},
		{"NVIDIA A100-SXM4-40GB", "A100 40GB", 1.555e12},
		{"NVIDIA L40S", "L40S", 0.864e12},
		{"NVIDIA B200", "B200", 8e12},
		{"AMD Instinct MI300X", "MI300X", 5.3e12},
		{"Ascend910B3", "Ascend 910B", 1.6e12},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		roofline_peaks_release(&p);
		assert_int_equal(roofline_peaks_find(PEAKS, cases[i].probe, &p, &e), 0);
		assert_string_equal(p.name, cases[i].row);
		assert_true(p.bw == cases[i].bw);
		assert_true(strstr(p.source, "datasheet") || strstr(p.source, "data sheet") ||
			    strstr(p.source, "specification"));
		assert_false(p.measured);
	}
	assert_true(p.flops[RD_FP8] != p.flops[RD_FP8]); /* Ascend: no fp8 figure */
	roofline_peaks_release(&p);
	assert_int_equal(roofline_peaks_find(PEAKS, "H200", &p, &e), 0);
	assert_true(p.flops[RD_BF16] == 989.5e12);
	roofline_peaks_release(&p);
	assert_int_equal(roofline_peaks_find(PEAKS, "Intel Xeon", &p, &e), ERR_NOTFOUND);
	assert_false(p.have);
	roofline_peaks_release(&p);
}

static void the_contract_overrides_the_peaks(void **state)
{
	struct roofline_peaks p = {0};
	struct err e = {0};
	assert_int_equal(roofline_peaks_find(PEAKS, "NVIDIA H200", &p, &e), 0);
	assert_int_equal(roofline_peaks_override(PEAKS, "bw=5e12 launch_us=3", &p, &e), 0);
	assert_true(p.bw == 5e12);
	assert_true(p.flops[RD_BF16] == 989.5e12); /* the rest stays the row's */
	assert_true(fabs(p.launch_s - 3e-6) < 1e-12);
	assert_string_equal(p.name, "contract");
	assert_int_equal(roofline_peaks_override(PEAKS, "H100 SXM", &p, &e), 0);
	assert_true(p.bw == 3.35e12);
	assert_int_equal(roofline_peaks_override(PEAKS, "bw=fast", &p, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "bw=fast is not a positive number"));
	assert_int_equal(roofline_peaks_override(PEAKS, "speed=1", &p, &e), ERR_USAGE);
	assert_int_equal(roofline_peaks_override(PEAKS, "Z9000", &p, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "names no row"));
	roofline_peaks_release(&p);
}

static void a_malformed_data_row_names_its_line(void **state)
{
	char dir[] = "/tmp/roofline-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *f = fsutil_join(dir, "peaks.tsv");
	const char *t = "# comment\nX1\tX1\t1e12\t-\t-\t-\t-\tsrc\nX2\tX2\tfast\t-\t-\t-\t-\tsrc\n";
	assert_int_equal(fsutil_write_atomic(f, t, strlen(t), NULL), 0);
	struct roofline_peaks p = {0};
	struct err e = {0};
	assert_int_equal(roofline_peaks_find(f, "X1", &p, &e), 0); /* found before the bad line */
	roofline_peaks_release(&p);
	assert_int_equal(roofline_peaks_find(f, "X2", &p, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "peaks.tsv:3"));
	roofline_peaks_release(&p);
	unlink(f);
	free(f);
	f = fsutil_join(dir, "costs.tsv");
	t = "fam\tmyop\tfwd\tbf16\tB*Q\t-\t-\tsrc\n";
	assert_int_equal(fsutil_write_atomic(f, t, strlen(t), NULL), 0);
	struct roofline_cost c;
	assert_int_equal(roofline_cost_find(f, "myop", "fwd", NULL, &c, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "costs.tsv:1"));
	assert_non_null(strstr(e.msg, "\"Q\""));
	unlink(f);
	free(f);
	rmdir(dir);
}

static void every_registry_family_has_a_cost_model(void **state)
{
	static const char *const ops[] = {
		"chunk_linear_attn", "chunk_simple_gla", "chunk_gla",	  "chunk_retention",
		"chunk_delta_rule",  "chunk_gated_delta_rule", "chunk_kda", "chunk_rwkv6",
		"chunk_rwkv7",	     "parallel_nsa",
	};
	struct parse_row r = {.mode = "fwd", .B = 4, .T = 2048, .H = 16, .D = 64};
	struct roofline_peaks p = {0};
	struct err e = {0};
	assert_int_equal(roofline_peaks_find(PEAKS, "H200", &p, &e), 0);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		for (int m = 0; m < 2; m++) {
			struct roofline_cost c;
			const char *mode = m ? "fwdbwd" : "fwd";
			if (roofline_cost_find(COSTS, ops[i], mode, NULL, &c, &e))
				fail_msg("%s %s: %s", mode, ops[i], e.msg);
			assert_non_null(c.source);
			assert_int_equal(c.dtype, RD_BF16);
			struct roofline_shape s;
			r.op = (char *)ops[i];
			assert_int_equal(roofline_shape_eval(&c, &r, ops[i], 1.0, &p, &s, &e), 0);
			/* q, o at least, bf16 */
			assert_true(s.bytes >= 2.0 * 4 * 2048 * 16 * 64 * 2);
			if (c.flops_min)
				assert_true(s.flops_min <= s.flops);
			roofline_shape_release(&s);
			roofline_cost_release(&c);
		}
	}
	struct roofline_cost c;
	assert_int_equal(roofline_cost_find(COSTS, "chunk_mystery", "fwd", NULL, &c, &e),
			 ERR_NOTFOUND);
	roofline_peaks_release(&p);
}

static void linear_attention_arithmetic_and_the_impossible_flag(void **state)
{
	struct parse_row r = {.mode = "fwd", .B = 4, .T = 2048, .H = 16, .D = 64,
			      .op = "chunk_linear_attn"};
	struct roofline_peaks p = {0};
	struct roofline_cost c;
	struct roofline_shape s;
	struct err e = {0};
	assert_int_equal(roofline_peaks_find(PEAKS, "NVIDIA H200", &p, &e), 0);
	assert_int_equal(roofline_cost_find(COSTS, "chunk_linear_attn", "fwd", NULL, &c, &e), 0);
	/* 4 tensors of 4*2048*16*64 bf16: 64 MiB in 0.45 ms (the fixture's opt-a) */
	assert_int_equal(roofline_shape_eval(&c, &r, "k", 0.45, &p, &s, &e), 0);
	assert_true(s.bytes == 4.0 * 4 * 2048 * 16 * 64 * 2);
	assert_true(fabs(s.bw - s.bytes / 0.45e-3) < 1);
	assert_true(s.bw_share > 0.01 && s.bw_share < 0.1);
	assert_true(s.flops == 2.0 * 4 * 16 * 2048 * (64 * 128 + 2 * 64 * 64));
	assert_false(s.impossible);
	assert_int_equal(s.bound, RB_MEMORY);
	roofline_shape_release(&s);
	/* 64 MiB in 0.012 ms is 5.6 TB/s: above 4.8 TB/s by more than 10 % */
	assert_int_equal(roofline_shape_eval(&c, &r, "fwd B=4", 0.012, &p, &s, &e), 0);
	assert_true(s.impossible);
	print_message("# %s\n", s.why);
	assert_non_null(strstr(s.why, "0.012 ms for 64.0 MiB is 5.59 TB/s, above the H200's 4.80 TB/s"));
	roofline_shape_release(&s);
	/* within the margin: 5.1 TB/s is not flagged */
	assert_int_equal(roofline_shape_eval(&c, &r, "k", s.bytes / 5.1e12 * 1e3, &p, &s, &e), 0);
	double bytes = s.bytes;
	roofline_shape_release(&s);
	assert_int_equal(roofline_shape_eval(&c, &r, "k", bytes / 5.1e12 * 1e3, &p, &s, &e), 0);
	assert_false(s.impossible);
	roofline_shape_release(&s);
	/* the run's one line and its JSON */
	struct roofline run = {0};
	assert_int_equal(roofline_peaks_find(PEAKS, "NVIDIA H200", &run.peaks, &e), 0);
	assert_int_equal(roofline_shape_eval(&c, &r, "fwd B=4 T=2048 H=16 D=64 chunk_linear_attn",
					     0.45, &run.peaks, &s, &e), 0);
	roofline_add(&run, &s);
	struct sb line = SB_INIT;
	roofline_line(&run, &line);
	print_message("# roofline: %s\n", line.buf);
	assert_string_equal(line.buf, "H200 (datasheet): memory-bound, 3% of 4.80 TB/s, 1% of 990 "
				      "TFLOP/s bf16 at fwd B=4 T=2048 H=16 D=64 chunk_linear_attn; "
				      "0 impossible");
	json_t *j = roofline_json(&run);
	assert_int_equal(json_integer_value(json_object_get(j, "impossible")), 0);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(j, "shapes"), 0), "bound")),
			    "memory");
	json_decref(j);
	sb_release(&line);
	roofline_release(&run);
	/* a time printed as 0.000: bounded by the table's resolution */
	assert_int_equal(roofline_shape_eval(&c, &r, "k", 0, &p, &s, &e), 0);
	assert_true(s.impossible);
	assert_non_null(strstr(s.why, "0.000 ms (under the table's 0.0005 ms) for 64.0 MiB is over 134 TB/s"));
	roofline_shape_release(&s);
	/* below the launch floor */
	struct parse_row tiny = r;
	tiny.B = 1, tiny.T = 64, tiny.H = 1;
	assert_int_equal(roofline_shape_eval(&c, &tiny, "k", 0.005, &p, &s, &e), 0);
	assert_int_equal(s.bound, RB_LAUNCH);
	assert_false(s.impossible);
	roofline_shape_release(&s);
	/* the compute side: a contract formula that needs 1e15 FLOPs in 1 ms */
	struct roofline_cost_spec spec;
	assert_int_equal(roofline_cost_spec_parse("bytes=1; flops_min=1e15; dtype=bf16", &spec, &e), 0);
	roofline_cost_release(&c);
	assert_int_equal(roofline_cost_find(COSTS, "anything", "fwd", &spec, &c, &e), 0);
	assert_int_equal(roofline_shape_eval(&c, &r, "k", 1.0, &p, &s, &e), 0);
	assert_true(s.impossible);
	assert_non_null(strstr(s.why, "1.00 PFLOP (the fewest any known form needs) in"
				     "") ? s.why : strstr(s.why, "PFLOP"));
	roofline_shape_release(&s);
	roofline_cost_spec_release(&spec);
	assert_int_equal(roofline_cost_spec_parse("bytes=B*Z", &spec, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "Cost: bytes"));
	assert_int_equal(roofline_cost_spec_parse("dtype=int4", &spec, &e), ERR_USAGE);
	assert_int_equal(roofline_cost_spec_parse("colour=red", &spec, &e), ERR_USAGE);
	/* family and dtype from the contract: the demo's fp32 */
	assert_int_equal(roofline_cost_spec_parse("family=linear_attn; dtype=fp32; chunk=32", &spec, &e), 0);
	roofline_cost_release(&c);
	assert_int_equal(roofline_cost_find(COSTS, "demo_op", "fwd", &spec, &c, &e), 0);
	assert_int_equal(c.dtype_bytes, 4);
	assert_true(c.chunk == 32);
	roofline_cost_spec_release(&spec);
	roofline_cost_release(&c);
	roofline_peaks_release(&p);
}

static void the_cpu_peaks_are_measured(void **state)
{
	struct roofline_peaks p = {0};
	roofline_peaks_measure_cpu(&p);
	assert_true(p.have && p.measured);
	/* any machine this runs on copies faster than 100 MB/s and does more
	 * than 100 MFLOP/s */
	assert_true(p.bw > 1e8);
	assert_true(p.flops[RD_FP32] > 1e8);
	print_message("# %s\n", p.source);
	json_t *j = roofline_peaks_json(&p);
	struct roofline_peaks q;
	assert_int_equal(roofline_peaks_from_json(j, &q), 0);
	assert_true(q.bw == p.bw && q.measured);
	json_decref(j);
	roofline_peaks_release(&q);
	roofline_peaks_release(&p);
}

/* ---- every real GPU run of the fixtures ---- */

struct replay {
	const struct patset *ps;
	int files, shapes, impossible, h200_shapes;
	double top_share, h200_share;
	char top[512], h200[512];
};

static void replay_rows(struct replay *rp, const char *path, const struct parse_result *res)
{
	struct err e = {0};
	struct roofline_peaks p = {0};
	if (roofline_peaks_find(PEAKS, res->env.device, &p, &e))
		fail_msg("%s: no peaks for \"%s\": %s", path, res->env.device, e.msg);
	rp->files++;
	for (size_t i = 0; i < res->nrows; i++) {
		const struct parse_row *r = &res->rows[i];
		struct roofline_cost c;
		if (roofline_cost_find(COSTS, r->op, r->mode, NULL, &c, &e))
			fail_msg("%s: %s", path, e.msg);
		double t[2] = {r->base_ms, r->new_ms};
		for (int k = 0; k < 2; k++) {
			if (!(t[k] > 0))
				continue;
			char key[256];
			snprintf(key, sizeof(key), "%s B=%ld T=%ld H=%ld D=%ld %s", r->mode, r->B, r->T,
				 r->H, r->D, r->op);
			struct roofline_shape s;
			assert_int_equal(roofline_shape_eval(&c, r, key, t[k], &p, &s, &e), 0);
			rp->shapes++;
			if (strstr(p.name, "H200"))
				rp->h200_shapes++;
			if (s.impossible) {
				rp->impossible++;
				print_message("# IMPOSSIBLE %s: %s\n", path, s.why);
			}
			if (strstr(p.name, "H200") && s.bw_share > rp->h200_share) {
				rp->h200_share = s.bw_share;
				snprintf(rp->h200, sizeof(rp->h200), "%s %.3f ms (%s): %.1f%%", key,
					 t[k], path, 100 * s.bw_share);
			}
			if (s.bw_share > rp->top_share) {
				rp->top_share = s.bw_share;
				snprintf(rp->top, sizeof(rp->top), "%s %.3f ms (%s): %.1f%% of %s HBM",
					 key, t[k], path, 100 * s.bw_share, p.name);
			}
			roofline_shape_release(&s);
		}
		roofline_cost_release(&c);
	}
	roofline_peaks_release(&p);
}

static void replay_dir(struct replay *rp, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *path = fsutil_join(dir, de->d_name);
		struct stat st;
		size_t n = strlen(path);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			replay_dir(rp, path);
		} else if (n > 4 && (!strcmp(path + n - 4, ".log") || !strcmp(path + n - 4, ".txt"))) {
			struct sb t = SB_INIT;
			struct err e = {0};
			if (fsutil_read_file(path, &t, &e) == 0) {
				struct parser *p = parser_new(rp->ps, NULL, NULL);
				struct parse_result res;
				parser_feed(p, t.buf, t.len);
				parser_finish(p, -1, false);
				parser_take_result(p, &res);
				parser_free(p);
				if (res.nrows && res.env.device)
					replay_rows(rp, path, &res);
				parse_result_release(&res);
			}
			sb_release(&t);
		}
		free(path);
	}
	closedir(d);
}

static void every_real_gpu_run_is_possible(void **state)
{
	struct patset *ps = NULL;
	struct err e = {0};
	if (patset_load(NULL, NULL, &ps, &e))
		fail_msg("%s", e.msg);
	struct replay rp = {.ps = ps};
	static const char *const dirs[] = {
		"tests/fixtures/fla-h200", "tests/fixtures/fla-h200-gate",
		"tests/fixtures/fla-h200-noise", "tests/fixtures/fla-h200-session",
		"tests/fixtures/fla-h200-session2", "tests/fixtures/fla-h100-ab",
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		replay_dir(&rp, dirs[i]);
	print_message("# replayed %d shape timings (%d on the H200) from %d files: %d impossible\n"
		      "# highest share of the H200's 4.8 TB/s: %s\n# highest of all: %s\n",
		      rp.shapes, rp.h200_shapes, rp.files, rp.impossible, rp.h200, rp.top);
	assert_true(rp.h200_shapes >= 100);
	assert_int_equal(rp.impossible, 0);
	assert_true(rp.top_share > 0 && rp.top_share < 1.0);
	assert_true(rp.h200_share > 0 && rp.h200_share < 1.0);
	patset_free(ps);
}

int main(void)
{
	char cwd[4096];
	if (!getenv("OPTLOOP_ASSETS") && getcwd(cwd, sizeof(cwd) - 8)) {
		strcat(cwd, "/assets");
		setenv("OPTLOOP_ASSETS", cwd, 1);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(formulas_evaluate_with_precedence_and_functions),
		cmocka_unit_test(bad_formulas_say_where_and_what),
		cmocka_unit_test(the_probe_name_picks_the_datasheet_row),
		cmocka_unit_test(the_contract_overrides_the_peaks),
		cmocka_unit_test(a_malformed_data_row_names_its_line),
		cmocka_unit_test(every_registry_family_has_a_cost_model),
		cmocka_unit_test(linear_attention_arithmetic_and_the_impossible_flag),
		cmocka_unit_test(the_cpu_peaks_are_measured),
		cmocka_unit_test(every_real_gpu_run_is_possible),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
