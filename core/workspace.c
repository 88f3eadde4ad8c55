/* workspace — locating and laying out profile/<op>-opt/, and FLA registry
 * defaults for a new one. */
#include "core/workspace.h"
#include "core/vis.h"
#include "core/alloc.h"
#include "core/contract.h"
#include "core/patset.h"
#include "core/store.h"
#include "core/assets.h"
#include "core/closest.h"
#include "core/err.h"
#include "core/flashape.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "core/vcs.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

void workspace_release(struct workspace *ws)
{
	alloc_free(ws->alloc);
	patset_free(ws->patset);
	store_close(ws->store);
	vcs_free(ws->vcs);
	for (size_t i = 0; i < ws->nkernel; i++)
		free(ws->kernel[i]);
	free(ws->kernel);
	for (size_t i = 0; i < ws->nfrozen; i++)
		free(ws->frozen[i]);
	free(ws->frozen);
	free(ws->repo);
	free(ws->op);
	free(ws->dir);
	free(ws->rel);
	free(ws->db_path);
	free(ws->contract_path);
	free(ws->optlog_path);
	free(ws->dispatch_path);
	free(ws->traps_path);
	free(ws->trace_dir);
	memset(ws, 0, sizeof(*ws));
}

/* The op name as the user typed it, shown safely: a name can hold any byte. */
static int op_refused(struct err *e, const char *op, const char *why)
{
	struct sb name = SB_INIT;
	vis_escape(op, &name);
	int rc = err_set(e, ERR_USAGE, "the op name '%s' %s", name.buf, why);
	sb_release(&name);
	return rc;
}

int workspace_op_valid(const char *op, struct err *e)
{
	size_t n = op ? strlen(op) : 0;
	if (n == 0)
		return err_set(e, ERR_USAGE, "the op name is empty (pass --op NAME, e.g. --op chunk_gla)");
	if (n > 64) {
		char head[68];
		size_t k = 0;
		/* cut at a character boundary, never inside one */
		for (size_t l; k < 64 && (l = vis_utf8_len((const unsigned char *)op + k)) &&
			       k + l <= 64;)
			k += l;
		memcpy(head, op, k);
		memcpy(head + k, "...", 4);
		return op_refused(e, head, "is longer than 64 bytes");
	}
	if (op[0] == '.' || op[0] == '-')
		return op_refused(e, op,
				  "may not start with '.' or '-' (it becomes the directory "
				  "profile/<op>-opt)");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)op[i];
		if (c == '/' || c == '\\')
			return op_refused(e, op,
					  "contains a path separator; use the op's registry name "
					  "(e.g. chunk_gla)");
		if (!(isalnum(c) || c == '_' || c == '-' || c == '.')) {
			/* the whole character, spelled out where a terminal would act on it */
			size_t l = vis_utf8_len((const unsigned char *)op + i);
			char ch[5] = {0};
			memcpy(ch, op + i, l ? l : 1);
			struct sb shown = SB_INIT;
			vis_escape(ch, &shown);
			char *why = xasprintf("contains '%s'; use ASCII letters, digits, '_', '-' "
					      "or '.' (it becomes a directory name and a git ref)",
					      shown.buf);
			sb_release(&shown);
			int rc = op_refused(e, op, why);
			free(why);
			return rc;
		}
	}
	if (strstr(op, ".."))
		return op_refused(e, op, "contains '..'");
	return 0;
}

void workspace_paths(const char *repo, const char *op, struct workspace *ws)
{
	memset(ws, 0, sizeof(*ws));
	ws->repo = xstrdup(repo);
	ws->op = xstrdup(op);
	ws->rel = xasprintf("profile/%s-opt", op);
	ws->dir = xasprintf("%s/%s", repo, ws->rel);
	ws->db_path = xasprintf("%s/optloop.db", ws->dir);
	ws->contract_path = xasprintf("%s/docs/draft.md", ws->dir);
	ws->optlog_path = xasprintf("%s/OPT_LOG.md", ws->dir);
	ws->dispatch_path = xasprintf("%s/dispatch.md", ws->dir);
	ws->traps_path = xasprintf("%s/TRAPS.md", ws->dir);
	ws->trace_dir = xasprintf("%s/trace", ws->dir);
}

size_t workspace_kernel_of(const char *repo, const char *op, char ***paths)
{
	char *db = xasprintf("%s/profile/%s-opt/optloop.db", repo, op);
	struct store *s = NULL;
	char *text = NULL;
	size_t n = 0;
	*paths = NULL;
	if (store_open(db, STORE_READONLY, &s, NULL) == 0 &&
	    store_meta_get(s, "kernel", &text, NULL) == 0 && text) {
		for (char *p = text, *nl; *p; p = nl ? nl + 1 : p + strlen(p)) {
			nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			if (!len)
				continue;
			*paths = xrealloc(*paths, (n + 1) * sizeof(char *));
			(*paths)[n++] = xstrndup(p, len);
		}
	}
	free(text);
	if (s)
		store_close(s);
	free(db);
	return n;
}

int workspace_list(const char *repo, char ***ops, size_t *n, struct err *e)
{
	char *prof = xasprintf("%s/profile", repo);
	DIR *d = opendir(prof);
	struct dirent *de;
	size_t cap = 0;

	*ops = NULL;
	*n = 0;
	if (!d) {
		free(prof);
		return 0;
	}
	while ((de = readdir(d))) {
		size_t L = strlen(de->d_name);
		if (L <= 4 || strcmp(de->d_name + L - 4, "-opt") != 0 || de->d_name[0] == '.')
			continue;
		char *db = xasprintf("%s/%s/optloop.db", prof, de->d_name);
		bool ok = fsutil_exists(db);
		free(db);
		if (!ok)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			*ops = xrealloc(*ops, cap * sizeof(char *));
		}
		(*ops)[(*n)++] = xstrndup(de->d_name, L - 4);
	}
	closedir(d);
	free(prof);
	if (*n)
		qsort(*ops, *n, sizeof(char *), strp_cmp);
	return 0;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int workspace_find(const char *repo, const char *op, struct workspace *ws, struct err *e)
{
	char **ops;
	size_t n;
	int rc;

	memset(ws, 0, sizeof(*ws));
	if (op) {
		if ((rc = workspace_op_valid(op, e)) < 0)
			return rc;
		workspace_paths(repo, op, ws);
		if (!fsutil_exists(ws->db_path)) {
			workspace_release(ws);
			struct sb have = SB_INIT;
			const char *near = NULL;
			if (workspace_list(repo, &ops, &n, NULL) == 0) {
				for (size_t i = 0; i < n; i++)
					sb_addf(&have, "%s%s", i ? ", " : "", ops[i]);
				const char **names = xcalloc(n + 1, sizeof(*names));
				for (size_t i = 0; i < n; i++)
					names[i] = ops[i];
				near = closest_word(op, names);
				free(names);
			}
			if (near)
				rc = err_set(e, ERR_NOTFOUND,
					     "no workspace for op '%s' in %s; did you mean --op %s? "
					     "(workspaces: %s)",
					     op, repo, near, have.buf);
			else if (have.len)
				rc = err_set(e, ERR_NOTFOUND,
					     "no workspace for op '%s' in %s (workspaces: %s; or run "
					     "optloop init --op %s)",
					     op, repo, have.buf, op);
			else
				rc = err_set(e, ERR_NOTFOUND,
					     "no workspace for op '%s' in %s (run optloop init --op %s)",
					     op, repo, op);
			sb_release(&have);
			if (n)
				free_list(ops, n);
			return rc;
		}
		return 0;
	}
	if ((rc = workspace_list(repo, &ops, &n, e)) < 0)
		return rc;
	if (n == 0) {
		rc = err_set(e, ERR_NOTFOUND,
			     "no optloop workspace in %s (run optloop init --op OP to start one)",
			     repo);
	} else if (n > 1) {
		struct sb names = SB_INIT;
		for (size_t i = 0; i < n; i++)
			sb_addf(&names, "%s%s", i ? ", " : "", ops[i]);
		rc = err_set(e, ERR_USAGE, "%zu workspaces in %s (%s); pick one with --op OP", n,
			     repo, names.buf);
		sb_release(&names);
	} else {
		workspace_paths(repo, ops[0], ws);
	}
	free_list(ops, n);
	return rc;
}

void workspace_defaults_release(struct workspace_defaults *d)
{
	free(d->import_path);
	free(d->func_name);
	free(d->test_file);
	free(d->naive);
	free(d->kernel);
	free(d->verify_cmd);
	free(d->bench_cmd);
	free(d->default_shapes);
	memset(d, 0, sizeof(*d));
}

/* ---- registry.py reading ---------------------------------------------------- */

/* Skip a Python string literal starting at p (a quote); returns the index
 * after it and sets [*vs, *ve) to its contents (no escapes are decoded:
 * names and paths have none). */
static size_t skip_string(const char *t, size_t len, size_t p, size_t *vs, size_t *ve)
{
	char q = t[p];
	bool triple = p + 2 < len && t[p + 1] == q && t[p + 2] == q;
	size_t i = p + (triple ? 3 : 1);
	*vs = i;
	while (i < len) {
		if (t[i] == '\\') {
			i += 2;
			continue;
		}
		if (t[i] == q && (!triple || (i + 2 < len && t[i + 1] == q && t[i + 2] == q))) {
			*ve = i;
			return i + (triple ? 3 : 1);
		}
		if (t[i] == '\n' && !triple)
			break;
		i++;
	}
	*ve = i;
	return i;
}

struct kwarg {
	const char *key;
	size_t klen;
	const char *val; /* contents of a string value, NULL otherwise */
	size_t vlen;
	const char *raw; /* where the value starts, whatever it is */
};

/* Scan one register_op( ... ) call from its '(' at p; collects keyword
 * arguments with string values at OpConfig's level (depth 2).  Returns the
 * index after the matching ')'. */
static size_t scan_call(const char *t, size_t len, size_t p, struct kwarg *kw, size_t *nkw,
			size_t maxkw)
{
	int depth = 0;
	size_t i = p;
	*nkw = 0;
	while (i < len) {
		char c = t[i];
		if (c == '#') {
			while (i < len && t[i] != '\n')
				i++;
			continue;
		}
		if (c == '\'' || c == '"') {
			size_t vs, ve;
			i = skip_string(t, len, i, &vs, &ve);
			continue;
		}
		if (c == '(' || c == '[' || c == '{') {
			depth++;
			i++;
			continue;
		}
		if (c == ')' || c == ']' || c == '}') {
			depth--;
			i++;
			if (depth == 0)
				return i;
			continue;
		}
		if (depth == 2 && (isalpha((unsigned char)c) || c == '_') &&
		    (i == 0 || !(isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_' ||
				 t[i - 1] == '.'))) {
			size_t ks = i;
			while (i < len && (isalnum((unsigned char)t[i]) || t[i] == '_'))
				i++;
			size_t ke = i, j = i;
			while (j < len && (t[j] == ' ' || t[j] == '\t'))
				j++;
			if (j < len && t[j] == '=' && (j + 1 >= len || t[j + 1] != '=')) {
				j++;
				while (j < len && isspace((unsigned char)t[j]))
					j++;
				if (*nkw < maxkw) {
					kw[*nkw].key = t + ks;
					kw[*nkw].klen = ke - ks;
					kw[*nkw].val = NULL;
					kw[*nkw].raw = t + j;
					if (j < len && (t[j] == '\'' || t[j] == '"')) {
						size_t vs, ve;
						skip_string(t, len, j, &vs, &ve);
						kw[*nkw].val = t + vs;
						kw[*nkw].vlen = ve - vs;
					}
					(*nkw)++;
				}
				i = j;
			}
			continue;
		}
		i++;
	}
	return i;
}

static const char *find_bytes(const char *h, size_t hl, const char *n, size_t nl)
{
	for (size_t i = 0; i + nl <= hl; i++)
		if (h[i] == n[0] && !memcmp(h + i, n, nl))
			return h + i;
	return NULL;
}

static const struct kwarg *kw_find(const struct kwarg *kw, size_t n, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < n; i++)
		if (kw[i].klen == kl && !memcmp(kw[i].key, key, kl))
			return &kw[i];
	return NULL;
}

/* Whether register_op( at p is a call: not "def register_op(", nor a name
 * like "my_register_op(" or "x.register_op(". */
static bool register_call_at(const char *t, size_t p)
{
	if (p > 0 && (isalnum((unsigned char)t[p - 1]) || t[p - 1] == '_' || t[p - 1] == '.'))
		return false;
	return !(p >= 4 && !memcmp(t + p - 4, "def ", 4));
}

/* default_shapes=NAME (the dict's name) or default_shapes={...} (the
 * literal); NULL when absent or None. */
static char *default_shapes_of(const struct kwarg *k)
{
	if (!k || !k->raw)
		return NULL;
	const char *p = k->raw;
	if (*p == '{') {
		int depth = 0;
		const char *q = p;
		for (; *q; q++)
			if (*q == '{')
				depth++;
			else if (*q == '}' && --depth == 0)
				break;
		return *q ? xstrndup(p, (size_t)(q - p + 1)) : NULL;
	}
	size_t n = 0;
	while (isalnum((unsigned char)p[n]) || p[n] == '_')
		n++;
	if (!n || (n == 4 && !memcmp(p, "None", 4)))
		return NULL;
	return xstrndup(p, n);
}

/* The defaults of one register_op call whose keyword arguments are kw. */
static int defaults_from_call(const struct kwarg *kw, size_t nkw, const char *op,
			      struct workspace_defaults *d, struct err *e)
{
	const struct kwarg *imp = kw_find(kw, nkw, "import_path");
	const struct kwarg *tf = kw_find(kw, nkw, "test_file");
	const struct kwarg *fn = kw_find(kw, nkw, "func_name");
	if (!imp || !imp->val || imp->vlen == 0)
		return err_set(e, ERR_NOTFOUND,
			       "benchmarks/ops/registry.py registers '%s' without an "
			       "import_path string; pass --kernel, --test-file and --naive",
			       op);
	d->import_path = xstrndup(imp->val, imp->vlen);
	/* strip trailing dots, as FLA's verify does */
	size_t il = strlen(d->import_path);
	while (il && d->import_path[il - 1] == '.')
		d->import_path[--il] = '\0';
	d->kernel = xstrdup(d->import_path);
	for (char *c = d->kernel; *c; c++)
		if (*c == '.')
			*c = '/';
	const char *leaf = strrchr(d->import_path, '.');
	leaf = leaf ? leaf + 1 : d->import_path;
	if (tf && tf->val && tf->vlen)
		d->test_file = xstrndup(tf->val, tf->vlen);
	else
		d->test_file = xasprintf("tests/ops/test_%s.py", leaf);
	d->naive = xasprintf("%s/naive.py", d->kernel);
	d->func_name = fn && fn->val && fn->vlen ? xstrndup(fn->val, fn->vlen) : xstrdup(op);
	d->verify_cmd = xasprintf("python -m benchmarks.ops.verify --op %s", op);
	d->bench_cmd = xasprintf("%s --base main", d->verify_cmd);
	d->default_shapes = default_shapes_of(kw_find(kw, nkw, "default_shapes"));
	return 0;
}

int workspace_registry_lookup(const char *text, size_t len, const char *op,
			      struct workspace_defaults *d, struct err *e)
{
	static const char call[] = "register_op(";
	size_t i = 0;

	memset(d, 0, sizeof(*d));
	while (i + sizeof(call) - 1 <= len) {
		const char *hit = find_bytes(text + i, len - i, call, sizeof(call) - 1);
		if (!hit)
			break;
		size_t p = (size_t)(hit - text);
		bool is_call = register_call_at(text, p);
		struct kwarg kw[64];
		size_t nkw;
		size_t end = scan_call(text, len, p + sizeof(call) - 2, kw, &nkw, 64);
		i = end > p ? end : p + 1;
		if (!is_call)
			continue;
		const struct kwarg *name = kw_find(kw, nkw, "name");
		if (!name || !name->val || name->vlen != strlen(op) ||
		    memcmp(name->val, op, name->vlen) != 0)
			continue;
		return defaults_from_call(kw, nkw, op, d, e);
	}
	/* what it does have, and the one that was meant */
	struct sb names = SB_INIT;
	const char *list[256];
	char *own[256];
	size_t nn = 0;
	for (i = 0; i + sizeof(call) - 1 <= len && nn < 255;) {
		const char *hit = find_bytes(text + i, len - i, call, sizeof(call) - 1);
		if (!hit)
			break;
		size_t p = (size_t)(hit - text);
		struct kwarg kw[64];
		size_t nkw;
		size_t end = scan_call(text, len, p + sizeof(call) - 2, kw, &nkw, 64);
		i = end > p ? end : p + 1;
		const struct kwarg *name = kw_find(kw, nkw, "name");
		if (name && name->val && name->vlen) {
			own[nn] = xstrndup(name->val, name->vlen);
			list[nn] = own[nn];
			sb_addf(&names, "%s%s", nn ? ", " : "", own[nn]);
			nn++;
		}
	}
	list[nn] = NULL;
	const char *near = closest_word(op, list);
	int rc;
	if (near)
		rc = err_set(e, ERR_NOTFOUND,
			     "benchmarks/ops/registry.py has no register_op entry named '%s'; did "
			     "you mean %s? (ops: %s)",
			     op, near, names.buf);
	else
		rc = err_set(e, ERR_NOTFOUND,
			     "benchmarks/ops/registry.py has no register_op entry named '%s' (ops: "
			     "%s)",
			     op, nn ? names.buf : "none");
	for (size_t k = 0; k < nn; k++)
		free(own[k]);
	sb_release(&names);
	return rc;
}

int workspace_fla_defaults(const char *repo, const char *op, struct workspace_defaults *d,
			   struct err *e)
{
	char *path = xasprintf("%s/benchmarks/ops/registry.py", repo);
	struct sb text = SB_INIT;
	int rc = fsutil_read_file(path, &text, NULL);

	memset(d, 0, sizeof(*d));
	if (rc < 0)
		rc = err_set(e, ERR_NOTFOUND,
			     "the repository is not FLA-shaped (no benchmarks/ops/registry.py)");
	else
		rc = workspace_registry_lookup(text.buf, text.len, op, d, e);
	sb_release(&text);
	free(path);
	return rc;
}

size_t workspace_fla_registry(const char *repo, char ***names, struct workspace_defaults **ops)
{
	static const char call[] = "register_op(";
	char *path = xasprintf("%s/benchmarks/ops/registry.py", repo);
	struct sb text = SB_INIT;
	size_t n = 0;
	*names = NULL;
	*ops = NULL;
	if (fsutil_read_file(path, &text, NULL) == 0) {
		const char *t = text.buf ? text.buf : "";
		for (size_t i = 0; i + sizeof(call) - 1 <= text.len;) {
			const char *hit = find_bytes(t + i, text.len - i, call, sizeof(call) - 1);
			if (!hit)
				break;
			size_t p = (size_t)(hit - t);
			struct kwarg kw[64];
			size_t nkw;
			size_t end = scan_call(t, text.len, p + sizeof(call) - 2, kw, &nkw, 64);
			i = end > p ? end : p + 1;
			const struct kwarg *name = kw_find(kw, nkw, "name");
			if (!register_call_at(t, p) || !name || !name->val || !name->vlen)
				continue;
			/* built from this call's own arguments: looking each name up
			 * again from the top made a registry of n ops cost n^2 */
			char *nm = xstrndup(name->val, name->vlen);
			struct workspace_defaults d = {0};
			if (defaults_from_call(kw, nkw, nm, &d, NULL) == 0) {
				*names = xrealloc(*names, (n + 1) * sizeof(**names));
				*ops = xrealloc(*ops, (n + 1) * sizeof(**ops));
				(*names)[n] = nm;
				(*ops)[n++] = d;
			} else {
				free(nm);
			}
		}
	}
	sb_release(&text);
	free(path);
	return n;
}

void workspace_fla_registry_release(char **names, struct workspace_defaults *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
		workspace_defaults_release(&ops[i]);
	}
	free(names);
	free(ops);
}

long workspace_fla_op_shapes(const char *repo, const char *op, struct fla_shape **out,
			     bool *own)
{
	char *path = xasprintf("%s/benchmarks/ops/registry.py", repo);
	struct sb text = SB_INIT;
	struct workspace_defaults d;
	long n = -1;
	*out = NULL;
	*own = false;
	if (fsutil_read_file(path, &text, NULL) == 0 &&
	    workspace_registry_lookup(text.buf ? text.buf : "", text.len, op, &d, NULL) == 0) {
		*own = d.default_shapes != NULL;
		n = (long)flashape_parse(text.buf, *own ? d.default_shapes : "SHAPE_CONFIGS", out);
		workspace_defaults_release(&d);
	}
	sb_release(&text);
	free(path);
	return n;
}

int workspace_ensure_ignored(struct vcs *v, struct sb *notes, struct err *e)
{
	bool ign = false;
	int rc = vcs_is_ignored(v, "profile/", &ign, e);
	if (rc < 0)
		return rc;
	if (ign)
		return 0;
	if ((rc = vcs_exclude_add(v, "/profile/", e)) < 0)
		return rc;
	if (notes)
		sb_adds(notes, "profile/ was not git-ignored: added /profile/ to .git/info/exclude\n");
	return 0;
}

static int write_new(const char *path, const char *text, struct err *e)
{
	if (fsutil_exists(path))
		return 0;
	return fsutil_write_atomic(path, text, strlen(text), e);
}

static int copy_asset(const char *rel, const char *dst, const char *fallback, struct err *e)
{
	char *src;
	struct sb text = SB_INIT;
	int rc;

	if (fsutil_exists(dst))
		return 0;
	src = assets_path(rel, NULL);
	if (src && fsutil_read_file(src, &text, NULL) == 0)
		rc = fsutil_write_atomic(dst, text.buf, text.len, e);
	else if (fallback)
		rc = fsutil_write_atomic(dst, fallback, strlen(fallback), e);
	else
		rc = 0;
	sb_release(&text);
	free(src);
	return rc;
}

int workspace_create(const struct workspace *ws, const char *contract_text,
		     const char *optlog_text, struct sb *notes, struct err *e)
{
	char *docs = xasprintf("%s/docs", ws->dir);
	int rc;

	if (fsutil_exists(ws->db_path)) {
		free(docs);
		return err_set(e, ERR_REFUSED,
			       "%s already has a workspace for '%s' (run optloop status; remove %s "
			       "to start over)",
			       ws->rel, ws->op, ws->rel);
	}
	rc = fsutil_mkdir_p(docs, e);
	if (rc == 0)
		rc = fsutil_mkdir_p(ws->trace_dir, e);
	if (rc == 0 && contract_text)
		rc = write_new(ws->contract_path, contract_text, e);
	if (rc == 0 && optlog_text)
		rc = write_new(ws->optlog_path, optlog_text, e);
	if (rc == 0)
		rc = copy_asset("templates/dispatch.md", ws->dispatch_path,
				"# Dispatch\n\n| Bucket condition | Entry point chosen | Baseline ms | "
				"Candidate ms | Speedup | Why this path |\n"
				"|---|---|---|---|---|---|\n",
				e);
	if (rc == 0) {
		rc = copy_asset("TRAPS.md", ws->traps_path, NULL, e);
		if (rc == 0 && notes && !fsutil_exists(ws->traps_path))
			sb_adds(notes, "no TRAPS.md seed in the assets; TRAPS.md not created\n");
	}
	free(docs);
	return rc;
}
