/* demo — a fresh git repository holding the embedded demo project. */
#include "core/demo.h"
#include "core/assets.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEMO_NAME "optloop demo"
#define DEMO_EMAIL "demo@optloop.invalid"

static const struct demo_spec spec = {
	.op = "chunk_linear_attn",
	.kernel = "ops/linear_attn/chunk.c",
	.test_file = "tests/ops/test_linear_attn.c",
	.naive = "ops/linear_attn/naive.c",
	.frozen = "tests/ops/test_linear_attn.c, ops/linear_attn/naive.c, "
		  "ops/linear_attn/linear_attn.h, benchmarks/ops/run.c, verify",
	.verify_cmd = "./verify --op chunk_linear_attn",
	.bench_cmd = "./verify --op chunk_linear_attn --base HEAD",
	.target = "every benchmark shape (B2-T512-H4-D64, B1-T1024-H2-D128, B4-T512-H4-D32) "
		  "at least 1.5x faster than the baseline median, on this machine",
	.languages = "C11 in ops/linear_attn/chunk.c, built with cc -O2; no new dependencies",
	.promotion = "a full (not -k) green gate, a win beyond the noise band repeated by a "
		     "confirm run, and a profile reading (perf) of the candidate",
};

const struct demo_spec *demo_spec(void)
{
	return &spec;
}

void demo_result_release(struct demo_result *r)
{
	free(r->dir);
	free(r->identity);
	memset(r, 0, sizeof(*r));
}

static int git_fail(struct err *e, const char *what)
{
	const git_error *ge = git_error_last();
	return err_set(e, ERR_IO, "%s: %s", what, ge && ge->message ? ge->message : "libgit2 error");
}

/* ---- copying the project ------------------------------------------------ */

static int copy_file(const char *src, const char *dst, mode_t mode, struct err *e)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	ssize_t n = 0;

	if (in < 0)
		return err_set(e, ERR_IO, "cannot read %s: %s", src, strerror(errno));
	/* The copy is the user's to edit, whatever the installed assets allow. */
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode & 0777) | 0600);
	if (out < 0) {
		close(in);
		return err_set(e, ERR_IO, "cannot create %s: %s", dst, strerror(errno));
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				n = -1;
				break;
			}
			off += w;
		}
		if (n < 0)
			break;
	}
	if (n < 0 || close(out) < 0) {
		int er = errno;
		close(in);
		return err_set(e, ERR_IO, "cannot copy %s to %s: %s", src, dst, strerror(er));
	}
	close(in);
	return 0;
}

/* Copy the children of src into the existing directory dst.  At the top
 * level, build/ (outputs of a verify run inside the assets) is left out. */
static int copy_children(const char *src, const char *dst, bool top, struct err *e)
{
	DIR *d = opendir(src);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return err_set(e, ERR_IO, "cannot list %s: %s", src, strerror(errno));
	while (rc == 0 && (de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (top && !strcmp(de->d_name, "build"))
			continue;
		char *s = fsutil_join(src, de->d_name), *t = fsutil_join(dst, de->d_name);
		if (lstat(s, &st) < 0) {
			rc = err_set(e, ERR_IO, "cannot read %s: %s", s, strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdir(t, 0755) < 0)
				rc = err_set(e, ERR_IO, "cannot create %s: %s", t, strerror(errno));
			else
				rc = copy_children(s, t, false, e);
		} else if (S_ISREG(st.st_mode)) {
			rc = copy_file(s, t, st.st_mode, e);
		}
		free(s);
		free(t);
	}
	closedir(d);
	return rc;
}

/* Make (or adopt an empty) target directory; *made says whether we made it. */
static int prepare_dir(const char *dir, char **abs, bool *made, struct err *e)
{
	*made = false;
	if (!dir) {
		const char *tmp = getenv("TMPDIR");
		char *tmpl = xasprintf("%s/optloop-demo.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tmpl)) {
			int er = errno;
			err_set(e, ERR_IO, "cannot make a directory like %s: %s (set TMPDIR to a writable place, or name a DIR)",
				tmpl, strerror(er));
			free(tmpl);
			return ERR_IO;
		}
		*made = true;
		*abs = realpath(tmpl, NULL);
		free(tmpl);
		return *abs ? 0 : err_set(e, ERR_IO, "cannot resolve the new directory: %s", strerror(errno));
	}
	if (fsutil_exists(dir)) {
		DIR *d;
		struct dirent *de;
		bool empty = true;

		if (!fsutil_is_dir(dir))
			return err_set(e, ERR_USAGE,
				       "%s exists and is not a directory (name a new or empty directory, "
				       "or give none for a fresh temporary one)",
				       dir);
		d = opendir(dir);
		if (!d)
			return err_set(e, ERR_IO, "cannot list %s: %s", dir, strerror(errno));
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = false;
		closedir(d);
		if (!empty)
			return err_set(e, ERR_USAGE,
				       "%s is not empty; the demo is made only in a new or empty directory "
				       "(name another DIR, or give none for a fresh temporary one)",
				       dir);
	} else {
		if (fsutil_mkdir_p(dir, e) < 0)
			return ERR_IO;
		*made = true;
	}
	*abs = realpath(dir, NULL);
	return *abs ? 0 : err_set(e, ERR_IO, "cannot resolve %s: %s", dir, strerror(errno));
}

/* Remove what we made after a failure, so a retry finds the same state. */
static void remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char *c = fsutil_join(path, de->d_name);
			remove_tree(c);
			free(c);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

static void empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *c = fsutil_join(path, de->d_name);
		remove_tree(c);
		free(c);
	}
	if (d)
		closedir(d);
}

/* ---- the repository ------------------------------------------------------- */

static int signature(git_repository *repo, git_signature **sig, struct demo_result *r,
		     struct err *e)
{
	git_config *cfg = NULL;

	if (git_signature_default(sig, repo) == 0)
		goto done;
	/* No identity anywhere git looks: give this repository its own, so the
	 * demo works on a fresh machine.  The caller tells the user. */
	if (git_repository_config(&cfg, repo) < 0 ||
	    git_config_set_string(cfg, "user.name", DEMO_NAME) < 0 ||
	    git_config_set_string(cfg, "user.email", DEMO_EMAIL) < 0) {
		git_config_free(cfg);
		return git_fail(e, "cannot set a local git identity for the demo repository");
	}
	git_config_free(cfg);
	r->identity_set = true;
	if (git_signature_default(sig, repo) < 0)
		return git_fail(e, "cannot read the demo repository's git identity");
done:
	r->identity = xasprintf("%s <%s>", (*sig)->name, (*sig)->email);
	return 0;
}

static int commit_all(const char *dir, struct demo_result *r, struct err *e)
{
	git_repository_init_options opts;
	git_repository *repo = NULL;
	git_index *index = NULL;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_oid tree_id, commit_id;
	int rc = 0;

	git_repository_init_options_init(&opts, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	opts.flags = GIT_REPOSITORY_INIT_MKPATH;
	opts.initial_head = "main";
	if (git_repository_init_ext(&repo, dir, &opts) < 0) {
		rc = git_fail(e, "cannot initialise a git repository in the demo directory");
		goto out;
	}
	if ((rc = signature(repo, &sig, r, e)) < 0)
		goto out;
	if (git_repository_index(&index, repo) < 0 ||
	    git_index_add_all(index, NULL, GIT_INDEX_ADD_DEFAULT, NULL, NULL) < 0 ||
	    git_index_write(index) < 0 || git_index_write_tree(&tree_id, index) < 0 ||
	    git_tree_lookup(&tree, repo, &tree_id) < 0) {
		rc = git_fail(e, "cannot stage the demo project");
		goto out;
	}
	if (git_commit_create(&commit_id, repo, "HEAD", sig, sig, NULL,
			      "Demo project: chunk_linear_attn, a CPU kernel to optimize\n\n"
			      "Made by optloop demo from its embedded assets.\n",
			      tree, 0, NULL) < 0) {
		rc = git_fail(e, "cannot commit the demo project");
		goto out;
	}
	git_oid_tostr(r->commit, sizeof(r->commit), &commit_id);
out:
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(index);
	git_repository_free(repo);
	return rc;
}

int demo_create(const char *dir, struct demo_result *r, struct err *e)
{
	char *src, *abs = NULL;
	bool made;
	int rc;

	memset(r, 0, sizeof(*r));
	src = assets_path("demo", e);
	if (!src)
		return ERR_NOTFOUND;
	if (!fsutil_is_dir(src)) {
		rc = err_set(e, ERR_NOTFOUND,
			     "the demo project is missing from optloop's assets (%s); reinstall with "
			     "'make install' or set OPTLOOP_ASSETS",
			     src);
		free(src);
		return rc;
	}
	if ((rc = prepare_dir(dir, &abs, &made, e)) < 0) {
		free(src);
		return rc;
	}
	git_libgit2_init();
	rc = copy_children(src, abs, true, e);
	if (rc == 0)
		rc = commit_all(abs, r, e);
	git_libgit2_shutdown();
	free(src);
	if (rc < 0) {
		if (made)
			remove_tree(abs);
		else
			empty_dir(abs);
		free(abs);
		demo_result_release(r);
		return rc;
	}
	r->dir = abs;
	return 0;
}

/* init for the demo op in dir, then the frozen scope in full. */
static int demo_workspace(const struct demo_spec *ds, const char *dir, char **workspace,
			  struct err *e)
{
	const char *kernel[] = {ds->kernel};
	struct loop_init_opts o = {
		.op = ds->op, .test_file = ds->test_file, .naive = ds->naive,
		.kernel = kernel, .nkernel = 1, .verify_cmd = ds->verify_cmd,
		.bench_cmd = ds->bench_cmd, .target = ds->target,
		.languages = ds->languages, .promotion = ds->promotion,
	};
	struct sb notes = SB_INIT, text = SB_INIT, out = SB_INIT;
	int rc = loop_init(dir, &o, &notes, e);
	char *path = xasprintf("%s/profile/%s-opt/docs/draft.md", dir, ds->op);

	if (rc == 0 && ds->frozen)
		rc = fsutil_read_file(path, &text, e);
	if (rc == 0 && ds->frozen)
		rc = contract_set(text.buf, text.len, "frozen", ds->frozen, &out, e);
	if (rc == 0 && ds->frozen)
		rc = fsutil_write_atomic(path, out.buf, out.len, e);
	if (rc == 0)
		*workspace = xasprintf("%s/profile/%s-opt", dir, ds->op);
	free(path);
	sb_release(&notes);
	sb_release(&text);
	sb_release(&out);
	return rc;
}

int loop_demo(const char *dir, struct loop_demo *d, struct err *e)
{
	const struct demo_spec *ds = demo_spec();
	struct demo_result r;
	int rc;

	memset(d, 0, sizeof(*d));
	if ((rc = demo_create(dir, &r, e)) < 0)
		return rc;
	d->dir = r.dir;
	memcpy(d->commit, r.commit, sizeof(d->commit));
	d->identity_set = r.identity_set;
	d->identity = r.identity;
	d->op = ds->op;
	d->kernel = ds->kernel;
	d->test_file = ds->test_file;
	d->verify_cmd = ds->verify_cmd;
	if ((rc = demo_workspace(ds, d->dir, &d->workspace, e)) < 0)
		loop_demo_release(d);
	return rc;
}

void loop_demo_release(struct loop_demo *d)
{
	free(d->dir);
	free(d->identity);
	free(d->workspace);
	memset(d, 0, sizeof(*d));
}
