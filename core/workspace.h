/*
 * workspace — where a loop lives: profile/<op>-opt/ inside the kernel
 * repository, its files, and how a new one is laid out.
 *
 * Also reads FLA's op registry (benchmarks/ops/registry.py) without Python,
 * to default the frozen test file, the naive reference and the kernel
 * package of an op the way FLA's verify finds them.
 */
#ifndef OPTLOOP_WORKSPACE_H
#define OPTLOOP_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

struct alloc;
struct contract;
struct err;
struct patset;
struct sb;
struct store;
struct vcs;

/* One open workspace, the object every module of the engine borrows (as
 * const struct workspace *): its paths, and once the loop opened it, its
 * store, repository handle, contract snapshot and scopes.  The loop owns
 * it and is its only writer. */
struct workspace {
	char *repo;          /* absolute work tree, no trailing slash */
	char *op;
	char *dir;           /* repo/profile/<op>-opt */
	char *rel;           /* profile/<op>-opt */
	char *db_path;       /* dir/optloop.db */
	char *contract_path; /* dir/docs/draft.md */
	char *optlog_path;   /* dir/OPT_LOG.md */
	char *dispatch_path; /* dir/dispatch.md */
	char *traps_path;    /* dir/TRAPS.md */
	char *trace_dir;     /* dir/trace */

	/* Open resources: NULL / empty in a workspace only found
	 * (workspace_find); owned, and released by workspace_release. */
	struct store *store;
	struct vcs *vcs;      /* profile/ and the frozen files excluded from the kernel */
	char **kernel;        /* kernel paths, relative to repo */
	size_t nkernel;
	char **frozen;        /* frozen paths, relative to repo */
	size_t nfrozen;
	bool readonly;        /* opened without the writer's lock */
	const char *readonly_why; /* static text, or NULL */
	struct patset *patset;    /* made at the first run (loop_patset) */
	struct alloc *alloc;      /* the Slurm allocation runs go through, or NULL */
	/* The contract as the owner read it last (borrowed from the owner's
	 * shared copy; a re-read replaces it); NULL before it is read. */
	const struct contract *contract;
};

/* Free the paths and close what the workspace holds open (the allocation,
 * the pattern set, the store, the repository); ws is left empty. */
void workspace_release(struct workspace *ws);

/* Op names become directory names: letters, digits, '_', '-', '.', not
 * starting with '.' or '-', at most 64 bytes.  ERR_USAGE says why not. */
int workspace_op_valid(const char *op, struct err *e);

/* Fill the paths of the workspace for op in repo (nothing is checked). */
void workspace_paths(const char *repo, const char *op, struct workspace *ws);

/* Ops that have a workspace (profile/<op>-opt/optloop.db) in repo, sorted.
 * *ops is caller-owned: free each, then the array. */
int workspace_list(const char *repo, char ***ops, size_t *n, struct err *e);
/* The kernel paths workspace op of repo holds (its database's, read-only),
 * in *paths (caller-freed strings and array); 0 when it cannot be read. */
size_t workspace_kernel_of(const char *repo, const char *op, char ***paths);

/* Pick the workspace: op when given (ERR_NOTFOUND when it has none), else
 * the only one (ERR_NOTFOUND when none, ERR_USAGE listing them when
 * several). */
int workspace_find(const char *repo, const char *op, struct workspace *ws, struct err *e);

/* Defaults of an FLA op. */
struct workspace_defaults {
	char *import_path; /* "fla.ops.gated_delta_rule" */
	char *func_name;   /* the op's function: "chunk_gated_delta_rule" (func_name=, else name=) */
	char *test_file;   /* "tests/ops/test_gdn.py" */
	char *naive;       /* "fla/ops/gated_delta_rule/naive.py" */
	char *kernel;      /* "fla/ops/gated_delta_rule" */
	char *verify_cmd;  /* "python -m benchmarks.ops.verify --op chunk_gdn" */
	char *bench_cmd;   /* verify_cmd + " --base main" */
	char *default_shapes; /* the op's own shapes (default_shapes=): the dict's
			       * name, "_nsa_shapes", or its literal "{...}";
			       * NULL: the op runs SHAPE_CONFIGS */
};
void workspace_defaults_release(struct workspace_defaults *d);

/* Every op benchmarks/ops/registry.py registers, as workspace_fla_defaults
 * gives it, with its name in names[i]; 0 and none when the repository is
 * not FLA-shaped.  Release with workspace_fla_registry_release. */
size_t workspace_fla_registry(const char *repo, char ***names, struct workspace_defaults **ops);
void workspace_fla_registry_release(char **names, struct workspace_defaults *ops, size_t n);
/* The shapes op's benchmark runs (core/flashape.h): its default_shapes
 * when its registry entry has them (*own true), else SHAPE_CONFIGS; -1
 * when the repository has no registry or the op is not registered.  Free
 * with flashape_free. */
struct fla_shape;
long workspace_fla_op_shapes(const char *repo, const char *op, struct fla_shape **out,
			     bool *own);

/* Find op's register_op(OpConfig(name='op', import_path='...', ...,
 * test_file='...')) entry in the text of registry.py and derive the
 * defaults.  ERR_NOTFOUND when op is not registered. */
int workspace_registry_lookup(const char *text, size_t len, const char *op,
			      struct workspace_defaults *d, struct err *e);

/* The same from repo/benchmarks/ops/registry.py; ERR_NOTFOUND when the
 * repository is not FLA-shaped or the op is not registered. */
int workspace_fla_defaults(const char *repo, const char *op, struct workspace_defaults *d,
			   struct err *e);

/* Make sure profile/ is ignored: when it is not, append "/profile/" to
 * .git/info/exclude and add a line to notes saying so. */
int workspace_ensure_ignored(struct vcs *v, struct sb *notes, struct err *e);

/* Create the directory layout (docs/, trace/) and the text files that do
 * not exist yet: docs/draft.md (contract_text), OPT_LOG.md (optlog_text),
 * dispatch.md and TRAPS.md (copied from assets when present).  ERR_REFUSED
 * when the workspace already has a database. */
int workspace_create(const struct workspace *ws, const char *contract_text,
		     const char *optlog_text, struct sb *notes, struct err *e);

#endif
