/*
 * store_stats — the store's side of the statistics: the stats_* tables
 * (GPU probe readings, session roles, verdicts, confirms, explanations,
 * attached artifacts) and the reads of runs and samples that the verdicts
 * are computed from.  See store.h.
 *
 * A stats_* table that cannot be read (a read-only store of an old schema)
 * reads as empty: ERR_NOTFOUND or no rows, as each function says.
 */
#include "core/store.h"
#include "core/store_sql.h"

#include "core/err.h"
#include "core/sb.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/* Prepare; a missing table gives ERR_NOTFOUND so callers can read it as "no
 * rows". */
static int prep(struct store *s, const char *sql, sqlite3_stmt **st, struct err *e)
{
	if ((*st = sql_stmt(s, sql)))
		return 0;
	if (strstr(sqlite3_errmsg(store_db(s)), "no such table"))
		return ERR_NOTFOUND;
	return sql_fail(s, "database query failed", e);
}

/* prep for a statement a report runs once per run of the history: kept
 * prepared (store_stmt_kept), given back with store_stmt_put. */
static int prep_kept(struct store *s, const char *sql, sqlite3_stmt **st, struct err *e)
{
	if ((*st = store_stmt_kept(s, sql)))
		return 0;
	if (strstr(sqlite3_errmsg(store_db(s)), "no such table"))
		return ERR_NOTFOUND;
	return sql_fail(s, "database query failed", e);
}

/* ---- probe readings ---- */

int store_probe_put(struct store *s, int run_id, const char *phase, double t, bool available,
		    bool busy, const char *json, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT INTO stats_probes(run_id, phase, t, available, busy, json)"
			 " VALUES (?,?,?,?,?,?)", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, run_id);
	bind_text(st, 2, phase);
	sqlite3_bind_double(st, 3, t);
	sqlite3_bind_int(st, 4, available);
	sqlite3_bind_int(st, 5, busy);
	bind_text(st, 6, json);
	return sql_done(s, st, "cannot record a probe reading", e);
}

int store_probe_json(struct store *s, int run_id, const char *phase, char **json, struct err *e)
{
	sqlite3_stmt *st;
	*json = NULL;
	int rc = prep_kept(s, "SELECT json FROM stats_probes WHERE run_id = ? AND phase = ?"
			 " ORDER BY id DESC LIMIT 1", &st, e);
	if (rc < 0 && rc != ERR_NOTFOUND)
		return rc;
	if (rc == 0) {
		sqlite3_bind_int(st, 1, run_id);
		bind_text(st, 2, phase);
		if (sqlite3_step(st) == SQLITE_ROW)
			*json = col_text(st, 0);
		store_stmt_put(s, st);
	}
	return *json ? 0 : err_set(e, ERR_NOTFOUND, "run %d has no %s probe reading", run_id, phase);
}

/* ---- sessions, environments, runs and samples ---- */

int store_session_put(struct store *s, int run_id, int session, const char *role, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT OR REPLACE INTO stats_runs(run_id, session, role) VALUES (?,?,?)",
		      &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, run_id);
	sqlite3_bind_int(st, 2, session);
	bind_text(st, 3, role);
	return sql_done(s, st, "cannot record a run's session", e);
}

int store_run_session(struct store *s, int run_id)
{
	int sess = run_id;
	sqlite3_stmt *st;
	if (prep_kept(s, "SELECT session FROM stats_runs WHERE run_id = ?", &st, NULL) == 0) {
		sqlite3_bind_int(st, 1, run_id);
		if (sqlite3_step(st) == SQLITE_ROW)
			sess = sqlite3_column_int(st, 0);
		store_stmt_put(s, st);
	}
	return sess;
}

void store_env_release(struct store_env *v)
{
	free(v->device);
	free(v->backend);
	free(v->pytorch);
	free(v->triton);
	memset(v, 0, sizeof(*v));
}

int store_run_env_key(struct store *s, int run_id, char **key)
{
	sqlite3_stmt *st;
	*key = NULL;
	if (prep_kept(s, "SELECT env_key FROM runs WHERE id = ? AND env_key IS NOT NULL", &st, NULL) < 0)
		return 0;
	sqlite3_bind_int(st, 1, run_id);
	int found = 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		*key = k && *k ? xstrdup(k) : NULL;
		found = 1;
	}
	store_stmt_put(s, st);
	return found;
}

void store_run_env_key_put(struct store *s, int run_id, const char *key)
{
	sqlite3_stmt *st;
	if (store_readonly(s) ||
	    prep(s, "UPDATE runs SET env_key = ? WHERE id = ? AND t_end > 0", &st, NULL) < 0)
		return;
	sqlite3_bind_text(st, 1, key ? key : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, run_id);
	sqlite3_step(st);
	sqlite3_finalize(st);
}

int store_run_env(struct store *s, int run_id, struct store_env *out, struct err *e)
{
	sqlite3_stmt *st;
	memset(out, 0, sizeof(*out));
	int rc = prep(s, "SELECT e.device, e.backend, e.pytorch, e.triton FROM runs r"
			 " JOIN envs e ON e.id = r.env_id WHERE r.id = ?", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, run_id);
	rc = ERR_NOTFOUND;
	if (sqlite3_step(st) == SQLITE_ROW) {
		out->device = col_text(st, 0);
		out->backend = col_text(st, 1);
		out->pytorch = col_text(st, 2);
		out->triton = col_text(st, 3);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

void store_tree_runs_release(struct store_tree_run *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].role);
	free(v);
}

/* The rows of a statement of store_tree_runs' columns (id, session, role,
 * base), bound by the caller; the statement is put back. */
static int tree_runs_read(struct store *s, sqlite3_stmt *st, struct store_tree_run **out,
			  size_t *n)
{
	size_t cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[*n] = (struct store_tree_run){
			.id = sqlite3_column_int(st, 0),
			.session = sqlite3_column_int(st, 1),
			.role = col_text(st, 2),
			.base = sqlite3_column_int(st, 3) != 0,
		};
		(*n)++;
	}
	store_stmt_put(s, st);
	return 0;
}

int store_tree_runs(struct store *s, const char *tree, struct store_tree_run **out, size_t *n,
		    struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	/* A paired run (role "pair": the harness measured the best's commit in
	 * its base column and the work tree in its new one) is a candidate run
	 * of its own tree and a best run of its confirm's best tree. */
	int rc = prep_kept(s, "SELECT r.id, COALESCE(sr.session, r.id),"
			 " CASE sr.role WHEN 'pair' THEN 'cand' ELSE sr.role END, 0 FROM runs r"
			 " LEFT JOIN stats_runs sr ON sr.run_id = r.id"
			 " WHERE r.tree = ?1 AND" USABLE_RUN
			 " UNION ALL SELECT r.id, sr.session, 'best', 1 FROM runs r"
			 " JOIN stats_runs sr ON sr.run_id = r.id AND sr.role = 'pair'"
			 " JOIN stats_confirms c ON c.session = sr.session AND c.best_tree = ?1"
			 " WHERE" USABLE_RUN " ORDER BY 1", &st, e);
	if (rc == ERR_NOTFOUND) /* no stats_runs: every run is its own session */
		rc = prep_kept(s, "SELECT r.id, r.id, NULL, 0 FROM runs r WHERE r.tree = ?1 AND" USABLE_RUN
			     " ORDER BY r.id", &st, e);
	if (rc < 0)
		return rc;
	bind_text(st, 1, tree);
	return tree_runs_read(s, st, out, n);
}

int store_session_tree_runs(struct store *s, const char *tree, int session,
			    struct store_tree_run **out, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	*out = NULL;
	*n = 0;
	/* store_tree_runs' rows of one session: its runs (stats_runs by
	 * session, or the one run of that id in none), not every run of the
	 * tree (CROSS JOIN: the session's few rows first, never the tree's) */
	int rc = prep_kept(s, "SELECT r.id, sr.session, CASE sr.role WHEN 'pair' THEN 'cand' ELSE"
			      " sr.role END, 0 FROM stats_runs sr CROSS JOIN runs r ON r.id = sr.run_id"
			      " WHERE sr.session = ?2 AND r.tree = ?1 AND" USABLE_RUN
			      " UNION ALL SELECT r.id, sr.session, 'best', 1 FROM stats_runs sr"
			      " JOIN runs r ON r.id = sr.run_id"
			      " JOIN stats_confirms c ON c.session = sr.session AND c.best_tree = ?1"
			      " WHERE sr.session = ?2 AND sr.role = 'pair' AND" USABLE_RUN
			      /* a run in no session is a session of its own */
			      " UNION ALL SELECT r.id, r.id, NULL, 0 FROM runs r WHERE r.id = ?2 AND"
			      " r.tree = ?1 AND" USABLE_RUN " AND NOT EXISTS (SELECT 1 FROM stats_runs"
			      " WHERE run_id = r.id) ORDER BY 1", &st, e);
	if (rc < 0)
		return rc;
	bind_text(st, 1, tree);
	sqlite3_bind_int(st, 2, session);
	return tree_runs_read(s, st, out, n);
}

int store_spread_trees(struct store *s, char ***out, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	/* a tree with one run of distinct shapes adds nothing to a spread
	 * (neither between sessions nor within one), whatever else is pooled */
	int rc = prep_kept(s,
		      "SELECT tree FROM (SELECT tree, first FROM run_trees"
		      " WHERE usable >= 2 OR repeats > 0"
		      " UNION ALL SELECT c.best_tree, min(r.id) FROM stats_confirms c"
		      " JOIN stats_runs sr ON sr.session = c.session AND sr.role = 'pair'"
		      " JOIN runs r ON r.id = sr.run_id"
		      " WHERE c.best_tree IS NOT NULL AND" USABLE_RUN " GROUP BY c.best_tree)"
		      " GROUP BY tree ORDER BY min(first)",
		      &st, e);
	if (rc < 0)
		return rc;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		if (!t)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = xstrdup(t);
	}
	store_stmt_put(s, st);
	return 0;
}

/* A sample's shape columns from column first on (NULL numbers as -1). */
static void shape_columns(sqlite3_stmt *st, int first, struct parse_row *r)
{
	long *f[] = {&r->B, &r->T, &r->H, &r->D, &r->L};
	r->mode = (char *)sqlite3_column_text(st, first);
	for (int i = 0; i < 5; i++)
		*f[i] = sqlite3_column_type(st, first + 1 + i) == SQLITE_NULL
				? -1
				: (long)sqlite3_column_int64(st, first + 1 + i);
	r->op = (char *)sqlite3_column_text(st, first + 6);
}

int store_run_samples(struct store *s, int run_id,
		      void (*fn)(void *ctx, const struct parse_row *r, double ms), void *ctx,
		      struct err *e)
{
	return store_run_side_samples(s, run_id, false, fn, ctx, e);
}

int store_run_side_samples(struct store *s, int run_id, bool base_side,
			   void (*fn)(void *ctx, const struct parse_row *r, double ms), void *ctx,
			   struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep_kept(s, "SELECT mode, B, T, H, D, L, op, base_ms, new_ms FROM samples"
			 " WHERE run_id = ? ORDER BY id", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, run_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct parse_row r = {0};
		shape_columns(st, 0, &r);
		double base = col_real(st, 7), nw = col_real(st, 8);
		if (base_side)
			fn(ctx, &r, base);
		else
			fn(ctx, &r, isnan(nw) ? base : nw);
	}
	store_stmt_put(s, st);
	return 0;
}

int store_row_shapes(struct store *s, void (*fn)(void *ctx, const struct parse_row *r),
		     void *ctx, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep_kept(s, "SELECT mode, B, T, H, D, L, op FROM row_shapes", &st, e);
	if (rc < 0)
		return rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct parse_row r = {0};
		shape_columns(st, 0, &r);
		r.base_ms = r.new_ms = r.speedup = NAN;
		fn(ctx, &r);
	}
	rc = rc == SQLITE_DONE ? 0 : sql_fail(s, "cannot read the rows' shapes", e);
	store_stmt_put(s, st);
	return rc;
}

int store_run_info(struct store *s, int run_id, int *iter, char **tree, int *scope,
		   struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "SELECT iter, tree, scope FROM runs WHERE id = ?", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, run_id);
	rc = err_set(e, ERR_NOTFOUND, "no run %d in the database", run_id);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*iter = sqlite3_column_int(st, 0);
		*tree = col_text(st, 1);
		*scope = sqlite3_column_int(st, 2);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int store_runs_of_tree(struct store *s, const char *tree, int **ids, enum run_kind **kinds,
		       size_t *n)
{
	sqlite3_stmt *st;
	*ids = NULL;
	*kinds = NULL;
	*n = 0;
	if (prep_kept(s, "SELECT id, kind FROM runs WHERE tree = ? AND t_end > 0 ORDER BY id", &st,
		 NULL) < 0)
		return 0;
	bind_text(st, 1, tree);
	while (sqlite3_step(st) == SQLITE_ROW) {
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		*kinds = xrealloc(*kinds, (*n + 1) * sizeof(**kinds));
		(*ids)[*n] = sqlite3_column_int(st, 0);
		(*kinds)[*n] = run_kind_parse((const char *)sqlite3_column_text(st, 1));
		(*n)++;
	}
	store_stmt_put(s, st);
	return 0;
}

int store_runs_ended_after(struct store *s, int after, int **ids, size_t *n)
{
	sqlite3_stmt *st;
	*ids = NULL;
	*n = 0;
	if (prep(s, "SELECT id FROM runs WHERE id > ? AND t_end > 0 ORDER BY id", &st, NULL) < 0)
		return 0;
	sqlite3_bind_int(st, 1, after);
	while (sqlite3_step(st) == SQLITE_ROW) {
		*ids = xrealloc(*ids, (*n + 1) * sizeof(**ids));
		(*ids)[(*n)++] = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	return 0;
}

int store_last_ended_run(struct store *s)
{
	sqlite3_stmt *st;
	int id = 0;
	if (prep(s, "SELECT coalesce(max(id), 0) FROM runs WHERE t_end > 0", &st, NULL) < 0)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return id;
}

/* ---- verdicts ---- */

int store_verdict_put(struct store *s, int run_id, int iter, const char *verdict,
		      unsigned flags, const char *json, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT OR REPLACE INTO stats_verdicts(run_id, iter, verdict, flags, json,"
			 " t) VALUES (?,?,?,?,?,?)", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, run_id);
	sqlite3_bind_int(st, 2, iter);
	bind_text(st, 3, verdict);
	sqlite3_bind_int64(st, 4, flags);
	bind_text(st, 5, json);
	sqlite3_bind_double(st, 6, now());
	return sql_done(s, st, "cannot record a verdict", e);
}

int store_verdict_get(struct store *s, int run_id, char **verdict, unsigned *flags, char **json,
		      struct err *e)
{
	sqlite3_stmt *st;
	*verdict = NULL;
	*flags = 0;
	*json = NULL;
	int rc = prep(s, "SELECT verdict, flags, json FROM stats_verdicts WHERE run_id = ?", &st, e);
	if (rc < 0 && rc != ERR_NOTFOUND)
		return rc;
	if (rc == 0) {
		sqlite3_bind_int(st, 1, run_id);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*verdict = col_text(st, 0);
			*flags = (unsigned)sqlite3_column_int64(st, 1);
			*json = col_text(st, 2);
		}
		sqlite3_finalize(st);
	}
	return *verdict ? 0 : err_set(e, ERR_NOTFOUND, "run %d has no verdict", run_id);
}

int store_last_judged_run(struct store *s, int *run_id, struct err *e)
{
	sqlite3_stmt *st;
	*run_id = 0;
	/* the verdicts walked back from the newest (CROSS JOIN: not every
	 * run scanned for the verify ones and sorted) */
	int rc = prep(s, "SELECT v.run_id FROM stats_verdicts v CROSS JOIN runs r ON r.id = v.run_id"
			 " WHERE v.run_id < 9223372036854775807 AND r.kind = 'verify'"
			 " ORDER BY v.run_id DESC LIMIT 1", &st, e);
	if (rc < 0 && rc != ERR_NOTFOUND)
		return rc;
	if (rc == 0) {
		if (sqlite3_step(st) == SQLITE_ROW)
			*run_id = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	return *run_id ? 0 : err_set(e, ERR_NOTFOUND, "no run has a verdict yet");
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

int store_uncounted_iters(struct store *s, int **out, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int sr;
	*out = NULL;
	*n = 0;
	/* One query for the whole log: a query per row made opening a long log
	 * cost seconds. */
	int rc = prep(s, "SELECT i.iter FROM iterations i JOIN stats_verdicts v ON "
			 "v.run_id = i.run_id WHERE v.verdict = 'not_comparable' UNION "
			 "SELECT i.iter FROM runs r JOIN iterations i ON i.run_id = r.id "
			 "WHERE r.no_change = 1 AND i.iter > 0", &st, e);
	if (rc == ERR_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	while ((sr = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = sqlite3_column_int(st, 0);
	}
	rc = sr == SQLITE_DONE ? 0 : sql_fail(s, "stall count", e);
	sqlite3_finalize(st);
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), cmp_int);
	return rc;
}

/* ---- confirms ---- */

void store_confirm_release(struct store_confirm *c)
{
	free(c->best_tree);
	free(c->cand_tree);
	free(c->cand_snapshot);
	free(c->verdict);
	free(c->json);
	memset(c, 0, sizeof(*c));
}

int store_confirm_begin(struct store *s, struct store_confirm *c, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT INTO stats_confirms(iter, session, best_iter, best_tree, cand_tree,"
			 " cand_snapshot, t) VALUES (?,?,?,?,?,?,?)", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, c->iter);
	sqlite3_bind_int(st, 2, c->session);
	sqlite3_bind_int(st, 3, c->best_iter);
	bind_text(st, 4, c->best_tree);
	bind_text(st, 5, c->cand_tree);
	bind_text(st, 6, c->cand_snapshot);
	sqlite3_bind_double(st, 7, now());
	rc = sql_done(s, st, "cannot record a confirm run", e);
	if (rc == 0)
		c->id = (int)sqlite3_last_insert_rowid(store_db(s));
	return rc;
}

int store_confirms_before(struct store *s, const char *best_tree, const char *cand_tree,
			  int session)
{
	sqlite3_stmt *st;
	int n = 0;
	if (!best_tree || !cand_tree ||
	    prep(s, "SELECT COUNT(*) FROM stats_confirms WHERE best_tree = ?1 AND cand_tree = ?2"
		    " AND session > 0 AND id < (SELECT COALESCE(MIN(id), 1 << 62) FROM"
		    " stats_confirms WHERE session = ?3)",
		 &st, NULL) < 0)
		return 0;
	bind_text(st, 1, best_tree);
	bind_text(st, 2, cand_tree);
	sqlite3_bind_int(st, 3, session);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

int store_confirm_count(struct store *s, int iter)
{
	sqlite3_stmt *st;
	int n = 0;
	if (prep(s, "SELECT COUNT(*) FROM stats_confirms WHERE iter = ? AND session > 0", &st,
		 NULL) < 0)
		return 0;
	sqlite3_bind_int(st, 1, iter);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return n;
}

int store_confirm_session(struct store *s, int id, int session, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "UPDATE stats_confirms SET session = ? WHERE id = ?", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, session);
	sqlite3_bind_int(st, 2, id);
	return sql_done(s, st, "cannot record a confirm session", e);
}

int store_confirm_end(struct store *s, int id, const char *verdict, unsigned flags,
		      bool promoted, const char *json, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "UPDATE stats_confirms SET verdict = ?, flags = ?, promoted = ?, done = 1,"
			 " json = ? WHERE id = ?", &st, e);
	if (rc < 0)
		return rc;
	bind_text(st, 1, verdict);
	sqlite3_bind_int64(st, 2, flags);
	sqlite3_bind_int(st, 3, promoted);
	bind_text(st, 4, json);
	sqlite3_bind_int(st, 5, id);
	return sql_done(s, st, "cannot finish a confirm record", e);
}

int store_confirm_promote(struct store *s, int id, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "UPDATE stats_confirms SET promoted = 1 WHERE id = ?", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, id);
	return sql_done(s, st, "cannot record the promotion", e);
}

static int confirm_query(struct store *s, const char *sql, int arg, struct store_confirm *c,
			 struct err *e)
{
	sqlite3_stmt *st;
	memset(c, 0, sizeof(*c));
	int rc = prep(s, sql, &st, e);
	if (rc == ERR_NOTFOUND)
		return err_set(e, ERR_NOTFOUND, "no confirm run");
	if (rc < 0)
		return rc;
	if (arg >= 0)
		sqlite3_bind_int(st, 1, arg);
	rc = err_set(e, ERR_NOTFOUND, "no confirm run");
	if (sqlite3_step(st) == SQLITE_ROW) {
		c->id = sqlite3_column_int(st, 0);
		c->iter = sqlite3_column_int(st, 1);
		c->session = sqlite3_column_int(st, 2);
		c->best_iter = sqlite3_column_int(st, 3);
		c->best_tree = col_text(st, 4);
		c->cand_tree = col_text(st, 5);
		c->verdict = col_text(st, 6);
		c->flags = (unsigned)sqlite3_column_int64(st, 7);
		c->promoted = sqlite3_column_int(st, 8);
		c->done = sqlite3_column_int(st, 9);
		c->json = col_text(st, 10);
		c->t = col_real(st, 11);
		c->cand_snapshot = col_text(st, 12);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

#define CONFIRM_COLS                                                                          \
	"SELECT id, iter, session, best_iter, best_tree, cand_tree, verdict, flags, promoted," \
	" done, json, t, cand_snapshot FROM stats_confirms "

int store_confirm_last(struct store *s, int iter, struct store_confirm *c, struct err *e)
{
	return confirm_query(s, CONFIRM_COLS "WHERE iter = ? ORDER BY id DESC LIMIT 1", iter, c, e);
}

int store_confirm_as_candidate(struct store *s, int iter, struct store_confirm *c, struct err *e)
{
	return confirm_query(s, CONFIRM_COLS "WHERE iter = ?1 AND t <= COALESCE((SELECT logged_at"
					     " FROM iterations WHERE iter = ?1), 1e300)"
					     " ORDER BY id DESC LIMIT 1",
			     iter, c, e);
}

int store_confirm_unfinished(struct store *s, struct store_confirm *c, struct err *e)
{
	return confirm_query(s, CONFIRM_COLS "WHERE done = 0 ORDER BY id DESC LIMIT 1", -1, c, e);
}

bool store_confirm_promoted(struct store *s, int iter)
{
	sqlite3_stmt *st;
	bool yes = false;
	if (prep(s, "SELECT 1 FROM stats_confirms WHERE iter = ? AND promoted = 1 AND done = 1",
		 &st, NULL) < 0)
		return false;
	sqlite3_bind_int(st, 1, iter);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* ---- explanations and artifacts ---- */

static const char *const note_insert[] = {
	[STORE_NOTE_EXPLAINED] = "INSERT INTO stats_explained(iter, note, t) VALUES (?,?,?)",
	[STORE_NOTE_ARTIFACT] = "INSERT INTO stats_artifacts(iter, path, t) VALUES (?,?,?)",
};
static const char *const note_select[] = {
	[STORE_NOTE_EXPLAINED] = "SELECT note FROM stats_explained WHERE iter = ? ORDER BY id",
	[STORE_NOTE_ARTIFACT] = "SELECT path FROM stats_artifacts WHERE iter = ? ORDER BY id",
};

static const char *const note_newest[] = {
	[STORE_NOTE_EXPLAINED] = "SELECT id, iter, note FROM stats_explained ORDER BY id DESC LIMIT 1",
	[STORE_NOTE_ARTIFACT] = "SELECT id, iter, path FROM stats_artifacts ORDER BY id DESC LIMIT 1",
};

int store_note_add(struct store *s, enum store_note kind, int iter, const char *text,
		   struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, note_insert[kind], &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, iter);
	bind_text(st, 2, text);
	sqlite3_bind_double(st, 3, now());
	return sql_done(s, st, "cannot record a note", e);
}

int store_notes(struct store *s, enum store_note kind, int iter, struct sb *out)
{
	sqlite3_stmt *st;
	int n = 0;
	if (prep(s, note_select[kind], &st, NULL) < 0)
		return 0;
	sqlite3_bind_int(st, 1, iter);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (out)
			sb_addf(out, "%s\n", (const char *)sqlite3_column_text(st, 0));
		n++;
	}
	sqlite3_finalize(st);
	return n;
}

int store_note_newest(struct store *s, enum store_note kind, int *id, int *iter, char **text)
{
	sqlite3_stmt *st;
	*id = 0;
	*iter = 0;
	if (text)
		*text = NULL;
	if (prep(s, note_newest[kind], &st, NULL) < 0)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*id = sqlite3_column_int(st, 0);
		*iter = sqlite3_column_int(st, 1);
		if (text && sqlite3_column_text(st, 2))
			*text = xstrdup((const char *)sqlite3_column_text(st, 2));
	}
	sqlite3_finalize(st);
	return 0;
}

int store_run_costs(struct store *s, int iter,
		    void (*fn)(void *ctx, int iter, enum run_kind kind, int runs, int paired,
			       double seconds),
		    void *ctx, struct err *e)
{
	sqlite3_stmt *st;
	/* iteration -1: the whole history's, by kind */
	int rc = iter == STORE_COST_TOTAL
			 ? prep(s, "SELECT -1, kind, runs, paired, seconds FROM run_cost_totals"
				   " WHERE runs > 0 ORDER BY kind", &st, e)
		 : iter == STORE_COST_ALL
			 ? prep(s, "SELECT iter, kind, runs, paired, seconds FROM run_costs"
				   " ORDER BY iter, kind", &st, e)
			 : prep(s, "SELECT iter, kind, runs, paired, seconds FROM run_costs"
				   " WHERE iter = ?1 ORDER BY kind", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, iter);
	while (sqlite3_step(st) == SQLITE_ROW) {
		fn(ctx, sqlite3_column_int(st, 0),
		   run_kind_parse((const char *)sqlite3_column_text(st, 1)), sqlite3_column_int(st, 2),
		   sqlite3_column_int(st, 3), sqlite3_column_double(st, 4));
	}
	sqlite3_finalize(st);
	return 0;
}

int store_cost_iters(struct store *s, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	*n = 0;
	/* kept by triggers (schema 17), else counted */
	int rc = prep(s, "SELECT COALESCE((SELECT value FROM meta WHERE key = 'cost_iters'),"
			 " (SELECT count(DISTINCT iter) FROM run_costs))", &st, e);
	if (rc < 0)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0)
		*n = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int store_pair_runs(struct store *s, int upto, int **ids, int **sessions, size_t *n,
		    struct err *e)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	*ids = *sessions = NULL;
	*n = 0;
	int rc = prep(s, "SELECT r.id, sr.session FROM runs r JOIN stats_runs sr ON sr.run_id = r.id"
			 " WHERE sr.role = 'pair' AND (?1 = 0 OR r.id <= ?1) AND" USABLE_RUN
			 " ORDER BY r.id", &st, e);
	if (rc == ERR_NOTFOUND) /* no stats_runs yet */
		return 0;
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, upto);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			*ids = xrealloc(*ids, cap * sizeof(**ids));
			*sessions = xrealloc(*sessions, cap * sizeof(**sessions));
		}
		(*ids)[*n] = sqlite3_column_int(st, 0);
		(*sessions)[(*n)++] = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	return 0;
}

bool store_paired_proven(struct store *s, const char *command)
{
	sqlite3_stmt *st;
	bool yes = false;
	if (!command ||
	    prep(s, "SELECT 1 FROM runs r JOIN stats_runs sr ON sr.run_id = r.id AND sr.role = 'pair'"
		    " JOIN stats_confirms c ON c.session = sr.session AND c.verdict IS NOT NULL"
		    " WHERE r.kind = 'confirm' AND substr(r.command, 1, length(?1) + 1) = ?1 || ' '"
		    " LIMIT 1",
		 &st, NULL) < 0)
		return false;
	bind_text(st, 1, command);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

bool store_session_paired(struct store *s, int session)
{
	sqlite3_stmt *st;
	bool yes = false;
	if (session <= 0 ||
	    prep(s, "SELECT 1 FROM stats_runs WHERE session = ? AND role = 'pair' LIMIT 1", &st,
		 NULL) < 0)
		return false;
	sqlite3_bind_int(st, 1, session);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

int store_session_last_run(struct store *s, int session)
{
	sqlite3_stmt *st;
	int last = 0;
	if (session <= 0 || prep(s, "SELECT MAX(run_id) FROM stats_runs WHERE session = ?", &st,
				 NULL) < 0)
		return 0;
	sqlite3_bind_int(st, 1, session);
	if (sqlite3_step(st) == SQLITE_ROW)
		last = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return last;
}

/* ---- kept noise terms ---- */

/* A counter meta keeps (sql reads it); -1 and *gen -1 when there is none. */
static int meta_counter(struct store *s, const char *sql, long long *gen)
{
	sqlite3_stmt *st;
	*gen = -1;
	if (prep_kept(s, sql, &st, NULL) < 0)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*gen = sqlite3_column_int64(st, 0);
	store_stmt_put(s, st);
	return *gen < 0 ? -1 : 0;
}

int store_noise_gen(struct store *s, long long *gen)
{
	return meta_counter(s, "SELECT value FROM meta WHERE key = 'noise_gen'", gen);
}

void store_noise_terms_release(struct store_noise_term *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].shape);
	free(t);
}

int store_noise_terms_get(struct store *s, const char *tree, const char *env,
			  struct store_noise_term **out, size_t *n, bool *kept, struct err *e)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	*kept = false;
	if (!tree || !env)
		return 0;
	int rc = prep_kept(s, "SELECT shape, ss, dof, runs FROM noise_terms WHERE tree = ?1 AND"
			      " env = ?2 ORDER BY shape", &st, e);
	if (rc == ERR_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	bind_text(st, 1, tree);
	bind_text(st, 2, env);
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		/* the empty shape marks terms made (a tree may have none) */
		*kept = true;
		const char *shape = (const char *)sqlite3_column_text(st, 0);
		if (!shape || !*shape)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = (struct store_noise_term){
			.shape = xstrdup(shape),
			.ss = sqlite3_column_double(st, 1),
			.dof = sqlite3_column_int(st, 2),
			.runs = sqlite3_column_int(st, 3),
		};
	}
	store_stmt_put(s, st);
	if (step != SQLITE_DONE) {
		store_noise_terms_release(*out, *n);
		*out = NULL;
		*n = 0;
		*kept = false;
		return sql_fail(s, "cannot read the kept noise terms", e);
	}
	return 0;
}

int store_noise_terms_put(struct store *s, const char *tree, const char *env, long long gen,
			  const struct store_noise_term *t, size_t n)
{
	long long now_gen;
	if (!tree || !env || store_readonly(s) ||
	    sqlite3_exec(store_db(s), "SAVEPOINT noise_terms", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	/* made from what was there when gen was read: kept only if nothing
	 * they depend on changed since (else the next reader makes them) */
	bool ok = store_noise_gen(s, &now_gen) == 0 && now_gen == gen;
	sqlite3_stmt *del = ok ? sql_stmt(s, "DELETE FROM noise_terms WHERE tree = ?1 AND env = ?2")
			       : NULL;
	if (del) {
		bind_text(del, 1, tree);
		bind_text(del, 2, env);
	}
	ok = ok && sql_done(s, del, "noise terms", NULL) == 0;
	for (size_t i = 0; ok && i <= n; i++) {
		sqlite3_stmt *st = sql_stmt(s, "INSERT INTO noise_terms (tree, env, shape, ss, dof,"
					       " runs) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
		if (st) {
			bind_text(st, 1, tree);
			bind_text(st, 2, env);
			bind_text(st, 3, i < n ? t[i].shape : "");
			sqlite3_bind_double(st, 4, i < n ? t[i].ss : 0);
			sqlite3_bind_int(st, 5, i < n ? t[i].dof : 0);
			sqlite3_bind_int(st, 6, i < n ? t[i].runs : 0);
		}
		ok = sql_done(s, st, "noise terms", NULL) == 0;
	}
	if (!ok)
		sqlite3_exec(store_db(s), "ROLLBACK TO noise_terms", NULL, NULL, NULL);
	sqlite3_exec(store_db(s), "RELEASE noise_terms", NULL, NULL, NULL);
	return ok ? 0 : -1;
}

/* ---- kept confirm comparisons ---- */

/* A NULL text and an empty one are different keys: "-" and "+TEXT". */
static char *key_text(const char *v)
{
	struct sb k = SB_INIT;
	sb_adds(&k, v ? "+" : "-");
	if (v)
		sb_adds(&k, v);
	return sb_detach(&k);
}

static void bind_compare_key(sqlite3_stmt *st, const struct store_compare_key *k)
{
	char *t = key_text(k->target), *a = key_text(k->against);
	sqlite3_bind_int(st, 1, k->session);
	sqlite3_bind_double(st, 2, k->threshold);
	sqlite3_bind_text(st, 3, t, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, a, -1, SQLITE_TRANSIENT);
	bind_text(st, 5, k->build);
	sqlite3_bind_int(st, 6, k->upto);
	bind_text(st, 7, k->best_tree);
	bind_text(st, 8, k->cand_tree);
	free(t);
	free(a);
}

int store_compare_gen(struct store *s, long long *gen)
{
	return meta_counter(s, "SELECT value FROM meta WHERE key = 'compare_gen'", gen);
}

int store_compare_get(struct store *s, const struct store_compare_key *k, char **json)
{
	sqlite3_stmt *st;
	*json = NULL;
	if (!k->build || !k->best_tree || !k->cand_tree ||
	    prep_kept(s, "SELECT json FROM confirm_compares WHERE session = ?1 AND"
			 " threshold = ?2 AND target = ?3 AND against = ?4 AND build = ?5 AND"
			 " upto = ?6 AND best_tree = ?7 AND cand_tree = ?8", &st, NULL) < 0)
		return -1;
	bind_compare_key(st, k);
	if (sqlite3_step(st) == SQLITE_ROW)
		*json = col_text(st, 0);
	store_stmt_put(s, st);
	return 0;
}

int store_compare_put(struct store *s, const struct store_compare_key *k, long long gen,
		      const char *json)
{
	long long now_gen;
	if (!k->build || !k->best_tree || !k->cand_tree || !json || store_readonly(s) ||
	    sqlite3_exec(store_db(s), "SAVEPOINT confirm_compares", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	/* made from what was there when gen was read: kept only if nothing it
	 * depends on changed since (store_noise_terms_put's rule) */
	bool ok = store_compare_gen(s, &now_gen) == 0 && now_gen == gen;
	/* the session's earlier looks, and what other builds made, are of no
	 * use once this one is kept */
	sqlite3_stmt *del = ok ? sql_stmt(s, "DELETE FROM confirm_compares WHERE (session = ?1 AND"
					     " upto < ?2) OR build <> ?3")
			       : NULL;
	if (del) {
		sqlite3_bind_int(del, 1, k->session);
		sqlite3_bind_int(del, 2, k->upto);
		bind_text(del, 3, k->build);
	}
	ok = ok && sql_done(s, del, "kept comparisons", NULL) == 0;
	sqlite3_stmt *st = ok ? sql_stmt(s, "INSERT OR REPLACE INTO confirm_compares (session,"
					   " threshold, target, against, build, upto, best_tree,"
					   " cand_tree, json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")
			      : NULL;
	if (st) {
		bind_compare_key(st, k);
		bind_text(st, 9, json);
	}
	ok = ok && sql_done(s, st, "kept comparisons", NULL) == 0;
	if (!ok)
		sqlite3_exec(store_db(s), "ROLLBACK TO confirm_compares", NULL, NULL, NULL);
	sqlite3_exec(store_db(s), "RELEASE confirm_compares", NULL, NULL, NULL);
	return ok ? 0 : -1;
}
