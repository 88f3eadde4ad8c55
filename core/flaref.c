/*
 * flaref — what a flash-linear-attention gate test compares against.  See
 * flaref.h.
 */
#include "core/flaref.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/sb.h"

#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RESOLVE_DEPTH 4

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

/* ---- reading Python imports ---- */

/* One "from MODULE import NAME [as ALIAS]" item. */
struct import_item {
	char *module, *name, *alias;
};

struct imports {
	struct import_item *v;
	size_t n;
};

static void imports_release(struct imports *im)
{
	for (size_t i = 0; i < im->n; i++) {
		free(im->v[i].module);
		free(im->v[i].name);
		free(im->v[i].alias);
	}
	free(im->v);
	memset(im, 0, sizeof(*im));
}

static const char *skip_sp(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\\')
		p++;
	return p;
}

static char *word(const char **pp)
{
	const char *p = *pp, *a = p;
	while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
		p++;
	*pp = p;
	return p > a ? xstrndup(a, (size_t)(p - a)) : NULL;
}

/* The name a star import stands for: all of the module's. */
#define STAR "*"

/* The names list of one from-import: "a, b as c" or "(\n a,\n b,\n)",
 * comments dropped. */
static void read_names(const char **pp, const char *module, struct imports *im)
{
	const char *p = skip_sp(*pp);
	bool paren = *p == '(';
	if (paren)
		p++;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\\' ||
		       (paren && (*p == '\n' || *p == '\r')))
			p++;
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			if (!paren)
				break;
			continue;
		}
		if (!*p || *p == '\n' || *p == ';' || (paren && *p == ')'))
			break;
		/* "from m import *": every public name of m (STAR) */
		char *n = *p == '*' ? (p++, xstrdup(STAR)) : word(&p);
		if (!n) {
			p++;
			continue;
		}
		char *alias = NULL;
		const char *q = skip_sp(p);
		if (starts(q, "as ")) {
			q = skip_sp(q + 3);
			alias = word(&q);
			p = q;
		}
		im->v = xrealloc(im->v, (im->n + 1) * sizeof(*im->v));
		im->v[im->n++] = (struct import_item){xstrdup(module), n, alias};
	}
	*pp = p;
}

/* Every "from X import ..." of the text (top level or indented). */
static void read_imports(const char *text, struct imports *im)
{
	const char *p = text;
	while (p && *p) {
		const char *line = p;
		const char *nl = strchr(p, '\n');
		const char *q = skip_sp(line);
		if (starts(q, "from ")) {
			q = skip_sp(q + 5);
			char *mod = word(&q);
			q = skip_sp(q);
			if (mod && starts(q, "import")) {
				q += 6;
				read_names(&q, mod, im);
				nl = strchr(q, '\n');
			}
			free(mod);
		} else if (starts(q, "import ")) {
			/* "import a.b as c, d": modules, no names */
			q += 7;
			for (;;) {
				q = skip_sp(q);
				char *mod = word(&q);
				if (!mod)
					break;
				char *alias = NULL;
				q = skip_sp(q);
				if (starts(q, "as ")) {
					q = skip_sp(q + 3);
					alias = word(&q);
					q = skip_sp(q);
				}
				im->v = xrealloc(im->v, (im->n + 1) * sizeof(*im->v));
				im->v[im->n++] = (struct import_item){mod, NULL, alias};
				if (*q != ',')
					break;
				q++;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
}

/* ---- the repository's files, each looked at once ------------------------------
 *
 * Following imports asks again and again whether a module file exists, what
 * a file says and which .py files a package holds: the answers are kept
 * for the life of the tree (one command), so each file is read once. */

enum { K_UNKNOWN, K_MISSING, K_FILE, K_DIR };

struct edge {
	char *target, *via;
};

struct entry {
	char *rel;
	struct entry *next;
	int kind;
	bool read, listed, walked;
	char *text;   /* NULL: not readable */
	char **py;    /* a directory's .py files but __init__.py, sorted */
	size_t npy;
	struct edge *edges; /* a walked file's imports, resolved */
	size_t nedges;
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
			for (size_t i = 0; i < x->nedges; i++) {
				free(x->edges[i].target);
				free(x->edges[i].via);
			}
			free(x->edges);
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

static bool defines(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; p && *p;) {
		const char *q = p;
		if (starts(q, "async "))
			q += 6;
		if ((starts(q, "def ") && !strncmp(q + 4, name, n) && q[4 + n] == '(') ||
		    (starts(q, "class ") && !strncmp(q + 6, name, n) &&
		     (q[6 + n] == '(' || q[6 + n] == ':')))
			return true;
		/* a module-level assignment: "NAME = ..." or "NAME: type = ..." */
		if (q == p && !strncmp(p, name, n)) {
			const char *r = p + n;
			while (*r == ' ' || *r == '\t')
				r++;
			if ((*r == '=' && r[1] != '=') || *r == ':')
				return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

/* "fla.ops.gla" + ".naive" -> "fla.ops.gla.naive"; ".." goes up one. */
static char *absolute(const char *package, const char *mod)
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

/* name in a file's text: defined there, or imported from elsewhere. */
static char *resolve_in(struct fla_tree *t, const char *rel, const char *package,
			const char *name, int depth)
{
	const char *text = text_of(t, rel);
	char *found = NULL;
	if (!text)
		return NULL;
	if (defines(text, name)) {
		found = xstrdup(rel);
	} else if (depth < RESOLVE_DEPTH) {
		struct imports im = {0};
		read_imports(text, &im);
		for (size_t i = 0; !found && i < im.n; i++) {
			const char *as = im.v[i].alias ? im.v[i].alias : im.v[i].name;
			if (!im.v[i].name || !strcmp(im.v[i].name, STAR) || strcmp(as, name))
				continue;
			char *m = absolute(package, im.v[i].module);
			found = resolve(t, m, im.v[i].name, depth + 1);
			free(m);
		}
		/* not named anywhere: a star import may bring it */
		for (size_t i = 0; !found && i < im.n; i++) {
			if (!im.v[i].name || strcmp(im.v[i].name, STAR) != 0)
				continue;
			char *m = absolute(package, im.v[i].module);
			found = resolve(t, m, name, depth + 1);
			free(m);
		}
		imports_release(&im);
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
			const char *text = text_of(t, rel);
			if (text && defines(text, name))
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

int fla_scope_read(struct fla_tree *t, const char *test_file, const char *import_path,
		   const char *op_func, struct fla_scope *out, struct err *e)
{
	struct sb text = SB_INIT;
	char *full = fsutil_join(t->repo, test_file);
	memset(out, 0, sizeof(*out));
	struct err re = {0};
	int rc = fsutil_read_file(full, &text, &re);
	free(full);
	if (rc < 0) {
		sb_release(&text);
		return err_set(e, rc == ERR_NOTFOUND ? ERR_NOTFOUND : rc,
			       "the gate test %s cannot be read (%s)", test_file, re.msg);
	}
	struct imports im = {0};
	read_imports(text.buf ? text.buf : "", &im);
	for (size_t i = 0; i < im.n; i++) {
		const struct import_item *it = &im.v[i];
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
		if (!fla_is_reference(it->name, op_func) && !fla_is_reference(used, op_func)) {
			out->others = xrealloc(out->others, (out->nothers + 1) * sizeof(*out->others));
			out->others[out->nothers++] = (struct fla_ref){
				.name = xstrdup(it->name),
				.module = xstrdup(it->module),
				.file = resolve(t, it->module, it->name, 0),
			};
			continue;
		}
		bool dup = false;
		for (size_t k = 0; k < out->nrefs; k++)
			dup |= !strcmp(out->refs[k].name, it->name) &&
			       !strcmp(out->refs[k].module, it->module);
		if (dup)
			continue;
		out->refs = xrealloc(out->refs, (out->nrefs + 1) * sizeof(*out->refs));
		out->refs[out->nrefs++] = (struct fla_ref){
			.name = xstrdup(it->name),
			.module = xstrdup(it->module),
			.file = resolve(t, it->module, it->name, 0),
		};
	}
	if (!out->op_file && op_func && import_path)
		out->op_file = resolve(t, import_path, op_func, 0);
	imports_release(&im);
	sb_release(&text);
	return 0;
}

/* ---- the files code reaches: following imports --------------------------- */

void fla_files_release(struct fla_files *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].path);
		free(f->v[i].via);
		free(f->v[i].walk);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

int fla_files_find(const struct fla_files *f, const char *path)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, path))
			return (int)i;
	return -1;
}

/* rel as git tracks it: every link on the way resolved, relative to the
 * repository (a link to a directory is a path git never lists a file
 * under); rel itself where it leads out of the repository. */
static char *real_rel(struct fla_tree *t, const char *rel)
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

/* A file reached by a walk, once: by the path git tracks, whichever path
 * (through a link or not) the import named it by. */
static void files_add(struct fla_tree *t, struct fla_files *f, const char *path, int from,
		      const char *via)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].path, path) || (f->v[i].walk && !strcmp(f->v[i].walk, path)))
			return;
	char *real = real_rel(t, path);
	if (fla_files_find(f, real) >= 0) {
		free(real);
		return;
	}
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	f->v[f->n++] = (struct fla_file){real, from, via ? xstrdup(via) : NULL,
					 strcmp(real, path) ? xstrdup(path) : NULL};
}

/* The repository file of a dotted module: a/b.py, else the package's
 * a/b/__init__.py; NULL when the repository has neither (torch, triton). */
static char *module_file(struct fla_tree *t, const char *module)
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

static bool is_init(const char *path)
{
	return ends(path, "/__init__.py") || !strcmp(path, "__init__.py");
}

/* The dotted package a file's relative imports start from. */
static char *package_of(const char *path)
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

/* What one import of file brings in: a submodule, the file defining the
 * name, or the module itself; a script's "from registry import x" is its
 * own directory's registry.py.  NULL: not the repository's. */
static char *import_target(struct fla_tree *t, const char *file, const char *package,
			   const struct import_item *it)
{
	char *abs = absolute(package, it->module);
	char *target = NULL;
	if (it->name && strcmp(it->name, STAR) != 0) {
		char *sub = xasprintf("%s.%s", abs, it->name);
		target = module_file(t, sub);
		free(sub);
		if (!target)
			target = resolve(t, abs, it->name, 0);
	}
	if (!target)
		target = module_file(t, abs);
	if (!target && it->module[0] != '.') {
		/* a script beside its modules (sys.path holds its directory) */
		char *dir = xstrdup(file), *slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			char *p = path_of(it->module);
			char *rel = xasprintf("%s/%s.py", dir, p);
			if (kind_of(t, rel) == K_FILE)
				target = rel;
			else
				free(rel);
			free(p);
		}
		free(dir);
	}
	free(abs);
	return target;
}

/* What a file's imports bring in, each resolved once per tree. */
static const struct entry *imports_of(struct fla_tree *t, const char *rel)
{
	struct entry *x = entry_of(t, rel);
	if (x->walked)
		return x;
	x->walked = true;
	const char *text = text_of(t, rel);
	if (!text)
		return x;
	struct imports im = {0};
	char *package = package_of(rel);
	read_imports(text, &im);
	for (size_t k = 0; k < im.n; k++) {
		char *target = import_target(t, rel, package, &im.v[k]);
		if (!target)
			continue;
		/* entry_of may have grown other chains, never moved x */
		x->edges = xrealloc(x->edges, (x->nedges + 1) * sizeof(*x->edges));
		x->edges[x->nedges++] = (struct edge){
			target, xstrdup(im.v[k].name ? im.v[k].name : im.v[k].module)};
	}
	free(package);
	imports_release(&im);
	return x;
}

void fla_walk(struct fla_tree *t, const char *seed, const char *why, struct fla_files *out)
{
	if (kind_of(t, seed) != K_FILE)
		return;
	size_t first = out->n;
	files_add(t, out, seed, -1, why);
	for (size_t i = first; i < out->n; i++) {
		/* a package's __init__ re-exports its whole package: reached for
		 * one name, it is not followed (the name's own file is) */
		if (i != first && is_init(out->v[i].path))
			continue;
		/* imports resolve by the names the importer used (through a link) */
		const struct entry *x =
			imports_of(t, out->v[i].walk ? out->v[i].walk : out->v[i].path);
		for (size_t k = 0; k < x->nedges; k++)
			files_add(t, out, x->edges[k].target, (int)i, x->edges[k].via);
	}
}

void fla_files_why(const struct fla_files *f, size_t i, struct sb *out)
{
	for (int k = (int)i, hops = 0; k >= 0 && hops < 64; hops++) {
		const struct fla_file *x = &f->v[k];
		if (x->from < 0) {
			sb_addf(out, "%s%s%s%s", hops ? " <- " : "", x->path, x->via ? ": " : "",
				x->via ? x->via : "");
			break;
		}
		sb_addf(out, "%s%s (%s)", hops ? " <- " : "", x->path, x->via ? x->via : "");
		k = x->from;
	}
}
