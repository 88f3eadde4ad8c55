/*
 * store_guards — the store's side of the guards: the guards_* tables
 * (frozen hashes, lint findings and acknowledgements, the trap checklist,
 * re-assessments, stops, restores, dispatch rows).  See store.h.
 *
 * Reads of a table that a read-only store of an old schema lacks answer
 * "nothing there"; writes report the database's error.
 */
#include "core/store.h"
#include "core/store_sql.h"

#include "core/err.h"
#include "core/lint.h"
#include "core/sb.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/time.h>

/* ---- frozen scope ---- */

char *store_frozen_hash(struct store *s, const char *path)
{
	char *was = NULL;
	sqlite3_stmt *st = sql_stmt(s, "SELECT hash FROM guards_frozen WHERE path = ?");
	if (st) {
		bind_text(st, 1, path);
		if (sqlite3_step(st) == SQLITE_ROW)
			was = col_text(st, 0);
		sqlite3_finalize(st);
	}
	return was;
}

int store_frozen_put(struct store *s, const char *path, const char *hash, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO guards_frozen(path, hash, recorded) VALUES (?, ?, ?)");
	if (st) {
		bind_text(st, 1, path);
		bind_text(st, 2, hash);
		sqlite3_bind_double(st, 3, now());
	}
	return sql_done(s, st, "frozen scope", e);
}

/* ---- re-assessments and stops ---- */

int store_reassess_last(struct store *s)
{
	int after = -1;
	sqlite3_stmt *st = sql_stmt(s, "SELECT after_iter FROM guards_reassess ORDER BY id DESC LIMIT 1");
	if (st && sqlite3_step(st) == SQLITE_ROW)
		after = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return after;
}

int store_reassess_newest(struct store *s, int *after_iter, char **next)
{
	int id = 0;
	*after_iter = -1;
	if (next)
		*next = NULL;
	sqlite3_stmt *st =
		sql_stmt(s, "SELECT id, after_iter, next FROM guards_reassess ORDER BY id DESC LIMIT 1");
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		id = sqlite3_column_int(st, 0);
		*after_iter = sqlite3_column_int(st, 1);
		const unsigned char *t = sqlite3_column_text(st, 2);
		if (next && t)
			*next = xstrdup((const char *)t);
	}
	sqlite3_finalize(st);
	return id;
}

int store_reassess_add(struct store *s, int after_iter, const char *profile, const char *axes,
		       const char *techniques, const char *next, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO guards_reassess(after_iter, t, profile, axes, "
				   "techniques, next) VALUES (?, ?, ?, ?, ?, ?)");
	if (st) {
		sqlite3_bind_int(st, 1, after_iter);
		sqlite3_bind_double(st, 2, now());
		bind_text(st, 3, profile);
		bind_text(st, 4, axes);
		bind_text(st, 5, techniques);
		bind_text(st, 6, next);
	}
	return sql_done(s, st, "reassess", e);
}

bool store_stop_last(struct store *s, struct store_stop *out)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = sql_stmt(s, "SELECT iter, reason, bound FROM guards_stop ORDER BY id DESC "
				   "LIMIT 1");
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		out->iter = sqlite3_column_int(st, 0);
		out->reason = col_text(st, 1);
		out->bound = col_text(st, 2);
		sqlite3_finalize(st);
		return true;
	}
	sqlite3_finalize(st);
	return false;
}

void store_stop_release(struct store_stop *r)
{
	free(r->reason);
	free(r->bound);
	memset(r, 0, sizeof(*r));
}

int store_stop_add(struct store *s, int iter, const char *reason, const char *bound,
		   struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO guards_stop(iter, t, reason, bound) VALUES "
				   "(?, ?, ?, ?)");
	if (st) {
		sqlite3_bind_int(st, 1, iter);
		sqlite3_bind_double(st, 2, now());
		bind_text(st, 3, reason);
		bind_text(st, 4, bound);
	}
	return sql_done(s, st, "stop", e);
}

void store_optlog_events(struct store *s, struct optlog_event **v, size_t *n)
{
	size_t cap = 0;
	*v = NULL;
	*n = 0;
	/* by the iteration each followed, then in the order they were made */
	sqlite3_stmt *st = sql_stmt(s, "SELECT after_iter, 0, next, axes, t FROM guards_reassess "
				   "UNION ALL SELECT coalesce(iter, 0), 1, reason, bound, t FROM "
				   "guards_stop ORDER BY 1, 5, 2");
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			*v = xrealloc(*v, cap * sizeof(**v));
		}
		(*v)[(*n)++] = (struct optlog_event){.iter = sqlite3_column_int(st, 0),
						     .stop = sqlite3_column_int(st, 1) != 0,
						     .what = col_text(st, 2),
						     .detail = col_text(st, 3)};
	}
	sqlite3_finalize(st);
}

/* ---- trap checklist and lint findings ---- */

int store_trap_state_put(struct store *s, int iter, const char *trap, int state,
			 const char *source, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO guards_trap_state(iter, trap, state, source, t) "
				   "VALUES (?, ?, ?, ?, ?) ON CONFLICT(iter, trap) DO UPDATE SET "
				   "state = excluded.state, source = excluded.source, t = excluded.t");
	if (st) {
		sqlite3_bind_int(st, 1, iter);
		bind_text(st, 2, trap);
		sqlite3_bind_int(st, 3, state);
		bind_text(st, 4, source ? source : "user");
		sqlite3_bind_double(st, 5, now());
	}
	return sql_done(s, st, "trap checklist", e);
}

void store_trap_states(struct store *s, int iter,
		       void (*fn)(void *ctx, const char *trap, int state), void *ctx)
{
	sqlite3_stmt *st = sql_stmt(s, "SELECT trap, state FROM guards_trap_state WHERE iter = ?");
	if (!st)
		return;
	sqlite3_bind_int(st, 1, iter);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);
		if (t)
			fn(ctx, (const char *)t, sqlite3_column_int(st, 1));
	}
	sqlite3_finalize(st);
}

int store_findings_clear(struct store *s, int iter, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "DELETE FROM guards_findings WHERE iter = ?");
	if (st)
		sqlite3_bind_int(st, 1, iter);
	return sql_done(s, st, "lint findings", e);
}

int store_finding_add(struct store *s, int iter, const struct lint_finding *x, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO guards_findings(iter, lint, trap, file, line, "
				   "side, text, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
	if (st) {
		char side[2] = {x->side, 0};
		sqlite3_bind_int(st, 1, iter);
		bind_text(st, 2, x->lint);
		bind_text(st, 3, x->trap);
		bind_text(st, 4, x->file);
		sqlite3_bind_int(st, 5, x->line);
		bind_text(st, 6, side);
		bind_text(st, 7, x->text);
		bind_text(st, 8, x->message);
	}
	return sql_done(s, st, "lint findings", e);
}

void store_findings(struct store *s, int iter, struct lint_findings *out)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = sql_stmt(s, "SELECT lint, trap, file, line, side, text, message FROM "
				   "guards_findings WHERE iter = ? ORDER BY id");
	if (!st)
		return;
	sqlite3_bind_int(st, 1, iter);
	while (sqlite3_step(st) == SQLITE_ROW) {
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		const unsigned char *side = sqlite3_column_text(st, 4);
		out->v[out->n++] = (struct lint_finding){
			.lint = col_text(st, 0),
			.trap = col_text(st, 1),
			.file = col_text(st, 2),
			.line = sqlite3_column_int(st, 3),
			.side = side && *side ? (char)*side : '+',
			.text = col_text(st, 5),
			.message = col_text(st, 6),
		};
	}
	sqlite3_finalize(st);
}

bool store_findings_acked(struct store *s, int iter)
{
	bool acked = false;
	sqlite3_stmt *st = sql_stmt(s, "SELECT 1 FROM guards_acks WHERE iter = ?");
	if (st) {
		sqlite3_bind_int(st, 1, iter);
		acked = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return acked;
}

int store_findings_ack(struct store *s, int iter, int n, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT OR REPLACE INTO guards_acks(iter, t, n) VALUES (?, ?, ?)");
	if (st) {
		sqlite3_bind_int(st, 1, iter);
		sqlite3_bind_double(st, 2, now());
		sqlite3_bind_int(st, 3, n);
	}
	return sql_done(s, st, "lint acknowledgement", e);
}

/* ---- restores ---- */

bool store_restore_done(struct store *s, int iter)
{
	bool yes = false;
	sqlite3_stmt *st = sql_stmt(s, "SELECT 1 FROM guards_restore WHERE iter = ?");
	if (st) {
		sqlite3_bind_int(st, 1, iter);
		yes = sqlite3_step(st) == SQLITE_ROW;
		sqlite3_finalize(st);
	}
	return yes;
}

int store_restore_put(struct store *s, int iter, int best_iter, const char *sha, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT OR REPLACE INTO guards_restore(iter, best_iter, sha, t) "
				   "VALUES (?, ?, ?, ?)");
	if (st) {
		sqlite3_bind_int(st, 1, iter);
		sqlite3_bind_int(st, 2, best_iter);
		bind_text(st, 3, sha && *sha ? sha : NULL);
		sqlite3_bind_double(st, 4, now());
	}
	return sql_done(s, st, "restore", e);
}

/* ---- tree intents ---- */

void store_intent_release(struct store_intent *i)
{
	free(i->from);
	free(i->to);
	memset(i, 0, sizeof(*i));
}

int store_intent_begin(struct store *s, enum tree_intent kind, int iter, const char *from,
		       const char *to, int *id, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO tree_intents(kind, iter, from_tree, to_tree, pid, t) "
				   "VALUES (?, ?, ?, ?, ?, ?)");
	if (st) {
		bind_text(st, 1, tree_intent_name(kind));
		sqlite3_bind_int(st, 2, iter);
		bind_text(st, 3, from);
		bind_text(st, 4, to);
		sqlite3_bind_int(st, 5, (int)getpid());
		sqlite3_bind_double(st, 6, now());
	}
	int rc = sql_done(s, st, "tree intent", e);
	if (rc == 0 && id)
		*id = (int)sqlite3_last_insert_rowid(store_db(s));
	return rc;
}

int store_intent_end(struct store *s, int id, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "UPDATE tree_intents SET done = 1 WHERE id = ?");
	if (st)
		sqlite3_bind_int(st, 1, id);
	return sql_done(s, st, "tree intent", e);
}

int store_intent_pending(struct store *s, struct store_intent *out, struct err *e)
{
	memset(out, 0, sizeof(*out));
	sqlite3_stmt *st = sql_stmt(s, "SELECT id, kind, iter, from_tree, to_tree, pid, t FROM "
				   "tree_intents WHERE done = 0 ORDER BY id LIMIT 1");
	if (!st)
		return sql_fail(s, "tree intents", e);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->id = sqlite3_column_int(st, 0);
		out->kind = tree_intent_parse((const char *)sqlite3_column_text(st, 1));
		out->iter = sqlite3_column_int(st, 2);
		out->from = col_text(st, 3);
		out->to = col_text(st, 4);
		out->pid = sqlite3_column_int(st, 5);
		out->t = sqlite3_column_double(st, 6);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? err_set(e, ERR_NOTFOUND, "no tree intent pending")
				 : sql_fail(s, "tree intents", e);
}

/* ---- dispatch rows ---- */

void store_dispatch_rows(struct store *s, struct dispatch_row **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st = sql_stmt(s, "SELECT bucket, entry, base_ms, cand_ms, speedup, why, "
				   "evidence FROM guards_dispatch ORDER BY id");
	if (!st)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = (struct dispatch_row){
			.bucket = col_text(st, 0),
			.entry = col_text(st, 1),
			.base_ms = col_real(st, 2),
			.cand_ms = col_real(st, 3),
			.speedup = col_real(st, 4),
			.why = col_text(st, 5),
			.evidence = col_text(st, 6),
		};
	}
	sqlite3_finalize(st);
}

int store_dispatch_add(struct store *s, const struct dispatch_row *r, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "INSERT INTO guards_dispatch(bucket, entry, base_ms, cand_ms, "
				   "speedup, why, evidence, t) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
	if (st) {
		bind_text(st, 1, r->bucket);
		bind_text(st, 2, r->entry);
		bind_real(st, 3, r->base_ms);
		bind_real(st, 4, r->cand_ms);
		bind_real(st, 5, r->speedup);
		bind_text(st, 6, r->why ? r->why : "");
		bind_text(st, 7, r->evidence);
		sqlite3_bind_double(st, 8, now());
	}
	return sql_done(s, st, "dispatch", e);
}

/* ---- what the guards read of the loop's own tables ---- */

double store_iter_logged_at(struct store *s, int iter)
{
	double t = 0;
	sqlite3_stmt *st = sql_stmt(s, "SELECT logged_at FROM iterations WHERE iter = ?");
	if (st) {
		sqlite3_bind_int(st, 1, iter);
		if (sqlite3_step(st) == SQLITE_ROW)
			t = sqlite3_column_double(st, 0);
		sqlite3_finalize(st);
	}
	return t;
}
