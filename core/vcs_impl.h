/*
 * vcs_impl — struct vcs as vcs's own files see it (vcs.c: the work tree,
 * kernel hashing, commits, restore, set-aside, diff; vcs_history.c:
 * optloop's commits read back from history).  Nothing outside core/vcs*.c
 * includes this; the rest of optloop has core/vcs.h.
 */
#ifndef OPTLOOP_VCS_IMPL_H
#define OPTLOOP_VCS_IMPL_H

#include "core/vcs.h"

#include <git2.h>
#include <stddef.h>

struct err;

struct vcs {
	git_repository *repo;
	char *workdir; /* no trailing slash */
	char **exclude; /* never part of the kernel (frozen files, profile/) */
	size_t nexclude;
};

/* e set from libgit2's last error: "what: message", code; a lock file a
 * git command holds (or left behind) becomes ERR_BUSY, saying which and
 * what to do. */
int vcs_git_fail(struct err *e, int code, const char *what);

/* git's filter drivers (filter.NAME.clean / .smudge) for every path whose
 * attributes name one, as git runs them (core/vcs_filter.c); once, after
 * libgit2 is initialised. */
void vcs_filter_register(void);
/* 0, or ERR_IO naming the required filter driver that failed since the
 * last call (the content went through unfiltered): checked after each
 * libgit2 call that filters a kernel file. */
int vcs_filter_failed(struct err *e);

#endif
