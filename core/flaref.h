/*
 * flaref — what a flash-linear-attention gate test compares the op against,
 * read from the test's imports without Python.
 *
 * The gate test imports the op's function and the reference it checks the
 * op's output against: a naive_* implementation (naive.py, gate.py), a
 * fused_recurrent_* / recurrent_* kernel for a chunked op, or a *_ref /
 * *_torch / torch_* helper.  The files that define those references must
 * be frozen: a change there moves the expected values together with the
 * candidate and the gate proves nothing.  Each imported name is followed
 * to the file that defines it: a module file that defines it (def NAME),
 * the package's __init__.py re-exports (from .mod import NAME [as ...]),
 * else the package's .py files searched for the def.
 */
#ifndef OPTLOOP_FLAREF_H
#define OPTLOOP_FLAREF_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;

struct fla_ref {
	char *name;   /* the imported name */
	char *module; /* "fla.ops.delta_rule" */
	char *file;   /* repository-relative file that defines it; NULL when not found */
};

/*
 * The repository's Python files as one command sees them: each file is
 * read, each path looked up and each file's imports resolved once, however
 * many walks ask (dependents walks every op and every test file).  Open one
 * per command and close it before the files may have changed.
 */
struct fla_tree;
struct fla_tree *fla_tree_open(const char *repo);
void fla_tree_close(struct fla_tree *t);

struct fla_scope {
	struct fla_ref *refs; /* the references, in import order */
	size_t nrefs;
	char *op_file;        /* the file defining the op's function, NULL when not found */
	bool op_imported;     /* the test imports the op's function */
	struct fla_ref *others; /* the test's other fla.* imports (other ops, its helpers) */
	size_t nothers;
};
void fla_scope_release(struct fla_scope *s);

/* Whether a name is a reference implementation by its name alone
 * (naive_*, torch_*, ref_*, *_ref, *_torch): never a kernel to optimize. */
bool fla_is_naive(const char *name);

/* Whether an imported name is a reference for the op whose function is
 * op_func (the op's own function never is). */
bool fla_is_reference(const char *name, const char *op_func);

/* Read test_file's imports of fla.* and resolve the references and
 * the op's function (op_func, imported from import_path).  ERR_NOTFOUND
 * when the test file cannot be read. */
int fla_scope_read(struct fla_tree *t, const char *test_file, const char *import_path,
		   const char *op_func, struct fla_scope *out, struct err *e);

/* The file defining name as imported from module (dotted), or NULL. */
char *fla_resolve(struct fla_tree *t, const char *module, const char *name);

/*
 * The files code reaches, by following imports without Python: from a
 * seed file, each "from M import N" to the file that defines N (or the
 * submodule M.N), each "import M" to M's file, relative imports from the
 * file's package, and a script's "from registry import x" to the
 * registry.py beside it; then those files' imports, and so on.  Modules
 * the repository does not hold (torch, triton) end the walk there.  A
 * package's __init__.py reached for one name is kept but not followed
 * (it re-exports the whole package; the name's own file is followed).
 */
struct fla_file {
	char *path; /* repository-relative */
	int from;   /* the file whose import reached it; -1 for a seed */
	char *via;  /* the name or module imported (a seed: why it is one) */
	char *walk; /* the path its importers name, where a link is on the way
		     * (fla/ops/x/a.py with fla/ops/x a link to y: path is
		     * fla/ops/y/a.py, the one path git tracks); NULL: path */
};
struct fla_files {
	struct fla_file *v;
	size_t n;
};
void fla_files_release(struct fla_files *f);
/* Index of path in f, -1 when absent. */
int fla_files_find(const struct fla_files *f, const char *path);
/* Add seed (labelled why) and everything it reaches, if it is a file of
 * the repository and not already in out. */
void fla_walk(struct fla_tree *t, const char *seed, const char *why, struct fla_files *out);
/* How file i was reached: "c.py (name) <- b.py (name) <- seed.py: why". */
void fla_files_why(const struct fla_files *f, size_t i, struct sb *out);

#endif
