/*
 * scratch.h — set-up shared by the unit tests that work on real files and
 * real repositories (include after cmocka.h):
 *
 *   sh(FMT, ...)               run a shell command; the test fails unless it
 *                              exits 0
 *   root()                     the source tree (OPTLOOP_ROOT, else ".")
 *   scratch_make(DIR, NAME)    DIR (64 bytes) becomes a fresh
 *                              /tmp/optloop-NAME.XXXXXX holding its own
 *                              HOME (so no git or optloop configuration of
 *                              the machine leaks in)
 *   scratch_remove(DIR)        remove it again (a teardown's return value)
 *   tiny_workspace(REPO)       the tiny kernel project
 *                              (tests/fixtures/make_tiny_project.sh) at REPO
 *                              with an optloop workspace whose contract is
 *                              complete; the templates come from root()
 *   verify_run(L, O, M, E)     a verify through the job handle, blocking
 *                              (loop_job_run); O may be NULL; *M gets the
 *                              measurement (zeroed on error)
 */
#ifndef OPTLOOP_TESTS_SCRATCH_H
#define OPTLOOP_TESTS_SCRATCH_H

#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 1, 2))) static inline void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static inline const char *root(void)
{
	const char *r = getenv("OPTLOOP_ROOT");
	return r ? r : ".";
}

static inline void scratch_make(char dir[64], const char *name)
{
	snprintf(dir, 64, "/tmp/optloop-%s.XXXXXX", name);
	assert_non_null(mkdtemp(dir));
	char *home = xasprintf("%s/home", dir);
	sh("mkdir -p %s", home);
	setenv("HOME", home, 1);
	setenv("XDG_CONFIG_HOME", home, 1);
	free(home);
	/* templates and pattern sets from the source tree */
	char *assets = xasprintf("%s/assets", root());
	setenv("OPTLOOP_ASSETS", assets, 1);
	free(assets);
}

static inline int scratch_remove(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static inline void tiny_workspace(const char *repo)
{
	struct sb notes = SB_INIT;
	struct err e = {0};
	const char *kernel[] = {"kernel"};
	struct loop_init_opts o = {.op = "tiny", .test_file = "tests/test_compute.sh",
				   .naive = "ref/naive.sh", .kernel = kernel, .nkernel = 1,
				   .verify_cmd = "./verify", .target = "2x", .languages = "sh",
				   .promotion = "full gate"};
	sh("%s/tests/fixtures/make_tiny_project.sh %s", root(), repo);
	assert_int_equal(loop_init(repo, &o, &notes, &e), 0);
	sb_release(&notes);
}

static inline int verify_run(struct loop *l, const struct loop_verify_opts *o,
			     struct loop_measurement *m, struct err *e)
{
	struct loop_job_opts jo = {.kind = LOOP_JOB_VERIFY};
	struct loop_job_result r;
	if (o)
		jo.verify = *o;
	int rc = loop_job_run(l, &jo, &r, e);
	*m = r.m;
	memset(&r.m, 0, sizeof(r.m));
	loop_job_result_release(&r);
	return rc;
}

#endif
