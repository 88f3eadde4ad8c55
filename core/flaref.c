/*
 * flaref — what a flash-linear-attention gate test compares against.  See
 * flaref.h.
 */
#include "core/flaref.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

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
		char *n = word(&p);
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

static char *resolve(const char *repo, const char *module, const char *name, int depth);

/* name in a file's text: defined there, or imported from elsewhere. */
static char *resolve_in(const char *repo, const char *rel, const char *package, const char *name,
			int depth)
{
	struct sb text = SB_INIT;
	char *full = fsutil_join(repo, rel);
	char *found = NULL;
	if (fsutil_read_file(full, &text, NULL) == 0) {
		if (defines(text.buf ? text.buf : "", name)) {
			found = xstrdup(rel);
		} else if (depth < RESOLVE_DEPTH) {
			struct imports im = {0};
			read_imports(text.buf ? text.buf : "", &im);
			for (size_t i = 0; !found && i < im.n; i++) {
				const char *as = im.v[i].alias ? im.v[i].alias : im.v[i].name;
				if (!im.v[i].name || strcmp(as, name))
					continue;
				char *m = absolute(package, im.v[i].module);
				found = resolve(repo, m, im.v[i].name, depth + 1);
				free(m);
			}
			imports_release(&im);
		}
	}
	sb_release(&text);
	free(full);
	return found;
}

static char *resolve(const char *repo, const char *module, const char *name, int depth)
{
	char *p = path_of(module);
	char *file = xasprintf("%s.py", p);
	char *full = fsutil_join(repo, file);
	char *found = NULL;
	if (fsutil_exists(full) && !fsutil_is_dir(full)) {
		/* a module: its package is the module minus its last part */
		char *package = xstrdup(module);
		char *dot = strrchr(package, '.');
		if (dot)
			*dot = '\0';
		found = resolve_in(repo, file, package, name, depth);
		free(package);
	} else {
		char *dir = fsutil_join(repo, p);
		if (fsutil_is_dir(dir)) {
			char *init = xasprintf("%s/__init__.py", p);
			found = resolve_in(repo, init, module, name, depth);
			free(init);
			/* not re-exported: the def in one of the package's files */
			DIR *d = found ? NULL : opendir(dir);
			struct dirent *de;
			char **names = NULL;
			size_t nn = 0;
			while (d && (de = readdir(d))) {
				if (ends(de->d_name, ".py") && strcmp(de->d_name, "__init__.py")) {
					names = xrealloc(names, (nn + 1) * sizeof(*names));
					names[nn++] = xstrdup(de->d_name);
				}
			}
			if (d)
				closedir(d);
			/* in a fixed order, so the answer does not depend on the directory */
			if (nn > 1)
				qsort(names, nn, sizeof(*names), strp_cmp);
			for (size_t i = 0; i < nn; i++) {
				if (!found) {
					char *rel = xasprintf("%s/%s", p, names[i]);
					struct sb text = SB_INIT;
					char *f = fsutil_join(repo, rel);
					if (fsutil_read_file(f, &text, NULL) == 0 &&
					    defines(text.buf ? text.buf : "", name))
						found = xstrdup(rel);
					sb_release(&text);
					free(f);
					free(rel);
				}
				free(names[i]);
			}
			free(names);
		}
		free(dir);
	}
	free(full);
	free(file);
	free(p);
	return found;
}

char *fla_resolve(const char *repo, const char *module, const char *name)
{
	return resolve(repo, module, name, 0);
}

int fla_scope_read(const char *repo, const char *test_file, const char *import_path,
		   const char *op_func, struct fla_scope *out, struct err *e)
{
	struct sb text = SB_INIT;
	char *full = fsutil_join(repo, test_file);
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
		if (!it->name || (!starts(it->module, "fla.") && strcmp(it->module, "fla")))
			continue;
		const char *used = it->alias ? it->alias : it->name;
		if (op_func && !strcmp(it->name, op_func)) {
			out->op_imported = true;
			if (!out->op_file)
				out->op_file = resolve(repo, it->module, it->name, 0);
			continue;
		}
		if (!fla_is_reference(it->name, op_func) && !fla_is_reference(used, op_func)) {
			out->others = xrealloc(out->others, (out->nothers + 1) * sizeof(*out->others));
			out->others[out->nothers++] = (struct fla_ref){
				.name = xstrdup(it->name),
				.module = xstrdup(it->module),
				.file = resolve(repo, it->module, it->name, 0),
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
			.file = resolve(repo, it->module, it->name, 0),
		};
	}
	if (!out->op_file && op_func && import_path)
		out->op_file = resolve(repo, import_path, op_func, 0);
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

static void files_add(struct fla_files *f, const char *path, int from, const char *via)
{
	if (fla_files_find(f, path) >= 0)
		return;
	f->v = xrealloc(f->v, (f->n + 1) * sizeof(*f->v));
	f->v[f->n++] = (struct fla_file){xstrdup(path), from, via ? xstrdup(via) : NULL};
}

/* The repository file of a dotted module: a/b.py, else the package's
 * a/b/__init__.py; NULL when the repository has neither (torch, triton). */
static char *module_file(const char *repo, const char *module)
{
	char *p = path_of(module);
	char *rel = xasprintf("%s.py", p), *full = fsutil_join(repo, rel);
	if (!fsutil_exists(full) || fsutil_is_dir(full)) {
		free(rel);
		free(full);
		rel = xasprintf("%s/__init__.py", p);
		full = fsutil_join(repo, rel);
		if (!fsutil_exists(full)) {
			free(rel);
			rel = NULL;
		}
	}
	free(full);
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
static char *import_target(const char *repo, const char *file, const char *package,
			   const struct import_item *it)
{
	char *abs = absolute(package, it->module);
	char *target = NULL;
	if (it->name) {
		char *sub = xasprintf("%s.%s", abs, it->name);
		target = module_file(repo, sub);
		free(sub);
		if (!target)
			target = resolve(repo, abs, it->name, 0);
	}
	if (!target)
		target = module_file(repo, abs);
	if (!target && it->module[0] != '.') {
		/* a script beside its modules (sys.path holds its directory) */
		char *dir = xstrdup(file), *slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			char *p = path_of(it->module);
			char *rel = xasprintf("%s/%s.py", dir, p), *full = fsutil_join(repo, rel);
			if (fsutil_exists(full) && !fsutil_is_dir(full))
				target = xstrdup(rel);
			free(full);
			free(rel);
			free(p);
		}
		free(dir);
	}
	free(abs);
	return target;
}

void fla_walk(const char *repo, const char *seed, const char *why, struct fla_files *out)
{
	char *full = fsutil_join(repo, seed);
	bool there = fsutil_exists(full) && !fsutil_is_dir(full);
	free(full);
	if (!there || fla_files_find(out, seed) >= 0)
		return;
	size_t first = out->n;
	files_add(out, seed, -1, why);
	for (size_t i = first; i < out->n; i++) {
		/* a package's __init__ re-exports its whole package: reached for
		 * one name, it is not followed (the name's own file is) */
		if (i != first && is_init(out->v[i].path))
			continue;
		struct sb text = SB_INIT;
		char *f = fsutil_join(repo, out->v[i].path);
		if (fsutil_read_file(f, &text, NULL) == 0) {
			struct imports im = {0};
			char *package = package_of(out->v[i].path);
			read_imports(text.buf ? text.buf : "", &im);
			for (size_t k = 0; k < im.n; k++) {
				char *t = import_target(repo, out->v[i].path, package, &im.v[k]);
				if (t)
					files_add(out, t, (int)i, im.v[k].name ? im.v[k].name : im.v[k].module);
				free(t);
			}
			free(package);
			imports_release(&im);
		}
		sb_release(&text);
		free(f);
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
