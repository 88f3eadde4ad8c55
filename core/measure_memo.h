/*
 * measure_memo — (private to the measure module) what one comparison reads,
 * read once while a memo is open (measure.h's measure_memo_open and
 * measure_memo_close): a kernel tree's runs with their environments, and a
 * run's samples.  The memo owns what these give; it stays whole until the
 * memo is closed.  Only while the store does not change.
 */
#ifndef OPTLOOP_MEASURE_MEMO_H
#define OPTLOOP_MEASURE_MEMO_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct store;
struct store_tree_run;

/* One sample of a run: its shape (measure_shape_key) and its time. */
struct memo_sample {
	char *key;
	double ms;
};

/* Whether a memo is open. */
bool measure_memo_on(void);

/* With a memo open: tree's runs (store_tree_runs) and each one's
 * environment key (measure_env_key; NULL where it has none). */
int measure_memo_tree(struct store *s, const char *tree, const struct store_tree_run **v,
		      char *const **env, size_t *n, struct err *e);

/* With a memo open: run id's samples (its base column when base), in the
 * order store_run_side_samples gives them. */
int measure_memo_samples(struct store *s, int id, bool base, const struct memo_sample **v,
			 size_t *n, struct err *e);

#endif
