/* measure_memo — the memo of what one comparison reads (measure_memo.h).
 *
 * A confirm's comparison pools the same kernels' runs several ways (the
 * session's, the other sessions', every session's; as the best's and as
 * history), and a tree re-measured often has hundreds of runs.  While a
 * memo is open (measure_memo_open: a confirm's comparison, a report's
 * claim), each tree's runs (with their environments) and each run's samples
 * are read from the store once and kept here, each only once read whole;
 * the store does not change meanwhile, so what is replayed is what a read
 * would give, in the same order. */
#include "core/measure_memo.h"
#include "core/sb.h"
#include "core/measure.h"
#include "core/store.h"

#include <stdlib.h>
#include <string.h>

struct memo_run {
	int id;
	bool base;
	struct memo_sample *v;
	size_t n, cap;
};
struct memo_tree {
	char *tree;
	struct store_tree_run *v;
	char **env; /* measure_env_key of each, NULL where none */
	size_t n;
};
struct measure_memo {
	struct memo_run *runs; /* open addressing on (id, base); id 0 empty */
	size_t cap, nruns;
	struct memo_tree *trees;
	size_t ntrees;
};
static struct measure_memo *memo; /* the one open, or NULL */

struct measure_memo *measure_memo_open(void)
{
	if (memo)
		return NULL; /* one is open: it serves */
	memo = xcalloc(1, sizeof(*memo));
	return memo;
}

static void memo_run_release(struct memo_run *r)
{
	for (size_t k = 0; k < r->n; k++)
		free(r->v[k].key);
	free(r->v);
}

static void memo_tree_release(struct memo_tree *t)
{
	for (size_t k = 0; k < t->n; k++)
		free(t->env[k]);
	free(t->env);
	store_tree_runs_release(t->v, t->n);
	free(t->tree);
}

void measure_memo_close(struct measure_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		memo_run_release(&m->runs[i]);
	free(m->runs);
	for (size_t i = 0; i < m->ntrees; i++)
		memo_tree_release(&m->trees[i]);
	free(m->trees);
	if (memo == m)
		memo = NULL;
	free(m);
}

static struct memo_run *memo_slot(struct memo_run *runs, size_t cap, int id, bool base)
{
	size_t h = ((size_t)id * 2654435761u + base) & (cap - 1);
	while (runs[h].id && !(runs[h].id == id && runs[h].base == base))
		h = (h + 1) & (cap - 1);
	return &runs[h];
}

/* The run (id, base) read already, or NULL. */
static const struct memo_run *memo_find(const struct measure_memo *m, int id, bool base)
{
	if (!m->cap)
		return NULL;
	const struct memo_run *r = memo_slot(m->runs, m->cap, id, base);
	return r->id ? r : NULL;
}

/* Keep r (read whole), the table grown as needed; returns where it is. */
static const struct memo_run *memo_put(struct measure_memo *m, const struct memo_run *r)
{
	if ((m->nruns + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct memo_run *v = xcalloc(cap, sizeof(*v));
		for (size_t i = 0; i < m->cap; i++)
			if (m->runs[i].id)
				*memo_slot(v, cap, m->runs[i].id, m->runs[i].base) = m->runs[i];
		free(m->runs);
		m->runs = v;
		m->cap = cap;
	}
	struct memo_run *slot = memo_slot(m->runs, m->cap, r->id, r->base);
	*slot = *r;
	m->nruns++;
	return slot;
}

static void memo_sample(void *ctx, const struct parse_row *r, double ms)
{
	struct memo_run *m = ctx;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 16;
		m->v = xrealloc(m->v, m->cap * sizeof(*m->v));
	}
	m->v[m->n].key = measure_shape_key(r);
	m->v[m->n++].ms = ms;
}

bool measure_memo_on(void)
{
	return memo != NULL;
}

int measure_memo_samples(struct store *s, int id, bool base, const struct memo_sample **v,
			 size_t *n, struct err *e)
{
	const struct memo_run *m = memo_find(memo, id, base);
	*v = NULL;
	*n = 0;
	if (!m) {
		struct memo_run read = {.id = id, .base = base};
		int rc = store_run_side_samples(s, id, base, memo_sample, &read, e);
		if (rc < 0) { /* kept only whole */
			memo_run_release(&read);
			return rc;
		}
		m = memo_put(memo, &read);
	}
	*v = m->v;
	*n = m->n;
	return 0;
}

int measure_memo_tree(struct store *s, const char *tree, const struct store_tree_run **v,
		      char *const **env, size_t *n, struct err *e)
{
	const struct memo_tree *found = NULL;
	for (size_t i = 0; i < memo->ntrees && !found; i++)
		if (!strcmp(memo->trees[i].tree, tree))
			found = &memo->trees[i];
	if (!found) {
		struct memo_tree t = {0};
		int rc = store_tree_runs(s, tree, &t.v, &t.n, e);
		if (rc < 0)
			return rc;
		t.tree = xstrdup(tree);
		t.env = xcalloc(t.n ? t.n : 1, sizeof(*t.env));
		for (size_t i = 0; rc == 0 && i < t.n; i++)
			rc = measure_env_key(s, t.v[i].id, &t.env[i], e);
		if (rc < 0) { /* kept only whole */
			memo_tree_release(&t);
			return rc;
		}
		memo->trees = xrealloc(memo->trees, (memo->ntrees + 1) * sizeof(*memo->trees));
		memo->trees[memo->ntrees] = t;
		found = &memo->trees[memo->ntrees++];
	}
	*v = found->v;
	*env = found->env;
	*n = found->n;
	return 0;
}
