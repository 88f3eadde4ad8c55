/*
 * store_sql — small statement helpers shared by the store's own files
 * (store.c, store_guards.c, store_stats.c) and by nothing else: only the
 * store speaks SQL.
 */
#ifndef OPTLOOP_STORE_SQL_H
#define OPTLOOP_STORE_SQL_H

#include "core/err.h"
#include "core/sb.h" /* xstrdup */
#include "core/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <sys/time.h>

/* A run's numbers count when it finished on its own and either passed its
 * gate or had none (noise and confirm runs are benchmark-only); the run is
 * r in the statement. */
#define USABLE_RUN                                                                        \
	" r.t_end > 0 AND r.cancelled = 0 AND r.timed_out = 0 AND COALESCE(r.signal, 0) = 0" \
	" AND r.gate IN (1, 0, 5)"

static inline double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* NULL binds NULL. */
static inline void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* A number that is not finite binds NULL. */
static inline void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* A copy of a text column (caller frees), NULL for NULL. */
static inline char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? xstrdup((const char *)t) : NULL;
}

/* NAN for NULL. */
static inline double col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* What, and the database's last error: ERR_IO, saying so and what to do
 * when the disk is full; ERR_READONLY when the files cannot be written
 * (store.c). */
int store_fail(struct store *s, const char *what, struct err *e);

static inline int sql_fail(struct store *s, const char *what, struct err *e)
{
	return store_fail(s, what, e);
}

/* A one-off statement (store.c keeps a cache of its own); NULL when it
 * cannot be prepared, the reason left for sql_fail. */
static inline sqlite3_stmt *sql_stmt(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(store_db(s), sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

/* A statement kept prepared for the life of the store (sql a string literal:
 * the cache knows it by its address), for one that runs once per run or per
 * row; NULL when it cannot be prepared, the reason left for sql_fail.  Give
 * it back with store_stmt_put (reset, never finalized by the caller). */
sqlite3_stmt *store_stmt_kept(struct store *s, const char *sql);
void store_stmt_put(struct store *s, sqlite3_stmt *st);

/* Step a write to its end and finalize it; a statement that could not be
 * prepared (NULL) fails the same way. */
static inline int sql_done(struct store *s, sqlite3_stmt *st, const char *what, struct err *e)
{
	int rc = st && sqlite3_step(st) == SQLITE_DONE ? 0 : sql_fail(s, what, e);
	sqlite3_finalize(st);
	return rc;
}

/* What a run's samples say about it (the SET list of an UPDATE of runs;
 * run: the run's id in the statement): repeats, its sample rows less its
 * distinct shapes; paired, whether a sample has a base column. */
#define RUN_SAMPLE_FACTS(run)                                                              \
	"repeats = (SELECT count(*) FROM samples WHERE run_id = " run ") - (SELECT count(*)"   \
	" FROM (SELECT DISTINCT mode, B, T, H, D, L, op FROM samples WHERE run_id = " run      \
	")), paired = EXISTS(SELECT 1 FROM samples WHERE run_id = " run                        \
	" AND base_ms IS NOT NULL)"

/* The migrations, one per schema version: store_migrations[v] takes a
 * database from version v to v + 1 (store_schema.c). */
extern const char *const store_migrations[STORE_SCHEMA_VERSION];

#endif
