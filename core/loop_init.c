/* loop_init — making a workspace (loop_init): the contract from the options
 * and the registry, the frozen scope and the kernel scope (for an FLA op,
 * from the gate test's call graph: fla_graph_scopes), the first files. */
#include "core/loop_impl.h"
#include "core/alloc.h"
#include "core/chart.h"
#include "core/fault.h"
#include "core/flabackend.h"
#include "core/flaref.h"
#include "core/fsutil.h"
#include "core/gatecfg.h"
#include "core/guards.h"
#include "core/lint.h"
#include "core/measure.h"
#include "core/optlog.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/rules.h"
#include "core/run.h"
#include "core/runner.h"
#include "core/store.h"
#include "core/vcs.h"
#include "core/vis.h"

#include <jansson.h>

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static char *join_list(const char *const *v, size_t n, const char *sep)
{
	struct sb s = SB_INIT;
	for (size_t i = 0; i < n; i++)
		sb_addf(&s, "%s%s", i ? sep : "", v[i]);
	return sb_detach(&s);
}

struct pathlist {
	const char **v;
	size_t n;
	char **own; /* strings this list allocated */
	size_t nown;
};

static void pathlist_add(struct pathlist *l, const char *p, bool own)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], p))
			return;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	if (own) {
		char *c = xstrdup(p);
		l->own = xrealloc(l->own, (l->nown + 1) * sizeof(*l->own));
		l->own[l->nown++] = c;
		p = c;
	}
	l->v[l->n++] = p;
}

static void pathlist_release(struct pathlist *l)
{
	for (size_t i = 0; i < l->nown; i++)
		free(l->own[i]);
	free(l->own);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool pathlist_has(const struct pathlist *l, const char *p)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], p))
			return true;
	return false;
}

/* Does path lie in (or is it) one of the user's --kernel paths? */
static bool user_kernel_has(const struct loop_init_opts *o, const char *path)
{
	for (size_t i = 0; i < o->nkernel; i++)
		if (fsutil_path_under(path, o->kernel[i]))
			return true;
	return false;
}

static bool is_init_py(const char *path)
{
	size_t n = strlen(path);
	return n >= 11 && !strcmp(path + n - 11, "__init__.py");
}

/* The files an FLA op's gate rests on, walked through its call graph
 * (fla_walk): ref what the test's references reach, op what the op's
 * function reaches, sup the gate's support code. */
struct fla_reach {
	struct fla_tree *t; /* the repository's files, read once for the walks */
	struct fla_scope sc;
	struct fla_files ref, sup, op;
};

static void fla_reach_release(struct fla_reach *r)
{
	fla_files_release(&r->ref);
	fla_files_release(&r->sup);
	fla_files_release(&r->op);
	fla_scope_release(&r->sc);
	fla_tree_close(r->t);
}

static size_t fla_real_refs(const struct fla_scope *sc)
{
	size_t n = 0;
	for (size_t i = 0; i < sc->nrefs; i++)
		n += !sc->refs[i].input;
	return n;
}

/* Walk what the references and the op's function reach; refused when the
 * op is itself a reference, and a usage error when its file or what the
 * test compares against cannot be found. */
static int fla_walk_op_and_refs(const char *repo, const struct loop_init_opts *o,
				const struct workspace_defaults *d, const char *test_file,
				struct fla_reach *x, struct sb *decided, struct err *e)
{
	struct fla_scope *sc = &x->sc;
	struct sb unfound = SB_INIT;
	int rc = 0;

	if (fla_is_naive(d->func_name))
		return err_set(e, ERR_REFUSED,
			       "init refused: the op's function %s is itself a reference (the gate "
			       "test %s compares other kernels against it), so nothing independent "
			       "checks a change to it; optimize one of the kernels the test checks "
			       "against it instead",
			       d->func_name, test_file);
	if (!sc->op_file)
		return err_set(e, ERR_USAGE,
			       "cannot find the file that defines the op's function %s (imported "
			       "from %s); name the kernel with --kernel PATH",
			       d->func_name, d->import_path);
	for (size_t i = 0; i < sc->nrefs; i++) {
		const struct fla_ref *r = &sc->refs[i];
		if (!r->file) {
			sb_addf(&unfound, "%s%s (from %s)", unfound.len ? ", " : "", r->name, r->module);
			continue;
		}
		char *label = xasprintf("%s %s", r->input ? "the test's input helper" : "reference",
					r->name);
		fla_walk_func(x->t, r->file, r->name, label, &x->ref);
		free(label);
	}
	if (unfound.len && !o->nfrozen && !o->naive)
		rc = err_set(e, ERR_USAGE,
			     "the gate test %s compares against %s, but optloop cannot find the file "
			     "that defines it; name it with --frozen PATH",
			     test_file, unfound.buf);
	else if (sc->compared && !fla_real_refs(sc))
		sb_addf(decided, "reference: the gate test's own code (its comparisons check %s "
				 "against what the test computes itself), frozen with the test\n",
			d->func_name);
	else if (!sc->nrefs && !o->nfrozen && !o->naive)
		rc = err_set(e, ERR_USAGE,
			     "the imports of the gate test %s name no reference (naive_*, "
			     "fused_recurrent_*, *_ref, *_torch) to compare %s against; name the "
			     "file that defines what it compares against with --frozen PATH",
			     test_file, d->func_name);
	sb_release(&unfound);
	if (rc < 0)
		return rc;
	char *oplabel = xasprintf("the op's function %s", d->func_name);
	fla_walk_func(x->t, sc->op_file, d->func_name, oplabel, &x->op);
	free(oplabel);
	sb_addf(decided, "op function %s: defined in %s\n", d->func_name, sc->op_file);
	return 0;
}

/* A reference in the op's own file, or another registered op that the op
 * wraps and the test also runs (chunk_rwkv7 and the chunk_dplr_delta_rule
 * it calls): the gate compares the op with itself, and init is refused.
 * (A kernel the test checks on its own, not a registered op, is no
 * reference.) */
static int fla_refuse_self_reference(const char *repo, const struct workspace_defaults *d,
				     const char *test_file, const struct fla_reach *x,
				     struct err *e)
{
	const struct fla_scope *sc = &x->sc;
	struct sb why = SB_INIT;
	char **rnames = NULL;
	struct workspace_defaults *rops = NULL;
	size_t nreg = workspace_fla_registry(repo, &rnames, &rops);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sc->nrefs + sc->nothers; i++) {
		const struct fla_ref *r = i < sc->nrefs ? &sc->refs[i] : &sc->others[i - sc->nrefs];
		bool registered = false;
		for (size_t k = 0; i >= sc->nrefs && k < nreg; k++)
			registered |= !strcmp(rops[k].func_name, r->name) &&
				      strcmp(rops[k].func_name, d->func_name) != 0;
		int at = r->file ? fla_files_find(&x->op, r->file) : -1;
		/* a reference the op's own code calls */
		bool runs = i < sc->nrefs && at > 0 && fla_files_node(&x->op, r->file, r->name) >= 0 &&
			    fla_is_kernel_code(x->t, r->file);
		if (r->input)
			continue; /* what the inputs are made with: no reference */
		if (at < 0 || (i < sc->nrefs && at != 0 && !runs) || (i >= sc->nrefs && !registered))
			continue;
		if (at == 0) {
			rc = err_set(e, ERR_REFUSED,
				     "init refused: the op's function %s and the reference %s the gate "
				     "test %s compares it against are defined in the same file %s, so "
				     "a change to the op changes what it is checked against; move the "
				     "reference into a file of its own first",
				     d->func_name, r->name, test_file, r->file);
			break;
		}
		fla_files_why(&x->op, (size_t)at, &why);
		rc = err_set(e, ERR_REFUSED,
			     "init refused: the gate test %s checks %s against %s, which %s itself "
			     "runs (%s): the reference is the op's own implementation, so a change "
			     "to it moves both sides and the gate proves nothing; pick an op whose "
			     "test compares against an independent reference",
			     test_file, d->func_name, r->name, d->func_name, why.buf);
	}
	workspace_fla_registry_release(rnames, rops, nreg);
	sb_release(&why);
	return rc;
}

/* The gate's support code: conftest.py files up from the test, the test's
 * helper imports outside fla.ops, and the benchmark harness. */
static void fla_walk_support(const char *repo, const char *test_file, struct fla_reach *x)
{
	char *tdir = xstrdup(test_file);
	for (char *slash; (slash = strrchr(tdir, '/'));) {
		*slash = '\0';
		char *conf = xasprintf("%s/conftest.py", tdir);
		fla_walk(x->t, conf, "the gate test's conftest", &x->sup);
		free(conf);
	}
	free(tdir);
	fla_walk(x->t, "conftest.py", "the gate test's conftest", &x->sup);
	for (size_t i = 0; i < x->sc.nothers; i++)
		if (x->sc.others[i].file && strncmp(x->sc.others[i].module, "fla.ops", 7) != 0) {
			char *label = xasprintf("the gate test's helper %s", x->sc.others[i].name);
			fla_walk_func(x->t, x->sc.others[i].file, x->sc.others[i].name, label, &x->sup);
			free(label);
		}
	char *bdir = fsutil_join(repo, "benchmarks/ops");
	DIR *dh = opendir(bdir);
	struct dirent *de;
	char **bench = NULL;
	size_t nbench = 0;
	while (dh && (de = readdir(dh)))
		if (strlen(de->d_name) > 3 && !strcmp(de->d_name + strlen(de->d_name) - 3, ".py")) {
			bench = xrealloc(bench, (nbench + 1) * sizeof(*bench));
			bench[nbench++] = xasprintf("benchmarks/ops/%s", de->d_name);
		}
	if (dh)
		closedir(dh);
	free(bdir);
	qsort(bench, nbench, sizeof(*bench), strp_cmp);
	for (size_t i = 0; i < nbench; i++) {
		fla_walk(x->t, bench[i], "the benchmark harness", &x->sup);
		free(bench[i]);
	}
	free(bench);
}

/* A file the op runs that stays frozen however the reference reaches it:
 * the gate's support code, a package __init__.py, a file frozen already,
 * or one the user made a kernel file. */
static bool fla_settled(const struct loop_init_opts *o, const struct pathlist *frozen,
			const struct fla_reach *x, const char *f)
{
	return is_init_py(f) || fla_files_find(&x->sup, f) >= 0 || pathlist_has(frozen, f) ||
	       user_kernel_has(o, f);
}

/* A plain utility of the op's (helpers, math inlined into kernels, caches,
 * decorators: no kernel of its own) outside the op's own package: frozen
 * for every op alike, as the gate's support code is. */
static bool fla_plain_utility(const struct fla_reach *x, const char *f)
{
	/* the op's file, as git tracks it: the walk's seed */
	const char *op = x->op.n ? x->op.v[0].path : x->sc.op_file;
	if (!strcmp(f, op) || fla_is_kernel_code(x->t, f))
		return false;
	const char *slash = strrchr(op, '/');
	size_t n = slash ? (size_t)(slash - op) : 0;
	return !(n && !strncmp(f, op, n) && f[n] == '/' && !strchr(f + n + 1, '/'));
}

/* The safe default for files both the op and a reference run: frozen (a
 * change there moves both sides, and the gate cannot see it).  Plain
 * utilities are frozen without a word; kernel code both run is named in one
 * notice, with the init command that optimizes it anyway. */
static void fla_freeze_shared(const struct loop_init_opts *o, struct pathlist *frozen,
			      const struct fla_reach *x, struct sb *decided)
{
	struct sb notice = SB_INIT, why = SB_INIT;
	for (size_t i = 0; i < x->op.n; i++) {
		const char *f = x->op.v[i].path;
		int r = fla_files_find(&x->ref, f);
		if (r < 0 || fla_settled(o, frozen, x, f))
			continue;
		pathlist_add(frozen, f, true);
		sb_reset(&why);
		fla_files_why(&x->ref, (size_t)r, &why);
		if (!fla_is_kernel_code(x->t, f)) {
			sb_addf(decided, "frozen: %s (a plain utility the reference runs too)\n",
				why.buf);
			continue;
		}
		sb_addf(&notice, "\n  %s", why.buf);
	}
	if (notice.len) {
		struct sb kflags = SB_INIT;
		for (size_t i = 0; i < x->op.n; i++) {
			const char *f = x->op.v[i].path;
			if (!is_init_py(f) && fla_files_find(&x->sup, f) < 0 &&
			    (!pathlist_has(frozen, f) || fla_files_find(&x->ref, f) >= 0) &&
			    !fla_plain_utility(x, f))
				sb_addf(&kflags, " --kernel %s", f);
		}
		sb_addf(decided,
			"notice: the op and what its gate test checks it against (a reference, or "
			"what makes both sides' inputs) both run these kernel files, so they are "
			"frozen (a change there would move both sides, and the gate could not "
			"catch it):%s\n"
			"  to optimize them anyway, knowing the gate cannot catch an error there:\n"
			"  optloop init --op %s%s\n",
			notice.buf, o->op, kflags.buf);
		sb_release(&kflags);
	}
	sb_release(&notice);
	sb_release(&why);
}

/* The decided scopes: frozen gets the references' reach, then the support
 * code; kernel (when not NULL) what the op reaches and nothing freezes;
 * each decision is a line of decided. */
static void fla_emit_scopes(const struct loop_init_opts *o, const struct fla_reach *x,
			    struct pathlist *frozen, struct pathlist *kernel, struct sb *decided)
{
	struct sb why = SB_INIT;
	const struct fla_files *sets[] = {&x->ref, &x->sup};
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < sets[k]->n; i++) {
			const char *f = sets[k]->v[i].path;
			if (pathlist_has(frozen, f))
				continue;
			if (user_kernel_has(o, f) && fla_files_find(&x->op, f) >= 0) {
				sb_addf(decided, "%s: a kernel file by --kernel, though the %s reaches it "
						 "too (the gate cannot catch an error there)\n",
					f, k ? "gate's support code" : "reference");
				continue;
			}
			pathlist_add(frozen, f, true);
			const struct fla_ref *seed = NULL;
			for (size_t r = 0; k == 0 && sets[k]->v[i].from < 0 && r < x->sc.nrefs; r++)
				if (x->sc.refs[r].file && !strcmp(x->sc.refs[r].file, f) &&
				    (!seed || seed->input))
					seed = &x->sc.refs[r];
			if (seed) {
				sb_addf(decided, "%s %s (imported from %s, defined in %s): frozen\n",
					seed->input ? "the test's input helper" : "reference",
					seed->name, seed->module, f);
				continue;
			}
			sb_reset(&why);
			fla_files_why(sets[k], i, &why);
			sb_addf(decided, "frozen: %s\n", why.buf);
		}
	for (size_t i = 0; kernel && i < x->op.n; i++) {
		const char *f = x->op.v[i].path;
		if (is_init_py(f) || pathlist_has(frozen, f))
			continue;
		if (fla_plain_utility(x, f)) {
			pathlist_add(frozen, f, true);
			sb_reset(&why);
			fla_files_why(&x->op, i, &why);
			sb_addf(decided, "frozen: %s (a plain utility, frozen for every op; "
					 "--kernel %s optimizes it)\n",
				why.buf, f);
			continue;
		}
		pathlist_add(kernel, f, true);
		sb_reset(&why);
		fla_files_why(&x->op, i, &why);
		sb_addf(decided, "kernel: %s\n", why.buf);
	}
	sb_release(&why);
}

/* An FLA op's scopes from its call graph (fla_walk):
 *   frozen  the gate test; what its references reach (the reference's real
 *           kernel, through its thin wrapper); the gate's support code:
 *           conftest.py files, the test's helper imports (assert_close),
 *           the benchmark harness (the .py files of benchmarks/ops) and what they reach;
 *   kernel  what the op's function reaches, less the frozen files and
 *           package __init__.py files.
 * A file both the op and a reference reach is asked about, never guessed:
 * --frozen freezes it, a --kernel path holding it optimizes it.  A
 * reference the op itself runs (the op wraps it) is refused. */
static int fla_graph_scopes(const char *repo, const struct loop_init_opts *o,
			    const struct workspace_defaults *d, const char *test_file,
			    struct pathlist *frozen, struct pathlist *kernel, struct sb *decided,
			    struct err *e)
{
	struct fla_reach x = {.t = fla_tree_open(repo)};
	int rc = fla_scope_read(x.t, test_file, d->import_path, d->func_name, &x.sc, e);
	if (rc < 0) {
		fla_tree_close(x.t);
		return rc;
	}
	if ((rc = fla_walk_op_and_refs(repo, o, d, test_file, &x, decided, e)) == 0 &&
	    (rc = fla_refuse_self_reference(repo, d, test_file, &x, e)) == 0) {
		fla_walk_support(repo, test_file, &x);
		fla_freeze_shared(o, frozen, &x, decided);
		fla_emit_scopes(o, &x, frozen, kernel, decided);
	}
	fla_reach_release(&x);
	return rc;
}

/* The frozen scope: the gate test, what it compares against and what the
 * user named (--naive, --frozen); in an FLA checkout, from the op's call
 * graph (fla_graph_scopes), which also gives the kernel when the user named
 * none.  Every path must exist. */
static int frozen_scope(const char *repo, const struct loop_init_opts *o,
			const struct workspace_defaults *d, const char *test_file,
			struct pathlist *out, struct pathlist *kernel, struct sb *decided,
			struct err *e)
{
	pathlist_add(out, test_file, false);
	if (o->naive)
		pathlist_add(out, o->naive, false);
	for (size_t i = 0; i < o->nfrozen; i++)
		pathlist_add(out, o->frozen[i], false);
	for (size_t i = 0; i < out->n; i++) {
		char *full = fsutil_join(repo, out->v[i]);
		bool ok = fsutil_exists(full);
		free(full);
		if (!ok || strstr(out->v[i], ".."))
			return err_set(e, ERR_USAGE,
				       "frozen path %s does not exist in %s (a frozen path is a file "
				       "of the repository, relative to its root: check --test-file, "
				       "--naive and --frozen)",
				       out->v[i], repo);
	}
	sb_addf(decided, "gate test: %s (frozen)\n", test_file);
	for (size_t i = 1; i < out->n; i++)
		sb_addf(decided, "frozen: %s (named by you)\n", out->v[i]);
	if (!d)
		return 0;
	return fla_graph_scopes(repo, o, d, test_file, out, o->nkernel ? NULL : kernel, decided, e);
}

/* What configures a pytest gate (gatecfg) is frozen with it: a changed
 * addopts or conftest could thin the gate while it still reads "(full)".
 * A --kernel naming one is refused. */
static int init_freeze_gate_config(const char *repo, const struct loop_init_opts *o,
				   const char *test_file, const char *verify,
				   struct pathlist *frozen, struct sb *decided, struct err *e)
{
	for (size_t i = 0; i < o->nkernel; i++) {
		const char *sec = gatecfg_pytest_section(repo, o->kernel[i]);
		if (sec)
			return err_set(e, ERR_USAGE,
				       "kernel path %s configures the gate (pytest reads its %s): a "
				       "change there could thin the gate, e.g. an addopts that "
				       "deselects tests, while it still reads \"(full)\", so it stays "
				       "frozen; name the kernel's own files with --kernel PATH",
				       o->kernel[i], sec);
	}
	if (!gatecfg_is_pytest_gate(repo, test_file, verify))
		return 0;
	char **cfg = NULL;
	size_t n = gatecfg_pytest_files(repo, test_file, &cfg);
	for (size_t i = 0; i < n; i++) {
		if (!pathlist_has(frozen, cfg[i])) {
			pathlist_add(frozen, cfg[i], true);
			sb_addf(decided, "frozen: %s: pytest's configuration of the gate (%s)\n", cfg[i],
				gatecfg_pytest_section(repo, cfg[i]));
		}
		free(cfg[i]);
	}
	free(cfg);
	return 0;
}

/* Does a kernel path hold path, or lie in it? */
static bool kernel_touches(const char **kernel, size_t nk, const char *path)
{
	for (size_t i = 0; i < nk; i++)
		if (fsutil_path_under(kernel[i], path) || fsutil_path_under(path, kernel[i]))
			return true;
	return false;
}

/* The backends the op's files dispatch to (flabackend): the benchmark may
 * run one in place of the op's code, where neither scope would hold a
 * change to it, so each is frozen (with its backends package's registry)
 * unless a kernel path holds it (the user's --kernel).  *recorded gets
 * them for the store (flabackend_record). */
static void init_backends(const char *repo, const struct workspace_defaults *d,
			  const char **kernel, size_t nk, struct pathlist *frozen,
			  struct sb *decided, struct sb *recorded)
{
	/* what the op runs, whichever scope holds it (a --kernel may name
	 * fewer files than the op reaches) */
	struct fla_tree *t = fla_tree_open(repo);
	struct fla_files reach = {0};
	char *op_file = fla_resolve(t, d->import_path, d->func_name);
	if (op_file)
		fla_walk(t, op_file, "the op's function", &reach);
	free(op_file);
	size_t nf = reach.n + nk + frozen->n;
	const char **files = xcalloc(nf ? nf : 1, sizeof(*files));
	for (size_t i = 0; i < reach.n; i++)
		files[i] = reach.v[i].path;
	for (size_t i = 0; i < nk; i++)
		files[reach.n + i] = kernel[i];
	for (size_t i = 0; i < frozen->n; i++)
		files[reach.n + nk + i] = frozen->v[i];
	struct fla_backend *b = NULL;
	size_t n = flabackend_find(repo, files, nf, &b);
	free(files);
	fla_files_release(&reach);
	fla_tree_close(t);
	flabackend_record(b, n, recorded);
	struct sb ascend = SB_INIT, regs = SB_INIT;
	for (size_t i = 0; i < n; i++) {
		bool kern = kernel_touches(kernel, nk, b[i].path);
		if (!kern && b[i].ascend && !pathlist_has(frozen, b[i].path)) {
			pathlist_add(frozen, b[i].path, true);
			sb_addf(&ascend, "%s%s", ascend.len ? ", " : "", b[i].path);
		} else if (!pathlist_has(frozen, b[i].path)) {
			struct sb what = SB_INIT;
			sb_addf(&what, "backend %s (%s", b[i].path, b[i].name);
			if (b[i].package)
				sb_addf(&what, ", when %s is installed", b[i].package);
			if (b[i].hopper)
				sb_adds(&what, ", on Hopper");
			if (b[i].env_var)
				sb_addf(&what, "; %s", b[i].env_var);
			sb_addf(&what, ") can replace code of %s (@dispatch('%s'))", b[i].by,
				b[i].dispatch);
			if (kern) {
				sb_addf(decided, "%s: a kernel file\n", what.buf);
			} else {
				pathlist_add(frozen, b[i].path, true);
				sb_addf(decided,
					"%s: frozen, as the benchmark may run it in place of the op's "
					"code and a change there would lie outside the kernel; to "
					"optimize it, add --kernel %s to the op's kernel files\n",
					what.buf, b[i].path);
			}
			sb_release(&what);
		}
		const char *reg = b[i].registry;
		if (reg && !kernel_touches(kernel, nk, reg) && !pathlist_has(frozen, reg)) {
			pathlist_add(frozen, reg, true);
			sb_addf(&regs, "%s%s", regs.len ? ", " : "", reg);
		}
	}
	if (ascend.len)
		sb_addf(decided, "frozen: %s: Ascend NPU backends of the same dispatches (never run "
				 "on an NVIDIA GPU)\n",
			ascend.buf);
	if (regs.len)
		sb_addf(decided, "frozen: %s: the registries that pick among those backends\n",
			regs.buf);
	sb_release(&ascend);
	sb_release(&regs);
	flabackend_free(b, n);
}

/* A kernel path may hold frozen files (they are left out of every kernel
 * commit and hash) but may not be one, nor lie inside one. */
static int kernel_outside_frozen(const char **kernel, size_t nk, const struct pathlist *frozen,
				 struct sb *decided, struct err *e)
{
	for (size_t i = 0; i < nk; i++) {
		struct sb inside = SB_INIT;
		for (size_t j = 0; j < frozen->n; j++) {
			if (fsutil_path_under(kernel[i], frozen->v[j])) {
				sb_release(&inside);
				return err_set(e, ERR_USAGE,
					       "kernel path %s is frozen (it is or lies in %s, the gate "
					       "test or what it compares against); name the kernel files "
					       "with --kernel PATH",
					       kernel[i], frozen->v[j]);
			}
			if (fsutil_path_under(frozen->v[j], kernel[i]))
				sb_addf(&inside, "%s%s", inside.len ? ", " : "", frozen->v[j]);
		}
		if (decided)
			sb_addf(decided, "kernel: %s%s%s%s\n", kernel[i],
			inside.len ? " (without the frozen " : "", inside.len ? inside.buf : "",
			inside.len ? ")" : "");
		sb_release(&inside);
	}
	return 0;
}

/* Outside an FLA registry entry optloop has no defaults: ERR_USAGE naming
 * every option the user must pass (fe: why the registry had none). */
static int init_options_needed(const struct loop_init_opts *o, bool fla_shaped,
			       const struct err *fe, struct err *e)
{
	bool named_ref = o->naive || o->nfrozen; /* the user named what is frozen */
	struct sb need = SB_INIT;
	int rc = 0;
	if (!o->test_file)
		sb_adds(&need, " --test-file PATH");
	if (!named_ref)
		sb_adds(&need, " --naive PATH (or --frozen PATH)");
	if (!o->nkernel)
		sb_adds(&need, " --kernel PATH");
	if (!o->verify_cmd)
		sb_adds(&need, " --verify CMD");
	if (need.len && fla_shaped)
		rc = err_set(e, ERR_USAGE, "%s; or pass:%s", fe->msg, need.buf);
	else if (need.len)
		rc = err_set(e, ERR_USAGE,
			     "this repository is not FLA-shaped (no register_op entry for '%s' in "
			     "benchmarks/ops/registry.py), so optloop cannot find the defaults; "
			     "pass:%s",
			     o->op, need.buf);
	sb_release(&need);
	return rc;
}

/* The kernel paths: the user's (--kernel), else the op's call graph's,
 * else the registry's package; each must exist in repo, lie outside
 * profile/ and be usable as a kernel path.  *kernel is caller-freed (its
 * strings are borrowed from o, graph and d). */
static int init_kernel_paths(const char *repo, const char *gitdir, const struct loop_init_opts *o,
			     const struct workspace_defaults *d, const struct pathlist *graph,
			     const char ***kernel, size_t *nkernel, struct err *e)
{
	if (o->nkernel) {
		*kernel = xcalloc(o->nkernel, sizeof(char *));
		for (size_t i = 0; i < o->nkernel; i++)
			(*kernel)[i] = o->kernel[i];
		*nkernel = o->nkernel;
	} else if (graph->n) {
		*kernel = xcalloc(graph->n, sizeof(char *));
		for (size_t i = 0; i < graph->n; i++)
			(*kernel)[i] = graph->v[i];
		*nkernel = graph->n;
	} else {
		*kernel = xcalloc(1, sizeof(char *));
		(*kernel)[0] = d->kernel;
		*nkernel = 1;
	}
	for (size_t i = 0; i < *nkernel; i++) {
		const char *k = (*kernel)[i];
		char *full = xasprintf("%s/%s", repo, k);
		bool ok = fsutil_exists(full);
		free(full);
		if (!ok || !strncmp(k, "profile", 7) || strstr(k, ".."))
			return err_set(e, ERR_USAGE,
				       "kernel path %s does not exist in %s (pass --kernel PATH, "
				       "relative to the repository root)",
				       k, repo);
		const char *bad = loop_kernel_path_unusable(repo, gitdir, k);
		if (bad)
			return err_set(e, ERR_USAGE,
				       "kernel path %s %s; name the kernel's own files or directory "
				       "with --kernel PATH (e.g. --kernel ops/my_op/kernel.py)",
				       k, bad);
	}
	return 0;
}

/* An op the registry imports from outside the repository (FLA registers
 * flash_attn from the installed flash_attn package): nothing of it can be
 * committed or frozen here, so init says so instead of failing on a test
 * path the registry only guessed.  A --kernel the user names (a copy of the
 * package inside the repository) is theirs to judge. */
static int init_external_op(const char *repo, const struct loop_init_opts *o,
			    const struct workspace_defaults *d, struct err *e)
{
	if (o->nkernel || !d->import_path)
		return 0;
	char *top = xstrndup(d->import_path, strcspn(d->import_path, "."));
	char *dir = fsutil_join(repo, top);
	char *py = xasprintf("%s.py", dir);
	bool inside = fsutil_exists(dir) || fsutil_exists(py);
	int rc = 0;
	if (!inside)
		rc = err_set(e, ERR_REFUSED,
			     "init refused: the op %s is not implemented in this repository: "
			     "benchmarks/ops/registry.py imports %s from %s, an installed package "
			     "(there is no %s/ or %s.py in %s), so optloop can neither commit a "
			     "change to it nor freeze what its gate compares against; optimize it "
			     "in the %s package's own repository, or, with a copy of its source "
			     "here, name the files: optloop init --op %s --kernel PATH --test-file "
			     "PATH --frozen PATH",
			     o->op, d->func_name, d->import_path, top, top, repo, top, o->op);
	free(top);
	free(dir);
	free(py);
	return rc;
}

/* The new workspace's facts in its store, in one transaction: the op, the
 * kernel, the gate test, the reference, HEAD at init and the init event. */
static int init_record(struct store *s, const char *op, const char *kernel_text,
		       const char *test_file, const char *naive, const char *head, struct err *e)
{
	int rc = store_begin(s, e);
	if (rc == 0)
		rc = store_meta_set(s, "op", op, e);
	if (rc == 0)
		rc = store_meta_set(s, "kernel", kernel_text, e);
	if (rc == 0)
		rc = store_meta_set(s, "test_file", test_file, e);
	if (rc == 0)
		rc = store_meta_set(s, "naive", naive, e);
	if (rc == 0 && head[0])
		rc = store_meta_set(s, "init_head", head, e);
	if (rc == 0)
		rc = store_workspace_add(s, op, e);
	if (rc == 0)
		rc = store_event(s, -1, "init", kernel_text, e);
	if (rc == 0)
		rc = store_commit(s, e);
	else
		store_rollback(s);
	return rc;
}

int loop_init(const char *cwd, const struct loop_init_opts *o, struct sb *notes, struct err *e)
{
	struct vcs *v = NULL;
	struct workspace ws;
	struct workspace_defaults d;
	struct contract c;
	struct store *s = NULL;
	struct sb draft = SB_INIT, logtext = SB_INIT, missing = SB_INIT;
	struct optlog_doc doc;
	char head[VCS_OID_HEX] = "";
	const char **kernel = NULL;
	size_t nkernel = 0;
	struct pathlist frozen = {0};
	struct pathlist graph_kernel = {0}; /* the kernel from the op's call graph (FLA) */
	char *verify_par = NULL;            /* the validation command with the gate's workers */
	struct sb decided = SB_INIT; /* why each path is frozen, for the notes */
	struct sb backends = SB_INIT; /* the backends the op may dispatch to (flabackend_record) */
	char *kernel_text = NULL, *frozen_text = NULL, *op_text = NULL, *kernel_list = NULL;
	int rc;

	memset(&ws, 0, sizeof(ws));
	memset(&d, 0, sizeof(d));
	memset(&c, 0, sizeof(c));
	if ((rc = workspace_op_valid(o->op, e)) < 0)
		return rc;
	if ((rc = vcs_open(cwd, &v, e)) < 0)
		return rc;
	const char *repo = vcs_workdir(v);
	struct err fe = {0};
	bool fla = workspace_fla_defaults(repo, o->op, &d, &fe) == 0;
	char *registry = fsutil_join(repo, "benchmarks/ops/registry.py");
	bool fla_shaped = fsutil_exists(registry);
	free(registry);
	if (!fla && (rc = init_options_needed(o, fla_shaped, &fe, e)) < 0)
		goto out;
	if (fla && (rc = init_external_op(repo, o, &d, e)) < 0)
		goto out;
	const char *test_file = o->test_file ? o->test_file : d.test_file;
	const char *verify = o->verify_cmd ? o->verify_cmd : d.verify_cmd;
	if (verify && o->gate_workers > 1) {
		/* pytest reads PYTEST_ADDOPTS wherever the harness starts it */
		verify_par = xasprintf("PYTEST_ADDOPTS='-n %d' %s", o->gate_workers, verify);
		verify = verify_par;
	}
	/* The benchmark command says how the harness compares: with --base REF
	 * where it times a ref beside the tree (FLA's verify, given as the
	 * default; a user's --bench), and then confirm pairs (loop_session.c);
	 * else the validation command itself, and confirm measures the best and
	 * the candidate in turns. */
	const char *bench = o->bench_cmd ? o->bench_cmd : d.bench_cmd ? d.bench_cmd : verify;
	if ((rc = frozen_scope(repo, o, fla ? &d : NULL, test_file, &frozen, &graph_kernel,
			       &decided, e)) < 0) {
		goto out;
	}
	if ((rc = init_freeze_gate_config(repo, o, test_file, verify, &frozen, &decided, e)) < 0) {
		goto out;
	}
	if ((rc = init_kernel_paths(repo, vcs_gitdir(v), o, &d, &graph_kernel, &kernel, &nkernel,
				    e)) < 0) {
		goto out;
	}
	if (fla)
		init_backends(repo, &d, kernel, nkernel, &frozen, &decided, &backends);
	if ((rc = kernel_outside_frozen(kernel, nkernel, &frozen, graph_kernel.n ? NULL : &decided,
					e)) < 0) {
		goto out;
	}
	const char *naive = frozen.n > 1 ? frozen.v[1] : "";
	kernel_text = join_list(kernel, nkernel, "\n");
	frozen_text = join_list(frozen.v, frozen.n, "\n");
	kernel_list = join_list(kernel, nkernel, ", ");
	op_text = xasprintf("%s — kernel: %s", o->op, kernel_list);
	c.v[CF_OP] = op_text;
	c.v[CF_TARGET] = (char *)o->target;
	c.v[CF_LANGUAGES] = (char *)o->languages;
	c.v[CF_VALIDATION] = (char *)verify;
	c.v[CF_BENCHMARK] = (char *)bench;
	c.v[CF_PROMOTION] = (char *)o->promotion;
	c.v[CF_FROZEN] = frozen_text;
	c.threshold = RULES_THRESHOLD;
	rc = contract_template(&c, &draft, e);
	if (rc < 0)
		goto out;

	workspace_paths(repo, o->op, &ws);
	memset(&doc, 0, sizeof(doc));
	doc.op = ws.op;
	doc.target = (char *)o->target;
	optlog_render(&doc, &logtext);
	if ((rc = workspace_ensure_ignored(v, notes, e)) < 0)
		goto out;
	if ((rc = workspace_create(&ws, draft.buf, logtext.buf, notes, e)) < 0)
		goto out;
	if ((rc = store_open(ws.db_path, STORE_CREATE, &s, e)) < 0)
		goto out;
	vcs_head(v, head, NULL);
	rc = init_record(s, o->op, kernel_text, test_file, naive, head, e);
	if (rc == 0 && backends.len)
		rc = store_meta_set(s, "backends", backends.buf, e);
	if (rc == 0) {
		/* the empty log just written, recorded as every later write is */
		long long gen = -1;
		store_rows_gen(s, &gen, NULL);
		char *key = loop_optlog_key(doc.op, NULL, doc.target, NULL, gen);
		loop_optlog_record(s, logtext.buf, logtext.len, key);
		free(key);
	}
	if (rc == 0 && notes) {
		char *fl = join_list(frozen.v, frozen.n, ", ");
		sb_addf(notes, "created %s (kernel: %s; frozen: %s)\n", ws.rel, kernel_list, fl);
		free(fl);
		sb_add(notes, decided.buf ? decided.buf : "", decided.len);
	}
out:
	pathlist_release(&frozen);
	pathlist_release(&graph_kernel);
	sb_release(&decided);
	sb_release(&backends);
	free(kernel_list);
	store_close(s);
	workspace_release(&ws);
	workspace_defaults_release(&d);
	free(kernel);
	free(verify_par);
	free(kernel_text);
	free(frozen_text);
	free(op_text);
	sb_release(&draft);
	sb_release(&logtext);
	sb_release(&missing);
	vcs_free(v);
	return rc;
}
