/*
 * demo — make a fresh copy of the embedded demo kernel project
 * (assets/demo/) as a git repository with one commit, so a newcomer can run
 * real optimization iterations with no GPU and the end-to-end tests have a
 * real project to drive.
 *
 * demo_create() only makes the repository; loop_demo (core/loop.h, defined
 * in demo.c) adds the workspace with a complete contract from demo_spec().
 */
#ifndef OPTLOOP_DEMO_H
#define OPTLOOP_DEMO_H

#include <stdbool.h>

struct err;

/* What the demo project is, for creating its optloop workspace: the fields
 * of `optloop init` and of the task contract.  Paths are relative to the
 * project root. */
struct demo_spec {
	const char *op;
	const char *kernel;        /* the one file an iteration may change */
	const char *test_file;     /* the frozen gate */
	const char *naive;         /* the frozen reference */
	const char *frozen;        /* the whole frozen scope, comma separated */
	const char *verify_cmd;    /* validation command (full gate + benchmark) */
	const char *bench_cmd;     /* benchmark command (against the last commit) */
	const char *target;
	const char *languages;
	const char *promotion;
};

/* Static storage; valid for the process lifetime. */
const struct demo_spec *demo_spec(void);

struct demo_result {
	char *dir;          /* absolute path of the new project */
	char commit[41];    /* the one commit, 40 hex digits */
	bool identity_set;  /* git had no user identity: a repo-local one was set */
	char *identity;     /* "Name <email>" the commit was made with */
};

/* Copy assets/demo into dir (which must not exist, or be an empty
 * directory; NULL: a new mkdtemp directory $TMPDIR/optloop-demo.XXXXXX),
 * `git init` it on branch main and commit every file through libgit2.
 * When git has no user identity, a repo-local one is configured (and
 * identity_set says so).  On success *r is filled and owned by the caller
 * (demo_result_release).  ERR_USAGE when dir is not empty, ERR_NOTFOUND
 * when the assets are missing, ERR_IO for file system or git failures. */
int demo_create(const char *dir, struct demo_result *r, struct err *e);
void demo_result_release(struct demo_result *r);

#endif
