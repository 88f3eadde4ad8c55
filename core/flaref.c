/*
 * flaref — what a flash-linear-attention gate test compares against.  See
 * flaref.h.
 */
#include "core/flaref.h"
#include "core/flaref_impl.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/pyscan.h"
#include "core/sb.h"

#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RESOLVE_DEPTH 4

/* The name a star import stands for: all of the module's. */
#define STAR "*"

void fla_scope_release(struct fla_scope *s)
{
	for (size_t i = 0; i < s->nrefs; i++) {
		free(s->refs[i].name);
		free(s->refs[i].module);
		free(s->refs[i].file);
	}
	free(s->refs);
	for (size_t i = 0; i < s->nothers; i++) {
		free(s->others[i].name);
		free(s->others[i].module);
		free(s->others[i].file);
	}
	free(s->others);
	free(s->op_file);
	memset(s, 0, sizeof(*s));
}

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool ends(const char *s, const char *p)
{
	size_t n = strlen(s), m = strlen(p);
	return n >= m && !strcmp(s + n - m, p);
}

bool fla_is_naive(const char *name)
{
	return starts(name, "naive_") || starts(name, "torch_") || starts(name, "ref_") ||
	       ends(name, "_ref") || ends(name, "_torch");
}

bool fla_is_reference(const char *name, const char *op_func)
{
	if (op_func && !strcmp(name, op_func))
		return false;
	if (fla_is_naive(name))
		return true;
	/* the recurrent form checks a chunked or parallel op, not itself */
	bool recurrent = starts(name, "fused_recurrent_") || starts(name, "recurrent_");
	bool op_recurrent = op_func && (starts(op_func, "fused_recurrent_") ||
					starts(op_func, "recurrent_"));
	return recurrent && !op_recurrent;
}

/* ---- the repository's files, each looked at once ------------------------------
 *
 * Following imports asks again and again whether a module file exists, what
 * a file says and which .py files a package holds: the answers are kept
 * for the life of the tree (one command), so each file is read once. */

enum { K_UNKNOWN, K_MISSING, K_FILE, K_DIR };

struct entry {
	char *rel;
	struct entry *next;
	int kind;
	bool read, listed, scanned;
	char *text;   /* NULL: not readable */
	char **py;    /* a directory's .py files but __init__.py, sorted */
	size_t npy;
	struct py_file scan; /* the text's tokens, lines, defs and imports */
};

#define TREE_BUCKETS 4096

struct fla_tree {
	char *repo;
	char *real; /* repo with its links resolved (realpath), once needed */
	struct entry *bucket[TREE_BUCKETS];
};

struct fla_tree *fla_tree_open(const char *repo)
{
	struct fla_tree *t = xcalloc(1, sizeof(*t));
	t->repo = xstrdup(repo);
	return t;
}

void fla_tree_close(struct fla_tree *t)
{
	if (!t)
		return;
	for (size_t b = 0; b < TREE_BUCKETS; b++) {
		for (struct entry *x = t->bucket[b], *next; x; x = next) {
			next = x->next;
			free(x->rel);
			free(x->text);
			for (size_t i = 0; i < x->npy; i++)
				free(x->py[i]);
			free(x->py);
			py_file_release(&x->scan);
			free(x);
		}
	}
	free(t->repo);
	free(t->real);
	free(t);
}

static struct entry *entry_of(struct fla_tree *t, const char *rel)
{
	struct entry **b = &t->bucket[hash64(rel, strlen(rel)) % TREE_BUCKETS];
	for (struct entry *x = *b; x; x = x->next)
		if (!strcmp(x->rel, rel))
			return x;
	struct entry *x = xcalloc(1, sizeof(*x));
	x->rel = xstrdup(rel);
	x->next = *b;
	*b = x;
	return x;
}

static int kind_of(struct fla_tree *t, const char *rel)
{
	struct entry *x = entry_of(t, rel);
	if (x->kind == K_UNKNOWN) {
		char *full = fsutil_join(t->repo, rel);
		struct stat st;
		/* as fsutil_exists and fsutil_is_dir answer: a link is followed
		 * for the directory, a dangling one is there but no directory */
		bool there = lstat(full, &st) == 0;
		if (there && S_ISLNK(st.st_mode) && stat(full, &st) < 0)
			st.st_mode = S_IFREG;
		x->kind = !there ? K_MISSING : S_ISDIR(st.st_mode) ? K_DIR : K_FILE;
		free(full);
	}
	return x->kind;
}

/* A file's text, or NULL when it cannot be read. */
static const char *text_of(struct fla_tree *t, const char *rel)
{
	struct entry *x = entry_of(t, rel);
	if (!x->read) {
		struct sb text = SB_INIT;
		char *full = fsutil_join(t->repo, rel);
		x->read = true;
		if (fsutil_read_file(full, &text, NULL) == 0)
			x->text = text.buf ? sb_detach(&text) : xstrdup("");
		sb_release(&text);
		free(full);
	}
	return x->text;
}

const struct py_file *fla_py(struct fla_tree *t, const char *rel)
{
	const char *text = text_of(t, rel);
	struct entry *x = entry_of(t, rel);
	if (!text)
		return NULL;
	if (!x->scanned) {
		x->scanned = true;
		py_scan(text, &x->scan);
	}
	return &x->scan;
}

/* A package directory's .py files but __init__.py, in a fixed order so an
 * answer does not depend on the directory's. */
static const struct entry *listing_of(struct fla_tree *t, const char *reldir)
{
	struct entry *x = entry_of(t, reldir);
	if (!x->listed) {
		char *full = fsutil_join(t->repo, reldir);
		DIR *d = opendir(full);
		struct dirent *de;
		x->listed = true;
		while (d && (de = readdir(d))) {
			if (ends(de->d_name, ".py") && strcmp(de->d_name, "__init__.py")) {
				x->py = xrealloc(x->py, (x->npy + 1) * sizeof(*x->py));
				x->py[x->npy++] = xstrdup(de->d_name);
			}
		}
		if (d)
			closedir(d);
		if (x->npy > 1)
			qsort(x->py, x->npy, sizeof(*x->py), strp_cmp);
		free(full);
	}
	return x;
}

/* ---- following a name to its def ---- */

/* "fla.ops.gla" + ".naive" -> "fla.ops.gla.naive"; ".." goes up one. */
char *fla_absolute(const char *package, const char *mod)
{
	if (mod[0] != '.')
		return xstrdup(mod);
	char *base = xstrdup(package);
	const char *m = mod + 1;
	while (*m == '.') {
		char *dot = strrchr(base, '.');
		if (dot)
			*dot = '\0';
		m++;
	}
	char *out = *m ? xasprintf("%s.%s", base, m) : xstrdup(base);
	free(base);
	return out;
}

static char *path_of(const char *module)
{
	char *p = xstrdup(module);
	for (char *c = p; *c; c++)
		if (*c == '.')
			*c = '/';
	return p;
}

static char *resolve(struct fla_tree *t, const char *module, const char *name, int depth);

/* name in a file: defined there, or imported from elsewhere at its top. */
static char *resolve_in(struct fla_tree *t, const char *rel, const char *package,
			const char *name, int depth)
{
	const struct py_file *py = fla_py(t, rel);
	char *found = NULL;
	if (!py)
		return NULL;
	if (py_def_find(py, name, 0) >= 0)
		return xstrdup(rel);
	if (depth >= RESOLVE_DEPTH)
		return NULL;
	for (size_t i = 0; !found && i < py->nimp; i++) {
		const struct py_import *im = &py->imp[i];
		const char *as = im->alias ? im->alias : im->name;
		if (im->in_def || !im->name || !strcmp(im->name, STAR) || strcmp(as, name))
			continue;
		char *m = fla_absolute(package, im->module);
		found = resolve(t, m, im->name, depth + 1);
		free(m);
	}
	/* not named anywhere: a star import may bring it */
	for (size_t i = 0; !found && i < py->nimp; i++) {
		const struct py_import *im = &py->imp[i];
		if (im->in_def || !im->name || strcmp(im->name, STAR) != 0)
			continue;
		char *m = fla_absolute(package, im->module);
		found = resolve(t, m, name, depth + 1);
		free(m);
	}
	return found;
}

static char *resolve(struct fla_tree *t, const char *module, const char *name, int depth)
{
	char *p = path_of(module);
	char *file = xasprintf("%s.py", p);
	char *found = NULL;
	if (kind_of(t, file) == K_FILE) {
		/* a module: its package is the module minus its last part */
		char *package = xstrdup(module);
		char *dot = strrchr(package, '.');
		if (dot)
			*dot = '\0';
		found = resolve_in(t, file, package, name, depth);
		free(package);
	} else if (kind_of(t, p) == K_DIR) {
		char *init = xasprintf("%s/__init__.py", p);
		found = resolve_in(t, init, module, name, depth);
		free(init);
		/* not re-exported: the def in one of the package's files */
		const struct entry *dir = found ? NULL : listing_of(t, p);
		for (size_t i = 0; dir && !found && i < dir->npy; i++) {
			char *rel = xasprintf("%s/%s", p, dir->py[i]);
			const struct py_file *py = fla_py(t, rel);
			if (py && py_def_find(py, name, 0) >= 0)
				found = rel;
			else
				free(rel);
		}
	}
	free(file);
	free(p);
	return found;
}

char *fla_resolve(struct fla_tree *t, const char *module, const char *name)
{
	return resolve(t, module, name, 0);
}


/* ---- where a name, as a file uses it, is defined ---- */

char *fla_module_file(struct fla_tree *t, const char *module)
{
	char *p = path_of(module);
	char *rel = xasprintf("%s.py", p);
	if (kind_of(t, rel) != K_FILE) {
		free(rel);
		rel = xasprintf("%s/__init__.py", p);
		if (kind_of(t, rel) == K_MISSING) {
			free(rel);
			rel = NULL;
		}
	}
	free(p);
	return rel;
}

char *fla_package_of(const char *path)
{
	char *m = xstrdup(path);
	if (ends(m, ".py"))
		m[strlen(m) - 3] = '\0';
	for (char *c = m; *c; c++)
		if (*c == '/')
			*c = '.';
	/* a module's package is the module minus its last part; an
	 * __init__.py's is the package itself */
	char *dot = strrchr(m, '.');
	if (dot)
		*dot = '\0';
	else
		*m = '\0';
	return m;
}

char *fla_real_rel(struct fla_tree *t, const char *rel)
{
	if (!t->real && !(t->real = realpath(t->repo, NULL)))
		return xstrdup(rel);
	char *full = xasprintf("%s/%s", t->repo, rel);
	char *r = realpath(full, NULL);
	size_t n = strlen(t->real);
	char *out = r && !strncmp(r, t->real, n) && r[n] == '/' ? xstrdup(r + n + 1) : xstrdup(rel);
	free(r);
	free(full);
	return out;
}

/* A script's "from registry import x": the registry.py beside it
 * (sys.path holds the script's directory). */
static char *beside(struct fla_tree *t, const char *rel, const char *module)
{
	char *dir = xstrdup(rel), *slash = strrchr(dir, '/'), *out = NULL;
	if (slash && module[0] != '.') {
		*slash = '\0';
		char *p = path_of(module);
		char *f = xasprintf("%s/%s.py", dir, p);
		if (kind_of(t, f) == K_FILE)
			out = f;
		else
			free(f);
		free(p);
	}
	free(dir);
	return out;
}

/* What import im of file rel brings in under the name used, with attr
 * after it: see fla_resolve_use. */
static bool use_import(struct fla_tree *t, const char *rel, const char *package,
		       const struct py_import *im, const char *name, const char *attr, char **file,
		       char **def)
{
	char *abs = fla_absolute(package, im->module);
	char *mf = NULL;
	bool ok = false;
	if (!im->name) {
		/* import a.b as name: the module */
		if ((mf = fla_module_file(t, abs)) || (mf = beside(t, rel, im->module))) {
			*file = mf, *def = xstrdup(attr ? attr : "");
			ok = true;
		}
	} else {
		const char *wanted = strcmp(im->name, STAR) ? im->name : name;
		char *sub = xasprintf("%s.%s", abs, wanted);
		if (strcmp(im->name, STAR) && (mf = fla_module_file(t, sub))) {
			/* from package import module */
			*file = mf, *def = xstrdup(attr ? attr : "");
			ok = true;
		} else {
			char *found = resolve(t, abs, wanted, 0);
			if (!found && (mf = beside(t, rel, im->module))) {
				found = resolve_in(t, mf, "", wanted, 0);
				free(mf);
			}
			if (found)
				*file = found, *def = xstrdup(wanted), ok = true;
		}
		free(sub);
	}
	free(abs);
	return ok;
}

bool fla_resolve_use(struct fla_tree *t, const char *rel, const char *name, const char *attr,
		     char **file, char **def)
{
	const struct py_file *py = fla_py(t, rel);
	if (!py)
		return false;
	if (py_def_find(py, name, 0) >= 0) {
		*file = xstrdup(rel), *def = xstrdup(name);
		return true;
	}
	char *package = fla_package_of(rel);
	bool ok = false;
	for (int star = 0; star < 2 && !ok; star++)
		for (size_t i = 0; !ok && i < py->nimp; i++) {
			const struct py_import *im = &py->imp[i];
			bool is_star = im->name && !strcmp(im->name, STAR);
			const char *as = im->alias ? im->alias : im->name ? im->name : im->module;
			if (star ? !is_star : (is_star || strcmp(as, name) != 0))
				continue;
			ok = use_import(t, rel, package, im, name, attr, file, def);
		}
	free(package);
	return ok;
}

/* ---- what the gate test compares the op with ---------------------------- */

struct names {
	char **v;
	size_t n;
};

static bool names_has(const struct names *s, const char *p, size_t n)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strncmp(s->v[i], p, n) && !s->v[i][n])
			return true;
	return false;
}

static void names_add(void *ctx, const char *p, size_t n, const char *attr, size_t an)
{
	struct names *s = ctx;
	(void)attr, (void)an;
	if (!names_has(s, p, n)) {
		s->v = xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
		s->v[s->n++] = xstrndup(p, n);
	}
}

static void names_release(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static bool tok_in(const struct py_file *py, unsigned a, unsigned b, const struct names *s)
{
	for (unsigned i = a; i < b; i++)
		if (py->tok[i].kind == PT_NAME && names_has(s, py->tok[i].s, py->tok[i].len))
			return true;
	return false;
}

/* What feeds the names of set within lines [a, b): an assignment to one of
 * them adds its right-hand side, "for x in y" adds y for x, and a def
 * named (nested, or one of the test file's own) adds its body; until
 * nothing more is added. */
static void slice(const struct py_file *py, unsigned a, unsigned b, struct names *set)
{
	for (size_t before = (size_t)-1; before != set->n;) {
		before = set->n;
		for (unsigned l = a; l < b; l++) {
			const struct py_line *ln = &py->line[l];
			unsigned first = ln->first, end = ln->first + ln->ntok, eq;
			const struct py_tok *t0 = &py->tok[first];
			if (py_tok_is(t0, "async") && ln->ntok > 1)
				t0 = &py->tok[++first];
			if ((py_tok_is(t0, "def") || py_tok_is(t0, "class")) && first + 1 < end) {
				/* a nested def: a scope of its own, all of it
				 * when it is named */
				const struct py_tok *nm = &py->tok[first + 1];
				unsigned e = py_block_end(py, l);
				if (names_has(set, nm->s, nm->len))
					py_refs(py, l, e, names_add, set);
				l = e - 1;
				continue;
			}
			if (py_tok_is(t0, "for")) {
				for (unsigned i = first + 1; i < end; i++)
					if (py_tok_is(&py->tok[i], "in")) {
						if (tok_in(py, first + 1, i, set))
							py_refs_tokens(py, i + 1, end, names_add, set);
						break;
					}
				continue;
			}
			if ((eq = py_assign_at(py, l, true)) && tok_in(py, first, eq, set))
				py_refs_tokens(py, eq + 1, end, names_add, set);
		}
		for (size_t k = 0; k < py->ndef; k++)
			if (py->def[k].kind != PD_ASSIGN && names_has(set, py->def[k].name,
								       strlen(py->def[k].name)))
				py_refs(py, py->def[k].line0, py->def[k].line1, names_add, set);
	}
}

static const char *const comparisons[] = {"assert_close", "assert_allclose", "allclose",
					  "assertAllClose", "assert_equal", "isclose"};

static bool comparison(const struct py_tok *t)
{
	for (size_t i = 0; i < sizeof(comparisons) / sizeof(*comparisons); i++)
		if (py_tok_is(t, comparisons[i]))
			return true;
	return false;
}

/* The names the gate test compares the op's results with: for every
 * comparison (assert_close and its kin) one of whose arguments comes from
 * the op, what the other arguments come from and the op's side does not
 * use (the inputs both take are no reference).  false when no comparison
 * involves the op: then only the names tell. */
static bool compared_with(const struct py_file *py, const struct names *op, struct names *refs,
			  struct names *inputs)
{
	bool found = false;
	for (size_t k = 0; k < py->ndef; k++) {
		const struct py_def *d = &py->def[k];
		if (d->kind != PD_DEF)
			continue;
		unsigned body = d->line0;
		while (body < d->line1 && py->tok[py->line[body].first].kind == PT_OP)
			body++; /* the decorators */
		body++;
		unsigned t0 = py->line[d->line0].first;
		unsigned t1 = d->line1 < py->nline ? py->line[d->line1].first : (unsigned)py->ntok;
		for (unsigned i = t0; i + 1 < t1; i++) {
			if (py->tok[i].kind != PT_NAME || !comparison(&py->tok[i]) ||
			    !py_tok_is(&py->tok[i + 1], "("))
				continue;
			struct names side[8] = {0}, theirs = {0}, ours = {0};
			unsigned a, b, nargs = 0;
			bool any_op = false;
			while (nargs < 8 && py_call_arg(py, i + 1, nargs, &a, &b)) {
				py_refs_tokens(py, a, b, names_add, &side[nargs]);
				slice(py, body, d->line1, &side[nargs]);
				nargs++;
			}
			/* what some side uses and not every side the op's results
			 * come from: the inputs all take are no reference, and a
			 * comparison of the op with itself over a naive part
			 * (a gate computed naively) names that part */
			bool first_op = true;
			for (unsigned s = 0; s < nargs; s++) {
				bool has_op = false;
				for (size_t o = 0; o < op->n; o++)
					has_op |= names_has(&side[s], op->v[o], strlen(op->v[o]));
				for (size_t m = 0; m < side[s].n; m++)
					names_add(&theirs, side[s].v[m], strlen(side[s].v[m]), NULL, 0);
				if (!has_op)
					continue;
				any_op = true;
				if (first_op) {
					for (size_t m = 0; m < side[s].n; m++)
						names_add(&ours, side[s].v[m], strlen(side[s].v[m]), NULL, 0);
					first_op = false;
					continue;
				}
				for (size_t m = 0; m < ours.n;) /* keep what this side uses too */
					if (names_has(&side[s], ours.v[m], strlen(ours.v[m]))) {
						m++;
					} else {
						free(ours.v[m]);
						ours.v[m] = ours.v[--ours.n];
					}
			}
			if (any_op) {
				found = true;
				for (size_t m = 0; m < theirs.n; m++)
					if (!names_has(op, theirs.v[m], strlen(theirs.v[m])))
						names_add(names_has(&ours, theirs.v[m], strlen(theirs.v[m]))
								  ? inputs
								  : refs,
							  theirs.v[m], strlen(theirs.v[m]), NULL, 0);
			}
			for (unsigned s = 0; s < nargs; s++)
				names_release(&side[s]);
			names_release(&theirs);
			names_release(&ours);
		}
	}
	return found;
}

/* Whether name is a def or class of file, and the file kernel code: one
 * of an op's kernels, not a constant or a helper. */
static bool kernel_function(struct fla_tree *t, const char *file, const char *name)
{
	const struct py_file *py = fla_py(t, file);
	int k = py ? py_def_find(py, name, 0) : -1;
	return k >= 0 && py->def[k].kind != PD_ASSIGN && py_is_kernel_code(py);
}

/* Whether an import names a function or class of the repository (not a
 * constant such as device). */
static bool defines_function(struct fla_tree *t, const struct py_import *im)
{
	char *file = resolve(t, im->module, im->name, 0);
	const struct py_file *py = file ? fla_py(t, file) : NULL;
	int k = py ? py_def_find(py, im->name, 0) : -1;
	free(file);
	return k >= 0 && py->def[k].kind != PD_ASSIGN;
}

/* Whether two paths lie in one directory (the op's own package). */
static bool same_dir(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	size_t na = sa ? (size_t)(sa - a) : 0, nb = sb ? (size_t)(sb - b) : 0;
	return na == nb && !strncmp(a, b, na);
}

static void ref_add(struct fla_ref **v, size_t *n, struct fla_tree *t, const struct py_import *im,
		    bool input)
{
	for (size_t k = 0; k < *n; k++)
		if (!strcmp((*v)[k].name, im->name) && !strcmp((*v)[k].module, im->module))
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct fla_ref){
		.name = xstrdup(im->name),
		.module = xstrdup(im->module),
		.file = resolve(t, im->module, im->name, 0),
		.input = input,
	};
}

int fla_scope_read(struct fla_tree *t, const char *test_file, const char *import_path,
		   const char *op_func, struct fla_scope *out, struct err *e)
{
	memset(out, 0, sizeof(*out));
	const struct py_file *py = fla_py(t, test_file);
	if (!py) {
		char *full = fsutil_join(t->repo, test_file);
		bool there = fsutil_exists(full);
		free(full);
		return err_set(e, there ? ERR_IO : ERR_NOTFOUND, "the gate test %s cannot be read (%s)",
			       test_file, there ? "unreadable" : "no such file");
	}
	/* the names the test calls the op by */
	struct names op = {0}, refs = {0}, inputs = {0};
	if (op_func)
		names_add(&op, op_func, strlen(op_func), NULL, 0);
	for (size_t i = 0; op_func && i < py->nimp; i++)
		if (py->imp[i].name && py->imp[i].alias && !strcmp(py->imp[i].name, op_func))
			names_add(&op, py->imp[i].alias, strlen(py->imp[i].alias), NULL, 0);
	/* and the test calls the op's own kernels, in its package, by their
	 * names: a comparison of one (parallel_nsa_fwd) checks the op's code
	 * as well; a shared kernel (mean_pooling) may make the inputs */
	char *op_file = op_func && import_path ? resolve(t, import_path, op_func, 0) : NULL;
	if (op_file) {
		struct fla_files run = {0};
		fla_walk_func(t, op_file, op_func, "the op", &run);
		for (size_t i = 0; i < py->nimp; i++) {
			const struct py_import *im = &py->imp[i];
			char *file = NULL, *def = NULL;
			if (!im->name || !strcmp(im->name, STAR) ||
			    (!starts(im->module, "fla.") && strcmp(im->module, "fla")))
				continue;
			const char *used = im->alias ? im->alias : im->name;
			if (fla_resolve_use(t, test_file, used, NULL, &file, &def) &&
			    fla_files_node(&run, file, def) >= 0 && kernel_function(t, file, def) &&
			    same_dir(file, op_file))
				names_add(&op, used, strlen(used), NULL, 0);
			free(file);
			free(def);
		}
		fla_files_release(&run);
		free(op_file);
	}
	out->compared = op.n && compared_with(py, &op, &refs, &inputs);

	for (size_t i = 0; i < py->nimp; i++) {
		const struct py_import *it = &py->imp[i];
		if (!it->name || !strcmp(it->name, STAR) ||
		    (!starts(it->module, "fla.") && strcmp(it->module, "fla")))
			continue;
		const char *used = it->alias ? it->alias : it->name;
		if (op_func && !strcmp(it->name, op_func)) {
			out->op_imported = true;
			if (!out->op_file)
				out->op_file = resolve(t, it->module, it->name, 0);
			continue;
		}
		bool ref = out->compared ? names_has(&refs, used, strlen(used))
					 : fla_is_reference(it->name, op_func) ||
						   fla_is_reference(used, op_func);
		bool input = out->compared && !ref && names_has(&inputs, used, strlen(used)) &&
			     defines_function(t, it);
		if (ref || input)
			ref_add(&out->refs, &out->nrefs, t, it, input);
		else
			ref_add(&out->others, &out->nothers, t, it, false);
	}
	if (!out->op_file && op_func && import_path)
		out->op_file = resolve(t, import_path, op_func, 0);
	names_release(&op);
	names_release(&refs);
	names_release(&inputs);
	return 0;
}
