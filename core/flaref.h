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
#include <stdint.h>

struct err;
struct sb;

struct fla_ref {
	char *name;   /* the imported name */
	char *module; /* "fla.ops.delta_rule" */
	char *file;   /* repository-relative file that defines it; NULL when not found */
	bool input;   /* no reference but what makes the inputs both sides of a comparison
		       * take (mean_pooling for k_cmp): a change there moves both sides */
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
	bool compared; /* refs are what the test's comparisons (assert_close) check the
			* op's results against; false: the names told (no comparison
			* involving the op was found) */
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
 * The files code runs, followed function by function without Python (see
 * flaref_walk.c): from a seed function (the op's, a reference's) or a
 * whole seed file (a test, a conftest, the harness), each name a function
 * uses to the def it names in this file or, through the imports and the
 * package re-exports, in another; a class to its methods; a class
 * registered with a factory in its package (AutoModelForCausalLM
 * .register(Config, Model)) to the model built from it.  A file reached
 * also runs its top-level code.  Names outside the repository (torch,
 * triton) end the walk; an import nothing uses reaches nothing, and an
 * import in a string is text.
 */
struct fla_file {
	char *path; /* repository-relative */
	int from;   /* the file whose code reached it first; -1 for a seed */
	char *via;  /* the name it was reached for (a seed: why it is one) */
	char *walk; /* the path its importers name, where a link is on the way
		     * (fla/ops/x/a.py with fla/ops/x a link to y: path is
		     * fla/ops/y/a.py, the one path git tracks); NULL: path */
	int node;   /* the first node of it reached, -1 for none */
};
struct fla_node {
	int file;   /* index in fla_files.v */
	char *name; /* a module-level name; "" the file's top-level code; NULL a whole seed file */
	int from;   /* the node whose code used it; -1 for a seed */
};
struct fla_files {
	struct fla_file *v;
	size_t n;
	struct fla_node *nodes;
	size_t nnodes;
	uint64_t *seen; /* the nodes reached, hashed */
	size_t nseen, seen_cap;
};
void fla_files_release(struct fla_files *f);
/* Index of path in f, -1 when absent. */
int fla_files_find(const struct fla_files *f, const char *path);
/* The node of name in file path that f reached, -1 when none. */
int fla_files_node(const struct fla_files *f, const char *path, const char *name);
/* Add seed (labelled why), all of it, and everything it runs, if it is a
 * file of the repository. */
void fla_walk(struct fla_tree *t, const char *seed, const char *why, struct fla_files *out);
/* Add function func of file (labelled why) and everything it runs. */
void fla_walk_func(struct fla_tree *t, const char *file, const char *func, const char *why,
		   struct fla_files *out);
/* How file i was reached, callee first:
 * "c.py (name) <- b.py (g <- f) <- seed.py: why". */
void fla_files_why(const struct fla_files *f, size_t i, struct sb *out);

/* Whether the file is kernel code: it launches a Triton kernel of its own
 * or defines a torch.autograd.Function.  Else a plain utility (helpers,
 * math inlined into other kernels, caches, decorators). */
bool fla_is_kernel_code(struct fla_tree *t, const char *path);

#endif
