/*
 * store_slurm — the store's side of runs through Slurm: the allocations a
 * workspace requested and where each run's step ran.  See store.h.
 *
 * Reads of a table that a read-only store of an old schema lacks answer
 * "nothing there".
 */
#include "core/store.h"
#include "core/store_sql.h"

#include "core/err.h"
#include "core/sb.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define ALLOC_COLS                                                                          \
	"id, job, runner, state, reason, node, requested, granted, last_used, released, why, pid"

void store_alloc_release(struct store_alloc *a)
{
	free(a->job);
	free(a->runner);
	free(a->state);
	free(a->reason);
	free(a->node);
	free(a->why);
	memset(a, 0, sizeof(*a));
}

static double col_time(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : sqlite3_column_double(st, i);
}

static int alloc_select(struct store *s, const char *where, struct store_alloc *a,
			struct err *e)
{
	memset(a, 0, sizeof(*a));
	char *sql = xasprintf("SELECT " ALLOC_COLS " FROM slurm_allocs %s ORDER BY id DESC LIMIT 1",
			      where);
	sqlite3_stmt *st = sql_stmt(s, sql);
	free(sql);
	if (!st)
		return err_set(e, ERR_NOTFOUND, "no Slurm allocation recorded");
	int rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? err_set(e, ERR_NOTFOUND, "no Slurm allocation recorded")
					 : sql_fail(s, "reading the Slurm allocation", e);
	}
	a->id = sqlite3_column_int(st, 0);
	a->job = col_text(st, 1);
	a->runner = col_text(st, 2);
	a->state = col_text(st, 3);
	a->reason = col_text(st, 4);
	a->node = col_text(st, 5);
	a->requested = col_time(st, 6);
	a->granted = col_time(st, 7);
	a->last_used = col_time(st, 8);
	a->released = col_time(st, 9);
	a->why = col_text(st, 10);
	a->pid = sqlite3_column_int(st, 11);
	sqlite3_finalize(st);
	return 0;
}

int store_alloc_current(struct store *s, struct store_alloc *a, struct err *e)
{
	return alloc_select(s, "WHERE released IS NULL", a, e);
}

int store_alloc_last(struct store *s, struct store_alloc *a, struct err *e)
{
	return alloc_select(s, "", a, e);
}

static void bind_time(sqlite3_stmt *st, int i, double t)
{
	if (t > 0)
		sqlite3_bind_double(st, i, t);
	else
		sqlite3_bind_null(st, i);
}

static void bind_alloc(sqlite3_stmt *st, const struct store_alloc *a)
{
	bind_text(st, 1, a->job);
	bind_text(st, 2, a->runner ? a->runner : "");
	bind_text(st, 3, a->state ? a->state : "requested");
	bind_text(st, 4, a->reason);
	bind_text(st, 5, a->node);
	bind_time(st, 6, a->requested);
	bind_time(st, 7, a->granted);
	bind_time(st, 8, a->last_used);
	bind_time(st, 9, a->released);
	bind_text(st, 10, a->why);
	sqlite3_bind_int(st, 11, a->pid);
}

int store_alloc_insert(struct store *s, struct store_alloc *a, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO slurm_allocs(job, runner, state, reason, node,"
				       " requested, granted, last_used, released, why, pid)"
				       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	if (st)
		bind_alloc(st, a);
	int rc = sql_done(s, st, "recording the Slurm allocation", e);
	if (rc == 0)
		a->id = (int)sqlite3_last_insert_rowid(store_db(s));
	return rc;
}

int store_alloc_update(struct store *s, const struct store_alloc *a, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "UPDATE slurm_allocs SET job = ?, runner = ?, state = ?,"
				       " reason = ?, node = ?, requested = ?, granted = ?,"
				       " last_used = ?, released = ?, why = ?, pid = ? WHERE id = ?");
	if (st) {
		bind_alloc(st, a);
		sqlite3_bind_int(st, 12, a->id);
	}
	return sql_done(s, st, "updating the Slurm allocation", e);
}

void store_step_release(struct store_step *x)
{
	free(x->job);
	free(x->step);
	free(x->node);
	free(x->gpus);
	free(x->cause);
	free(x->why);
	memset(x, 0, sizeof(*x));
}

int store_step_put(struct store *s, const struct store_step *x, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT OR REPLACE INTO slurm_steps(run_id, job, step, node,"
				       " gpus, cause, why) VALUES (?, ?, ?, ?, ?, ?, ?)");
	if (st) {
		sqlite3_bind_int(st, 1, x->run_id);
		bind_text(st, 2, x->job);
		bind_text(st, 3, x->step);
		bind_text(st, 4, x->node);
		bind_text(st, 5, x->gpus);
		bind_text(st, 6, x->cause ? x->cause : "ok");
		bind_text(st, 7, x->why);
	}
	return sql_done(s, st, "recording the run's Slurm step", e);
}

int store_step_get(struct store *s, int run_id, struct store_step *x, struct err *e)
{
	memset(x, 0, sizeof(*x));
	sqlite3_stmt *st = sql_stmt(s, "SELECT job, step, node, gpus, cause, why FROM slurm_steps"
				       " WHERE run_id = ?");
	if (!st)
		return err_set(e, ERR_NOTFOUND, "run %d did not go through Slurm", run_id);
	sqlite3_bind_int(st, 1, run_id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		x->run_id = run_id;
		x->job = col_text(st, 0);
		x->step = col_text(st, 1);
		x->node = col_text(st, 2);
		x->gpus = col_text(st, 3);
		x->cause = col_text(st, 4);
		x->why = col_text(st, 5);
		rc = 0;
	} else {
		rc = err_set(e, ERR_NOTFOUND, "run %d did not go through Slurm", run_id);
	}
	sqlite3_finalize(st);
	return rc;
}
