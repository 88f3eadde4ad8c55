/*
 * vcs — the git side of the loop, through libgit2: find the repository, hash
 * the state of the kernel paths, commit only the kernel change with the log
 * row carried in trailers, restore kernel paths, set a telescoped change
 * aside and bring it back, and give the diff text the guards lint.
 *
 * Kernel paths are repository-relative files or directories.  Ignored files
 * under them (build outputs, caches) are never hashed or committed.
 */
#ifndef OPTLOOP_VCS_H
#define OPTLOOP_VCS_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;
struct vcs;
struct git_repository;

#define VCS_OID_HEX 41 /* 40 hex digits and a NUL */

/* Initialise libgit2 for the rest of the process (idempotent; vcs_open calls
 * it).  Never shut down again: with Debian's mbedTLS build every
 * git_libgit2_init after a shutdown parses the system CA bundle anew, which
 * costs more than everything a log or a commit does. */
void vcs_libgit2_init(void);

/* Discover the repository containing cwd (NULL: the process's cwd).  A bare
 * repository or none at all is ERR_NOTFOUND.  Caller frees with vcs_free. */
int vcs_open(const char *cwd, struct vcs **out, struct err *e);
void vcs_free(struct vcs *v);

/* Paths (files or directories) that are never part of the kernel even when
 * under a kernel path: the frozen files, profile/.  Hashing, commits and
 * restores leave them alone (a commit keeps HEAD's version).  Copied. */
void vcs_set_exclude(struct vcs *v, const char *const *paths, size_t n);

/* Absolute work tree path, without trailing slash (owned by v). */
const char *vcs_workdir(const struct vcs *v);
/* Absolute path of git's own directory (.git, or a worktree's), owned by v. */
const char *vcs_gitdir(const struct vcs *v);

/* HEAD commit id; ERR_NOTFOUND when the branch has no commit yet. */
int vcs_head(struct vcs *v, char sha[VCS_OID_HEX], struct err *e);

/* Is a repository-relative path ignored (.gitignore, info/exclude)? */
/* The first parent of commit sha ("" when it has none). */
int vcs_parent(struct vcs *v, const char *sha, char parent[VCS_OID_HEX], struct err *e);
int vcs_is_ignored(struct vcs *v, const char *rel, bool *ignored, struct err *e);
/* Append one line to .git/info/exclude (creating it). */
int vcs_exclude_add(struct vcs *v, const char *pattern, struct err *e);

/* ERR_REFUSED with a message saying how to set user.name / user.email when
 * git has no identity to commit with. */
int vcs_identity_check(struct vcs *v, struct err *e);
/* What a commit needs before anything is written: the identity, no git
 * operation in progress (vcs_operation_check), and git's index not locked
 * (ERR_BUSY naming .git/index.lock: another git command is running, or one
 * was killed and left it, and how to remove it). */
int vcs_commit_check(struct vcs *v, struct err *e);

/* The git operation the repository is in the middle of ("git merge", "git
 * rebase", "git cherry-pick", "git revert", "git bisect", "git am"), or NULL
 * when none; *finish (may be NULL) gets how to finish or abort it.  Static
 * text. */
const char *vcs_operation(struct vcs *v, const char **finish);
/* 0, or ERR_REFUSED while such an operation is in progress: a tree in the
 * middle of one is neither side's, and a commit made then leaves the
 * operation behind (a merge's other parent is lost).  The message starts
 * "VERB refused:", names the operation, how to finish or abort it, and to
 * run optloop RERUN again (RERUN NULL: "the optloop command"). */
int vcs_operation_check(struct vcs *v, const char *verb, const char *rerun, struct err *e);
/* What HEAD points at: the branch's full ref name ("refs/heads/main", also
 * for a branch with no commit yet), or "HEAD" when detached.  Caller frees
 * *name; NULL on error. */
int vcs_head_ref(struct vcs *v, char **name, struct err *e);

/* Hash of the kernel paths' contents: in the work tree when treeish is NULL,
 * otherwise in that commit or tree ("HEAD", a sha).  Two states hash equal
 * exactly when every non-ignored file under the paths has the same path,
 * mode and contents.  out receives 40 hex digits. */
int vcs_kernel_hash(struct vcs *v, const char *const *paths, size_t n, const char *treeish,
		    char out[VCS_OID_HEX], struct err *e);

/* Write a tree object: HEAD's tree with the kernel paths taken from the work
 * tree.  Records what was measured so it can be restored later. */
int vcs_snapshot(struct vcs *v, const char *const *paths, size_t n, char tree[VCS_OID_HEX],
		 struct err *e);

/* Commit on HEAD a tree that is HEAD's with only the kernel paths taken from
 * the work tree; then make the index agree for those paths.  Author and
 * committer from git config.  sha receives the new commit id. */
int vcs_commit_kernel(struct vcs *v, const char *const *paths, size_t n, const char *message,
		      char sha[VCS_OID_HEX], struct err *e);

/* The kernel hash (as vcs_kernel_hash) of what git's index holds. */
int vcs_index_kernel_hash(struct vcs *v, const char *const *paths, size_t n,
			  char out[VCS_OID_HEX], struct err *e);
/* Make the index entries under the kernel paths equal to HEAD (unstage). */
int vcs_index_reset(struct vcs *v, const char *const *paths, size_t n, struct err *e);

/* Make the work tree's kernel paths equal to treeish's (files the treeish
 * lacks are removed, unless ignored), and the index equal to HEAD there
 * (best effort: a locked index does not undo the files). */
int vcs_restore(struct vcs *v, const char *treeish, const char *const *paths, size_t n,
		struct err *e);

/* vcs_restore for a swap that will be undone (confirm and noise put the
 * best in the tree and the candidate back): each file it replaces or
 * removes is kept beside it as a second link, so the way back renames
 * instead of writing and cannot fail on a full disk.  Every restore uses
 * such a kept copy when it holds the bytes it wants; vcs_clear_keeps
 * removes them once the swap is over. */
int vcs_swap(struct vcs *v, const char *treeish, const char *const *paths, size_t n,
	     struct err *e);
int vcs_clear_keeps(struct vcs *v, const char *const *paths, size_t n, struct err *e);

/* The files of the work tree that differ from HEAD (modified, deleted, or
 * new and not ignored) and lie in none of the paths keep; *out malloc'd
 * (free with vcs_changes_free).  Submodules are not looked into. */
struct vcs_change {
	char *path;
	const char *what; /* "modified", "deleted", "new" (static) */
};
int vcs_changes_outside(struct vcs *v, const char *const *keep, size_t nkeep,
			struct vcs_change **out, size_t *n, struct err *e);
void vcs_changes_free(struct vcs_change *c, size_t n);

/* The kernel files that differ between two treeishes (to NULL: the work
 * tree): added, removed or changed, sorted; *out malloc'd (free each and
 * it). */
int vcs_kernel_changed(struct vcs *v, const char *const *paths, size_t n, const char *from,
		       const char *to, char ***out, size_t *nout, struct err *e);

/* Is .git/index.lock there (a git command running, or a killed one's)? */
bool vcs_index_locked(struct vcs *v);

/* Remove the temp files a restore cut off by a crash left beside the
 * kernel files (the caller holds the workspace's writer lock). */
int vcs_clear_temps(struct vcs *v, const char *const *paths, size_t n, struct err *e);

/* Where the work tree's kernel paths stand between two trees (commits or
 * tree ids), file by file: VCS_AT_FROM / VCS_AT_TO when every file is that
 * side's (a file absent there is absent here), VCS_BETWEEN when every file
 * is one side's or the other's (a move from one to the other cut off),
 * VCS_ELSEWHERE when some file is neither's (changed by hand). */
enum vcs_between { VCS_AT_FROM, VCS_AT_TO, VCS_BETWEEN, VCS_ELSEWHERE };
int vcs_kernel_between(struct vcs *v, const char *const *paths, size_t n, const char *from,
		       const char *to, enum vcs_between *out, struct err *e);

/* Save the work tree's kernel state as a commit referenced by refname (so
 * it survives gc) and give its id in sha; the caller then restores the
 * measured tree (vcs_restore).  An existing refname is never overwritten:
 * when its commit already holds the work tree's kernel it is reused (a
 * set-aside cut off before the restore), otherwise ERR_REFUSED names it. */
int vcs_aside_save(struct vcs *v, const char *const *paths, size_t n, const char *refname,
		   const char *message, char sha[VCS_OID_HEX], struct err *e);
/* The kernel a set-aside edit gives on top of the work tree's kernel, as a
 * tree id in merged: the change from measured (the tree the iteration
 * measured, the state the edit was made on) to aside_sha, merged three-way
 * onto the work tree's kernel, so after a drop or revert the dropped change
 * stays dropped.  Writes only objects.  ERR_FAIL when the edit overlaps
 * what changed since the measurement. */
int vcs_aside_merge(struct vcs *v, const char *measured, const char *aside_sha,
		    const char *const *paths, size_t n, char merged[VCS_OID_HEX], struct err *e);
/* Keep object sha (a commit or a tree) reachable under refname, so git gc
 * never prunes it while optloop still needs it (a candidate's snapshot
 * during a confirm or noise swap); vcs_unkeep drops the ref (no error when
 * it is not there). */
int vcs_keep(struct vcs *v, const char *refname, const char *sha, struct err *e);
void vcs_unkeep(struct vcs *v, const char *refname);

/* A linked work tree's name as one ref name component (its own letters
 * where they are safe in a ref, else a hash of them); NULL in the main work
 * tree.  Refs are shared by every work tree of a repository, so a ref that
 * belongs to one work tree carries this (loop_ref). */
char *vcs_worktree_id(const struct vcs *v);

/* Put treeish's kernel files in the work tree (vcs_restore) and drop the
 * set-aside ref refname (may be NULL). */
int vcs_bring_back(struct vcs *v, const char *treeish, const char *refname,
		   const char *const *paths, size_t n, struct err *e);

/* Unified diff of the kernel paths from treeish (NULL: HEAD) to the work
 * tree, untracked files included, appended to out. */
int vcs_diff(struct vcs *v, const char *treeish, const char *const *paths, size_t n,
	     struct sb *out, struct err *e);

/* Does this commit exist?  Is it HEAD or one of its ancestors? */
bool vcs_commit_exists(struct vcs *v, const char *sha);
/* Does treeish (a commit, "HEAD") hold path, a file or a directory? */
bool vcs_path_in(struct vcs *v, const char *treeish, const char *path);
bool vcs_commit_in_history(struct vcs *v, const char *sha);
/* Is sha the commit tip (a ref, a revision) names, or one of its ancestors? */
bool vcs_holds(struct vcs *v, const char *tip, const char *sha);
/* A local branch other than the one checked out whose tip holds sha (its
 * short name, owned), or NULL. */
char *vcs_branch_holding(struct vcs *v, const char *sha);
/* The commit spec names (a ref, a revision), or -1 when it names none. */
int vcs_resolve(struct vcs *v, const char *spec, char sha[VCS_OID_HEX]);

/* An optloop commit found in history. */
struct vcs_iter_commit {
	char sha[VCS_OID_HEX];
	int iter;
	char *op;
	char *direction, *gate, *bench, *vs_best, *status;
	char *unconfirmed; /* Optloop-Unconfirmed: a keep without a win beyond noise */
};

/* Walk first parents from HEAD back to (and excluding) stop_sha (or at most
 * max commits), collecting optloop commits for op; newest first.  Caller
 * frees with vcs_iter_commits_free. */
int vcs_iter_commits(struct vcs *v, const char *op, const char *stop_sha, int max,
		     struct vcs_iter_commit **out, size_t *n, struct err *e);
void vcs_iter_commits_free(struct vcs_iter_commit *c, size_t n);

/* Parse the Optloop-* trailers of a commit message into *c (strings owned
 * by c).  ERR_NOTFOUND when the message carries no Optloop-Iter. */
int vcs_parse_message(const char *msg, struct vcs_iter_commit *c);

#endif
