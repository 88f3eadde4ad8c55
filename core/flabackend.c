/* flabackend — the backends an FLA op's kernels may dispatch to (see
 * flabackend.h). */
#include "core/flabackend.h"

#include "core/fsutil.h"
#include "core/sb.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .py files under the relative folder rel (itself when a file), sorted
 * within each folder, appended to *v. */
static void py_files(const char *repo, const char *rel, char ***v, size_t *n)
{
	char *full = fsutil_join(repo, rel);
	DIR *d = fsutil_is_dir(full) ? opendir(full) : NULL;
	free(full);
	if (!d) {
		size_t l = strlen(rel);
		if (l > 3 && !strcmp(rel + l - 3, ".py")) {
			*v = xrealloc(*v, (*n + 1) * sizeof(**v));
			(*v)[(*n)++] = xstrdup(rel);
		}
		return;
	}
	char **names = NULL;
	size_t nn = 0;
	for (struct dirent *de; (de = readdir(d));)
		if (de->d_name[0] != '.' && strcmp(de->d_name, "__pycache__") != 0) {
			names = xrealloc(names, (nn + 1) * sizeof(*names));
			names[nn++] = xasprintf("%s/%s", rel, de->d_name);
		}
	closedir(d);
	if (nn)
		qsort(names, nn, sizeof(*names), name_cmp);
	for (size_t i = 0; i < nn; i++) {
		py_files(repo, names[i], v, n);
		free(names[i]);
	}
	free(names);
}

static char *read_rel(const char *repo, const char *rel)
{
	char *full = fsutil_join(repo, rel);
	struct sb t = SB_INIT;
	if (fsutil_read_file(full, &t, NULL) < 0) {
		free(full);
		sb_release(&t);
		return NULL;
	}
	free(full);
	return t.buf ? sb_detach(&t) : xstrdup("");
}

/* A quoted string at p ('x' or "x"): its contents, else NULL. */
static char *quoted(const char *p)
{
	if (*p != '\'' && *p != '"')
		return NULL;
	const char *e = strchr(p + 1, *p);
	return e && !memchr(p + 1, '\n', (size_t)(e - p - 1)) ? xstrndup(p + 1, (size_t)(e - p - 1))
							     : NULL;
}

/* The value of a class attribute "key = 'x'" (or None: NULL) in text. */
static char *attr(const char *text, const char *key, bool *none)
{
	size_t kl = strlen(key);
	if (none)
		*none = false;
	for (const char *p = text; (p = strstr(p, key)); p += kl) {
		if ((p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
		    isalnum((unsigned char)p[kl]) || p[kl] == '_')
			continue;
		const char *q = p + kl;
		while (*q && *q != '\n' && *q != '=')
			q++;
		if (*q != '=' || q[1] == '=')
			continue;
		for (q++; *q == ' ' || *q == '\t';)
			q++;
		if (none && !strncmp(q, "None", 4))
			*none = true;
		if (!strncmp(q, "False", 5) || !strncmp(q, "True", 4))
			return xstrndup(q, *q == 'F' ? 5 : 4);
		return quoted(q);
	}
	return NULL;
}

/* The dispatch names @dispatch('NAME') in text, appended to *v unless
 * there; *by gets file for each new one. */
static void dispatch_names(const char *text, const char *file, char ***v, char ***by, size_t *n)
{
	static const char at[] = "@dispatch(";
	for (const char *p = text; (p = strstr(p, at)); p += sizeof(at) - 1) {
		const char *q = p + sizeof(at) - 1;
		while (*q == ' ')
			q++;
		char *name = quoted(q);
		if (!name)
			continue;
		bool have = false;
		for (size_t i = 0; i < *n; i++)
			have |= !strcmp((*v)[i], name);
		if (have) {
			free(name);
			continue;
		}
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		*by = xrealloc(*by, (*n + 1) * sizeof(**by));
		(*v)[*n] = name;
		(*by)[(*n)++] = xstrdup(file);
	}
}

/* The folder of NAME's backends package: _OPERATION_BACKEND_MODULES's entry
 * in fla/ops/backends/__init__.py, else fla/ops/NAME/backends. */
static char *backends_dir(const char *repo, const char *name)
{
	char *mod = NULL;
	char *text = read_rel(repo, "fla/ops/backends/__init__.py");
	const char *m = text ? strstr(text, "_OPERATION_BACKEND_MODULES") : NULL;
	const char *open = m ? strchr(m, '{') : NULL, *close = open ? strchr(open, '}') : NULL;
	for (const char *p = open; p && p < close && !mod; p++) {
		char *key = quoted(p);
		if (!key)
			continue;
		const char *q = strchr(p + 1, *p) + 1;
		while (*q == ' ')
			q++;
		if (*q == ':' && !strcmp(key, name)) {
			for (q++; *q == ' ';)
				q++;
			mod = quoted(q);
		}
		p = strchr(p + 1, *p);
		free(key);
	}
	free(text);
	if (!mod)
		mod = xasprintf("fla.ops.%s.backends", name);
	for (char *c = mod; *c; c++)
		if (*c == '.')
			*c = '/';
	return mod;
}

/* One backend: a folder with an __init__.py, or a .py file. */
static void backend_read(const char *repo, const char *path, bool folder, struct fla_backend *b)
{
	char *def = folder ? xasprintf("%s/__init__.py", path) : xstrdup(path);
	char *text = read_rel(repo, def);
	free(def);
	const char *t = text ? text : "";
	bool none = false;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	b->path = xstrdup(path);
	b->name = attr(t, "backend_type", NULL);
	if (!b->name)
		b->name = folder ? xstrdup(base) : xstrndup(base, strlen(base) - 3);
	b->package = attr(t, "package_name", NULL);
	b->env_var = attr(t, "env_var", &none);
	char *on = attr(t, "default_enable", NULL);
	b->default_on = !on || strcmp(on, "False") != 0;
	free(on);
	b->hopper = strstr(t, "IS_NVIDIA_HOPPER") != NULL;
	b->ascend = strstr(b->name, "ascend") != NULL;
	free(text);
}

/* The module path of a backends registry's "from M import N" line at p
 * (relative M taken from the registry's package dir), as a
 * repository-relative path without ".py"; NULL when none. */
static char *import_module(const char *p, const char *dir)
{
	const char *m = p + 5;
	while (*m == ' ')
		m++;
	size_t ml = 0;
	while (isalnum((unsigned char)m[ml]) || m[ml] == '_' || m[ml] == '.')
		ml++;
	if (!ml || strncmp(m + ml, " import ", 8) != 0)
		return NULL;
	char *mod;
	if (*m == '.') {
		size_t dots = 0;
		while (m[dots] == '.')
			dots++;
		char *base = xstrdup(dir);
		for (size_t k = 1; k < dots; k++) {
			char *sl = strrchr(base, '/');
			if (sl)
				*sl = '\0';
		}
		mod = ml > dots ? xasprintf("%s/%.*s", base, (int)(ml - dots), m + dots)
				: xstrdup(base);
		free(base);
	} else {
		mod = xstrndup(m, ml);
	}
	for (char *c = mod; *c; c++)
		if (*c == '.')
			*c = '/';
	return mod;
}

/* The backends NAME's registry may hold: each folder (with __init__.py) or
 * .py file of its backends package, and each module its __init__.py
 * imports from (attn registers the common tilelang backend); appended to
 * *v unless there.  *reg: the registry's path, or NULL. */
static void backend_paths(const char *repo, const char *dir, char ***v, size_t *n, char **reg)
{
	char *full = fsutil_join(repo, dir);
	DIR *d = opendir(full);
	char **ents = NULL;
	size_t ne = 0;
	for (struct dirent *de; d && (de = readdir(d));)
		if (de->d_name[0] != '.' && strcmp(de->d_name, "__pycache__") != 0 &&
		    strcmp(de->d_name, "__init__.py") != 0) {
			ents = xrealloc(ents, (ne + 1) * sizeof(*ents));
			ents[ne++] = xasprintf("%s/%s", dir, de->d_name);
		}
	if (d)
		closedir(d);
	free(full);
	if (ne)
		qsort(ents, ne, sizeof(*ents), name_cmp);
	*reg = xasprintf("%s/__init__.py", dir);
	char *text = read_rel(repo, *reg);
	if (!text) {
		free(*reg);
		*reg = NULL;
	}
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "from ", 5) != 0)
			continue;
		char *mod = import_module(p, dir);
		if (!mod)
			continue;
		if (!strcmp(mod, "fla/ops/backends") || !fsutil_path_under(mod, "fla")) {
			free(mod);
			continue;
		}
		char *py = xasprintf("%s.py", mod);
		char *fpy = fsutil_join(repo, py), *fmod = fsutil_join(repo, mod);
		bool file = fsutil_exists(fpy), folder = fsutil_is_dir(fmod);
		free(fpy);
		free(fmod);
		ents = xrealloc(ents, (ne + 1) * sizeof(*ents));
		ents[ne++] = file ? xstrdup(py) : folder ? xstrdup(mod) : NULL;
		if (!ents[ne - 1])
			ne--;
		free(py);
		free(mod);
	}
	free(text);
	for (size_t k = 0; k < ne; k++) {
		bool have = false;
		for (size_t j = 0; j < *n; j++)
			have |= !strcmp((*v)[j], ents[k]);
		if (!have) {
			*v = xrealloc(*v, (*n + 1) * sizeof(**v));
			(*v)[(*n)++] = ents[k];
		} else {
			free(ents[k]);
		}
	}
	free(ents);
}

size_t flabackend_find(const char *repo, const char *const *files, size_t nfiles,
		       struct fla_backend **out)
{
	char **py = NULL, **names = NULL, **by = NULL;
	size_t npy = 0, nnames = 0, n = 0;
	*out = NULL;
	for (size_t i = 0; i < nfiles; i++)
		py_files(repo, files[i], &py, &npy);
	for (size_t i = 0; i < npy; i++) {
		char *text = read_rel(repo, py[i]);
		if (text)
			dispatch_names(text, py[i], &names, &by, &nnames);
		free(text);
		free(py[i]);
	}
	free(py);
	char **seen = NULL;
	size_t nseen = 0;
	for (size_t i = 0; i < nnames; i++) {
		char *dir = backends_dir(repo, names[i]);
		char *reg = NULL;
		size_t from = nseen;
		backend_paths(repo, dir, &seen, &nseen, &reg);
		for (size_t k = from; k < nseen; k++) {
			char *f = fsutil_join(repo, seen[k]);
			char *init = xasprintf("%s/__init__.py", f);
			bool folder = fsutil_is_dir(f) && fsutil_exists(init);
			size_t l = strlen(seen[k]);
			bool file = !fsutil_is_dir(f) && l > 3 && !strcmp(seen[k] + l - 3, ".py");
			free(f);
			free(init);
			if (!folder && !file)
				continue;
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			struct fla_backend *b = &(*out)[n++];
			memset(b, 0, sizeof(*b));
			backend_read(repo, seen[k], folder, b);
			b->dispatch = xstrdup(names[i]);
			b->by = xstrdup(by[i]);
			b->registry = reg ? xstrdup(reg) : NULL;
		}
		free(reg);
		free(dir);
	}
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	for (size_t i = 0; i < nnames; i++) {
		free(names[i]);
		free(by[i]);
	}
	free(names);
	free(by);
	return n;
}

void flabackend_free(struct fla_backend *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].dispatch);
		free(v[i].by);
		free(v[i].path);
		free(v[i].registry);
		free(v[i].name);
		free(v[i].package);
		free(v[i].env_var);
	}
	free(v);
}

void flabackend_record(const struct fla_backend *v, size_t n, struct sb *out)
{
	for (size_t i = 0; i < n; i++)
		sb_addf(out, "%s\t%s\t%s\t%s\t%s%s%s\n", v[i].path, v[i].name,
			v[i].package ? v[i].package : "", v[i].env_var ? v[i].env_var : "",
			v[i].default_on ? "on" : "off", v[i].hopper ? ",hopper" : "",
			v[i].ascend ? ",ascend" : "");
}

size_t flabackend_read(const char *text, struct fla_backend **out)
{
	size_t n = 0;
	*out = NULL;
	for (const char *p = text ? text : ""; *p;) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		p += len + (p[len] == '\n');
		char *f[5] = {0};
		char *s = line;
		for (int k = 0; k < 5 && s; k++) {
			f[k] = s;
			s = strchr(s, '\t');
			if (s)
				*s++ = '\0';
		}
		if (f[4]) {
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			struct fla_backend *b = &(*out)[n++];
			memset(b, 0, sizeof(*b));
			b->path = xstrdup(f[0]);
			b->name = xstrdup(f[1]);
			b->package = *f[2] ? xstrdup(f[2]) : NULL;
			b->env_var = *f[3] ? xstrdup(f[3]) : NULL;
			b->default_on = !strncmp(f[4], "on", 2);
			b->hopper = strstr(f[4], "hopper") != NULL;
			b->ascend = strstr(f[4], "ascend") != NULL;
		}
		free(line);
	}
	return n;
}

static bool hopper_device(const char *device)
{
	static const char *const names[] = {"H100", "H200", "H800", "H20", "GH200"};
	for (size_t i = 0; device && i < sizeof(names) / sizeof(names[0]); i++)
		if (strstr(device, names[i]))
			return true;
	return false;
}

void flabackend_env_note(const struct fla_backend *v, size_t n, const char *device,
			 struct sb *out)
{
	bool nvidia = device && (strstr(device, "NVIDIA") || hopper_device(device));
	bool hopper = hopper_device(device);
	size_t said = 0;
	struct sb why = SB_INIT;
	for (size_t i = 0; i < n; i++) {
		const struct fla_backend *b = &v[i];
		if (b->ascend && nvidia)
			continue; /* an Ascend NPU's, never an NVIDIA GPU's */
		sb_reset(&why);
		if (b->hopper && hopper)
			sb_adds(&why, "this GPU is Hopper, which its dispatch asks for");
		else if (b->hopper && device)
			sb_adds(&why, "its dispatch asks for Hopper, which this GPU is not");
		else if (b->hopper)
			sb_adds(&why, "on Hopper");
		bool off = b->hopper ? hopper || !device : b->default_on;
		if (b->env_var && off)
			sb_addf(&why, "%s%s=0 turns it off", why.len ? "; " : "", b->env_var);
		else if (b->env_var && !b->hopper)
			sb_addf(&why, "%sonly with %s=1", why.len ? "; " : "", b->env_var);
		sb_addf(out, "%s%s", said++ ? "; " : "may dispatch to ", b->path);
		if (b->package)
			sb_addf(out, " if %s is installed", b->package);
		if (why.len)
			sb_addf(out, " (%s)", why.buf);
	}
	sb_release(&why);
}
