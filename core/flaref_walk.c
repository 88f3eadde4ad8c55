/*
 * flaref_walk — the code a function runs, followed function by function
 * without Python.  See fla_walk in flaref.h.
 *
 * A node is one module-level name of one file (a def, a class, an
 * assignment), or a file's top-level code.  Visiting a node reads the
 * names its lines use and follows each to where it is defined
 * (fla_resolve_use: the file's own names, its imports, the package
 * re-exports behind them).  A file is reached with the first node of it
 * visited; its top-level code (constants, the arguments of decorators
 * at module level) runs with it.  A class registered with a factory in
 * its package's __init__.py (AutoModelForCausalLM.register(Config,
 * Model)) reaches what the factory builds from it.
 */
#include "core/flaref.h"
#include "core/flaref_impl.h"

#include "core/hash.h"
#include "core/pyscan.h"
#include "core/sb.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void fla_files_release(struct fla_files *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].path);
		free(f->v[i].via);
		free(f->v[i].walk);
	}
	free(f->v);
	for (size_t i = 0; i < f->nnodes; i++)
		free(f->nodes[i].name);
	free(f->nodes);
	free(f->seen);
	memset(f, 0, sizeof(*f));
}

int fla_files_find(const struct fla_files *f, const char *path)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, path))
			return (int)i;
	return -1;
}

int fla_files_node(const struct fla_files *f, const char *path, const char *name)
{
	int file = fla_files_find(f, path);
	for (size_t k = 0; file >= 0 && k < f->nnodes; k++)
		if (f->nodes[k].file == file && f->nodes[k].name && !strcmp(f->nodes[k].name, name))
			return (int)k;
	return -1;
}

/* The file of path in f, added when new (from: the file whose code
 * reached it, via: the name it was reached for); by the path git tracks,
 * whichever path (through a link or not) the import named it by. */
static int file_of(struct fla_tree *t, struct fla_files *f, const char *path, int from,
		   const char *via, bool *added)
{
	*added = false;
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, path) || (f->v[i].walk && !strcmp(f->v[i].walk, path)))
			return (int)i;
	char *real = fla_real_rel(t, path);
	int at = fla_files_find(f, real);
	if (at >= 0) {
		free(real);
		return at;
	}
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	f->v[f->n] = (struct fla_file){real, from, via ? xstrdup(via) : NULL,
				       strcmp(real, path) ? xstrdup(path) : NULL, -1};
	*added = true;
	return (int)f->n++;
}

/* ---- the set of nodes seen: file index and name, hashed ---- */

static uint64_t node_key(int file, const char *name)
{
	struct sb k = SB_INIT;
	sb_addf(&k, "%d:%s", file, name ? name : "\1");
	uint64_t h = hash64(k.buf, k.len) | 1; /* 0 marks a free slot */
	sb_release(&k);
	return h;
}

/* Whether the key was new (and now is not). */
static bool seen_add(struct fla_files *f, uint64_t key)
{
	if ((f->nseen + 1) * 2 > f->seen_cap) {
		size_t cap = f->seen_cap ? f->seen_cap * 2 : 256;
		uint64_t *v = xcalloc(cap, sizeof(*v));
		for (size_t i = 0; i < f->seen_cap; i++)
			if (f->seen[i])
				for (size_t j = f->seen[i] % cap;; j = (j + 1) % cap)
					if (!v[j]) {
						v[j] = f->seen[i];
						break;
					}
		free(f->seen);
		f->seen = v;
		f->seen_cap = cap;
	}
	for (size_t j = key % f->seen_cap;; j = (j + 1) % f->seen_cap) {
		if (f->seen[j] == key)
			return false;
		if (!f->seen[j]) {
			f->seen[j] = key;
			f->nseen++;
			return true;
		}
	}
}

/* Node (path, name) reached from node from: added to f unless seen.
 * name NULL: the whole file (a seed); "": its top-level code. */
static void node_add(struct fla_tree *t, struct fla_files *f, const char *path, const char *name,
		     int from, const char *why)
{
	int caller = from >= 0 ? f->nodes[from].file : -1;
	bool added;
	int file = file_of(t, f, path, caller, from >= 0 ? name : why, &added);
	if (!seen_add(f, node_key(file, name)))
		return;
	f->nodes = xrealloc(f->nodes, (f->nnodes + 1) * sizeof(*f->nodes));
	f->nodes[f->nnodes++] = (struct fla_node){file, name ? xstrdup(name) : NULL, from};
	if (f->v[file].node < 0)
		f->v[file].node = (int)f->nnodes - 1;
	/* a file runs its top-level code when it is imported */
	if (added && name && *name)
		node_add(t, f, path, "", (int)f->nnodes - 1, why);
}

struct visit {
	struct fla_tree *t;
	struct fla_files *f;
	const char *rel; /* the file's path as its importers name it */
	int node;
};

static void on_use(void *ctx, const char *name, size_t n, const char *attr, size_t an)
{
	struct visit *v = ctx;
	char *nm = xstrndup(name, n), *at = attr ? xstrndup(attr, an) : NULL;
	char *file = NULL, *def = NULL;
	if (fla_resolve_use(v->t, v->rel, nm, at, &file, &def))
		node_add(v->t, v->f, file, def, v->node, NULL);
	free(file);
	free(def);
	free(nm);
	free(at);
}

static bool same_file(struct fla_tree *t, const char *a, const char *b)
{
	if (!strcmp(a, b))
		return true;
	char *ra = fla_real_rel(t, a), *rb = fla_real_rel(t, b);
	bool same = !strcmp(ra, rb);
	free(ra);
	free(rb);
	return same;
}

/* "X.register(A, B, ...)" at the top of init with A the class (rel, cls):
 * B is built from it. */
static void registered(struct visit *v, const char *init, const char *cls)
{
	const struct py_file *py = fla_py(v->t, init);
	for (size_t l = 0; py && l < py->nline; l++) {
		const struct py_line *ln = &py->line[l];
		for (unsigned i = ln->first + 1; ln->module && i + 1 < ln->first + ln->ntok; i++) {
			unsigned a0, a1, b0, b1;
			if (!py_tok_is(&py->tok[i], "register") || !py_tok_is(&py->tok[i - 1], ".") ||
			    !py_tok_is(&py->tok[i + 1], "(") || !py_call_arg(py, i + 1, 0, &a0, &a1) ||
			    !py_call_arg(py, i + 1, 1, &b0, &b1) || a1 != a0 + 1 || b1 != b0 + 1 ||
			    !py_tok_is(&py->tok[a0], cls))
				continue;
			char *file = NULL, *def = NULL;
			bool ours = fla_resolve_use(v->t, init, cls, NULL, &file, &def) &&
				    same_file(v->t, file, v->rel) && !strcmp(def, cls);
			free(file);
			free(def);
			char *b = xstrndup(py->tok[b0].s, py->tok[b0].len);
			if (ours && fla_resolve_use(v->t, init, b, NULL, &file, &def))
				node_add(v->t, v->f, file, def, v->node, NULL);
			if (ours) {
				free(file);
				free(def);
			}
			free(b);
		}
	}
}

static void registrations(struct visit *v, const char *cls)
{
	char *dir = xstrdup(v->rel);
	for (char *slash; (slash = strrchr(dir, '/'));) {
		*slash = '\0';
		char *init = xasprintf("%s/__init__.py", dir);
		if (strcmp(init, v->rel) != 0)
			registered(v, init, cls);
		free(init);
	}
	free(dir);
}

static void visit(struct fla_tree *t, struct fla_files *f, int node)
{
	const struct fla_node *nd = &f->nodes[node];
	const struct fla_file *file = &f->v[nd->file];
	struct visit v = {t, f, file->walk ? file->walk : file->path, node};
	const struct py_file *py = fla_py(t, v.rel);
	char *name = nd->name ? xstrdup(nd->name) : NULL; /* f->nodes may move */
	if (!py) {
		free(name);
		return;
	}
	if (!name) {
		/* a seed file: all of it */
		node_add(t, f, v.rel, "", node, NULL);
		for (size_t k = 0; k < py->ndef; k++)
			node_add(t, f, v.rel, py->def[k].name, node, NULL);
	} else if (!*name) {
		for (unsigned l = 0; l < py->nline; l++)
			if (py->line[l].module)
				py_refs(py, l, l + 1, on_use, &v);
	} else {
		bool defined = false;
		for (int k = py_def_find(py, name, 0); k >= 0; k = py_def_find(py, name, k + 1)) {
			defined = true;
			py_refs(py, py->def[k].line0, py->def[k].line1, on_use, &v);
			if (py->def[k].kind == PD_CLASS)
				registrations(&v, name);
		}
		if (!defined) /* a name the file imports (a package re-exporting it) */
			on_use(&v, name, strlen(name), NULL, 0);
	}
	free(name);
}

static void walk_from(struct fla_tree *t, struct fla_files *f, size_t first)
{
	for (size_t i = first; i < f->nnodes; i++)
		visit(t, f, (int)i);
}

void fla_walk(struct fla_tree *t, const char *seed, const char *why, struct fla_files *out)
{
	const struct py_file *py = fla_py(t, seed);
	if (!py)
		return;
	size_t first = out->nnodes;
	node_add(t, out, seed, NULL, -1, why);
	walk_from(t, out, first);
}

void fla_walk_func(struct fla_tree *t, const char *file, const char *func, const char *why,
		   struct fla_files *out)
{
	if (!fla_py(t, file))
		return;
	size_t first = out->nnodes;
	node_add(t, out, file, func, -1, why);
	walk_from(t, out, first);
}

bool fla_is_kernel_code(struct fla_tree *t, const char *path)
{
	const struct py_file *py = fla_py(t, path);
	return py && py_is_kernel_code(py);
}

/* "G (g) <- F (a <- b) <- seed.py (c): why": from file i's first node back
 * to its seed, each file once with the names the chain passed through in
 * it, callee first; the seed function's own name is in why. */
void fla_files_why(const struct fla_files *f, size_t i, struct sb *out)
{
	int k = f->v[i].node;
	if (k < 0) {
		/* reached without nodes: the file chain */
		for (int at = (int)i, hops = 0; at >= 0 && hops < 64; hops++) {
			const struct fla_file *x = &f->v[at];
			sb_addf(out, "%s%s", hops ? " <- " : "", x->path);
			if (x->via)
				sb_addf(out, x->from < 0 ? ": %s" : " (%s)", x->via);
			at = x->from;
		}
		return;
	}
	int file = -1, names = 0;
	for (int hops = 0; k >= 0 && hops < 256; hops++) {
		const struct fla_node *nd = &f->nodes[k];
		bool seed = nd->from < 0;
		if (nd->file != file) {
			if (names)
				sb_adds(out, ")");
			sb_addf(out, "%s%s", file >= 0 ? " <- " : "", f->v[nd->file].path);
			file = nd->file;
			names = 0;
		}
		if (nd->name && *nd->name && !seed) {
			sb_addf(out, names ? " <- %s" : " (%s", nd->name);
			names++;
		}
		if (seed) {
			if (names)
				sb_adds(out, ")");
			names = 0;
			if (f->v[nd->file].via)
				sb_addf(out, ": %s", f->v[nd->file].via);
		}
		k = nd->from;
	}
	if (names)
		sb_adds(out, ")");
}
