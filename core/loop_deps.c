/*
 * loop_deps — who else runs the files a candidate changed: the other ops of
 * the FLA registry and the test files whose functions run them (a change
 * to fla/ops/gla/chunk.py is run by 3 other ops and 19 test files).  Their gates are run
 * here (loop_dependents_run) and the promotion bar asks for them.
 */
#include "core/loop.h"
#include "core/loop_impl.h"

#include "core/err.h"
#include "core/flaref.h"
#include "core/fsutil.h"
#include "core/runner.h"
#include "core/rules.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/vcs.h"
#include "core/workspace.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void loop_dependents_release(struct loop_dependents *d)
{
	for (size_t i = 0; i < d->nchanged; i++)
		free(d->changed[i]);
	free(d->changed);
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].name);
		free(d->v[i].file);
		free(d->v[i].why);
	}
	free(d->v);
	free(d->tree);
	free(d->from);
	memset(d, 0, sizeof(*d));
}

static void add_dep(struct loop_dependents *d, const char *name, bool test,
		    const struct fla_files *f, int at)
{
	struct sb why = SB_INIT;
	fla_files_why(f, (size_t)at, &why);
	d->v = xrealloc(d->v, (d->n + 1) * sizeof(*d->v));
	d->v[d->n++] = (struct loop_dependent){xstrdup(name), test, xstrdup(f->v[at].path),
					       sb_detach(&why)};
}

/* The first changed file f reaches, or -1. */
static int reaches(const struct fla_files *f, const struct loop_dependents *d)
{
	for (size_t i = 0; i < d->nchanged; i++) {
		int at = fla_files_find(f, d->changed[i]);
		if (at >= 0)
			return at;
	}
	return -1;
}

/* Every test_*.py under dir (repository-relative), sorted. */
static void test_files(const char *repo, const char *dir, int depth, char ***out, size_t *n)
{
	char *full = fsutil_join(repo, dir);
	DIR *dh = opendir(full);
	free(full);
	struct dirent *de;
	char **sub = NULL;
	size_t nsub = 0;
	while (dh && (de = readdir(dh))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "__pycache__"))
			continue;
		char *rel = xasprintf("%s/%s", dir, de->d_name);
		char *abs = fsutil_join(repo, rel);
		struct stat st;
		size_t len = strlen(de->d_name);
		bool there = lstat(abs, &st) == 0;
		if (there && S_ISDIR(st.st_mode) && depth < 4) {
			sub = xrealloc(sub, (nsub + 1) * sizeof(*sub));
			sub[nsub++] = rel;
			rel = NULL;
		} else if (there && S_ISREG(st.st_mode) && !strncmp(de->d_name, "test_", 5) &&
			   len > 3 && !strcmp(de->d_name + len - 3, ".py")) {
			*out = xrealloc(*out, (*n + 1) * sizeof(**out));
			(*out)[(*n)++] = rel;
			rel = NULL;
		}
		free(rel);
		free(abs);
	}
	if (dh)
		closedir(dh);
	for (size_t i = 0; i < nsub; i++) {
		test_files(repo, sub[i], depth + 1, out, n);
		free(sub[i]);
	}
	free(sub);
}

int loop_dependents(struct loop *l, bool work, struct loop_dependents *d, struct err *e)
{
	memset(d, 0, sizeof(*d));
	struct loop_status st;
	int rc = loop_status(l, &st, e);
	if (rc < 0)
		return rc;
	struct log_rows *sr = NULL;
	if ((rc = store_rows_get(l->ws.store, &sr, e)) < 0) {
		loop_status_release(&st);
		return rc;
	}
	const struct log_row *rows = sr->v;
	size_t n = sr->n;
	char *own_test = NULL;
	store_meta_get(l->ws.store, "test_file", &own_test, NULL);
	const struct log_row *base = n && rows[0].commit ? &rows[0] : NULL;
	const struct log_row *best = log_rows_best(rows, n);
	const char *to = work ? NULL : best && best->commit ? best->commit : NULL;
	struct vcs *v = l->ws.vcs;
	const char *repo = loop_repo_dir(l);
	if (!base) {
		rc = err_set(e, ERR_REFUSED,
			     "dependents: there is no committed baseline to compare the kernel with "
			     "yet (verify and log the baseline first)");
		goto out;
	}
	if (!work && !to) {
		rc = err_set(e, ERR_REFUSED, "dependents: there is no best with a commit yet");
		goto out;
	}
	d->from = xstrdup(base->commit);
	char tree[VCS_OID_HEX];
	const char *const *kp = (const char *const *)st.kernel;
	if ((rc = vcs_kernel_hash(v, kp, st.nkernel, to, tree, e)) < 0 ||
	    (rc = vcs_kernel_changed(v, kp, st.nkernel, base->commit, to, &d->changed,
				     &d->nchanged, e)) < 0)
		goto out;
	d->tree = xstrdup(tree);
	if (!d->nchanged)
		goto out;

	/* the registry's other ops; one read of the repository's files for
	 * all the walks */
	struct fla_tree *ft = fla_tree_open(repo);
	char **names = NULL;
	struct workspace_defaults *ops = NULL;
	size_t nops = workspace_fla_registry(repo, &names, &ops);
	for (size_t i = 0; i < nops; i++) {
		if (!strcmp(names[i], (&l->ws)->op))
			continue;
		char *file = fla_resolve(ft, ops[i].import_path, ops[i].func_name);
		if (!file)
			continue;
		struct fla_files f = {0};
		char *label = xasprintf("the op %s", names[i]);
		fla_walk_func(ft, file, ops[i].func_name, label, &f);
		free(label);
		int at = reaches(&f, d);
		if (at >= 0) {
			char *nm = xasprintf("op %s", names[i]);
			add_dep(d, nm, false, &f, at);
			free(nm);
		}
		fla_files_release(&f);
		free(file);
	}
	workspace_fla_registry_release(names, ops, nops);

	/* the test files, but the op's own gate */
	char **tests = NULL;
	size_t nt = 0;
	test_files(repo, "tests", 0, &tests, &nt);
	if (nt > 1)
		qsort(tests, nt, sizeof(*tests), strp_cmp);
	for (size_t i = 0; i < nt; i++) {
		if (!own_test || strcmp(own_test, tests[i]) != 0) {
			struct fla_files f = {0};
			fla_walk(ft, tests[i], "a test file", &f);
			int at = reaches(&f, d);
			if (at >= 0)
				add_dep(d, tests[i], true, &f, at);
			fla_files_release(&f);
		}
		free(tests[i]);
	}
	free(tests);
	fla_tree_close(ft);
out:
	free(own_test);
	log_rows_put(sr);
	loop_status_release(&st);
	if (rc < 0)
		loop_dependents_release(d);
	return rc;
}

/* "TREE EXIT SECONDS FILE": one dependent gate's run, as the event says it. */
struct gate_seen {
	const char *tree, *file;
	int exit;
	bool seen;
};

static void gate_event(void *ctx, const char *detail)
{
	struct gate_seen *g = ctx;
	char tree[VCS_OID_HEX + 1];
	int rc;
	double secs;
	int off = 0;
	if (!detail || sscanf(detail, "%40s %d %lf %n", tree, &rc, &secs, &off) != 3 || !off)
		return;
	if (!strcmp(tree, g->tree) && !strcmp(detail + off, g->file)) {
		g->seen = true;
		g->exit = rc; /* the newest run counts */
	}
}

int loop_dependent_gate(struct loop *l, const char *tree, const char *file, int *exit_status)
{
	struct gate_seen g = {.tree = tree, .file = file, .exit = -1};
	store_events_of(l->ws.store, "dependents.gate", gate_event, &g, NULL);
	*exit_status = g.exit;
	return g.seen ? 1 : 0;
}

/* $OPTLOOP_PYTHON (or python3) -m pytest ARGS, an argument vector (no
 * shell reads a file name), in the repository, through the runner as
 * verify's harness: a process group of its own, stopped whole once *o->stop
 * is set, and tagged like a run, so that the next writer stops it if this
 * optloop is killed.  0 with the exit status (128 + N for a signal) and the
 * seconds it took; ERR_HARNESS when *o->stop stopped it, the runner's error
 * when it could not start.  what names the run in the messages. */
static int run_pytest(struct loop *l, const char *what, const char *const *args,
		      const struct loop_pytest_opts *o, int *exit_status, double *secs,
		      struct err *e)
{
	/* $OPTLOOP_PYTHON: the Python the project's tests run with */
	const char *py = getenv("OPTLOOP_PYTHON");
	const char *argv[16] = {py && *py ? py : "python3", "-m", "pytest"};
	size_t n = 3;
	for (size_t i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	char *tag = xasprintf("%s#pytest", l->ws.trace_dir);
	struct runner_spec s = {
		.argv = argv,
		.cwd = loop_repo_dir(l),
		.tag = tag,
		.stop = o ? o->stop : NULL,
	};
	struct runner_outcome oc = {0};
	bool stopped = s.stop && *s.stop; /* a signal before it started */
	int rc = stopped ? 0 : runner_run(&s, o ? o->output : NULL, o ? o->ctx : NULL, &oc, e);
	free(tag);
	if (rc < 0 && e) {
		char *why = xstrdup(e->msg);
		err_set(e, rc, "%s: %s; set $OPTLOOP_PYTHON to the Python the project's tests run "
			       "with", what, why);
		free(why);
	}
	if (rc < 0)
		return rc;
	*exit_status = oc.exit_status >= 0 ? oc.exit_status : 128 + oc.signal;
	*secs = oc.t_end > oc.t_start ? oc.t_end - oc.t_start : 0;
	stopped |= oc.cancelled;
	runner_outcome_release(&oc);
	if (stopped)
		return err_set(e, ERR_HARNESS,
			       "%s stopped: pytest and every process it started were stopped, and "
			       "nothing of that run was recorded",
			       what);
	return 0;
}

int loop_warmup(struct loop *l, int workers, const struct loop_pytest_opts *o, int *exit_status,
		double *secs, struct err *e)
{
	char *test = NULL;
	store_meta_get(l->ws.store, "test_file", &test, NULL);
	if (!test || !*test) {
		free(test);
		return err_set(e, ERR_NOTFOUND, "warmup: the workspace names no gate test");
	}
	char nw[16];
	snprintf(nw, sizeof(nw), "%d", workers);
	const char *args[] = {test, "-q", "-p", "no:cacheprovider", "-n", nw, NULL};
	if (workers <= 1)
		args[4] = NULL; /* no xdist */
	int rc = run_pytest(l, "warmup", args, o, exit_status, secs, e);
	if (rc == 0) {
		char *det = xasprintf("%d %.1f %d %s", *exit_status, *secs, workers, test);
		rc = loop_event(l, "warmup", det, e);
		free(det);
	}
	free(test);
	return rc;
}

int loop_dependents_run(struct loop *l, const struct loop_dependents *d,
			const struct loop_pytest_opts *o, struct err *e)
{
	char tree[VCS_OID_HEX];
	struct loop_status st;
	int rc = loop_status(l, &st, e);
	if (rc < 0)
		return rc;
	/* the gates run on the work tree: it must hold what was compared */
	rc = vcs_kernel_hash(l->ws.vcs, (const char *const *)st.kernel, st.nkernel, NULL, tree,
			     e);
	loop_status_release(&st);
	if (rc < 0)
		return rc;
	if (strcmp(tree, d->tree))
		return err_set(e, ERR_REFUSED,
			       "dependents --run refused: the kernel in the work tree is not the one "
			       "compared (the best's); run it with the best's kernel in the tree, "
			       "or compare the work tree (--work)");
	for (size_t i = 0; i < d->n; i++) {
		if (!d->v[i].test)
			continue;
		const char *file = d->v[i].name;
		const char *args[] = {file, "-q", NULL};
		double secs;
		int code;
		if ((rc = run_pytest(l, "dependents --run", args, o, &code, &secs, e)) < 0)
			return rc;
		char *det = xasprintf("%s %d %.1f %s", d->tree, code, secs, file);
		rc = loop_event(l, "dependents.gate", det, e);
		free(det);
		if (o && o->gate)
			o->gate(o->gate_ctx, file, code, secs);
		if (rc < 0)
			return rc;
		if (code > 128)
			return err_set(e, ERR_HARNESS, "dependents --run stopped: %s was killed", file);
	}
	return 0;
}
