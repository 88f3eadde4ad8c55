/*
 * loop_impl — the open loop as its own files see it: struct loop and the
 * helpers its phases share (loop.c: open, close, the state and the due
 * step, the writer; loop_reconcile.c, loop_init.c, loop_verify.c,
 * loop_record.c, loop_repair.c).  Nothing outside core/loop*.c includes
 * this; the front-ends have core/loop.h.
 */
#ifndef OPTLOOP_LOOP_IMPL_H
#define OPTLOOP_LOOP_IMPL_H

#include "core/loop.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/sb.h"
#include "core/workspace.h"

#include <stdbool.h>
#include <stddef.h>

/* Where a change set aside by a telescoped edit is kept: ASIDE_REF/<op>/<iter>. */
#define ASIDE_REF "refs/optloop/aside"

/* The contract is shared by reference: the loop holds the one it read last
 * and lends it out (loop_contract_get); a re-read makes a new one, so what a
 * borrower holds stays whole. */
struct shared_contract {
	struct contract c; /* first: a borrower's pointer is this one */
	int refs;
	bool missing;      /* docs/draft.md was not there */
	char *text;        /* what was read, to skip parsing it again */
	size_t len;
	int rc;            /* contract_parse's */
	struct err err;
};

struct loop {
	struct vcs *vcs;
	struct store *store;
	struct workspace ws;
	bool readonly;
	const char *readonly_why; /* static; see loop_status */
	char **kernel;
	size_t nkernel;
	char **frozen;
	size_t nfrozen;
	struct shared_contract *contract; /* never NULL once open */
	char *missing; /* NULL when the contract is complete */
	/* OPT_LOG.md holds rows the database does not (it was replaced, emptied
	 * or cut short): how many, 0 when none.  Nothing is written until
	 * repair --rebuild takes them back (loop_writable). */
	int lost_rows;
	struct sb problems;
	char *init_head;

	struct patset *patset; /* loaded at the first run */

	/* the last verify run: going while verifying */
	struct run *vrun;
	bool verifying;
	char *vcmd; /* the command of the last verify started */
	bool vpaired; /* it named {best}: one process times the best beside the tree */

	/* the Slurm allocation runs go through (Runner: slurm ...), and
	 * whether a run of this process used it */
	struct alloc *alloc;
	bool alloc_used;
};

struct where {
	enum loop_state state;
	int iter;
	bool telescoped;
	int run_id;
	int nrows;
	bool kernel_changed; /* work tree differs from HEAD */
	int attempt_run;     /* the iteration's last run was an attempt (run_is_attempt) */
	int stall;           /* the stall count when guards_state computed it, else -1 */
	char session[16];    /* "confirm" or "noise" while one is going (another
			      * process's: the best may be in the tree on purpose) */
};

/* The due step and the status the evidence supports, beside its words. */
struct due {
	enum loop_due due;
	enum row_status suggest;
	char *why; /* the evidence behind suggest, in words (owned), or NULL */
};

/* Why kernel path p (relative to repo) cannot be a kernel path, in words,
 * or NULL: it is the whole work tree, or lies in git's own directory gitdir
 * (which no commit holds).  Static text; read from the text and from the
 * real path.  loop_init refuses such a path; loop_open reports it. */
const char *loop_kernel_path_unusable(const char *repo, const char *gitdir, const char *p);

#endif
