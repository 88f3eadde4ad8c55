/*
 * gitshow — what one commit changed, for the detail pane: the diff stat
 * and the patch against its first parent, through libgit2.  A small
 * read-only helper beside vcs, kept apart so the engine's module stays its
 * owner's.
 */
#ifndef OPTLOOP_GITSHOW_H
#define OPTLOOP_GITSHOW_H

struct err;
struct sb;

/* Append the stat ("path | 3 ++-" lines and the summary) to stat and the
 * unified patch to patch (either may be NULL) for commit sha (full or
 * abbreviated) in the repository containing dir.  ERR_NOTFOUND when the
 * commit is not there, ERR_IO on other git failures. */
int gitshow_commit(const char *dir, const char *sha, struct sb *stat, struct sb *patch,
		   struct err *e);

#endif
