/* Unit tests for probe: the real nvidia-smi outputs captured on an H200,
 * and fake probe commands that are real scripts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/probe.h"
#include "core/sb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[64];

static int setup(void **state)
{
	strcpy(tmpdir, "/tmp/optloop-probe.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

static void read_fixture(const char *name, struct sb *out)
{
	const char *root = getenv("OPTLOOP_ROOT");
	char *dir = fsutil_join(root ? root : ".", "tests/fixtures/fla-h200");
	char *p = fsutil_join(dir, name);
	assert_int_equal(fsutil_read_file(p, out, NULL), 0);
	free(p);
	free(dir);
}

/* A script in the scratch dir; returns its path (caller frees). */
static char *script(const char *name, const char *body)
{
	char *p = fsutil_join(tmpdir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(p, 0755);
	return p;
}

static void parses_the_idle_h200_reading(void **state)
{
	struct sb t = SB_INIT;
	struct probe_reading r;
	read_fixture("nvidia-smi-idle.csv", &t);
	assert_int_equal(probe_parse_csv(t.buf, t.len, &r, NULL), 0);
	assert_true(r.available);
	assert_int_equal(r.ngpus, 1);
	const struct probe_gpu *g = &r.gpus[0];
	assert_int_equal(g->index, 0);
	assert_string_equal(g->name, "NVIDIA H200");
	assert_string_equal(g->uuid, "GPU-bc6c3c76-aaae-d547-477c-87276b4450a1");
	assert_string_equal(g->driver, "580.159.04");
	/* header "clocks.current.sm [MHz]" for the query key clocks.sm */
	assert_true(g->sm_mhz == 345);
	assert_true(g->mem_mhz == 3201);
	assert_true(g->max_sm_mhz == 1980);
	assert_true(g->temp_c == 38);
	assert_true(fabs(g->power_w - 105.85) < 1e-9);
	assert_string_equal(g->pstate, "P0");
	assert_true(g->util_pct == 0);
	probe_judge(&r, 0);
	assert_false(r.busy);
	struct sb d = SB_INIT;
	probe_describe(&r, &d);
	assert_non_null(strstr(d.buf, "SM 345/1980 MHz"));
	assert_non_null(strstr(d.buf, "NVIDIA H200 GPU-bc6c3c76"));
	sb_release(&d);
	probe_reading_release(&r);
	sb_release(&t);
}

static void parses_a_reading_with_fewer_columns(void **state)
{
	struct sb t = SB_INIT;
	struct probe_reading r;
	read_fixture("nvidia-smi-after-bench.csv", &t);
	assert_int_equal(probe_parse_csv(t.buf, t.len, &r, NULL), 0);
	assert_int_equal(r.ngpus, 1);
	assert_true(r.gpus[0].sm_mhz == 1980);
	assert_true(fabs(r.gpus[0].power_w - 128.27) < 1e-9);
	assert_null(r.gpus[0].uuid);          /* not queried */
	assert_true(isnan(r.gpus[0].util_pct)); /* unknown, not zero */
	assert_true(isnan(r.gpus[0].max_sm_mhz));
	probe_judge(&r, 0);
	assert_false(r.busy);
	probe_reading_release(&r);
	sb_release(&t);
}

static void not_available_and_unsupported_fields(void **state)
{
	const char *csv = "index, name, utilization.gpu [%], power.draw [W]\r\n"
			  "0, GPU A, [N/A], [Not Supported]\r\n"
			  "1, GPU B, 87 %, 300.00 W\r\n";
	struct probe_reading r;
	assert_int_equal(probe_parse_csv(csv, strlen(csv), &r, NULL), 0);
	assert_int_equal(r.ngpus, 2);
	assert_true(isnan(r.gpus[0].util_pct));
	assert_true(isnan(r.gpus[0].power_w));
	assert_true(r.gpus[1].util_pct == 87);
	probe_judge(&r, 10);
	assert_true(r.busy);
	assert_non_null(strstr(r.busy_why, "GPU 1 utilisation 87 %"));
	probe_judge(&r, 90); /* threshold above: not busy */
	assert_false(r.busy);
	probe_reading_release(&r);
}

static void empty_or_header_only_output_is_refused(void **state)
{
	struct probe_reading r;
	struct err e = {0};
	assert_int_equal(probe_parse_csv("", 0, &r, &e), ERR_FAIL);
	assert_false(r.available);
	probe_reading_release(&r);
	const char *h = "index, name\n";
	assert_int_equal(probe_parse_csv(h, strlen(h), &r, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "no GPU line"));
	probe_reading_release(&r);
	/* lines of anything under a header of no known column: not a reading
	 * of as many GPUs as there are lines */
	const char *junk = "probe\nprobe\nprobe\n";
	assert_int_equal(probe_parse_csv(junk, strlen(junk), &r, &e), ERR_FAIL);
	assert_false(r.available);
	assert_int_equal(r.ngpus, 0);
	assert_non_null(strstr(r.why, "names no column"));
	assert_non_null(strstr(e.msg, "names no nvidia-smi column"));
	probe_reading_release(&r);
}

static void json_round_trip(void **state)
{
	struct sb t = SB_INIT;
	struct probe_reading r, back;
	read_fixture("nvidia-smi-idle.csv", &t);
	assert_int_equal(probe_parse_csv(t.buf, t.len, &r, NULL), 0);
	r.compute_procs = 0;
	json_t *j = probe_reading_json(&r);
	assert_int_equal(probe_reading_from_json(j, &back, NULL), 0);
	assert_true(back.available);
	assert_int_equal(back.ngpus, 1);
	assert_string_equal(back.gpus[0].uuid, r.gpus[0].uuid);
	assert_true(back.gpus[0].sm_mhz == 345);
	assert_int_equal(back.compute_procs, 0);
	assert_string_equal(back.raw, t.buf);
	json_decref(j);
	probe_reading_release(&back);
	probe_reading_release(&r);
	sb_release(&t);
}

static void runs_a_fake_probe_script(void **state)
{
	char *p = script("smi", "echo 'index, name, clocks.current.sm [MHz], utilization.gpu [%]'\n"
				"echo '0, Fake GPU, 1410 MHz, 3 %'");
	char *a = script("apps", "exit 0"); /* no compute process */
	struct probe_opts o = {.command = p, .apps_command = a};
	struct probe_reading r;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_true(r.available);
	assert_string_equal(r.gpus[0].name, "Fake GPU");
	assert_true(r.gpus[0].sm_mhz == 1410);
	assert_int_equal(r.compute_procs, 0);
	assert_false(r.busy);
	assert_string_equal(r.command, p);
	assert_true(r.t > 1.6e9);
	probe_reading_release(&r);
	free(a);

	/* another process on the GPU makes it busy even at low utilisation */
	a = script("apps2", "echo 4242; echo 4243");
	o.apps_command = a;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_int_equal(r.compute_procs, 2);
	assert_true(r.busy);
	assert_non_null(strstr(r.busy_why, "2 other compute process"));
	probe_reading_release(&r);
	free(a);
	free(p);
}

/* A pre-run reading that is busy by utilisation alone is read again once the
 * sample window has passed: the first reading here shows 20 %, as
 * nvidia-smi did on the H200 60 ms after the previous confirm run ended. */
static void a_busy_reading_is_read_again_after_settling(void **state)
{
	char *flag = fsutil_join(tmpdir, "settle-flag");
	char *body = xasprintf("echo 'index, name, utilization.gpu [%%]'\n"
			       "if [ -e '%s' ]; then echo '0, H200, 0 %%'; "
			       "else touch '%s'; echo '0, H200, 20 %%'; fi", flag, flag);
	char *p = script("settle", body);
	char *a = script("apps3", "exit 0");
	struct probe_opts o = {.command = p, .apps_command = a, .settle_s = 0.05};
	struct probe_reading r;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_false(r.busy);
	assert_true(r.gpus[0].util_pct == 0);
	assert_true(r.settled_s >= 0.05);
	assert_non_null(strstr(r.settled_from, "utilisation 20 %"));
	struct sb d = SB_INIT;
	probe_describe(&r, &d);
	assert_non_null(strstr(d.buf, "read again after"));
	sb_release(&d);
	/* the second look survives the store's JSON */
	json_t *j = probe_reading_json(&r);
	struct probe_reading back;
	assert_int_equal(probe_reading_from_json(j, &back, NULL), 0);
	assert_true(back.settled_s == r.settled_s);
	assert_string_equal(back.settled_from, r.settled_from);
	probe_reading_release(&back);
	json_decref(j);
	probe_reading_release(&r);

	/* still busy the second time: busy, and the reading says it looked twice */
	char *p2 = script("busy2", "echo 'index, name, utilization.gpu [%]'; echo '0, H200, 90 %'");
	o.command = p2;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_true(r.busy);
	assert_true(r.settled_s > 0);
	probe_reading_release(&r);

	/* another compute process is evidence enough: no second look */
	char *a2 = script("apps4", "echo 777");
	o.apps_command = a2;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_true(r.busy);
	assert_true(r.settled_s == 0);
	probe_reading_release(&r);

	/* without settle_s (after-run readings) one look is all */
	unlink(flag);
	o.command = p;
	o.apps_command = a;
	o.settle_s = 0;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_true(r.busy);
	assert_true(r.settled_s == 0);
	probe_reading_release(&r);
	free(a2);
	free(p2);
	free(a);
	free(p);
	free(body);
	free(flag);
}

static void missing_probe_is_no_probe_not_an_error(void **state)
{
	struct probe_opts o = {.command = "optloop-no-such-probe --query-gpu=index"};
	struct probe_reading r;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_false(r.available);
	assert_non_null(strstr(r.why, "not found"));
	struct sb d = SB_INIT;
	probe_describe(&r, &d);
	assert_non_null(strstr(d.buf, "no probe"));
	sb_release(&d);
	probe_reading_release(&r);

	char *p = script("broken", "echo 'NVIDIA-SMI has failed' ; exit 9");
	o.command = p;
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_false(r.available);
	assert_non_null(strstr(r.why, "exit 9"));
	probe_reading_release(&r);
	free(p);
}

static void a_hanging_probe_is_cut_off(void **state)
{
	char *p = script("hang", "sleep 30");
	struct probe_opts o = {.command = p, .timeout_s = 0.3};
	struct probe_reading r;
	time_t t0 = time(NULL);
	assert_int_equal(probe_run(&o, &r, NULL), 0);
	assert_true(time(NULL) - t0 < 5);
	assert_false(r.available);
	assert_non_null(strstr(r.why, "did not finish"));
	probe_reading_release(&r);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_the_idle_h200_reading),
		cmocka_unit_test(parses_a_reading_with_fewer_columns),
		cmocka_unit_test(not_available_and_unsupported_fields),
		cmocka_unit_test(empty_or_header_only_output_is_refused),
		cmocka_unit_test(json_round_trip),
		cmocka_unit_test(runs_a_fake_probe_script),
		cmocka_unit_test(a_busy_reading_is_read_again_after_settling),
		cmocka_unit_test(missing_probe_is_no_probe_not_an_error),
		cmocka_unit_test(a_hanging_probe_is_cut_off),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
