/*
 * flaref_impl — what flaref.c (the tree of files, names to their defs, the
 * gate test's comparisons) shares with flaref_walk.c (the call graph).
 * Private to the two.
 */
#ifndef OPTLOOP_FLAREF_IMPL_H
#define OPTLOOP_FLAREF_IMPL_H

#include "core/flaref.h"
#include "core/pyscan.h"

#include <stdbool.h>

/* The scan of a repository file (read and tokenized once per tree); NULL
 * when it cannot be read. */
const struct py_file *fla_py(struct fla_tree *t, const char *rel);

/* The repository file of a dotted module: a/b.py, else a/b/__init__.py;
 * NULL when the repository holds neither (torch, triton). */
char *fla_module_file(struct fla_tree *t, const char *module);

/* The dotted package a file's relative imports start from. */
char *fla_package_of(const char *path);

/* "fla.ops.gla" + "..utils" -> "fla.ops.utils". */
char *fla_absolute(const char *package, const char *mod);

/* rel as git tracks it (every link on the way resolved). */
char *fla_real_rel(struct fla_tree *t, const char *rel);

/* Where name, as file rel uses it, is defined: the file (*file) and the
 * name there (*def; "" for a module used as a whole, its top-level code).
 * attr is what follows "name." in the use, NULL for none: a module's
 * attribute is that module's name.  false when the name is not the
 * repository's (a builtin, torch, a local). */
bool fla_resolve_use(struct fla_tree *t, const char *rel, const char *name, const char *attr,
		     char **file, char **def);

#endif
