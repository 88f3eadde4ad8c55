/*
 * loop_contract — the loop's copy of the task contract: read again when
 * docs/draft.md changes, shared by reference with its borrowers, what it
 * lacks worked out every time (paths that went, Target shapes the registry
 * does not have, kernel paths that cannot be one); the field names --set
 * takes, and setting fields in docs/draft.md (the grammar is
 * core/contract.c's).
 */
#include "core/loop_impl.h"

#include "core/contract.h"
#include "core/err.h"
#include "core/closest.h"
#include "core/flashape.h"
#include "core/fsutil.h"
#include "core/guards.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/vcs.h"
#include "core/vis.h"
#include "core/workspace.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

_Static_assert(CONTRACT_NFIELDS == CF_ALL, "loop.h counts every contract field");

bool loop_contract_field_known(const char *name)
{
	return contract_field_parse(name) >= 0;
}

/* A Target given now must say something optloop can hold a result to: a
 * shape it can read or a speedup ("faster please" says neither). */
static int target_readable(const char *name, const char *value, struct err *e)
{
	if (contract_field_parse(name) != CF_TARGET || !value || !*value)
		return 0;
	struct contract_target t;
	struct contract_shape *sh = NULL;
	size_t nsh = contract_target_shapes(value, &sh);
	contract_shapes_free(sh, nsh);
	struct err why = {0};
	struct sb shown = SB_INIT;
	if (contract_target_speedup(value, &t, &why) < 0 && t.speedup > 0 && t.speedup <= 1)
		return err_set(e, ERR_USAGE, "%s", why.msg);
	if (nsh || t.speedup > 1)
		return 0;
	vis_escape(value, &shown);
	int rc = err_set(e, ERR_USAGE,
			 "the Target '%s' names no shape and no speedup optloop can read; say which "
			 "shapes matter and the speedup wanted, e.g. 'every shape >= 1.2x', '1.1x "
			 "geomean' or 'B4-T2048-H16-D64 >= 2x'",
			 shown.buf);
	sb_release(&shown);
	return rc;
}

int loop_contract_set(struct loop *l, const char *const *names, const char *const *values,
		      size_t n, struct err *e)
{
	struct sb text = SB_INIT, next = SB_INIT;
	const char *path = loop_contract_path(l);
	char *docs = xstrdup(path), *slash = strrchr(docs, '/');
	if (slash)
		*slash = '\0';
	int rc = fsutil_own_dir(docs, e);
	free(docs);
	if (rc < 0)
		return rc;
	rc = fsutil_read_file(path, &text, e);

	if (rc == ERR_NOTFOUND)
		rc = 0; /* set into an empty contract */
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = target_readable(names[i], values[i], e);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		sb_reset(&next);
		rc = contract_set(text.buf, text.len, names[i], values[i], &next, e);
		if (rc == 0) {
			sb_reset(&text);
			sb_add(&text, next.buf, next.len);
		}
	}
	if (rc == 0)
		rc = fsutil_write_atomic(path, text.buf ? text.buf : "", text.len, e);
	sb_release(&text);
	sb_release(&next);
	return rc;
}

/* ---- contract --------------------------------------------------------------- */

static void contract_put_shared(struct shared_contract *sc)
{
	if (sc && --sc->refs == 0) {
		contract_release(&sc->c);
		free(sc->text);
		free(sc);
	}
}

const struct contract *loop_contract_get(struct loop *l)
{
	l->contract->refs++;
	return &l->contract->c;
}

void loop_contract_put(const struct contract *c)
{
	/* c is the first member of the shared_contract loop_contract_get lent */
	contract_put_shared((struct shared_contract *)(uintptr_t)c);
}

int loop_reassess_profile_check(struct loop *l, const char *path, struct err *e)
{
	return guards_profile_check(&l->ws, path, NULL, e);
}

int loop_contract_missing(struct loop *l, struct loop_contract_field **out, size_t *n,
			  struct err *e)
{
	const struct shared_contract *sc = l->contract;

	*out = NULL;
	*n = 0;
	for (int f = 0; f < CF_NFIELDS; f++) {
		if (sc->c.v[f])
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = (struct loop_contract_field){
			.field = f,
			.name = contract_field_name(f),
			.heading = contract_field_heading(f),
			.hint = contract_hint(sc->text, sc->text ? sc->len : 0, f),
		};
	}
	return 0;
}

void loop_contract_fields_free(struct loop_contract_field *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].hint);
	free(v);
}

static struct shared_contract *read_contract(const char *path)
{
	struct sb text = SB_INIT;
	struct shared_contract *sc = xcalloc(1, sizeof(*sc));
	sc->refs = 1;
	contract_parse("", 0, &sc->c, NULL);
	int rc = fsutil_read_file(path, &text, &sc->err);
	if (rc == ERR_NOTFOUND)
		sc->missing = true;
	else if (rc < 0)
		sc->rc = rc;
	else {
		sc->rc = contract_parse(text.buf, text.len, &sc->c, &sc->err);
		sc->len = text.len;
		sc->text = sb_detach(&text);
	}
	sb_release(&text);
	return sc;
}

static bool same_text(const struct shared_contract *a, const struct shared_contract *b)
{
	return a->missing == b->missing && a->rc == 0 && b->rc == 0 && a->len == b->len &&
	       (a->len == 0 || !memcmp(a->text, b->text, a->len));
}

/* Why kernel path p (relative to the work tree repo) can hold no kernel,
 * or NULL: it is the whole work tree (the gate test, its reference and
 * profile/ with it), or it lies in git's own directory gitdir, which no
 * commit holds, so an edit there goes unseen and every commit is empty.
 * Read from the text and from the real path (a link to either). */
const char *loop_kernel_path_unusable(const char *repo, const char *gitdir, const char *p)
{
	static const char whole[] =
		"is the whole repository (it holds the gate test, what the test compares "
		"against and optloop's own profile/)";
	static const char git[] =
		"lies in git's own directory, which no commit holds (kernel edits there would "
		"go unseen and every commit would be empty)";
	const char *q = p, *why = NULL;
	while (q[0] == '.' && q[1] == '/')
		q += 2;
	size_t n = strlen(q);
	while (n && q[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && q[0] == '.'))
		return whole;
	for (size_t i = 0; i < n;) {
		size_t k = strcspn(q + i, "/");
		if (k > n - i)
			k = n - i;
		if (k == 4 && !strncmp(q + i, ".git", 4))
			return git;
		i += k;
		while (i < n && q[i] == '/')
			i++;
	}
	char *full = fsutil_join(repo, p);
	char *real = realpath(full, NULL), *top = realpath(repo, NULL);
	char *gd = gitdir ? realpath(gitdir, NULL) : NULL;
	if (real && top && !strcmp(real, top))
		why = whole;
	else if (real && gd && (fsutil_path_under(real, gd) || !strcmp(real, gd)))
		why = git;
	free(full);
	free(real);
	free(top);
	free(gd);
	return why;
}

/* The Target's words shaped like a shape name that name none of the op's
 * benchmark shapes (its default_shapes, else SHAPE_CONFIGS: the benchmark
 * never runs them, so the target could never be judged), one line each
 * naming the valid ones; and a factor of 1x or less, which is no target. */
static void target_check(struct loop *l, struct sb *why)
{
	const char *target = l->contract ? l->contract->c.v[CF_TARGET] : NULL;
	char **named = NULL;
	struct fla_shape *sh = NULL;
	bool own = false;
	size_t nn = flashape_names_in(target, &named);
	long nk = nn ? workspace_fla_op_shapes(l->ws.repo, l->ws.op, &sh, &own) : -1;
	const char **list = xcalloc((size_t)(nk > 0 ? nk : 0) + 1, sizeof(*list));
	struct sb valid = SB_INIT;
	for (long k = 0; k < nk; k++) {
		list[k] = sh[k].name;
		sb_addf(&valid, "%s%s", k ? ", " : "", sh[k].name);
	}
	for (size_t i = 0; nk >= 0 && i < nn; i++) {
		bool have = false;
		const char *near = NULL;
		for (long k = 0; k < nk; k++) {
			have |= !strcmp(named[i], sh[k].name);
			if (!strcasecmp(named[i], sh[k].name))
				near = sh[k].name;
		}
		if (have)
			continue;
		if (!near)
			near = closest_word(named[i], list);
		sb_addf(why,
			"Target: %s names none of %s's benchmark shapes (%s in "
			"benchmarks/ops/registry.py: %s), so the benchmark never runs it%s%s%s; "
			"name one of those%s\n",
			named[i], l->ws.op, own ? "its default_shapes" : "SHAPE_CONFIGS",
			nk ? valid.buf : "none", near ? " (did you mean " : "", near ? near : "",
			near ? "?)" : "", own ? "" : ", or add it to SHAPE_CONFIGS first");
	}
	sb_release(&valid);
	free(list);
	for (size_t i = 0; i < nn; i++)
		free(named[i]);
	free(named);
	flashape_free(sh, nk > 0 ? (size_t)nk : 0);
	struct contract_target t;
	struct err e = {0};
	if (target && contract_target_speedup(target, &t, &e) < 0 && t.speedup > 0 &&
	    t.speedup <= 1)
		sb_addf(why, "Target: %s\n", e.msg);
}

/* The Target with each of the op's benchmark shape names it uses spelled
 * as the shape's dimensions ("L8_B1_T8K_D2K" as "L=8 B=1 T=8192 H=1
 * D=2048"): a name is only a label, the measured shapes carry the values.
 * NULL when it names none (caller frees). */
static char *target_resolved(struct loop *l, const char *target)
{
	char **named = NULL;
	struct fla_shape *sh = NULL;
	bool own = false;
	size_t nn = flashape_names_in(target, &named);
	long nk = nn ? workspace_fla_op_shapes(l->ws.repo, l->ws.op, &sh, &own) : -1;
	struct sb out = SB_INIT;
	bool any = false;
	const char *p = target;
	for (size_t i = 0; i < nn; i++) {
		long k = 0;
		while (k < nk && strcmp(sh[k].name, named[i]) != 0)
			k++;
		if (k < nk && sh[k].B < 0 && sh[k].T < 0 && sh[k].H < 0 && sh[k].D < 0 &&
		    sh[k].L < 0)
			continue; /* its values could not be read: left as written */
		size_t len = strlen(named[i]);
		const char *at = k < nk ? strstr(p, named[i]) : NULL;
		while (at && ((at > target && (isalnum((unsigned char)at[-1]) || at[-1] == '_')) ||
			      isalnum((unsigned char)at[len]) || at[len] == '_'))
			at = strstr(at + 1, named[i]);
		if (!at)
			continue;
		char *dims = flashape_dims(&sh[k]);
		sb_add(&out, p, (size_t)(at - p));
		sb_adds(&out, dims);
		free(dims);
		p = at + len;
		any = true;
	}
	if (any)
		sb_adds(&out, p);
	for (size_t i = 0; i < nn; i++)
		free(named[i]);
	free(named);
	flashape_free(sh, nk > 0 ? (size_t)nk : 0);
	if (!any) {
		sb_release(&out);
		return NULL;
	}
	return sb_detach(&out);
}

/* What the frozen and kernel paths lack on disk, one line each: a path
 * that does not exist, a kernel path inside the frozen scope; and a
 * Target shape the registry does not have. */
static void paths_missing(struct loop *l, struct sb *why)
{
	target_check(l, why);
	for (size_t i = 0; i < l->ws.nfrozen; i++) {
		char *full = fsutil_join(l->ws.repo, l->ws.frozen[i]);
		if (!fsutil_exists(full))
			sb_addf(why, "Frozen: %s does not exist (restore it, or correct the list: "
				     "optloop contract --set frozen=PATHS)\n",
				l->ws.frozen[i]);
		free(full);
	}
	for (size_t i = 0; i < l->ws.nkernel; i++) {
		char *full = fsutil_join(l->ws.repo, l->ws.kernel[i]);
		if (!fsutil_exists(full))
			sb_addf(why, "kernel path %s does not exist (restore it, or make a new "
				     "workspace with the right --kernel)\n",
				l->ws.kernel[i]);
		free(full);
		const char *bad = loop_kernel_path_unusable(l->ws.repo, vcs_gitdir(l->ws.vcs), l->ws.kernel[i]);
		if (bad)
			sb_addf(why, "kernel path %s %s; make a new workspace with --kernel naming "
				     "the kernel's own files\n",
				l->ws.kernel[i], bad);
		for (size_t j = 0; j < l->ws.nfrozen; j++)
			if (fsutil_path_under(l->ws.kernel[i], l->ws.frozen[j]))
				sb_addf(why, "kernel path %s is frozen (it is or lies in %s): the "
					     "gate would check a change against itself\n",
					l->ws.kernel[i], l->ws.frozen[j]);
	}
}

/* Read docs/draft.md again; parsed again only when its text changed.  What
 * is missing is worked out every time (a path can go without the text
 * changing). */
int loop_load_contract(struct loop *l, struct err *e)
{
	struct sb why = SB_INIT;
	struct shared_contract *sc = read_contract(l->ws.contract_path);

	if (l->contract && same_text(l->contract, sc)) {
		contract_put_shared(sc);
	} else {
		contract_put_shared(l->contract);
		l->contract = sc;
		l->ws.contract = &sc->c;
		loop_free_list(l->ws.frozen, l->ws.nfrozen);
		l->ws.frozen = NULL;
		l->ws.nfrozen = 0;
		if (sc->c.v[CF_FROZEN])
			l->ws.nfrozen = contract_list_items(sc->c.v[CF_FROZEN], &l->ws.frozen);
		if (sc->c.v[CF_TARGET])
			sc->c.target_shapes = target_resolved(l, sc->c.v[CF_TARGET]);
		/* profile/ and the frozen files are never part of a kernel commit */
		size_t nx = l->ws.nfrozen + 1;
		const char **x = xcalloc(nx, sizeof(char *));
		x[0] = "profile";
		for (size_t i = 0; i < l->ws.nfrozen; i++)
			x[i + 1] = l->ws.frozen[i];
		vcs_set_exclude(l->ws.vcs, x, nx);
		free(x);
	}
	sc = l->contract;
	free(l->missing);
	l->missing = NULL;
	if (sc->missing) {
		l->missing = xasprintf("docs/draft.md is missing (run optloop contract to see the "
				       "fields, or restore the file)");
		return 0;
	}
	if (sc->rc < 0 && l->any_contract) {
		l->missing = xstrdup(sc->err.msg);
		return 0;
	}
	if (sc->rc < 0) {
		if (e)
			*e = sc->err;
		return sc->rc;
	}
	contract_missing(&sc->c, &why);
	paths_missing(l, &why);
	if (why.len) {
		sb_trim(&why);
		l->missing = sb_detach(&why);
	}
	sb_release(&why);
	return 0;
}
