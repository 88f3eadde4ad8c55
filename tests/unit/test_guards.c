/* Unit tests for guards over a real git repository and a real workspace
 * database: frozen scope, stall and re-assessment, stop, no-go, dispatch
 * evidence, revert restoring the best kernel, lint acknowledgement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/contract.h"
#include "core/dispatch.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/guards.h"
#include "core/measure.h"
#include "core/lint.h"
#include "core/loop.h"
#include "core/parse.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/traps.h"
#include "core/vcs.h"
#include "core/workspace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

struct fx {
	char dir[64];
	struct vcs *vcs;
	struct store *store;
	struct workspace ws; /* owns the store, the vcs and the scopes */
	struct contract c;
};

static void sh(const char *dir, const char *cmd)
{
	char buf[2048];
	snprintf(buf, sizeof(buf), "cd %s && %s", dir, cmd);
	if (system(buf) != 0)
		fail_msg("command failed: %s", cmd);
}

static void put(struct fx *f, const char *rel, const char *text)
{
	char *p = fsutil_join(f->dir, rel);
	FILE *fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	free(p);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	strcpy(f->dir, "/tmp/optloop-guards.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	sh(f->dir, "git init -q . && git config user.name t && git config user.email t@x.invalid"
		   " && mkdir -p src tests && echo /profile/ >> .git/info/exclude");
	put(f, "src/kernel.c", "double kern(double x) { return x * 2; }\n");
	put(f, "tests/test_kernel.c", "#define TOL 1e-9\n");
	sh(f->dir, "git add src tests && git commit -qm init");
	assert_int_equal(vcs_open(f->dir, &f->vcs, NULL), 0);
	workspace_paths(vcs_workdir(f->vcs), "demo", &f->ws);
	assert_int_equal(fsutil_mkdir_p(f->ws.trace_dir, NULL), 0);
	struct err e = {0};
	if (store_open(f->ws.db_path, STORE_CREATE, &f->store, &e) < 0)
		fail_msg("%s", e.msg);
	f->ws.store = f->store;
	f->ws.vcs = f->vcs;
	f->ws.kernel = xcalloc(1, sizeof(char *));
	f->ws.kernel[0] = xstrdup("src/kernel.c");
	f->ws.nkernel = 1;
	f->ws.frozen = xcalloc(1, sizeof(char *));
	f->ws.frozen[0] = xstrdup("tests/test_kernel.c");
	f->ws.nfrozen = 1;
	f->ws.contract = &f->c;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	workspace_release(&f->ws);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	int rc = system(cmd);
	free(f);
	return rc;
}

/* Record iteration iter: a run in environment env, the row, and (when
 * commit) the kernel text committed as that iteration. */
static void add_row(struct fx *f, int iter, enum row_status st, enum gate_verdict gate,
		    double ms, const char *env, const char *kernel_text, const char *axis)
{
	struct err e = {0};
	/* the commit in the Machine line changes every iteration; the device does not */
	char *raw = xasprintf("%s | main[%07d]", env, iter);
	struct parse_env pe = {.raw = raw, .device = (char *)env};
	int env_id = 0;
	assert_int_equal(store_env_id(f->store, &pe, &env_id, &e), 0);
	free(raw);
	struct store_run r = {.iter = iter, .kind = RUN_VERIFY, .command = "true", .t_start = 1,
			      .t_end = 2, .gate = gate, .scope = SCOPE_FULL, .bench_ms = ms,
			      .vs_best = NAN, .env_id = env_id};
	assert_int_equal(store_run_insert(f->store, &r, &e), 0);
	/* two shapes: one short (the row's time), one long (twice it) */
	struct parse_row shapes[2] = {
		{.mode = "fwd", .B = 1, .T = 64, .H = 4, .D = 64, .L = -1, .op = "demo",
		 .base_ms = NAN, .new_ms = ms, .speedup = NAN},
		{.mode = "fwd", .B = 1, .T = 4096, .H = 4, .D = 64, .L = -1, .op = "demo",
		 .base_ms = NAN, .new_ms = 2 * ms, .speedup = NAN},
	};
	assert_int_equal(store_samples_add(f->store, r.id, env_id, shapes, 2, &e), 0);
	char dir[32];
	snprintf(dir, sizeof(dir), "direction %d", iter);
	struct log_row row = {.iter = iter, .direction = dir, .gate = "pass", .gate_v = gate,
			      .scope = SCOPE_FULL, .bench_ms = ms, .vs_best = NAN, .status = st,
			      .axis = (char *)axis};
	if (kernel_text)
		put(f, "src/kernel.c", kernel_text);
	assert_int_equal(store_iter_add(f->store, &row, r.id, NULL, &e), 0);
	char sha[VCS_OID_HEX];
	char *msg = xasprintf("iter %d\n\nOptloop-Op: demo\nOptloop-Iter: %d\n", iter, iter);
	if (vcs_commit_kernel(f->vcs, (const char *const *)f->ws.kernel, 1, msg, sha, &e) < 0)
		fail_msg("%s", e.msg);
	free(msg);
	assert_int_equal(store_iter_set_commit(f->store, iter, sha, &e), 0);
}

static char *slurp(struct fx *f, const char *rel)
{
	char *p = fsutil_join(f->dir, rel);
	struct sb s = SB_INIT;
	fsutil_read_file(p, &s, NULL);
	free(p);
	return sb_detach(&s);
}

static void frozen_edit_is_refused_naming_the_file(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	assert_int_equal(guards_frozen_check(&f->ws, "verify", &e), 0); /* baseline hashed */
	assert_int_equal(guards_frozen_check(&f->ws, "verify", &e), 0);
	put(f, "tests/test_kernel.c", "#define TOL 1e-3\n");
	assert_int_equal(guards_frozen_check(&f->ws, "commit", &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "commit refused: frozen file tests/test_kernel.c changed"));
	assert_non_null(strstr(e.msg, "A test change belongs in a separate change"));
	/* verify goes through the same check */
	assert_int_equal(guards_verify_check(&f->ws, &e), ERR_REFUSED);
	put(f, "tests/test_kernel.c", "#define TOL 1e-9\n");
	assert_int_equal(guards_verify_check(&f->ws, &e), 0);
}

/* A long stall names its rows in spans, so the step stays one line. */
static void a_long_stall_names_its_rows_in_spans(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	enum loop_state st = ST_READY;
	add_row(f, 0, RS_BASE, GATE_PASS, 1.0, "Machine: A", NULL, NULL);
	for (int i = 1; i <= 8; i++)
		add_row(f, i, i % 2 ? RS_REVERT : RS_DROP, GATE_PASS, 1.05, "Machine: A", NULL, NULL);
	assert_int_equal(guards_state(&f->ws, &st, NULL, &e), 0);
	assert_int_equal(st, ST_STALLED);
	char *next = guards_next_step(&f->ws, st);
	assert_non_null(strstr(next, "8 iterations in a row without a win (1-8)"));
	free(next);
}

static void three_rows_without_a_win_stall_until_reassessed(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	enum loop_state st;
	add_row(f, 0, RS_BASE, GATE_PASS, 1.0, "Machine: A", NULL, NULL);
	add_row(f, 1, RS_KEEP, GATE_PASS, 0.9, "Machine: A", "double kern(double x){return x+x;}\n", "fusion");
	/* a keep resets the stall count only as a confirmed win */
	struct store_confirm mc = {.iter = 1, .session = 1, .best_iter = 0};
	struct stats_cmp fast = {.verdict = SV_FAST, .worst = -1};
	assert_int_equal(store_confirm_begin(f->store, &mc, &e), 0);
	assert_int_equal(measure_confirm_end(f->store, mc.id, &fast, true, &e), 0);
	add_row(f, 2, RS_REVERT, GATE_PASS, 0.95, "Machine: A", NULL, "tiling");
	add_row(f, 3, RS_DROP, GATE_FAIL, NAN, "Machine: A", NULL, "tiling");
	st = ST_READY;
	assert_int_equal(guards_state(&f->ws, &st, NULL, &e), 0);
	assert_int_equal(st, ST_READY);
	assert_int_equal(guards_reassess(&f->ws, &(struct loop_reassess){"trace/p", "a", "t", "n"},
					 &e),
			 ERR_REFUSED);
	assert_non_null(strstr(e.msg, "not stalled (2 iterations"));
	add_row(f, 4, RS_FLOOR, GATE_PASS, 0.91, "Machine: A", NULL, NULL);
	st = ST_EDITING;
	assert_int_equal(guards_state(&f->ws, &st, NULL, &e), 0);
	assert_int_equal(st, ST_STALLED);
	char *next = guards_next_step(&f->ws, st);
	assert_non_null(strstr(next, "without a win (2, 3, 4)"));
	free(next);
	assert_int_equal(guards_verify_check(&f->ws, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "STALLED: 3 iterations in a row without a win (2, 3, 4)"));

	/* all four prompts are required */
	assert_int_equal(guards_reassess(&f->ws, &(struct loop_reassess){"trace/p", "", NULL, "n"},
					 &e),
			 ERR_USAGE);
	assert_non_null(strstr(e.msg, "--axes"));
	assert_non_null(strstr(e.msg, "--techniques"));
	/* the profile must exist, live under trace/, and be newer than the stall */
	struct loop_reassess r = {"trace/none.prof", "tiling, fusion", "split-K", "vectorize"};
	assert_int_equal(guards_reassess(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "does not exist"));
	put(f, "src/outside.prof", "x");
	char *outside = fsutil_join(f->dir, "src/outside.prof");
	r.profile = outside;
	assert_int_equal(guards_reassess(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "is not under profile/demo-opt/trace/"));
	free(outside);
	put(f, "profile/demo-opt/trace/old.prof", "x");
	char *old = fsutil_join(f->dir, "profile/demo-opt/trace/old.prof");
	struct timeval tv[2] = {{1000, 0}, {1000, 0}};
	assert_int_equal(utimes(old, tv), 0);
	r.profile = "trace/old.prof";
	assert_int_equal(guards_reassess(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "reassess refused: the profile trace/old.prof is older than the stall"));
	free(old);
	/* the same rule on its own, for a form checking the path as it is typed */
	assert_int_equal(guards_profile_check(&f->ws, "trace/old.prof", NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "the profile trace/old.prof is older than the stall"));
	assert_int_equal(guards_profile_check(&f->ws, "trace/none.prof", NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "the profile trace/none.prof does not exist"));
	assert_int_equal(guards_profile_check(&f->ws, " ", NULL, &e), ERR_USAGE);
	/* new, but no profiler wrote it: a note is no profile */
	put(f, "profile/demo-opt/trace/note.txt", "samples");
	assert_int_equal(guards_profile_check(&f->ws, "trace/note.txt", NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "is not recognised as a profiler's output"));
	put(f, "profile/demo-opt/trace/new.prof",
	    "# Samples: 1K of event 'cycles'\n# Overhead  Command  Shared Object  Symbol\n"
	    "    93.00%  demo  demo  [.] chunk\n");
	char *real = NULL;
	assert_int_equal(guards_profile_check(&f->ws, "trace/new.prof", &real, &e), 0);
	assert_non_null(strstr(real, "/profile/demo-opt/trace/new.prof"));
	free(real);
	r.profile = "trace/new.prof";
	if (guards_reassess(&f->ws, &r, &e) < 0)
		fail_msg("%s", e.msg);
	st = ST_READY;
	assert_int_equal(guards_state(&f->ws, &st, NULL, &e), 0);
	assert_int_equal(st, ST_READY);
	assert_int_equal(guards_verify_check(&f->ws, &e), 0);

	struct sb axes = SB_INIT;
	assert_int_equal(guards_axes_summary(&f->ws, &axes, &e), 0);
	assert_non_null(strstr(axes.buf, "fusion:\n  iter 1 keep: direction 1\n"));
	assert_non_null(strstr(axes.buf, "tiling:\n  iter 2 revert: direction 2\n  iter 3 drop: "
					 "direction 3\n"));
	assert_non_null(strstr(axes.buf, "(no axis):\n  iter 4 floor: direction 4\n"));
	sb_release(&axes);

}

static void stop_reasons_are_checked_and_nogo_needs_five_items(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	struct sb md = SB_INIT;
	json_t *j = NULL;

	assert_int_equal(guards_stop(&f->ws, "cap", NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "baseline has not been measured"));
	assert_int_equal(guards_nogo(&f->ws, NULL, NULL, &md, &j, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "missing baseline, candidate, gate, bench, bound"));
	json_decref(j);
	sb_reset(&md);

	add_row(f, 0, RS_BASE, GATE_PASS, 1.0, "Machine: A", NULL, NULL);
	add_row(f, 1, RS_REVERT, GATE_PASS, 1.1, "Machine: A", NULL, "tiling");
	add_row(f, 2, RS_REVERT, GATE_PASS, 1.05, "Machine: A", NULL, "Tiling ");
	assert_int_equal(guards_stop(&f->ws, "cap", NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "sets no iteration cap"));
	f->c.cap = 3;
	assert_int_equal(guards_stop(&f->ws, "cap", NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "not reached (2 of 3"));
	assert_int_equal(guards_stop(&f->ws, "directions", NULL, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "1 distinct direction with logged evidence"));
	assert_int_equal(guards_stop(&f->ws, "floor", NULL, &e), ERR_REFUSED);
	assert_int_equal(guards_stop(&f->ws, "floor", "bandwidth", &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "named bound and its number"));
	assert_int_equal(guards_stop(&f->ws, "sideways", NULL, &e), ERR_USAGE);

	/* no-go without a bound lists exactly that */
	assert_int_equal(guards_nogo(&f->ws, NULL, NULL, &md, &j, &e), ERR_FAIL);
	assert_non_null(strstr(e.msg, "missing bound"));
	assert_non_null(strstr(md.buf, "incomplete (1 of 5 items missing)"));
	assert_false(json_is_true(json_object_get(j, "complete")));
	json_decref(j);
	sb_reset(&md);
	/* ... and says why the measured runs name none, when they do not */
	assert_int_equal(guards_nogo(&f->ws, NULL, "no shape of the best is at a limit", &md, &j, &e),
			 ERR_FAIL);
	assert_non_null(strstr(md.buf, "MISSING — record the bound with its number (optloop stop "
				       "--reason floor --bound 'NAME: NUMBER ...'); the measured runs "
				       "name none: no shape of the best is at a limit\n"));
	json_decref(j);
	sb_reset(&md);
	/* the bound the best's runs show on the roofline completes it */
	assert_int_equal(guards_nogo(&f->ws, "memory-bound at 82% of the H200's 4.80 TB/s HBM, from "
					     "61% at the baseline", NULL, &md, &j, &e), 0);
	assert_non_null(strstr(md.buf, "- **Named bound:** memory-bound at 82% of the H200's 4.80 "
				       "TB/s HBM, from 61% at the baseline (computed from the "
				       "measured runs)\n"));
	assert_true(json_is_true(json_object_get(j, "complete")));
	json_decref(j);
	sb_reset(&md);

	add_row(f, 3, RS_DROP, GATE_FAIL, 1.2, "Machine: A", NULL, "vectorize");
	assert_int_equal(guards_stop(&f->ws, "cap", NULL, &e), 0);
	enum loop_state st = ST_READY;
	assert_int_equal(guards_state(&f->ws, &st, NULL, &e), 0);
	assert_int_equal(st, ST_STOPPING);
	assert_int_equal(guards_verify_check(&f->ws, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "loop was stopped (reason: cap)"));
	assert_int_equal(guards_stop(&f->ws, "floor", "HBM bandwidth: 4.1 of 4.8 TB/s", &e), 0);
	/* the stop's bound, when it named one, comes before a computed one */
	assert_int_equal(guards_nogo(&f->ws, "memory-bound at 82% of HBM", NULL, &md, &j, &e), 0);
	assert_non_null(strstr(md.buf, "## No-go record: demo\n"));
	assert_non_null(strstr(md.buf, "- **Baseline:** 1.000 ms (iteration 0, "));
	assert_non_null(strstr(md.buf, "- **Reasoned candidate:** iteration 2 (revert): direction 2"));
	assert_non_null(strstr(md.buf, "- **Named bound:** HBM bandwidth: 4.1 of 4.8 TB/s (stop reason: floor)"));
	assert_true(json_is_true(json_object_get(j, "complete")));
	json_decref(j);
	sb_release(&md);
	assert_true(guards_bound_ok("launch overhead: 4 us per call"));
	assert_false(guards_bound_ok("4.1 TB/s"));
}

static void dispatch_rows_need_evidence_from_the_same_baseline(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	add_row(f, 0, RS_BASE, GATE_PASS, 1.0, "Machine: A", NULL, NULL);
	add_row(f, 1, RS_KEEP, GATE_PASS, 0.5, "Machine: A", NULL, NULL);
	add_row(f, 2, RS_DROP, GATE_FAIL, 0.4, "Machine: A", NULL, NULL);
	add_row(f, 3, RS_KEEP, GATE_PASS, 0.45, "Machine: B", NULL, NULL);
	/* faster, its gate passed, but dropped: evidence, never the default time */
	add_row(f, 4, RS_DROP, GATE_PASS, 0.3, "Machine: A", NULL, NULL);
	struct dispatch_row r = {.bucket = "T <= 64", .entry = "fused_fwd", .base_ms = NAN,
				 .cand_ms = NAN, .speedup = NAN, .why = "one launch"};
	assert_int_equal(guards_dispatch_add(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "no evidence cited"));
	r.evidence = "9";
	assert_int_equal(guards_dispatch_add(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "iteration 9 has no row"));
	r.evidence = "1,2";
	assert_int_equal(guards_dispatch_add(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "iteration 2's gate is fail"));
	r.evidence = "3";
	assert_int_equal(guards_dispatch_add(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "another environment than the baseline"));
	r.evidence = "4";
	assert_int_equal(guards_dispatch_add(&f->ws, &r, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "none of the cited iterations (4) may be a best"));
	r.evidence = "iter 1, 4";
	if (guards_dispatch_add(&f->ws, &r, &e) < 0)
		fail_msg("%s", e.msg);
	struct dispatch_doc d;
	assert_int_equal(guards_dispatch_rows(&f->ws, &d, &e), 0);
	assert_int_equal(d.n, 1);
	assert_true(fabs(d.v[0].speedup - 2.0) < 1e-9);
	assert_string_equal(d.v[0].evidence, "1,4");
	dispatch_doc_release(&d);
	char *text = slurp(f, "profile/demo-opt/dispatch.md");
	assert_non_null(strstr(text, "| T <= 64 | fused_fwd | 1.000 | 0.500 | 2.00x | one launch (iters 1, 4) |"));
	free(text);
}

static void revert_restores_the_best_kernel_in_its_own_commit(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	char sha[41];
	const char *best = "double kern(double x) { return x + x; }\n";
	add_row(f, 0, RS_BASE, GATE_PASS, 1.0, "Machine: A", NULL, NULL);
	add_row(f, 1, RS_KEEP, GATE_PASS, 0.8, "Machine: A", best, NULL);
	assert_int_equal(guards_after_commit(&f->ws, sha, &e), 0); /* keep: nothing to do */
	assert_string_equal(sha, "");
	add_row(f, 2, RS_REVERT, GATE_PASS, 0.9, "Machine: A", "double kern(double x) { return 2*x; }\n", NULL);
	if (guards_after_commit(&f->ws, sha, &e) < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(strlen(sha), 40);
	char *k = slurp(f, "src/kernel.c");
	assert_string_equal(k, best);
	free(k);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "cd %s && git log -1 --format=%%s%%n%%b | grep -q 'Optloop-Restore: 2'"
		 " && test -z \"$(git status --porcelain src)\" && git show HEAD~1:src/kernel.c | grep -q '2\\*x'",
		 f->dir);
	assert_int_equal(system(cmd), 0);
	/* again: already done */
	assert_int_equal(guards_after_commit(&f->ws, sha, &e), 0);
	assert_string_equal(sha, "");
}

static void lint_findings_must_be_acknowledged_and_mark_traps(void **state)
{
	struct fx *f = *state;
	struct err e = {0};
	const char *root = getenv("OPTLOOP_ROOT");
	char *assets = fsutil_join(root ? root : ".", "assets");
	setenv("OPTLOOP_ASSETS", assets, 1);
	free(assets);
	put(f, "src/kernel.c", "double kern(double x) { float acc = 0; return x * 2 + acc; }\n");
	assert_int_equal(guards_log_check(&f->ws, 1, false, &e), ERR_REFUSED);
	assert_non_null(strstr(e.msg, "log refused: the diff of iteration 1 has 1 lint finding; "
				      "src/kernel.c:1 c-accumulator-lowered [trap symmetric-flags]"));
	assert_non_null(strstr(e.msg, "--ack"));
	struct lint_findings lf;
	bool acked;
	store_findings(f->store, 1, &lf);
	acked = store_findings_acked(f->store, 1);
	assert_int_equal(lf.n, 1);
	assert_false(acked);
	lint_findings_release(&lf);
	assert_int_equal(guards_log_check(&f->ws, 1, true, &e), 0);
	store_findings(f->store, 1, &lf);
	acked = store_findings_acked(f->store, 1);
	assert_true(acked);
	lint_findings_release(&lf);

	struct traps_doc d;
	assert_int_equal(guards_traps(&f->ws, 1, &d, NULL, &e), 0);
	assert_int_equal(traps_find(&d, "symmetric-flags")->state, TRAP_HIT);
	assert_int_equal(traps_find(&d, "clock-drift")->state, TRAP_UNCHECKED);
	traps_doc_release(&d);
	assert_int_equal(guards_trap_mark(f->store, 1, "clock-drift", TRAP_CHECKED, "user", &e), 0);
	assert_int_equal(guards_traps(&f->ws, 1, &d, NULL, &e), 0);
	assert_int_equal(traps_find(&d, "clock-drift")->state, TRAP_CHECKED);
	traps_doc_release(&d);
	assert_int_equal(guards_traps(&f->ws, 2, &d, NULL, &e), 0);
	assert_int_equal(traps_find(&d, "symmetric-flags")->state, TRAP_UNCHECKED);
	traps_doc_release(&d);

	/* a clean diff needs no acknowledgement */
	put(f, "src/kernel.c", "double kern(double x) { return x * 2; }\n");
	assert_int_equal(guards_log_check(&f->ws, 2, false, &e), 0);

	/* trap add writes TRAPS.md, and a missing part is refused */
	char *id = NULL;
	assert_int_equal(guards_trap_add(&f->ws, "Denormal inputs", "f", "", "h", &id, &e), ERR_USAGE);
	assert_int_equal(guards_trap_add(&f->ws, "Denormal inputs", "Subnormals are slow.",
					 "Flush-to-zero differs.", "Test with normal data.", &id, &e),
			 0);
	assert_string_equal(id, "denormal-inputs");
	free(id);
	char *text = slurp(f, "profile/demo-opt/TRAPS.md");
	assert_non_null(strstr(text, "## Denormal inputs\n\n**Fact:** Subnormals are slow."));
	assert_non_null(strstr(text, "## Clock-state drift {#clock-drift}"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(frozen_edit_is_refused_naming_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(a_long_stall_names_its_rows_in_spans, setup, teardown),
		cmocka_unit_test_setup_teardown(three_rows_without_a_win_stall_until_reassessed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(stop_reasons_are_checked_and_nogo_needs_five_items,
						setup, teardown),
		cmocka_unit_test_setup_teardown(dispatch_rows_need_evidence_from_the_same_baseline,
						setup, teardown),
		cmocka_unit_test_setup_teardown(revert_restores_the_best_kernel_in_its_own_commit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(lint_findings_must_be_acknowledged_and_mark_traps,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
