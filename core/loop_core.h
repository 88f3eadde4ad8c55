/*
 * loop_core — what core's own modules see of an open loop: its store,
 * repository handle, pattern set, workspace, contract and event log.  The
 * front-ends never include this; they have core/loop.h.
 */
#ifndef OPTLOOP_LOOP_CORE_H
#define OPTLOOP_LOOP_CORE_H

#include "core/loop.h"

struct contract;
struct patset;
struct store;
struct vcs;
struct workspace;

/* The contract as the workspace last read it (loop_open, loop_status,
 * verify, log and commit read docs/draft.md again, and parse it again only
 * when its text changed).  The caller holds a reference: it stays whole
 * when the loop reads a changed file; let go with loop_contract_put.  An
 * empty contract when docs/draft.md is missing; never NULL. */
struct contract;
const struct contract *loop_contract_get(struct loop *l);
void loop_contract_put(const struct contract *c);

struct store *loop_store(struct loop *l);
/* The repository handle (libgit2), with profile/ and the frozen files
 * excluded from the kernel; borrowed, valid until loop_close. */
struct vcs;
struct vcs *loop_vcs(struct loop *l);
/* The pattern set runs are parsed with (built-in plus the workspace's
 * patterns/), loaded at the first call and owned by the loop. */
struct patset;
int loop_patset(struct loop *l, const struct patset **ps, struct err *e);
const struct workspace *loop_workspace(const struct loop *l);

/* cmd with every "{best}" replaced by sha, the best's commit (caller
 * frees): a harness that times that commit beside the work tree. */
char *loop_with_best(const char *cmd, const char *sha);

/* The Slurm allocation runs go through when the contract's Runner is slurm
 * (made when first asked for, owned by the loop); NULL for local runs.
 * Marks the allocation used by this process. */
struct alloc;
struct alloc *loop_run_alloc(struct loop *l);

/* 0, or ERR_REFUSED (verb starts the message) while OPT_LOG.md holds rows
 * the database lost: every command that writes asks first. */
int loop_writable(struct loop *l, const char *verb, struct err *e);

/* Append an event to the store's append-only event log (kind: short word,
 * detail: free text, may be NULL). */
int loop_event(struct loop *l, const char *kind, const char *detail, struct err *e);

#endif
