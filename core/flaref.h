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

struct fla_ref {
	char *name;   /* the imported name */
	char *module; /* "fla.ops.delta_rule" */
	char *file;   /* repository-relative file that defines it; NULL when not found */
};

struct fla_scope {
	struct fla_ref *refs; /* the references, in import order */
	size_t nrefs;
	char *op_file;        /* the file defining the op's function, NULL when not found */
	bool op_imported;     /* the test imports the op's function */
};
void fla_scope_release(struct fla_scope *s);

/* Whether a name is a reference implementation by its name alone
 * (naive_*, torch_*, ref_*, *_ref, *_torch): never a kernel to optimize. */
bool fla_is_naive(const char *name);

/* Whether an imported name is a reference for the op whose function is
 * op_func (the op's own function never is). */
bool fla_is_reference(const char *name, const char *op_func);

/* Read repo/test_file's imports of fla.* and resolve the references and
 * the op's function (op_func, imported from import_path).  ERR_NOTFOUND
 * when the test file cannot be read. */
int fla_scope_read(const char *repo, const char *test_file, const char *import_path,
		   const char *op_func, struct fla_scope *out, struct err *e);

/* The file defining name as imported from module (dotted), or NULL. */
char *fla_resolve(const char *repo, const char *module, const char *name);

#endif
