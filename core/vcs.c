/* vcs — libgit2 operations of the loop: kernel hashing, commits, restore,
 * set-aside, diff (reading optloop's own commits back: vcs_history.c). */
#include "core/vcs_impl.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/fault.h"
#include "core/sb.h"

#include <git2.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One file under the kernel paths. */
/* Temp files of a restore start with this: never taken for kernel files
 * (a kill between write and rename leaves one behind, harmlessly). */
#define VCS_TMP_PREFIX ".optloop-restore."
/* A kernel file a swap replaced, kept as a second link to the same inode
 * and named by its blob id: swapping back renames it into place, which
 * needs no free space (a full disk cannot strand the best in the tree) and
 * writes nothing.  Removed when the swap ends (vcs_clear_keeps). */
#define VCS_KEEP_PREFIX ".optloop-keep."

struct kfile {
	char *path;
	unsigned mode;
	git_oid oid;
	bool hidden; /* outside a sparse checkout's set: in the index (skip-worktree),
		      * not in the work tree; neither a deletion nor restored */
};

struct klist {
	struct kfile *v;
	size_t n, cap;
};

/* What to do about a lock another git left; lock is its path. */
#define INDEX_LOCK_ADVICE                                                                   \
	"another git command is running in this repository, or one was killed and left "   \
	"the lock behind; when no git command is running, remove it (rm '%s') and run the " \
	"optloop command again"

int vcs_git_fail(struct err *e, int code, const char *what)
{
	const git_error *ge = git_error_last();
	const char *msg = ge && ge->message ? ge->message : "libgit2 error";
	/* "failed to lock file '<path>.lock' for writing": a git command is
	 * running, or one that was killed left its lock file behind */
	const char *q = strstr(msg, "lock file '");
	const char *end = q ? strstr(q + 11, ".lock'") : NULL;
	if (end) {
		int n = (int)(end + 5 - (q + 11));
		return err_set(e, ERR_BUSY,
			       "%s: git's lock file %.*s is there: a git command is running, or one "
			       "that was killed left it behind; when no git command is running, "
			       "remove it (rm '%.*s') and run this again",
			       what, n, q + 11, n, q + 11);
	}
	if (strstr(msg, "index is locked"))
		return err_set(e, ERR_BUSY,
			       "%s: git's lock file .git/index.lock is there: a git command is "
			       "running, or one that was killed left it behind; when no git command "
			       "is running, remove it (rm .git/index.lock, in the repository) and run "
			       "this again",
			       what);
	return err_set(e, code, "%s: %s", what, msg);
}

void vcs_libgit2_init(void)
{
	static bool done;
	if (!done) {
		git_libgit2_init();
		vcs_filter_register();
		done = true;
	}
}

int vcs_open(const char *cwd, struct vcs **out, struct err *e)
{
	git_buf root = {0};
	struct vcs *v;
	char here[4096];

	vcs_libgit2_init();
	if (!cwd) {
		if (!getcwd(here, sizeof(here)))
			return err_set(e, ERR_IO, "cannot read the current directory: %s",
				       strerror(errno));
		cwd = here;
	}
	if (git_repository_discover(&root, cwd, 0, NULL) < 0) {
		return err_set(e, ERR_NOTFOUND,
			       "%s is not inside a git repository (run optloop in the kernel "
			       "repository, or pass -C DIR)",
			       cwd);
	}
	v = xcalloc(1, sizeof(*v));
	int grc = git_repository_open(&v->repo, root.ptr);
	const git_error *ge = grc < 0 ? git_error_last() : NULL;
	/* (libgit2 1.5 answers ENOTFOUND for "config value 'safe.directory' was
	 * not found" when no config names one) */
	if (grc == GIT_EOWNER ||
	    (ge && ge->message &&
	     (strstr(ge->message, "safe.directory") || strstr(ge->message, "not owned")))) {
		/* git's own check (CVE-2022-24765): a repository another user owns;
		 * safe.directory names the work tree, not its .git */
		size_t n = strlen(root.ptr);
		if (n > 6 && !strcmp(root.ptr + n - 6, "/.git/"))
			n -= 6;
		int rc = err_set(e, ERR_READONLY,
				 "the repository %.*s belongs to another user, and git refuses to "
				 "work in it; run optloop as its owner, or if you trust it, mark it "
				 "safe: git config --global --add safe.directory %.*s",
				 (int)n, root.ptr, (int)n, root.ptr);
		git_buf_dispose(&root);
		free(v);
		return rc;
	}
	if (grc < 0) {
		int rc = vcs_git_fail(e, ERR_IO, "cannot open the git repository");
		git_buf_dispose(&root);
		free(v);
		return rc;
	}
	git_buf_dispose(&root);
	if (git_repository_is_bare(v->repo)) {
		vcs_free(v);
		return err_set(e, ERR_NOTFOUND,
			       "the repository at %s is bare; optloop needs a work tree", cwd);
	}
	v->workdir = xstrdup(git_repository_workdir(v->repo));
	size_t L = strlen(v->workdir);
	while (L > 1 && v->workdir[L - 1] == '/')
		v->workdir[--L] = '\0';
	*out = v;
	return 0;
}

static char *norm_path(const char *p);

void vcs_set_exclude(struct vcs *v, const char *const *paths, size_t n)
{
	for (size_t i = 0; i < v->nexclude; i++)
		free(v->exclude[i]);
	free(v->exclude);
	v->exclude = n ? xcalloc(n, sizeof(char *)) : NULL;
	v->nexclude = n;
	for (size_t i = 0; i < n; i++)
		v->exclude[i] = norm_path(paths[i]);
}

static bool excluded(const struct vcs *v, const char *rel)
{
	for (size_t i = 0; i < v->nexclude; i++) {
		size_t L = strlen(v->exclude[i]);
		if (L && !strncmp(rel, v->exclude[i], L) && (rel[L] == '\0' || rel[L] == '/'))
			return true;
	}
	return false;
}

void vcs_free(struct vcs *v)
{
	if (!v)
		return;
	vcs_set_exclude(v, NULL, 0);
	git_repository_free(v->repo);
	free(v->workdir);
	free(v);
}

const char *vcs_workdir(const struct vcs *v)
{
	return v->workdir;
}

const char *vcs_gitdir(const struct vcs *v)
{
	return git_repository_path(v->repo);
}

char *vcs_worktree_id(const struct vcs *v)
{
	if (!git_repository_is_worktree(v->repo))
		return NULL;
	/* the linked work tree's git directory: <common>/worktrees/<name>/ */
	char *dir = xstrdup(git_repository_path(v->repo));
	size_t n = strlen(dir);
	while (n && dir[n - 1] == '/')
		dir[--n] = '\0';
	const char *slash = strrchr(dir, '/');
	const char *name = slash ? slash + 1 : dir;
	bool safe = *name && *name != '.';
	for (const char *p = name; safe && *p; p++)
		safe = isalnum((unsigned char)*p) || *p == '_' || *p == '-' ||
		       (*p == '.' && p[1] != '.');
	safe = safe && !(n >= 5 && !strcmp(dir + n - 5, ".lock"));
	char *id;
	if (safe) {
		id = xstrdup(name);
	} else { /* FNV-1a: the same name gives the same ref */
		uint64_t h = 1469598103934665603ULL;
		for (const char *p = name; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		id = xasprintf("wt-%016llx", (unsigned long long)h);
	}
	free(dir);
	return id;
}

static int head_commit(struct vcs *v, git_commit **c, struct err *e)
{
	git_oid oid;
	int rc = git_reference_name_to_id(&oid, v->repo, "HEAD");
	if (rc == GIT_ENOTFOUND || rc == GIT_EUNBORNBRANCH)
		return err_set(e, ERR_NOTFOUND,
			       "the repository has no commit yet (commit the kernel first)");
	if (rc < 0)
		return vcs_git_fail(e, ERR_IO, "cannot read HEAD");
	if (git_commit_lookup(c, v->repo, &oid) < 0)
		return vcs_git_fail(e, ERR_IO, "cannot read the HEAD commit");
	return 0;
}

int vcs_head(struct vcs *v, char sha[VCS_OID_HEX], struct err *e)
{
	git_commit *c;
	int rc = head_commit(v, &c, e);
	if (rc < 0)
		return rc;
	git_oid_tostr(sha, VCS_OID_HEX, git_commit_id(c));
	git_commit_free(c);
	return 0;
}

int vcs_parent(struct vcs *v, const char *sha, char parent[VCS_OID_HEX], struct err *e)
{
	git_oid oid;
	git_commit *c = NULL;
	parent[0] = '\0';
	if (git_oid_fromstr(&oid, sha) < 0 || git_commit_lookup(&c, v->repo, &oid) < 0)
		return err_set(e, ERR_NOTFOUND, "git has no commit %.12s", sha);
	if (git_commit_parentcount(c) > 0)
		git_oid_tostr(parent, VCS_OID_HEX, git_commit_parent_id(c, 0));
	git_commit_free(c);
	return 0;
}

int vcs_is_ignored(struct vcs *v, const char *rel, bool *ignored, struct err *e)
{
	int ign = 0;
	if (git_ignore_path_is_ignored(&ign, v->repo, rel) < 0)
		return vcs_git_fail(e, ERR_IO, "cannot check .gitignore");
	*ignored = ign != 0;
	return 0;
}

int vcs_exclude_add(struct vcs *v, const char *pattern, struct err *e)
{
	const char *common = git_repository_commondir(v->repo);
	size_t cl = strlen(common);
	char *dir = xasprintf("%s%sinfo", common, cl && common[cl - 1] == '/' ? "" : "/");
	char *path = xasprintf("%s/exclude", dir);
	FILE *f;
	int rc = 0;

	mkdir(dir, 0755);
	f = fopen(path, "a+");
	if (!f)
		rc = err_set(e, ERR_IO, "cannot append to %s: %s", path, strerror(errno));
	else {
		/* a file whose last line has no newline would swallow the pattern
		 * into that line (both then mean nothing to git) */
		if (fseek(f, -1, SEEK_END) == 0 && fgetc(f) != '\n')
			fputc('\n', f);
		fprintf(f, "%s\n", pattern);
		if (fclose(f) != 0)
			rc = err_set(e, ERR_IO, "cannot write %s: %s", path, strerror(errno));
	}
	free(dir);
	free(path);
	return rc;
}

int vcs_identity_check(struct vcs *v, struct err *e)
{
	git_signature *sig = NULL;
	if (git_signature_default(&sig, v->repo) < 0)
		return err_set(e, ERR_REFUSED,
			       "commit refused: git has no identity to commit with (set it: git "
			       "config user.name \"Your Name\" && git config user.email "
			       "you@example.com)");
	git_signature_free(sig);
	return 0;
}

/* git's operations that leave the repository between two states, with how
 * each is finished or given up (git_repository_state's answers). */
static const struct {
	int state;
	const char *name, *finish;
} git_ops[] = {
	{GIT_REPOSITORY_STATE_MERGE, "git merge",
	 "finish it (git commit) or abort it (git merge --abort)"},
	{GIT_REPOSITORY_STATE_REVERT, "git revert",
	 "finish it (git revert --continue) or abort it (git revert --abort)"},
	{GIT_REPOSITORY_STATE_REVERT_SEQUENCE, "git revert",
	 "finish it (git revert --continue) or abort it (git revert --abort)"},
	{GIT_REPOSITORY_STATE_CHERRYPICK, "git cherry-pick",
	 "finish it (git cherry-pick --continue) or abort it (git cherry-pick --abort)"},
	{GIT_REPOSITORY_STATE_CHERRYPICK_SEQUENCE, "git cherry-pick",
	 "finish it (git cherry-pick --continue) or abort it (git cherry-pick --abort)"},
	{GIT_REPOSITORY_STATE_BISECT, "git bisect", "end it (git bisect reset)"},
	{GIT_REPOSITORY_STATE_REBASE, "git rebase",
	 "finish it (git rebase --continue) or abort it (git rebase --abort)"},
	{GIT_REPOSITORY_STATE_REBASE_INTERACTIVE, "git rebase",
	 "finish it (git rebase --continue) or abort it (git rebase --abort)"},
	{GIT_REPOSITORY_STATE_REBASE_MERGE, "git rebase",
	 "finish it (git rebase --continue) or abort it (git rebase --abort)"},
	{GIT_REPOSITORY_STATE_APPLY_MAILBOX, "git am",
	 "finish it (git am --continue) or abort it (git am --abort)"},
	{GIT_REPOSITORY_STATE_APPLY_MAILBOX_OR_REBASE, "git am or rebase",
	 "finish it (git am --continue or git rebase --continue) or abort it (git am --abort "
	 "or git rebase --abort)"},
};

const char *vcs_operation(struct vcs *v, const char **finish)
{
	int st = git_repository_state(v->repo);
	for (size_t i = 0; i < sizeof(git_ops) / sizeof(git_ops[0]); i++) {
		if (git_ops[i].state != st)
			continue;
		if (finish)
			*finish = git_ops[i].finish;
		return git_ops[i].name;
	}
	if (finish)
		*finish = NULL;
	return NULL;
}

int vcs_operation_check(struct vcs *v, const char *verb, const char *rerun, struct err *e)
{
	const char *finish;
	const char *op = vcs_operation(v, &finish);
	if (!op)
		return 0;
	return err_set(e, ERR_REFUSED,
		       "%s refused: %s in progress: %s, then run %s%s again",
		       verb, op, finish, rerun ? "optloop " : "the optloop command",
		       rerun ? rerun : "");
}

int vcs_head_ref(struct vcs *v, char **name, struct err *e)
{
	git_reference *ref = NULL;
	*name = NULL;
	if (git_reference_lookup(&ref, v->repo, "HEAD") < 0)
		return vcs_git_fail(e, ERR_IO, "cannot read HEAD");
	const char *target = git_reference_type(ref) == GIT_REFERENCE_SYMBOLIC
				     ? git_reference_symbolic_target(ref)
				     : NULL;
	*name = xstrdup(target ? target : "HEAD");
	git_reference_free(ref);
	return 0;
}

int vcs_commit_check(struct vcs *v, struct err *e)
{
	int rc = vcs_identity_check(v, e);
	if (rc < 0)
		return rc;
	if ((rc = vcs_operation_check(v, "commit", NULL, e)) < 0)
		return rc;
	char *lock = fsutil_join(git_repository_path(v->repo), "index.lock");
	if (fsutil_exists(lock))
		rc = err_set(e, ERR_BUSY, "commit refused: git's index is locked (%s exists); "
				INDEX_LOCK_ADVICE,
			     lock, lock);
	free(lock);
	if (rc == 0 && git_repository_head_detached(v->repo) == 1) {
		char head[VCS_OID_HEX] = "";
		vcs_head(v, head, NULL);
		rc = err_set(e, ERR_REFUSED,
			     "commit refused: HEAD is detached (at %.12s), so optloop's commits would "
			     "be on no branch, and git gc drops them once another branch is checked "
			     "out; create a branch here first (git switch -c opt-work), then run the "
			     "command again",
			     head);
	}
	return rc;
}

/* ---- kernel listings ---------------------------------------------------- */

static void klist_add(struct klist *l, const char *path, unsigned mode, const git_oid *oid)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n].path = xstrdup(path);
	l->v[l->n].mode = mode;
	l->v[l->n].hidden = false;
	if (oid)
		git_oid_cpy(&l->v[l->n].oid, oid);
	else
		memset(&l->v[l->n].oid, 0, sizeof(git_oid));
	l->n++;
}

static void klist_release(struct klist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int kfile_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kfile *)a)->path, ((const struct kfile *)b)->path);
}

static void klist_sort_unique(struct klist *l)
{
	size_t w = 0;
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), kfile_cmp);
	for (size_t i = 0; i < l->n; i++) {
		if (w && strcmp(l->v[w - 1].path, l->v[i].path) == 0) {
			free(l->v[i].path);
			continue;
		}
		l->v[w++] = l->v[i];
	}
	l->n = w;
}

/* Strip "./", leading and trailing slashes: the form git uses. */
static char *norm_path(const char *p)
{
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	while (*p == '/')
		p++;
	char *s = xstrdup(p);
	size_t n = strlen(s);
	while (n && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

static int walk_workdir(struct vcs *v, const char *rel, struct klist *l, struct err *e)
{
	char *full = xasprintf("%s/%s", v->workdir, rel);
	struct stat st;
	int rc = 0;

	if (excluded(v, rel) || lstat(full, &st) < 0) {
		free(full);
		return 0; /* absent or excluded: contributes nothing */
	}
	if (S_ISDIR(st.st_mode)) {
		/* a nested repository (a submodule) is its own repository's: git
		 * records it as a commit id, never its files, and so does optloop */
		char *dotgit = xasprintf("%s/.git", full);
		struct stat gs;
		bool nested = lstat(dotgit, &gs) == 0;
		free(dotgit);
		if (nested) {
			free(full);
			return 0;
		}
		DIR *d = opendir(full);
		struct dirent *de;
		if (!d) {
			rc = err_set(e, ERR_IO, "cannot list %s: %s", full, strerror(errno));
			free(full);
			return rc;
		}
		while (rc == 0 && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
			    !strcmp(de->d_name, ".git") ||
			    !strncmp(de->d_name, VCS_TMP_PREFIX, strlen(VCS_TMP_PREFIX)) ||
			    !strncmp(de->d_name, VCS_KEEP_PREFIX, strlen(VCS_KEEP_PREFIX)))
				continue; /* a restore's temp or kept file is never kernel content */
			char *child = xasprintf("%s/%s", rel, de->d_name);
			char *probe = xasprintf("%s/", child);
			int ign = 0;
			/* a directory is probed with its slash so "build/" patterns match */
			struct stat cs;
			char *cfull = xasprintf("%s/%s", v->workdir, child);
			bool isdir = lstat(cfull, &cs) == 0 && S_ISDIR(cs.st_mode);
			free(cfull);
			if (git_ignore_path_is_ignored(&ign, v->repo, isdir ? probe : child) < 0)
				rc = vcs_git_fail(e, ERR_IO, "cannot check .gitignore");
			else if (!ign)
				rc = walk_workdir(v, child, l, e);
			free(probe);
			free(child);
		}
		closedir(d);
	} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
		unsigned mode = S_ISLNK(st.st_mode)        ? GIT_FILEMODE_LINK
				: (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE
							 : GIT_FILEMODE_BLOB;
		git_oid oid;
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(full, target, sizeof(target));
			if (n < 0 || git_odb_hash(&oid, target, (size_t)n, GIT_OBJECT_BLOB) < 0)
				rc = err_set(e, ERR_IO, "cannot read link %s", full);
		} else if (git_repository_hashfile(&oid, v->repo, rel, GIT_OBJECT_BLOB, NULL) < 0) {
			if (lstat(full, &st) < 0 && errno == ENOENT) {
				/* gone since it was listed (an editor's or sed's temp
				 * file): it is not part of the kernel now */
				git_error_clear();
				free(full);
				return 0;
			}
			rc = vcs_git_fail(e, ERR_IO, "cannot hash a kernel file");
		} else {
			rc = vcs_filter_failed(e);
		}
		if (rc == 0)
			klist_add(l, rel, mode, &oid);
	}
	free(full);
	return rc;
}

/* A sparse checkout hides files from the work tree while the index keeps
 * them (skip-worktree): such a kernel file is there as the index has it,
 * not deleted. */
static void add_hidden(struct vcs *v, git_index *idx, const char *p, struct klist *l)
{
	size_t pos, len = strlen(p);
	/* the index is sorted: the entries under p are one run from its prefix */
	if (!idx || git_index_find_prefix(&pos, idx, p) < 0) {
		git_error_clear();
		return;
	}
	for (const git_index_entry *ent; (ent = git_index_get_byindex(idx, pos)) != NULL &&
					 !strncmp(ent->path, p, len);
	     pos++) {
		if (!(ent->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE) ||
		    git_index_entry_stage(ent) != 0 || !fsutil_path_under(ent->path, p) ||
		    excluded(v, ent->path))
			continue;
		char *full = fsutil_join(v->workdir, ent->path);
		struct stat st;
		bool absent = lstat(full, &st) < 0 && errno == ENOENT;
		free(full);
		if (!absent)
			continue;
		klist_add(l, ent->path, ent->mode, &ent->id);
		l->v[l->n - 1].hidden = true;
	}
}

static int list_workdir(struct vcs *v, const char *const *paths, size_t n, struct klist *l,
			struct err *e)
{
	git_index *idx = NULL;
	if (git_repository_index(&idx, v->repo) < 0)
		git_error_clear(); /* no index: nothing is hidden */
	for (size_t i = 0; i < n; i++) {
		char *p = norm_path(paths[i]);
		int rc = *p ? walk_workdir(v, p, l, e) : err_set(e, ERR_USAGE, "empty kernel path");
		if (rc == 0)
			add_hidden(v, idx, p, l);
		free(p);
		if (rc < 0) {
			git_index_free(idx);
			return rc;
		}
	}
	git_index_free(idx);
	klist_sort_unique(l);
	return 0;
}

struct tree_walk_ctx {
	struct klist *l;
	const char *prefix;
	const struct vcs *v;
};

static int tree_walk_cb(const char *root, const git_tree_entry *te, void *payload)
{
	struct tree_walk_ctx *c = payload;
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB)
		return 0;
	char *p = xasprintf("%s/%s%s", c->prefix, root, git_tree_entry_name(te));
	if (!excluded(c->v, p))
		klist_add(c->l, p, (unsigned)git_tree_entry_filemode(te), git_tree_entry_id(te));
	free(p);
	return 0;
}

static int lookup_tree(struct vcs *v, const char *treeish, git_tree **tree, struct err *e)
{
	git_object *obj = NULL;
	if (git_revparse_single(&obj, v->repo, treeish) < 0)
		return err_set(e, ERR_NOTFOUND, "git has no commit or tree '%s'", treeish);
	int rc = git_object_peel((git_object **)tree, obj, GIT_OBJECT_TREE);
	git_object_free(obj);
	if (rc < 0)
		return err_set(e, ERR_NOTFOUND, "'%s' does not name a tree", treeish);
	return 0;
}

static int list_tree(struct vcs *v, git_tree *tree, const char *const *paths, size_t n,
		     struct klist *l, struct err *e)
{
	for (size_t i = 0; i < n; i++) {
		char *p = norm_path(paths[i]);
		git_tree_entry *te = NULL;
		if (git_tree_entry_bypath(&te, tree, p) == 0) {
			if (excluded(v, p)) {
				/* frozen or profile/: not part of the kernel */
			} else if (git_tree_entry_type(te) == GIT_OBJECT_BLOB) {
				klist_add(l, p, (unsigned)git_tree_entry_filemode(te),
					  git_tree_entry_id(te));
			} else if (git_tree_entry_type(te) == GIT_OBJECT_TREE) {
				git_tree *sub = NULL;
				struct tree_walk_ctx c = {l, p, v};
				if (git_tree_lookup(&sub, v->repo, git_tree_entry_id(te)) < 0 ||
				    git_tree_walk(sub, GIT_TREEWALK_PRE, tree_walk_cb, &c) < 0) {
					git_tree_free(sub);
					git_tree_entry_free(te);
					free(p);
					return vcs_git_fail(e, ERR_IO, "cannot walk a kernel tree");
				}
				git_tree_free(sub);
			}
			git_tree_entry_free(te);
		}
		free(p);
	}
	klist_sort_unique(l);
	return 0;
}

static void klist_hash(const struct klist *l, char out[VCS_OID_HEX])
{
	struct sb s = SB_INIT;
	git_oid oid;
	char hex[VCS_OID_HEX];

	for (size_t i = 0; i < l->n; i++) {
		git_oid_tostr(hex, sizeof(hex), &l->v[i].oid);
		sb_addf(&s, "%06o %s %s\n", l->v[i].mode, hex, l->v[i].path);
	}
	git_odb_hash(&oid, s.buf ? s.buf : "", s.len, GIT_OBJECT_BLOB);
	git_oid_tostr(out, VCS_OID_HEX, &oid);
	sb_release(&s);
}

int vcs_kernel_hash(struct vcs *v, const char *const *paths, size_t n, const char *treeish,
		    char out[VCS_OID_HEX], struct err *e)
{
	struct klist l = {0};
	int rc;

	if (!treeish) {
		rc = list_workdir(v, paths, n, &l, e);
	} else {
		git_tree *t = NULL;
		rc = lookup_tree(v, treeish, &t, e);
		if (rc == ERR_NOTFOUND && !strcmp(treeish, "HEAD")) {
			rc = 0; /* unborn: the empty state */
		} else if (rc == 0) {
			rc = list_tree(v, t, paths, n, &l, e);
		}
		git_tree_free(t);
	}
	if (rc == 0)
		klist_hash(&l, out);
	klist_release(&l);
	return rc;
}

/* The blob of a work tree file, written to the object database. */
static int store_blob(struct vcs *v, const struct kfile *f, git_oid *oid, struct err *e)
{
	if (f->hidden) { /* the index's blob: already in the object database */
		git_oid_cpy(oid, &f->oid);
		return 0;
	}
	if (f->mode == GIT_FILEMODE_LINK) {
		char *full = xasprintf("%s/%s", v->workdir, f->path);
		char target[4096];
		ssize_t k = readlink(full, target, sizeof(target));
		free(full);
		if (k < 0 || git_blob_create_from_buffer(oid, v->repo, target, (size_t)k) < 0)
			return vcs_git_fail(e, ERR_IO, "cannot store a symlink");
		return 0;
	}
	if (git_blob_create_from_workdir(oid, v->repo, f->path) < 0)
		return vcs_git_fail(e, ERR_IO, "cannot store a kernel file");
	return vcs_filter_failed(e);
}

/* The general way, for what git_tree_create_updated refuses (a kernel file
 * that became a directory or the other way round): HEAD's whole tree in a
 * scratch index, the kernel files swapped, every tree written out. */
static int build_tree_index(struct vcs *v, git_tree *htree, const struct klist *old,
			    const struct klist *now, git_oid *tree_oid, struct err *e)
{
	git_index *idx = NULL;
	int rc = 0;

	if (git_index_new(&idx) < 0)
		return vcs_git_fail(e, ERR_IO, "cannot make an index");
	if (htree && git_index_read_tree(idx, htree) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot read HEAD's tree");
	/* drop HEAD's kernel files (excluded ones stay as HEAD has them) */
	for (size_t i = 0; rc == 0 && i < old->n; i++)
		git_index_remove(idx, old->v[i].path, 0);
	for (size_t i = 0; rc == 0 && i < now->n; i++) {
		git_index_entry ent;
		memset(&ent, 0, sizeof(ent));
		rc = store_blob(v, &now->v[i], &ent.id, e);
		ent.mode = now->v[i].mode;
		ent.path = now->v[i].path;
		if (rc == 0 && git_index_add(idx, &ent) < 0)
			rc = vcs_git_fail(e, ERR_IO, "cannot stage a kernel file");
	}
	if (rc == 0 && git_index_write_tree_to(tree_oid, idx, v->repo) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot write the tree");
	git_index_free(idx);
	return rc;
}

static const struct kfile *klist_find(const struct klist *l, const char *path)
{
	struct kfile key = {.path = (char *)path};
	return l->n ? bsearch(&key, l->v, l->n, sizeof(*l->v), kfile_cmp) : NULL;
}

/* HEAD's tree with the kernel paths replaced by the work tree's files.  Only
 * the trees on the way to a changed kernel file are rewritten, and only
 * changed files are read again, so the cost follows the size of the change,
 * not of the repository. */
static int build_tree(struct vcs *v, const char *const *paths, size_t n, git_oid *tree_oid,
		      struct err *e)
{
	git_commit *head = NULL;
	git_tree *htree = NULL;
	struct klist old = {0}, now = {0};
	git_tree_update *up = NULL;
	size_t nup = 0;
	int rc = 0;

	if (head_commit(v, &head, NULL) == 0 && git_commit_tree(&htree, head) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot read HEAD's tree");
	if (rc == 0 && htree)
		rc = list_tree(v, htree, paths, n, &old, e);
	if (rc == 0)
		rc = list_workdir(v, paths, n, &now, e);
	up = xcalloc(old.n + now.n + 1, sizeof(*up));
	for (size_t i = 0; rc == 0 && i < old.n; i++) {
		if (klist_find(&now, old.v[i].path))
			continue;
		up[nup].action = GIT_TREE_UPDATE_REMOVE;
		up[nup++].path = old.v[i].path;
	}
	for (size_t i = 0; rc == 0 && i < now.n; i++) {
		const struct kfile *was = klist_find(&old, now.v[i].path);
		if (was && was->mode == now.v[i].mode && git_oid_equal(&was->oid, &now.v[i].oid))
			continue; /* as HEAD has it */
		up[nup].action = GIT_TREE_UPDATE_UPSERT;
		up[nup].path = now.v[i].path;
		up[nup].filemode = now.v[i].mode;
		rc = store_blob(v, &now.v[i], &up[nup++].id, e);
	}
	if (rc == 0 && !htree) {
		rc = build_tree_index(v, NULL, &old, &now, tree_oid, e);
	} else if (rc == 0 && nup == 0) {
		git_oid_cpy(tree_oid, git_tree_id(htree));
	} else if (rc == 0 && git_tree_create_updated(tree_oid, v->repo, htree, nup, up) < 0) {
		git_error_clear();
		rc = build_tree_index(v, htree, &old, &now, tree_oid, e);
	}
	free(up);
	klist_release(&old);
	klist_release(&now);
	git_tree_free(htree);
	git_commit_free(head);
	return rc;
}

int vcs_snapshot(struct vcs *v, const char *const *paths, size_t n, char tree[VCS_OID_HEX],
		 struct err *e)
{
	git_oid oid;
	int rc = build_tree(v, paths, n, &oid, e);
	if (rc == 0)
		git_oid_tostr(tree, VCS_OID_HEX, &oid);
	return rc;
}

static void fill_pathspec(git_strarray *sa, const char *const *paths, size_t n)
{
	sa->strings = xcalloc(n ? n : 1, sizeof(char *));
	sa->count = n;
	for (size_t i = 0; i < n; i++)
		sa->strings[i] = norm_path(paths[i]);
}

static void free_pathspec(git_strarray *sa)
{
	for (size_t i = 0; i < sa->count; i++)
		free(sa->strings[i]);
	free(sa->strings);
}

int vcs_index_kernel_hash(struct vcs *v, const char *const *paths, size_t n,
			  char out[VCS_OID_HEX], struct err *e)
{
	git_index *idx = NULL;
	git_oid tree;
	char hex[VCS_OID_HEX];
	int rc = 0;
	if (git_repository_index(&idx, v->repo) < 0 || git_index_read(idx, 0) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot read git's index");
	else if (git_index_has_conflicts(idx))
		rc = err_set(e, ERR_REFUSED, "git's index has unmerged entries");
	else if (git_index_write_tree(&tree, idx) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot read the index as a tree");
	git_index_free(idx);
	if (rc == 0) {
		git_oid_tostr(hex, sizeof(hex), &tree);
		rc = vcs_kernel_hash(v, paths, n, hex, out, e);
	}
	return rc;
}

int vcs_index_reset(struct vcs *v, const char *const *paths, size_t n, struct err *e)
{
	git_commit *head = NULL;
	git_strarray sa;
	int rc = head_commit(v, &head, e);
	if (rc < 0)
		return rc;
	fill_pathspec(&sa, paths, n);
	if (git_reset_default(v->repo, (git_object *)head, &sa) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot update the index for the kernel paths");
	free_pathspec(&sa);
	git_commit_free(head);
	return rc;
}

static int make_commit(struct vcs *v, const git_oid *tree_oid, const char *update_ref,
		       const char *message, git_oid *out, struct err *e)
{
	git_signature *sig = NULL;
	git_commit *head = NULL;
	git_tree *tree = NULL;
	int rc;

	if ((rc = vcs_identity_check(v, e)) < 0)
		return rc;
	git_signature_default(&sig, v->repo);
	head_commit(v, &head, NULL);
	if (git_tree_lookup(&tree, v->repo, tree_oid) < 0) {
		rc = vcs_git_fail(e, ERR_IO, "cannot read the new tree");
	} else {
		const git_commit *parents[1] = {head};
		if (git_commit_create(out, v->repo, update_ref, sig, sig, NULL, message, tree,
				      head ? 1 : 0, parents) < 0)
			rc = vcs_git_fail(e, ERR_IO, "cannot create the commit");
	}
	git_tree_free(tree);
	git_commit_free(head);
	git_signature_free(sig);
	return rc;
}

int vcs_commit_kernel(struct vcs *v, const char *const *paths, size_t n, const char *message,
		      char sha[VCS_OID_HEX], struct err *e)
{
	git_oid tree, commit;
	int rc;

	/* before the commit: a locked index would fail the index update after it */
	if ((rc = vcs_commit_check(v, e)) < 0)
		return rc;
	if ((rc = build_tree(v, paths, n, &tree, e)) < 0)
		return rc;
	if ((rc = make_commit(v, &tree, "HEAD", message, &commit, e)) < 0)
		return rc;
	git_oid_tostr(sha, VCS_OID_HEX, &commit);
	/* the commit stands; the index only keeps git status quiet (a stale
	 * .git/index.lock is reported when the workspace is opened) */
	vcs_index_reset(v, paths, n, NULL);
	return 0;
}

/* One kernel file as the tree has it, written beside the target and renamed
 * over it: a kill at any moment leaves the old file or the new one, never a
 * truncated one (libgit2's checkout rewrites files in place).  The blob's
 * bytes as they are: no filter of the repository's configuration runs. */
/* The directories from the work tree down to dir (a path under it) as real
 * directories: a link or a file where the tree has a directory is removed,
 * the link itself and never what it points to, so a restore never writes
 * through a link to somewhere else (a candidate that replaced a kernel
 * directory by a link or a file is in its own commit or snapshot). */
static int real_dirs(struct vcs *v, const char *dir, struct err *e)
{
	size_t root = strlen(v->workdir);
	if (strncmp(dir, v->workdir, root) != 0 || dir[root] != '/')
		return 0; /* the work tree itself */
	char *p = xstrdup(dir);
	int rc = 0;
	for (char *s = p + root + 1; rc == 0;) {
		char *slash = strchr(s, '/');
		if (slash)
			*slash = '\0';
		struct stat st;
		if (lstat(p, &st) == 0 && !S_ISDIR(st.st_mode) && unlink(p) < 0)
			rc = err_set(e, ERR_IO, "cannot remove %s, which stands where the kernel has a "
						"directory: %s", p, strerror(errno));
		if (rc == 0 && mkdir(p, 0755) < 0 && errno != EEXIST)
			rc = err_set(e, ERR_IO, "cannot make the directory %s: %s", p, strerror(errno));
		if (!slash)
			break;
		*slash = '/';
		s = slash + 1;
	}
	free(p);
	return rc;
}

static int write_blob(struct vcs *v, const struct kfile *f, struct err *e)
{
	git_blob *blob = NULL;
	char *full = fsutil_join(v->workdir, f->path);
	char *dir = xstrdup(full);
	char *slash = strrchr(dir, '/');
	int rc = 0;
	if (slash)
		*slash = '\0';
	if (git_blob_lookup(&blob, v->repo, &f->oid) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot read a kernel file from git");
	if (rc == 0 && slash)
		rc = real_dirs(v, dir, e);
	/* the temp file is hidden from the kernel (walk_workdir skips it) */
	const char *base = slash ? full + (slash - dir) + 1 : full;
	if (rc == 0 && f->mode == GIT_FILEMODE_LINK) {
		char *target = xstrndup(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
		char *tmp = xasprintf("%s/%s%s.%ld", slash ? dir : v->workdir, VCS_TMP_PREFIX, base,
				      (long)getpid());
		unlink(tmp);
		if (symlink(target, tmp) < 0 || rename(tmp, full) < 0) {
			rc = err_set(e, ERR_IO, "cannot restore the link %s: %s", f->path,
				     strerror(errno));
			unlink(tmp);
		}
		free(tmp);
		free(target);
	} else if (rc == 0) {
		char *tmp = xasprintf("%s/%s%s.%ld", slash ? dir : v->workdir, VCS_TMP_PREFIX, base,
				      (long)getpid());
		/* as git checks it out: the repository's smudge filters (eol=crlf,
		 * ident) applied, so a restore writes what git would */
		git_buf out = GIT_BUF_INIT;
		git_blob_filter_options fo;
		git_blob_filter_options_init(&fo, GIT_BLOB_FILTER_OPTIONS_VERSION);
		if (git_blob_filter(&out, blob, f->path, &fo) < 0)
			rc = vcs_git_fail(e, ERR_IO, "cannot filter a kernel file for the work tree");
		else
			rc = vcs_filter_failed(e);
		if (rc == 0)
			rc = fsutil_write_temp(tmp, out.ptr, out.size,
					       f->mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644, e);
		git_buf_dispose(&out);
		fault_point("restore.before_rename");
		if (rc == 0)
			rc = fsutil_commit_temp(tmp, full, e);
		free(tmp);
	}
	git_blob_free(blob);
	free(dir);
	free(full);
	return rc;
}

/* Is every directory between the work tree and rel a real directory (no
 * link on the way)?  What a link now stands over is not the kernel's to
 * remove or keep. */
static bool path_is_real(struct vcs *v, const char *rel)
{
	char *p = fsutil_join(v->workdir, rel);
	size_t root = strlen(v->workdir);
	bool real = true;
	for (char *s = p + root + 1; real;) {
		char *slash = strchr(s, '/');
		if (!slash)
			break;
		*slash = '\0';
		struct stat st;
		real = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);
		*slash = '/';
		s = slash + 1;
	}
	free(p);
	return real;
}

/* A directory where the tree now has a link, once its kernel files are
 * gone: optloop's own temp and kept files in it go too, then every
 * directory left empty. */
static void prune_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				prune_dir(p);
			else if (!strncmp(de->d_name, VCS_TMP_PREFIX, strlen(VCS_TMP_PREFIX)) ||
				 !strncmp(de->d_name, VCS_KEEP_PREFIX, strlen(VCS_KEEP_PREFIX)))
				unlink(p);
		}
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* A kernel file the tree does not have: removed, and the directories it
 * leaves empty, up to the kernel path it lies in. */
static void remove_file(struct vcs *v, const char *rel)
{
	if (!path_is_real(v, rel))
		return; /* a link replaced its directory: nothing of ours is there */
	char *full = fsutil_join(v->workdir, rel);
	if (unlink(full) == 0) {
		char *slash;
		size_t root = strlen(v->workdir);
		while ((slash = strrchr(full, '/')) && (size_t)(slash - full) > root) {
			*slash = '\0';
			if (rmdir(full) < 0)
				break;
		}
	}
	free(full);
}

/* Files named prefix* in the directory of rel: the temp files a killed
 * restore left, or a swap's kept files. */
static void clear_prefixed(struct vcs *v, const char *rel, const char *prefix)
{
	char *full = fsutil_join(v->workdir, rel);
	char *slash = strrchr(full, '/');
	if (slash)
		*slash = '\0';
	DIR *d = opendir(full);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix))) {
			char *t = xasprintf("%s/%s", full, de->d_name);
			unlink(t);
			free(t);
		}
	if (d)
		closedir(d);
	free(full);
}

static void clear_temps(struct vcs *v, const char *rel)
{
	clear_prefixed(v, rel, VCS_TMP_PREFIX);
}

static int clear_all(struct vcs *v, const char *const *paths, size_t n, const char *prefix,
		     struct err *e)
{
	struct klist have = {0};
	int rc = list_workdir(v, paths, n, &have, e);
	for (size_t i = 0; rc == 0 && i < have.n; i++)
		clear_prefixed(v, have.v[i].path, prefix); /* the file's own directory */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char *p = norm_path(paths[i]), *probe = xasprintf("%s/x", p);
		clear_prefixed(v, probe, prefix); /* a kernel directory itself */
		free(probe);
		free(p);
	}
	klist_release(&have);
	return rc;
}

int vcs_clear_temps(struct vcs *v, const char *const *paths, size_t n, struct err *e)
{
	return clear_all(v, paths, n, VCS_TMP_PREFIX, e);
}

int vcs_clear_keeps(struct vcs *v, const char *const *paths, size_t n, struct err *e)
{
	return clear_all(v, paths, n, VCS_KEEP_PREFIX, e);
}

/* Where the kept copy of rel with blob id oid lives. */
static char *keep_path(struct vcs *v, const char *rel, const git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof(hex), oid);
	char *full = fsutil_join(v->workdir, rel);
	char *slash = strrchr(full, '/');
	*slash = '\0';
	char *k = xasprintf("%s/%s%s.%s", full, VCS_KEEP_PREFIX, slash + 1, hex);
	free(full);
	return k;
}

/* Keep the work tree's file f (a regular file) before it is replaced: a
 * second link, best effort (without one, swapping back writes the file). */
static void keep_file(struct vcs *v, const struct kfile *f)
{
	if (f->mode == GIT_FILEMODE_LINK || !path_is_real(v, f->path))
		return;
	char *full = fsutil_join(v->workdir, f->path), *k = keep_path(v, f->path, &f->oid);
	if (link(full, k) < 0 && errno != EEXIST) {
		/* no second link here (a file system without hard links) */
	}
	free(k);
	free(full);
}

/* Put f in place from a kept copy when there is one that still holds
 * exactly f's bytes: 1 done, 0 none. */
static int adopt_kept(struct vcs *v, const struct kfile *f)
{
	if (f->mode == GIT_FILEMODE_LINK)
		return 0;
	char *k = keep_path(v, f->path, &f->oid), *full = fsutil_join(v->workdir, f->path);
	char *dir = xstrdup(full);
	*strrchr(dir, '/') = '\0';
	struct stat st;
	git_oid got;
	int done = 0;
	/* never through a link that replaced a kernel directory */
	if (real_dirs(v, dir, NULL) == 0 && lstat(k, &st) == 0 && S_ISREG(st.st_mode) &&
	    git_odb_hashfile(&got, k, GIT_OBJECT_BLOB) == 0 && git_oid_equal(&got, &f->oid)) {
		mode_t want = f->mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644;
		if ((st.st_mode & 0777) != want)
			chmod(k, want);
		/* the kept link is renamed over the file: the other link to the
		 * replaced inode (the kept copy of what is there now) stays */
		done = rename(k, full) == 0;
	}
	free(dir);
	free(full);
	free(k);
	return done;
}

void vcs_changes_free(struct vcs_change *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].path);
	free(c);
}

int vcs_changes_outside(struct vcs *v, const char *const *keep, size_t nkeep,
			struct vcs_change **out, size_t *n, struct err *e)
{
	git_status_options so;
	git_status_options_init(&so, GIT_STATUS_OPTIONS_VERSION);
	git_status_list *sl = NULL;
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		   GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	*out = NULL;
	*n = 0;
	/* A stale index (a copied or touched checkout) makes the listing hash
	 * every file whose stat changed; the refreshed stat data is written
	 * back, as git status does, so the next listing does not.  Best effort:
	 * when the index cannot be written (another git holds its lock, a
	 * read-only checkout) the listing is taken without it. */
	so.flags |= GIT_STATUS_OPT_UPDATE_INDEX;
	if (git_status_list_new(&sl, v->repo, &so) < 0) {
		so.flags &= ~(unsigned)GIT_STATUS_OPT_UPDATE_INDEX;
		if (git_status_list_new(&sl, v->repo, &so) < 0)
			return vcs_git_fail(e, ERR_IO, "cannot list the changes in the work tree");
	}
	for (size_t i = 0; i < git_status_list_entrycount(sl); i++) {
		const git_status_entry *se = git_status_byindex(sl, i);
		const git_diff_delta *d = se->index_to_workdir ? se->index_to_workdir
								: se->head_to_index;
		if (!d)
			continue;
		const char *path = d->new_file.path ? d->new_file.path : d->old_file.path;
		bool kept = !path;
		for (size_t k = 0; !kept && k < nkeep; k++)
			kept = fsutil_path_under(path, keep[k]);
		/* a restore's own temp or kept file is optloop's, not a change */
		const char *base = path ? strrchr(path, '/') : NULL;
		base = base ? base + 1 : path;
		if (kept || !strncmp(base, VCS_TMP_PREFIX, strlen(VCS_TMP_PREFIX)) ||
		    !strncmp(base, VCS_KEEP_PREFIX, strlen(VCS_KEEP_PREFIX)))
			continue;
		unsigned st = se->status;
		const char *what = st & (GIT_STATUS_WT_NEW | GIT_STATUS_INDEX_NEW)	      ? "new"
				   : st & (GIT_STATUS_WT_DELETED | GIT_STATUS_INDEX_DELETED) ? "deleted"
											     : "modified";
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = (struct vcs_change){xstrdup(path), what};
	}
	git_status_list_free(sl);
	return 0;
}

bool vcs_index_locked(struct vcs *v)
{
	char *lock = fsutil_join(git_repository_path(v->repo), "index.lock");
	bool yes = fsutil_exists(lock);
	free(lock);
	return yes;
}

static int restore(struct vcs *v, const char *treeish, const char *const *paths, size_t n,
		   bool keep, struct err *e)
{
	git_tree *tree = NULL;
	int rc = lookup_tree(v, treeish, &tree, e);
	if (rc < 0)
		return rc;
	/* the exact files on either side, so excluded (frozen) files and
	 * ignored build outputs are never touched */
	struct klist want = {0}, have = {0};
	rc = list_tree(v, tree, paths, n, &want, e);
	if (rc == 0)
		rc = list_workdir(v, paths, n, &have, e);
	/* a link the tree has where a directory stands (a candidate that
	 * replaced a kernel directory by a link): the directory's kernel files
	 * go first, since a rename cannot put a link over a directory */
	for (size_t i = 0; rc == 0 && i < want.n; i++) {
		const char *lp = want.v[i].path;
		char *full = fsutil_join(v->workdir, lp);
		struct stat st;
		if (want.v[i].mode == GIT_FILEMODE_LINK && path_is_real(v, lp) &&
		    lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			size_t len = strlen(lp);
			for (size_t k = 0; k < have.n; k++)
				if (!strncmp(have.v[k].path, lp, len) && have.v[k].path[len] == '/') {
					char *hf = fsutil_join(v->workdir, have.v[k].path);
					unlink(hf);
					free(hf);
				}
			prune_dir(full);
			if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode))
				rc = err_set(e, ERR_REFUSED,
					     "cannot put the link %s back: the directory there holds "
					     "files that are not the kernel's (untracked or ignored); "
					     "move them away and run the command again",
					     lp);
		}
		free(full);
	}
	size_t j = 0;
	for (size_t i = 0; rc == 0 && i < want.n; i++) {
		while (j < have.n && strcmp(have.v[j].path, want.v[i].path) < 0)
			j++;
		bool same = j < have.n && !strcmp(have.v[j].path, want.v[i].path) &&
			    have.v[j].mode == want.v[i].mode && git_oid_equal(&have.v[j].oid, &want.v[i].oid);
		/* a file the sparse set hides stays hidden: never written into the tree */
		bool hidden = j < have.n && !strcmp(have.v[j].path, want.v[i].path) && have.v[j].hidden;
		if (!same && !hidden) {
			bool there = j < have.n && !strcmp(have.v[j].path, want.v[i].path);
			if (keep && there)
				keep_file(v, &have.v[j]);
			clear_temps(v, want.v[i].path);
			if (!adopt_kept(v, &want.v[i]))
				rc = write_blob(v, &want.v[i], e);
		}
	}
	/* what the tree does not hold goes */
	for (size_t i = 0, k = 0; rc == 0 && i < have.n; i++) {
		while (k < want.n && strcmp(want.v[k].path, have.v[i].path) < 0)
			k++;
		if ((k >= want.n || strcmp(want.v[k].path, have.v[i].path)) && !have.v[i].hidden) {
			if (keep)
				keep_file(v, &have.v[i]);
			remove_file(v, have.v[i].path);
		}
	}
	klist_release(&want);
	klist_release(&have);
	git_tree_free(tree);
	if (rc == 0) /* the files are in place; the index is best effort, as above */
		vcs_index_reset(v, paths, n, NULL);
	return rc;
}

int vcs_restore(struct vcs *v, const char *treeish, const char *const *paths, size_t n,
		struct err *e)
{
	return restore(v, treeish, paths, n, false, e);
}

int vcs_swap(struct vcs *v, const char *treeish, const char *const *paths, size_t n,
	     struct err *e)
{
	return restore(v, treeish, paths, n, true, e);
}

/* The entry of path in l (sorted), or NULL. */
static const struct kfile *entry_of(const struct klist *l, const char *path)
{
	struct kfile key = {.path = (char *)path};
	return l->n ? bsearch(&key, l->v, l->n, sizeof(*l->v), kfile_cmp) : NULL;
}

static bool same_entry(const struct kfile *a, const struct kfile *b)
{
	if (!a || !b)
		return a == b;
	return a->mode == b->mode && git_oid_equal(&a->oid, &b->oid);
}

int vcs_kernel_changed(struct vcs *v, const char *const *paths, size_t n, const char *from,
		       const char *to, char ***out, size_t *nout, struct err *e)
{
	git_tree *tf = NULL, *tt = NULL;
	struct klist lf = {0}, lt = {0};
	*out = NULL;
	*nout = 0;
	int rc = lookup_tree(v, from, &tf, e);
	if (rc == 0)
		rc = list_tree(v, tf, paths, n, &lf, e);
	if (rc == 0 && to)
		rc = lookup_tree(v, to, &tt, e);
	if (rc == 0)
		rc = to ? list_tree(v, tt, paths, n, &lt, e) : list_workdir(v, paths, n, &lt, e);
	for (int side = 0; rc == 0 && side < 2; side++) {
		const struct klist *a = side ? &lt : &lf, *b = side ? &lf : &lt;
		for (size_t i = 0; i < a->n; i++) {
			const struct kfile *o = entry_of(b, a->v[i].path);
			if ((side && o) || same_entry(&a->v[i], o))
				continue; /* the other side's pass reports a changed file */
			*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
			(*out)[(*nout)++] = xstrdup(a->v[i].path);
		}
	}
	if (*nout > 1)
		qsort(*out, *nout, sizeof(**out), strp_cmp);
	klist_release(&lf);
	klist_release(&lt);
	git_tree_free(tf);
	git_tree_free(tt);
	return rc;
}


int vcs_kernel_between(struct vcs *v, const char *const *paths, size_t n, const char *from,
		       const char *to, enum vcs_between *out, struct err *e)
{
	git_tree *tf = NULL, *tt = NULL;
	struct klist lf = {0}, lt = {0}, lw = {0}, all = {0};
	int rc;

	if ((rc = lookup_tree(v, from, &tf, e)) == 0 && (rc = lookup_tree(v, to, &tt, e)) == 0 &&
	    (rc = list_tree(v, tf, paths, n, &lf, e)) == 0 &&
	    (rc = list_tree(v, tt, paths, n, &lt, e)) == 0)
		rc = list_workdir(v, paths, n, &lw, e);
	if (rc == 0) {
		/* every path any side has */
		const struct klist *sides[] = {&lf, &lt, &lw};
		for (int k = 0; k < 3; k++)
			for (size_t i = 0; i < sides[k]->n; i++)
				klist_add(&all, sides[k]->v[i].path, 0, NULL);
		klist_sort_unique(&all);
		bool at_from = true, at_to = true, each = true;
		for (size_t i = 0; i < all.n; i++) {
			const struct kfile *w = entry_of(&lw, all.v[i].path);
			bool f = same_entry(w, entry_of(&lf, all.v[i].path));
			bool t = same_entry(w, entry_of(&lt, all.v[i].path));
			at_from &= f;
			at_to &= t;
			each &= f || t;
		}
		*out = at_from ? VCS_AT_FROM : at_to ? VCS_AT_TO : each ? VCS_BETWEEN : VCS_ELSEWHERE;
	}
	klist_release(&all);
	klist_release(&lf);
	klist_release(&lt);
	klist_release(&lw);
	git_tree_free(tf);
	git_tree_free(tt);
	return rc;
}

int vcs_aside_save(struct vcs *v, const char *const *paths, size_t n, const char *refname,
		   const char *message, char sha[VCS_OID_HEX], struct err *e)
{
	git_oid tree, commit;
	git_reference *ref = NULL;
	int rc;

	if (git_reference_lookup(&ref, v->repo, refname) == 0) {
		char old[VCS_OID_HEX], was[VCS_OID_HEX], now[VCS_OID_HEX];
		git_oid_tostr(old, sizeof(old), git_reference_target(ref));
		git_reference_free(ref);
		if ((rc = vcs_kernel_hash(v, paths, n, old, was, e)) < 0 ||
		    (rc = vcs_kernel_hash(v, paths, n, NULL, now, e)) < 0)
			return rc;
		if (strcmp(was, now))
			return err_set(e, ERR_REFUSED,
				       "set-aside refused: a change is already set aside under %s "
				       "(commit %.12s) and the kernel differs from it; bring it back "
				       "with git checkout %.12s -- <kernel paths>, or delete the ref "
				       "(git update-ref -d %s) once it is not needed",
				       refname, old, old, refname);
		memcpy(sha, old, VCS_OID_HEX);
		return 0;
	}
	if ((rc = build_tree(v, paths, n, &tree, e)) < 0)
		return rc;
	if ((rc = make_commit(v, &tree, NULL, message, &commit, e)) < 0)
		return rc;
	if (git_reference_create(&ref, v->repo, refname, &commit, 0, "optloop: set aside") < 0)
		return vcs_git_fail(e, ERR_IO, "cannot record the set-aside change");
	git_reference_free(ref);
	git_oid_tostr(sha, VCS_OID_HEX, &commit);
	return 0;
}

/* A tree holding only tree's kernel files (the rest of the repository is
 * not the set-aside's business), written to the object store. */
static int kernel_tree(struct vcs *v, git_tree *tree, const char *const *paths, size_t n,
		       git_tree **out, struct err *e)
{
	struct klist l = {0};
	git_index *idx = NULL;
	git_oid oid;
	int rc = list_tree(v, tree, paths, n, &l, e);
	if (rc == 0 && git_index_new(&idx) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot make an index");
	for (size_t i = 0; rc == 0 && i < l.n; i++) {
		git_index_entry ent;
		memset(&ent, 0, sizeof(ent));
		ent.id = l.v[i].oid;
		ent.mode = l.v[i].mode;
		ent.path = l.v[i].path;
		if (git_index_add(idx, &ent) < 0)
			rc = vcs_git_fail(e, ERR_IO, "cannot stage a kernel file");
	}
	if (rc == 0 && git_index_write_tree_to(&oid, idx, v->repo) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot write the tree");
	if (rc == 0 && git_tree_lookup(out, v->repo, &oid) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot read the tree just written");
	git_index_free(idx);
	klist_release(&l);
	return rc;
}

/* The kernel the set-aside edit gives on top of the work tree's kernel: the
 * change from measured to aside, merged three-way onto the work tree (the
 * best, after a drop or revert).  ERR_FAIL when the edit overlaps what
 * changed since the measurement. */
static int merge_aside(struct vcs *v, const char *measured, const char *aside_sha,
		       const char *const *paths, size_t n, char merged[VCS_OID_HEX],
		       struct err *e)
{
	git_tree *tb = NULL, *ta = NULL, *kb = NULL, *ka = NULL, *kw = NULL, *tw = NULL;
	git_index *idx = NULL;
	git_oid wt, mt;
	int rc = lookup_tree(v, measured, &tb, e);
	if (rc == 0)
		rc = lookup_tree(v, aside_sha, &ta, e);
	if (rc == 0)
		rc = build_tree(v, paths, n, &wt, e);
	if (rc == 0 && git_tree_lookup(&tw, v->repo, &wt) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot read the work tree's kernel");
	if (rc == 0)
		rc = kernel_tree(v, tb, paths, n, &kb, e);
	if (rc == 0)
		rc = kernel_tree(v, ta, paths, n, &ka, e);
	if (rc == 0)
		rc = kernel_tree(v, tw, paths, n, &kw, e);
	if (rc == 0 && git_merge_trees(&idx, v->repo, kb, kw, ka, NULL) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot merge the set-aside change");
	if (rc == 0 && git_index_has_conflicts(idx))
		rc = err_set(e, ERR_FAIL, "the change set aside overlaps what changed in the kernel "
					  "since the measurement");
	if (rc == 0 && git_index_write_tree_to(&mt, idx, v->repo) < 0)
		rc = vcs_git_fail(e, ERR_IO, "cannot write the merged kernel");
	if (rc == 0)
		git_oid_tostr(merged, VCS_OID_HEX, &mt);
	git_index_free(idx);
	git_tree_free(tb);
	git_tree_free(ta);
	git_tree_free(tw);
	git_tree_free(kb);
	git_tree_free(ka);
	git_tree_free(kw);
	return rc;
}

int vcs_keep(struct vcs *v, const char *refname, const char *sha, struct err *e)
{
	git_oid oid;
	git_reference *ref = NULL;
	if (git_oid_fromstr(&oid, sha) < 0)
		return err_set(e, ERR_USAGE, "'%s' is not an object id", sha);
	if (git_reference_create(&ref, v->repo, refname, &oid, 1, "optloop: keep") < 0)
		return vcs_git_fail(e, ERR_IO, "cannot keep the candidate's snapshot under a ref");
	git_reference_free(ref);
	return 0;
}

void vcs_unkeep(struct vcs *v, const char *refname)
{
	git_reference *ref = NULL;
	if (git_reference_lookup(&ref, v->repo, refname) == 0) {
		git_reference_delete(ref);
		git_reference_free(ref);
	}
}

int vcs_aside_merge(struct vcs *v, const char *measured, const char *aside_sha,
		    const char *const *paths, size_t n, char merged[VCS_OID_HEX], struct err *e)
{
	return merge_aside(v, measured, aside_sha, paths, n, merged, e);
}

int vcs_bring_back(struct vcs *v, const char *treeish, const char *refname,
		   const char *const *paths, size_t n, struct err *e)
{
	git_reference *ref = NULL;
	int rc = vcs_restore(v, treeish, paths, n, e);
	if (rc < 0)
		return rc;
	if (refname && git_reference_lookup(&ref, v->repo, refname) == 0) {
		git_reference_delete(ref);
		git_reference_free(ref);
	}
	return 0;
}

static int diff_line_cb(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
			void *payload)
{
	struct sb *out = payload;
	(void)d;
	(void)h;
	if (l->origin == GIT_DIFF_LINE_CONTEXT || l->origin == GIT_DIFF_LINE_ADDITION ||
	    l->origin == GIT_DIFF_LINE_DELETION)
		sb_addc(out, l->origin);
	sb_add(out, l->content, l->content_len);
	return 0;
}

/* One diff per path: with paths in different directories a single pathspec
 * has no common prefix, and libgit2 would walk the whole tree and work tree
 * (every file of a big repository) to find the few that match. */
int vcs_diff(struct vcs *v, const char *treeish, const char *const *paths, size_t n,
	     struct sb *out, struct err *e)
{
	git_tree *tree = NULL;
	git_diff_options o;
	char **p = xcalloc(n ? n : 1, sizeof(char *));
	size_t np = 0;
	int rc = lookup_tree(v, treeish ? treeish : "HEAD", &tree, e);

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);

	if (rc < 0 && !(rc == ERR_NOTFOUND && !treeish)) {
		free(p);
		return rc;
	}
	rc = 0;
	for (size_t i = 0; i < n; i++)
		p[np++] = norm_path(paths[i]);
	qsort(p, np, sizeof(char *), strp_cmp);
	o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
		  GIT_DIFF_SHOW_UNTRACKED_CONTENT;
	/* a submodule in a kernel path is no kernel content (walk_workdir
	 * skips it too), and looking into one leaks in libgit2 1.5 */
	o.ignore_submodules = GIT_SUBMODULE_IGNORE_ALL;
	o.pathspec.count = 1;
	for (size_t i = 0; rc == 0 && i < np; i++) {
		git_diff *diff = NULL;
		bool covered = false;
		/* a path inside an earlier one (or the same path) is already in */
		for (size_t k = 0; k < i && !covered; k++) {
			size_t L = strlen(p[k]);
			covered = !*p[k] || (!strncmp(p[i], p[k], L) &&
					     (p[i][L] == '\0' || p[i][L] == '/'));
		}
		if (covered)
			continue;
		o.pathspec.strings = &p[i];
		if (git_diff_tree_to_workdir(&diff, v->repo, tree, &o) < 0 ||
		    git_diff_print(diff, GIT_DIFF_FORMAT_PATCH, diff_line_cb, out) < 0)
			rc = vcs_git_fail(e, ERR_IO, "cannot diff the kernel paths");
		git_diff_free(diff);
	}
	for (size_t i = 0; i < np; i++)
		free(p[i]);
	free(p);
	git_tree_free(tree);
	return rc;
}
