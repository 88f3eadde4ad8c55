/* store — optloop.db: schema, migrations, the writer lock and typed access
 * to iterations, runs, samples, environments and events. */
#include "core/store.h"
#include "core/store_sql.h"
#include "core/err.h"
#include "core/jsonw.h"
#include "core/rules.h"
#include "core/sb.h"

#include <sqlite3.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/time.h>
#include <unistd.h>

#define STORE_NSTMT 48

/* A prepared statement kept for the life of the store: a log or a commit
 * runs the same few queries many times, and parsing the SQL again each
 * time cost more than running it. */
struct cached_stmt {
	const char *sql; /* the string literal it came from (compared by address) */
	sqlite3_stmt *st;
	bool busy;
};

struct store {
	sqlite3 *db;
	int lock_fd; /* -1 when read-only */
	bool readonly;
	char *path;
	struct cached_stmt stmts[STORE_NSTMT];
	size_t nstmts;
	/* The rows last read, shared with every reader while nothing was
	 * written: the engine and the workbench ask for them many times per
	 * action, and 10,000 rows copied each time cost more than the query. */
	struct log_rows *rows;
	/* this connection's writes to what the rows are read from (iterations,
	 * and runs for full_gate_failed), counted by TEMP triggers; other
	 * connections' commits move PRAGMA data_version.  Writes elsewhere
	 * (events, samples, settings) leave the rows current. */
	sqlite3_int64 rows_touched;
	bool rows_watched; /* the triggers are there (a writer that has none caches nothing) */
	sqlite3_int64 rows_changes; /* rows_touched when the rows were read */
	int rows_version;
	/* meta 'rows_stamp' as it was before the rows were read (-1 unknown):
	 * a row changed since has a newer stamp (store_rows_get reads those) */
	long long rows_stamp;
	sqlite3_stmt *st_version; /* PRAGMA data_version, kept prepared */
	/* OPTLOOP_SQL_PLAN=FILE: every statement run, once each, written to
	 * FILE with its query plan when the store closes (tests read it for
	 * scans of the growing tables) */
	char **traced;
	size_t ntraced;
};

static int trace_stmt(unsigned type, void *ctx, void *p, void *x)
{
	struct store *s = ctx;
	const char *sql = sqlite3_sql(p);
	(void)type;
	(void)x;
	if (!sql)
		return 0;
	for (size_t i = 0; i < s->ntraced; i++)
		if (!strcmp(s->traced[i], sql))
			return 0;
	s->traced = xrealloc(s->traced, (s->ntraced + 1) * sizeof(*s->traced));
	s->traced[s->ntraced++] = xstrdup(sql);
	return 0;
}

static void write_plans(struct store *s)
{
	const char *path = getenv("OPTLOOP_SQL_PLAN");
	FILE *f = path && *path ? fopen(path, "a") : NULL;
	for (size_t i = 0; i < s->ntraced; i++) {
		sqlite3_stmt *st;
		char *q = xasprintf("EXPLAIN QUERY PLAN %s", s->traced[i]);
		if (f && sqlite3_prepare_v2(s->db, q, -1, &st, NULL) == SQLITE_OK) {
			fprintf(f, "SQL %s\n", s->traced[i]);
			while (sqlite3_step(st) == SQLITE_ROW)
				fprintf(f, "PLAN %s\n", (const char *)sqlite3_column_text(st, 3));
			sqlite3_finalize(st);
		}
		free(q);
		free(s->traced[i]);
	}
	free(s->traced);
	if (f)
		fclose(f);
}

static void rows_touched(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
	struct store *s = sqlite3_user_data(cx);
	(void)argc;
	(void)argv;
	s->rows_touched++;
	sqlite3_result_null(cx);
}

/* TEMP triggers: this connection's own, gone when it closes; nothing is
 * written to the workspace. */
static void watch_rows(struct store *s)
{
	static const char *const sql =
		"CREATE TEMP TRIGGER rows_touch_ii AFTER INSERT ON main.iterations"
		" BEGIN SELECT optloop_rows_touched(); END;"
		"CREATE TEMP TRIGGER rows_touch_iu AFTER UPDATE ON main.iterations"
		" BEGIN SELECT optloop_rows_touched(); END;"
		"CREATE TEMP TRIGGER rows_touch_id AFTER DELETE ON main.iterations"
		" BEGIN SELECT optloop_rows_touched(); END;"
		"CREATE TEMP TRIGGER rows_touch_ri AFTER INSERT ON main.runs"
		" BEGIN SELECT optloop_rows_touched(); END;"
		"CREATE TEMP TRIGGER rows_touch_ru AFTER UPDATE OF tree, kind, scope, gate ON main.runs"
		" BEGIN SELECT optloop_rows_touched(); END;"
		"CREATE TEMP TRIGGER rows_touch_rd AFTER DELETE ON main.runs"
		" BEGIN SELECT optloop_rows_touched(); END;";
	if (s->readonly) { /* it writes nothing: other connections' commits are all */
		s->rows_watched = true;
		return;
	}
	s->rows_watched =
		sqlite3_create_function_v2(s->db, "optloop_rows_touched", 0, SQLITE_UTF8, s, rows_touched,
					   NULL, NULL, NULL) == SQLITE_OK &&
		sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

static void rows_forget(struct store *s)
{
	log_rows_put(s->rows);
	s->rows = NULL;
}


int store_fail(struct store *s, const char *what, struct err *e)
{
	int code = s->db ? sqlite3_errcode(s->db) : SQLITE_CANTOPEN;
	int sys = s->db ? sqlite3_system_errno(s->db) : errno;
	const char *msg = s->db ? sqlite3_errmsg(s->db) : strerror(sys);
	const char *at = what ? ", at: " : "";

	if (!what)
		what = "";
	/* sqlite reports ENOSPC as SQLITE_FULL; a quota is the same to the user */
	if (code == SQLITE_FULL || sys == ENOSPC || sys == EDQUOT)
		return err_set(e, ERR_IO,
			       "the disk that holds %s is full (%s%s%s); free space there and run "
			       "the command again (what was saved before this command is kept)",
			       s->path, msg, at, what);
	if (code == SQLITE_READONLY || sys == EROFS || sys == EACCES || sys == EPERM)
		return err_set(e, ERR_READONLY, "the database %s cannot be written (%s%s%s); %s",
			       s->path, msg, at, what, STORE_READONLY_HINT);
	if (!*what)
		return err_set(e, ERR_IO, "database error: %s (database %s)", msg, s->path);
	return err_set(e, ERR_IO, "%s: %s (database %s)", what, msg, s->path);
}

int store_exec(struct store *s, const char *sql, struct err *e)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_fail(s, NULL, e);
	return 0;
}

int store_begin(struct store *s, struct err *e)
{
	if (s->readonly)
		return err_set(e, ERR_BUSY, "the workspace is open read-only; nothing can be written");
	return store_exec(s, "BEGIN IMMEDIATE", e);
}

int store_commit(struct store *s, struct err *e)
{
	return store_exec(s, "COMMIT", e);
}

void store_rollback(struct store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* How long a writer waits for a short-lived one (status, log, commit) to
 * finish before it is refused. */
#define LOCK_WAIT_MS 2000
/* How long even a writer that does not wait (STORE_NOWAIT) tries: a
 * reader's store_writer_busy holds the lock for an instant, which a loaded
 * machine can stretch; without this grace, status found it held and stayed
 * read-only, leaving a cut-off run unsettled. */
#define LOCK_GRACE_MS 200

static int take_lock(struct store *s, bool wait, struct err *e)
{
	char *lp = xasprintf("%s.lock", s->path);
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = errno, rc;
		if (err == EACCES || err == EPERM || err == EROFS)
			rc = err_set(e, ERR_READONLY, "the workspace cannot be written: %s: %s; %s", lp,
				     strerror(err), STORE_READONLY_HINT);
		else
			rc = err_set(e, ERR_IO, "cannot open the lock %s: %s", lp, strerror(err));
		free(lp);
		return rc;
	}
	int waited = 0, locked, limit = wait ? LOCK_WAIT_MS : LOCK_GRACE_MS;
	while (!(locked = flock(fd, LOCK_EX | LOCK_NB) == 0) && waited < limit) {
		usleep(20 * 1000);
		waited += 20;
	}
	if (!locked) {
		char buf[32] = {0};
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		int pid = n > 0 ? atoi(buf) : 0;
		close(fd);
		free(lp);
		if (pid > 0)
			return err_set(e, ERR_BUSY,
				       "another optloop (pid %d) is working in this workspace; only "
				       "one may write at a time (finish or quit it, or use a read-only "
				       "command)",
				       pid);
		return err_set(e, ERR_BUSY,
			       "another optloop is working in this workspace; only one may write "
			       "at a time (finish or quit it, or use a read-only command)");
	}
	/* The pid, only a courtesy for the refusal message above, in a field of
	 * fixed width written over the last one: no truncation, which on ext4
	 * frees and reallocates the block (~0.8 ms, every command). */
	char pidtxt[16];
	int len = snprintf(pidtxt, sizeof(pidtxt), "%10d\n", (int)getpid());
	if (pwrite(fd, pidtxt, (size_t)len, 0) < 0) {
		/* no pid in the message then */
	}
	free(lp);
	s->lock_fd = fd;
	return 0;
}

bool store_writer_busy(struct store *s)
{
	if (s->lock_fd >= 0)
		return false; /* the writer is this process */
	char *lp = xasprintf("%s.lock", s->path);
	int fd = open(lp, O_RDONLY | O_CLOEXEC);
	free(lp);
	if (fd < 0)
		return false;
	bool busy = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd); /* releases it at once when this took it */
	return busy;
}

static int migrate(struct store *s, struct err *e)
{
	sqlite3_stmt *st;
	int ver = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return store_fail(s, "cannot read the schema version", e);
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW)
		ver = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (step != SQLITE_ROW)
		return store_fail(s, "cannot read the schema version", e);
	if (ver > STORE_SCHEMA_VERSION)
		return err_set(e, ERR_IO,
			       "%s has schema version %d, newer than this optloop understands (%d); "
			       "use a newer optloop",
			       s->path, ver, STORE_SCHEMA_VERSION);
	if (ver == STORE_SCHEMA_VERSION)
		return 0;
	if (s->readonly)
		return err_set(e, ERR_BUSY,
			       "%s needs a schema upgrade (version %d to %d); open it for writing once",
			       s->path, ver, STORE_SCHEMA_VERSION);
	for (int v = ver; v < STORE_SCHEMA_VERSION; v++) {
		char pragma[64];
		int rc = store_begin(s, e);
		if (rc == 0)
			rc = store_exec(s, store_migrations[v], e);
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if (rc == 0)
			rc = store_exec(s, pragma, e);
		if (rc == 0)
			rc = store_commit(s, e);
		if (rc < 0) {
			store_rollback(s);
			return err_prefix(e, "schema migration to version %d failed: ", v + 1);
		}
	}
	return 0;
}

/* Can this read-only connection read the database as it is?  (A WAL
 * database needs its -shm, which sqlite creates on the first read.) */
static bool readable_here(struct store *s)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return false;
	bool ok = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return ok;
}

static bool writable_dir(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	bool ok = access(slash ? (*dir ? dir : "/") : ".", W_OK) == 0;
	free(dir);
	return ok;
}

int store_open(const char *path, int flags, struct store **out, struct err *e)
{
	struct store *s = xcalloc(1, sizeof(*s));
	int oflags;
	int rc;

	s->path = xstrdup(path);
	s->lock_fd = -1;
	s->readonly = flags & STORE_READONLY;
	if (!s->readonly && (rc = take_lock(s, !(flags & STORE_NOWAIT), e)) < 0) {
		store_close(s);
		return rc;
	}
	if (access(path, F_OK) != 0 && !(flags & STORE_CREATE)) {
		rc = err_set(e, ERR_NOTFOUND, "%s does not exist (run optloop init)", path);
		store_close(s);
		return rc;
	}
	oflags = s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	/* A store belongs to one thread: no lock around every sqlite3 call
	 * (reading 10,000 rows took 40,000 lock/unlock pairs). */
	oflags |= SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(path, &s->db, oflags, NULL) != SQLITE_OK) {
		rc = store_fail(s, "cannot open the database", e);
		store_close(s);
		return rc;
	}
	if (s->readonly && !readable_here(s)) {
		/* A reader that may not write the folder cannot create the WAL's
		 * index beside a database its last writer left checkpointed (no
		 * -wal): read it as a file nobody is changing, which it is, as
		 * long as this user may not write it and no WAL is there. */
		char *wal = xasprintf("%s-wal", path);
		bool nowal = access(wal, F_OK) != 0;
		free(wal);
		if (nowal && !writable_dir(path)) {
			sqlite3_close(s->db);
			s->db = NULL;
			char *uri = sqlite3_mprintf("file:%q?immutable=1", path);
			int orc = uri ? sqlite3_open_v2(uri, &s->db, oflags | SQLITE_OPEN_URI, NULL)
				      : SQLITE_NOMEM;
			sqlite3_free(uri);
			if (orc != SQLITE_OK) {
				rc = store_fail(s, "cannot open the database", e);
				store_close(s);
				return rc;
			}
		}
	}
	sqlite3_busy_timeout(s->db, 5000);
	if (getenv("OPTLOOP_SQL_PLAN"))
		sqlite3_trace_v2(s->db, SQLITE_TRACE_STMT, trace_stmt, s);
	/* WAL + NORMAL: a committed transaction survives a killed process;
	 * only a power cut can lose the last ones.
	 *
	 * The writer leaves the WAL and its index in place when it closes
	 * (NO_CKPT_ON_CLOSE): sqlite checkpoints on its own once the WAL holds
	 * 1,000 pages.  Checkpointing at every close instead made each command
	 * create the WAL, sync it and its directory, sync it again with the
	 * database, then delete both files: ~4 ms of every `optloop log`, for
	 * durability against a power cut that the next auto-checkpoint gives
	 * anyway.  The -wal and -shm files beside optloop.db are part of the
	 * database: copy the workspace directory, not the .db file alone. */
	if (!s->readonly &&
	    (rc = store_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", e)) < 0) {
		store_close(s);
		return rc;
	}
	if (!s->readonly)
		sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	store_exec(s, "PRAGMA foreign_keys=ON", NULL);
	if ((rc = migrate(s, e)) < 0) {
		store_close(s);
		return rc;
	}
	watch_rows(s);
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nstmts; i++)
		sqlite3_finalize(s->stmts[i].st);
	rows_forget(s);
	sqlite3_finalize(s->st_version);
	if (s->db && s->ntraced)
		write_plans(s);
	if (s->db)
		sqlite3_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* releases the flock */
	free(s->path);
	free(s);
}

bool store_readonly(const struct store *s)
{
	return s->readonly;
}

struct sqlite3 *store_db(struct store *s)
{
	return s->db;
}

/* ---- small statement helpers --------------------------------------------- */

/* A statement for sql (a string literal), from the cache when it holds one
 * that is not in use; give it back with unprep(). */
static void unprep(struct store *s, sqlite3_stmt *st);

sqlite3_stmt *store_stmt_kept(struct store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	for (size_t i = 0; i < s->nstmts; i++) {
		if (s->stmts[i].sql == sql && !s->stmts[i].busy) {
			s->stmts[i].busy = true;
			return s->stmts[i].st;
		}
	}
	if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	if (s->nstmts < STORE_NSTMT)
		s->stmts[s->nstmts++] = (struct cached_stmt){sql, st, true};
	return st;
}

static int prep(struct store *s, const char *sql, sqlite3_stmt **st, struct err *e)
{
	if (!(*st = store_stmt_kept(s, sql)))
		return store_fail(s, "cannot prepare a query", e);
	return 0;
}

void store_stmt_put(struct store *s, sqlite3_stmt *st)
{
	unprep(s, st);
}

/* Done with a statement from prep(): reset for the next use (which also
 * ends its read), or finalized when it was not cached. */
static void unprep(struct store *s, sqlite3_stmt *st)
{
	for (size_t i = 0; i < s->nstmts; i++) {
		if (s->stmts[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			s->stmts[i].busy = false;
			return;
		}
	}
	sqlite3_finalize(st);
}

static int step_done(struct store *s, sqlite3_stmt *st, struct err *e, const char *what)
{
	int rc = sqlite3_step(st);
	unprep(s, st);
	if (rc != SQLITE_DONE)
		return store_fail(s, what, e);
	return 0;
}

/* ---- meta and events ------------------------------------------------------ */

int store_meta_get(struct store *s, const char *key, char **val, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "SELECT value FROM meta WHERE key = ?", &st, e);
	*val = NULL;
	if (rc < 0)
		return rc;
	bind_text(st, 1, key);
	if (sqlite3_step(st) == SQLITE_ROW)
		*val = col_text(st, 0);
	unprep(s, st);
	return 0;
}

int store_meta_set(struct store *s, const char *key, const char *val, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", &st, e);
	if (rc < 0)
		return rc;
	bind_text(st, 1, key);
	bind_text(st, 2, val);
	return step_done(s, st, e, "cannot write a setting");
}

int store_workspace_add(struct store *s, const char *op, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT INTO workspaces(op, created) VALUES (?, ?)", &st, e);
	if (rc < 0)
		return rc;
	bind_text(st, 1, op);
	sqlite3_bind_double(st, 2, now());
	return step_done(s, st, e, "cannot record the workspace");
}

int store_events_of(struct store *s, const char *kind, void (*fn)(void *ctx, const char *detail),
		    void *ctx, struct err *e)
{
	sqlite3_stmt *st = sql_stmt(s, "SELECT detail FROM events WHERE kind = ? ORDER BY id");
	if (!st)
		return sql_fail(s, "cannot read the events", e);
	bind_text(st, 1, kind);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		fn(ctx, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : sql_fail(s, "cannot read the events", e);
}

int store_event(struct store *s, int iter, const char *kind, const char *detail, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT INTO events(t, iter, kind, detail) VALUES (?, ?, ?, ?)", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_double(st, 1, now());
	if (iter >= 0)
		sqlite3_bind_int(st, 2, iter);
	else
		sqlite3_bind_null(st, 2);
	bind_text(st, 3, kind);
	bind_text(st, 4, detail);
	return step_done(s, st, e, "cannot record an event");
}

/* ---- runs ------------------------------------------------------------------ */

void store_run_release(struct store_run *r)
{
	free(r->command);
	free(r->cwd);
	free(r->log_path);
	free(r->result_json);
	free(r->tree);
	free(r->snapshot);
	free(r->head);
	free(r->branch);
	memset(r, 0, sizeof(*r));
}

#define RUN_COLS                                                                             \
	"iter, kind, command, cwd, log_path, t_start, t_end, exit_status, signal, timed_out, " \
	"cancelled, no_change, gate, scope, bench_ms, vs_best, result_json, tree, snapshot, "  \
	"head, env_id, pid, branch"

static void bind_run(sqlite3_stmt *st, const struct store_run *r)
{
	sqlite3_bind_int(st, 1, r->iter);
	bind_text(st, 2, run_kind_name(r->kind));
	bind_text(st, 3, r->command);
	bind_text(st, 4, r->cwd);
	bind_text(st, 5, r->log_path);
	sqlite3_bind_double(st, 6, r->t_start);
	if (r->t_end > 0)
		sqlite3_bind_double(st, 7, r->t_end);
	else
		sqlite3_bind_null(st, 7);
	sqlite3_bind_int(st, 8, r->exit_status);
	sqlite3_bind_int(st, 9, r->signal);
	sqlite3_bind_int(st, 10, r->timed_out);
	sqlite3_bind_int(st, 11, r->cancelled);
	sqlite3_bind_int(st, 12, r->no_change);
	sqlite3_bind_int(st, 13, (int)r->gate);
	sqlite3_bind_int(st, 14, (int)r->scope);
	bind_real(st, 15, r->bench_ms);
	bind_real(st, 16, r->vs_best);
	bind_text(st, 17, r->result_json);
	bind_text(st, 18, r->tree);
	bind_text(st, 19, r->snapshot);
	bind_text(st, 20, r->head);
	if (r->env_id > 0)
		sqlite3_bind_int(st, 21, r->env_id);
	else
		sqlite3_bind_null(st, 21);
	sqlite3_bind_int(st, 22, r->pid);
	bind_text(st, 23, r->branch);
}

static void read_run(sqlite3_stmt *st, struct store_run *r)
{
	/* column 0 is id, then RUN_COLS in order */
	r->id = sqlite3_column_int(st, 0);
	r->iter = sqlite3_column_int(st, 1);
	r->kind = run_kind_parse((const char *)sqlite3_column_text(st, 2));
	r->command = col_text(st, 3);
	r->cwd = col_text(st, 4);
	r->log_path = col_text(st, 5);
	r->t_start = sqlite3_column_double(st, 6);
	r->t_end = sqlite3_column_double(st, 7);
	r->exit_status = sqlite3_column_int(st, 8);
	r->signal = sqlite3_column_int(st, 9);
	r->timed_out = sqlite3_column_int(st, 10);
	r->cancelled = sqlite3_column_int(st, 11);
	r->no_change = sqlite3_column_int(st, 12);
	r->gate = (enum gate_verdict)sqlite3_column_int(st, 13);
	r->scope = (enum gate_scope)sqlite3_column_int(st, 14);
	r->bench_ms = col_real(st, 15);
	r->vs_best = col_real(st, 16);
	r->result_json = col_text(st, 17);
	r->tree = col_text(st, 18);
	r->snapshot = col_text(st, 19);
	r->head = col_text(st, 20);
	r->env_id = sqlite3_column_int(st, 21);
	r->pid = sqlite3_column_int(st, 22);
	r->branch = col_text(st, 23);
}

int store_run_insert(struct store *s, struct store_run *r, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s,
		      "INSERT INTO runs(" RUN_COLS ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		      "?,?,?,?,?)",
		      &st, e);
	if (rc < 0)
		return rc;
	bind_run(st, r);
	if ((rc = step_done(s, st, e, "cannot record the run")) < 0)
		return rc;
	r->id = (int)sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_run_update(struct store *s, const struct store_run *r, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s,
		      /* a kind this version does not know stays as it was */
		      "UPDATE runs SET iter=?1, kind=CASE ?2 WHEN 'other' THEN kind ELSE ?2 END, "
		      "command=?, cwd=?, log_path=?, t_start=?, t_end=?, exit_status=?, signal=?, timed_out=?, cancelled=?, no_change=?, "
		      "gate=?, scope=?, bench_ms=?, vs_best=?, result_json=?, tree=?, snapshot=?, "
		      "head=?, env_id=?, pid=?, branch=? WHERE id=?",
		      &st, e);
	if (rc < 0)
		return rc;
	bind_run(st, r);
	sqlite3_bind_int(st, 24, r->id);
	return step_done(s, st, e, "cannot update the run");
}

static int run_query(struct store *s, sqlite3_stmt *st, struct store_run *r, struct err *e)
{
	int rc = sqlite3_step(st);
	memset(r, 0, sizeof(*r));
	if (rc == SQLITE_ROW) {
		read_run(st, r);
		unprep(s, st);
		return 0;
	}
	unprep(s, st);
	if (rc == SQLITE_DONE)
		return err_set(e, ERR_NOTFOUND, "no such verify run");
	return store_fail(s, "cannot read a run", e);
}

int store_run_get(struct store *s, int id, struct store_run *r, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "SELECT id, " RUN_COLS " FROM runs WHERE id = ?", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, id);
	return run_query(s, st, r, e);
}

int store_run_last(struct store *s, int iter, enum run_kind kind, struct store_run *r,
		   struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s,
		      "SELECT id, " RUN_COLS
		      " FROM runs WHERE iter = ? AND kind = ? ORDER BY id DESC LIMIT 1",
		      &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, iter);
	bind_text(st, 2, run_kind_name(kind));
	return run_query(s, st, r, e);
}

int store_run_unfinished(struct store *s, struct store_run *r, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "SELECT id, " RUN_COLS " FROM runs WHERE t_end IS NULL OR t_end <= 0"
			 " ORDER BY id LIMIT 1",
		      &st, e);
	if (rc < 0)
		return rc;
	return run_query(s, st, r, e);
}

/* ---- environments and samples ----------------------------------------------- */

int store_env_id(struct store *s, const struct parse_env *env, int *id, struct err *e)
{
	sqlite3_stmt *st;
	int rc;

	*id = 0;
	if (!env || !env->raw)
		return 0;
	rc = prep(s,
		  "INSERT OR IGNORE INTO envs(raw, device, backend, pytorch, triton, branch, sha,"
		  " first_seen) VALUES (?,?,?,?,?,?,?,?)",
		  &st, e);
	if (rc < 0)
		return rc;
	bind_text(st, 1, env->raw);
	bind_text(st, 2, env->device);
	bind_text(st, 3, env->backend);
	bind_text(st, 4, env->pytorch);
	bind_text(st, 5, env->triton);
	bind_text(st, 6, env->branch);
	bind_text(st, 7, env->sha);
	sqlite3_bind_double(st, 8, now());
	if ((rc = step_done(s, st, e, "cannot record the environment")) < 0)
		return rc;
	if ((rc = prep(s, "SELECT id FROM envs WHERE raw = ?", &st, e)) < 0)
		return rc;
	bind_text(st, 1, env->raw);
	if (sqlite3_step(st) == SQLITE_ROW)
		*id = sqlite3_column_int(st, 0);
	unprep(s, st);
	return 0;
}

static void bind_long(sqlite3_stmt *st, int i, long v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

int store_run_record(struct store *s, struct store_run *r, const struct parse_env *env,
		     const struct parse_row *rows, size_t n, struct err *e)
{
	int env_id = 0;
	int rc = store_env_id(s, env, &env_id, e);
	r->env_id = env_id;
	if (rc == 0)
		rc = store_run_update(s, r, e);
	if (rc == 0)
		rc = store_samples_add(s, r->id, env_id, rows, n, e);
	return rc;
}

int store_samples_add(struct store *s, int run_id, int env_id, const struct parse_row *rows,
		      size_t n, struct err *e)
{
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *st;
		int rc = prep(s,
			      "INSERT INTO samples(run_id, env_id, mode, B, T, H, D, L, op, base_ms,"
			      " new_ms, speedup) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
			      &st, e);
		if (rc < 0)
			return rc;
		sqlite3_bind_int(st, 1, run_id);
		if (env_id > 0)
			sqlite3_bind_int(st, 2, env_id);
		else
			sqlite3_bind_null(st, 2);
		bind_text(st, 3, rows[i].mode);
		bind_long(st, 4, rows[i].B);
		bind_long(st, 5, rows[i].T);
		bind_long(st, 6, rows[i].H);
		bind_long(st, 7, rows[i].D);
		bind_long(st, 8, rows[i].L);
		bind_text(st, 9, rows[i].op);
		bind_real(st, 10, rows[i].base_ms);
		bind_real(st, 11, rows[i].new_ms);
		bind_real(st, 12, rows[i].speedup);
		if ((rc = step_done(s, st, e, "cannot record a sample")) < 0)
			return rc;
	}
	sqlite3_stmt *st;
	int rc = prep(s, "UPDATE runs SET " RUN_SAMPLE_FACTS("?1") " WHERE id = ?1", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, run_id);
	return step_done(s, st, e, "cannot record a run's samples");
}

/* ---- iterations --------------------------------------------------------------- */

int store_iter_add(struct store *s, const struct log_row *r, int run_id, const char *tree,
		   struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s,
		      "INSERT INTO iterations(iter, direction, axis, gate, gate_v, scope, bench_ms,"
		      " vs_best, status, run_id, tree, logged_at, commit_sha, unconfirmed, vs_from)"
		      " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		      &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, r->iter);
	bind_text(st, 2, r->direction ? r->direction : "");
	bind_text(st, 3, r->axis);
	bind_text(st, 4, r->gate);
	sqlite3_bind_int(st, 5, (int)r->gate_v);
	sqlite3_bind_int(st, 6, (int)r->scope);
	bind_real(st, 7, r->bench_ms);
	bind_real(st, 8, r->vs_best);
	bind_text(st, 9, row_status_name(r->status));
	if (run_id > 0)
		sqlite3_bind_int(st, 10, run_id);
	else
		sqlite3_bind_null(st, 10);
	bind_text(st, 11, tree);
	sqlite3_bind_double(st, 12, now());
	bind_text(st, 13, r->commit);
	bind_text(st, 14, r->unconfirmed);
	bind_text(st, 15, r->vs_confirm ? "confirm" : NULL);
	return step_done(s, st, e, "cannot record the row");
}

int store_iter_set_commit(struct store *s, int iter, const char *sha, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "UPDATE iterations SET commit_sha = ?, committed_at = ? WHERE iter = ?",
		      &st, e);
	if (rc < 0)
		return rc;
	bind_text(st, 1, sha);
	sqlite3_bind_double(st, 2, now());
	sqlite3_bind_int(st, 3, iter);
	return step_done(s, st, e, "cannot record the commit");
}

/* What identifies the rows' content for this connection: its own writes
 * to their tables and other connections' commits.  False inside a
 * transaction, where rows may still roll back. */
static bool content_key(struct store *s, sqlite3_int64 *changes, int *version)
{
	if (!s->rows_watched || !sqlite3_get_autocommit(s->db))
		return false;
	if (!s->st_version &&
	    sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &s->st_version, NULL) != SQLITE_OK)
		return false;
	bool ok = sqlite3_step(s->st_version) == SQLITE_ROW;
	if (ok)
		*version = sqlite3_column_int(s->st_version, 0);
	sqlite3_reset(s->st_version);
	*changes = s->rows_touched;
	return ok;
}

static int rows_read(struct store *s, struct log_rows **out, struct err *e);
static int rows_read_sel(struct store *s, int sel, int before, size_t limit, struct log_rows **out,
			 struct err *e);
#define ROWS_STAMPED 3 /* rows_read_sel: the rows stamped after `before` */

/* meta 'rows_stamp' (-1 when there is none) */
static long long rows_stamp(struct store *s)
{
	sqlite3_stmt *st;
	long long v = -1;
	if (prep(s, "SELECT value FROM meta WHERE key = 'rows_stamp'", &st, NULL) < 0)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	unprep(s, st);
	return v;
}

static size_t str_put(struct sb *text, const char *str)
{
	if (!str)
		return (size_t)-1;
	size_t off = text->len;
	sb_add(text, str, strlen(str) + 1);
	return off;
}

/* old with the rows of ch (newer, in the log's order) put in: each
 * replaces the row of its iteration or goes in at its place.  NULL when
 * the result would not hold n rows (a row was taken away: read them all). */
static struct log_rows *rows_merge(const struct log_rows *old, const struct log_rows *ch, size_t n)
{
	size_t m = 0, i = 0, j = 0;
	struct log_row *v = xcalloc(n ? n : 1, sizeof(*v));
	size_t (*off)[5] = xcalloc(n ? n : 1, sizeof(*off));
	struct sb text = SB_INIT;
	sb_init(&text);
	while ((i < old->n || j < ch->n) && m < n) {
		const struct log_row *r;
		if (j < ch->n && (i >= old->n || ch->v[j].iter <= old->v[i].iter)) {
			if (i < old->n && ch->v[j].iter == old->v[i].iter)
				i++;
			r = &ch->v[j++];
		} else {
			r = &old->v[i++];
		}
		v[m] = *r;
		off[m][0] = str_put(&text, r->direction);
		off[m][1] = str_put(&text, r->gate);
		off[m][2] = str_put(&text, r->axis);
		off[m][3] = str_put(&text, r->commit);
		off[m][4] = str_put(&text, r->unconfirmed);
		m++;
	}
	if (m != n || i < old->n || j < ch->n) {
		free(v);
		free(off);
		sb_release(&text);
		return NULL;
	}
	struct log_rows *out = xcalloc(1, sizeof(*out));
	out->text = sb_detach(&text);
	for (size_t k = 0; k < n; k++) {
		v[k].direction = off[k][0] == (size_t)-1 ? NULL : out->text + off[k][0];
		v[k].gate = off[k][1] == (size_t)-1 ? NULL : out->text + off[k][1];
		v[k].axis = off[k][2] == (size_t)-1 ? NULL : out->text + off[k][2];
		v[k].commit = off[k][3] == (size_t)-1 ? NULL : out->text + off[k][3];
		v[k].unconfirmed = off[k][4] == (size_t)-1 ? NULL : out->text + off[k][4];
	}
	free(off);
	out->v = v;
	out->n = n;
	out->refs = 1;
	return out;
}

/* The rows held, brought up to date with the rows stamped since they were
 * read (the count of rows tells a row taken away: then NULL, and they are
 * read whole).  In one read transaction, so that the count, the stamp and
 * the rows agree. */
static struct log_rows *rows_refresh(struct store *s, long long *stamp)
{
	struct log_rows *ch = NULL, *out = NULL;
	long long n, key;
	if (s->rows_stamp < 0 || sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return NULL;
	if ((*stamp = rows_stamp(s)) >= 0 && store_rows_count(s, &n, &key, NULL) == 0 && n >= 0 &&
	    key >= 0 && rows_read_sel(s, ROWS_STAMPED, 0, 0, &ch, NULL) == 0)
		out = rows_merge(s->rows, ch, (size_t)n);
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	log_rows_put(ch);
	return out;
}

int store_rows_get(struct store *s, struct log_rows **out, struct err *e)
{
	sqlite3_int64 changes = 0;
	int version = 0, rc;
	bool keyed = content_key(s, &changes, &version);
	long long stamp = -1;

	*out = NULL;
	if (keyed && s->rows && s->rows_changes == changes && s->rows_version == version) {
		s->rows->refs++;
		*out = s->rows;
		return 0;
	}
	/* the rows held and what changed since, where that can be known;
	 * else all of them (the stamp read first: a row written meanwhile is
	 * read again next time) */
	if (!(keyed && s->rows && (*out = rows_refresh(s, &stamp)))) {
		stamp = keyed ? rows_stamp(s) : -1;
		if ((rc = rows_read(s, out, e)) < 0) {
			rows_forget(s);
			return rc;
		}
	}
	rows_forget(s);
	if (!keyed)
		return 0;
	/* the store keeps a reference of its own */
	(*out)->refs++;
	s->rows = *out;
	s->rows_changes = changes;
	s->rows_version = version;
	s->rows_stamp = stamp;
	return 0;
}

void log_rows_put(struct log_rows *r)
{
	if (!r || --r->refs > 0)
		return;
	free((struct log_row *)r->v);
	free(r->text);
	free(r);
}

int store_iters(struct store *s, struct log_row **rows, size_t *n, struct err *e)
{
	struct log_rows *sr;
	int rc = store_rows_get(s, &sr, e);

	*rows = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	*rows = xmalloc((sr->n ? sr->n : 1) * sizeof(**rows));
	for (size_t i = 0; i < sr->n; i++) {
		const struct log_row *r = &sr->v[i];
		(*rows)[i] = *r;
		(*rows)[i].direction = xstrdup(r->direction);
		(*rows)[i].gate = xstrdup(r->gate);
		(*rows)[i].axis = xstrdup(r->axis);
		(*rows)[i].commit = xstrdup(r->commit);
		(*rows)[i].unconfirmed = xstrdup(r->unconfirmed);
	}
	*n = sr->n;
	log_rows_put(sr);
	return 0;
}

/* A row's text goes into the snapshot's one block, at the offset returned
 * (NO_TEXT for NULL); the rows point into the block once it stops growing. */
#define NO_TEXT ((size_t)-1)
static size_t text_put(sqlite3_stmt *st, int i, struct sb *text)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	if (!t)
		return NO_TEXT;
	size_t off = text->len;
	sb_add(text, t, (size_t)sqlite3_column_bytes(st, i) + 1);
	return off;
}

static char *text_at(const struct sb *text, size_t off)
{
	return off == NO_TEXT ? NULL : text->buf + off;
}

/* The last columns of a row as rows_read reads them, and the table: a
 * subset-gate row whose kernel a full gate failed since */
#define ROWS_FULL_GATE_FAILED                                                               \
	" CASE WHEN scope = ?1 AND tree IS NOT NULL THEN EXISTS(SELECT 1 FROM runs f"        \
	"  WHERE f.tree = iterations.tree AND f.kind = 'verify' AND f.scope = ?2"          \
	"  AND f.gate = ?3) ELSE 0 END"                                                      \
	" FROM iterations"

/* The columns of a row as rows_read reads them */
#define ROWS_COLUMNS                                                                        \
	"SELECT iter, direction, gate, gate_v, scope, bench_ms, vs_best, status, axis,"   \
	" commit_sha, unconfirmed, vs_from IS 'confirm'," ROWS_FULL_GATE_FAILED

/* The same without their text: direction, gate, axis and commit NULL, and
 * unconfirmed "" where there is a reason */
/* Which rows rows_read reads: all, or the newest before an iteration (at
 * most a limit of them), or of those only the ones that may be the best */
enum rows_sel { ROWS_ALL, ROWS_BEFORE, ROWS_BEST_BEFORE, ROWS_STAMPED_AFTER, ROWS_FIRST };
_Static_assert(ROWS_STAMPED_AFTER == ROWS_STAMPED, "rows_refresh's selection");

/* Room for every row as the kept count says (0 when it cannot say). */
static size_t rows_room(struct store *s)
{
	long long count, key;
	if (store_rows_count(s, &count, &key, NULL) == 0 && count > 0 && count < INT_MAX)
		return (size_t)count + 1;
	return 0;
}

static int rows_read_sel(struct store *s, int sel, int before, size_t limit,
			 struct log_rows **out, struct err *e)
{
	struct log_row *rows = NULL;
	size_t (*off)[5] = NULL; /* direction, gate, axis, commit, unconfirmed of each row */
	struct sb text = SB_INIT;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc = prep(s,
		      sel == ROWS_ALL ? ROWS_COLUMNS " ORDER BY iter"
		      : sel == ROWS_STAMPED_AFTER
			      ? ROWS_COLUMNS " WHERE stamp > ?4 ORDER BY iter"
		      : sel == ROWS_FIRST ? ROWS_COLUMNS " WHERE iter > ?4 ORDER BY iter LIMIT ?5"
		      : sel == ROWS_BEFORE
			      ? ROWS_COLUMNS " WHERE iter < ?4 ORDER BY iter DESC LIMIT ?5"
			      : ROWS_COLUMNS " WHERE status IN ('base', 'keep') AND iter < ?4"
					     " ORDER BY iter DESC LIMIT ?5",
		      &st, e);
	*out = NULL;
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, SCOPE_SUBSET);
	sqlite3_bind_int(st, 2, SCOPE_FULL);
	sqlite3_bind_int(st, 3, GATE_FAIL);
	if (sel == ROWS_STAMPED_AFTER)
		sqlite3_bind_int64(st, 4, s->rows_stamp);
	else if (sel != ROWS_ALL) {
		sqlite3_bind_int(st, 4, before);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)limit);
	}
	sb_init(&text);
	/* every row: as many as the kept count says, in one allocation */
	if (sel == ROWS_ALL && (cap = rows_room(s))) {
		rows = xmalloc(cap * sizeof(*rows));
		off = xmalloc(cap * sizeof(*off));
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			rows = xrealloc(rows, cap * sizeof(*rows));
			off = xrealloc(off, cap * sizeof(*off));
		}
		struct log_row *r = &rows[n];
		memset(r, 0, sizeof(*r));
		r->iter = sqlite3_column_int(st, 0);
		off[n][0] = text_put(st, 1, &text);
		off[n][1] = text_put(st, 2, &text);
		r->gate_v = (enum gate_verdict)sqlite3_column_int(st, 3);
		r->scope = (enum gate_scope)sqlite3_column_int(st, 4);
		r->bench_ms = col_real(st, 5);
		r->vs_best = col_real(st, 6);
		const char *status = (const char *)sqlite3_column_text(st, 7);
		r->status = row_status_parse(status);
		off[n][2] = text_put(st, 8, &text);
		off[n][3] = text_put(st, 9, &text);
		off[n][4] = text_put(st, 10, &text);
		r->vs_confirm = sqlite3_column_int(st, 11) != 0;
		r->full_gate_failed = sqlite3_column_int(st, 12) != 0;
		n++;
	}
	unprep(s, st);
	/* read newest first: back to the log's order */
	for (size_t i = 0; (sel == ROWS_BEFORE || sel == ROWS_BEST_BEFORE) && i < n / 2; i++) {
		struct log_row t = rows[i];
		size_t to[5];
		rows[i] = rows[n - 1 - i];
		rows[n - 1 - i] = t;
		memcpy(to, off[i], sizeof(to));
		memcpy(off[i], off[n - 1 - i], sizeof(to));
		memcpy(off[n - 1 - i], to, sizeof(to));
	}
	for (size_t i = 0; i < n; i++) {
		rows[i].direction = text_at(&text, off[i][0]);
		rows[i].gate = text_at(&text, off[i][1]);
		rows[i].axis = text_at(&text, off[i][2]);
		rows[i].commit = text_at(&text, off[i][3]);
		rows[i].unconfirmed = text_at(&text, off[i][4]);
	}
	free(off);
	struct log_rows *sr = xcalloc(1, sizeof(*sr));
	sr->v = rows;
	sr->n = n;
	sr->text = sb_detach(&text);
	sr->refs = 1;
	if (rc != SQLITE_DONE) {
		log_rows_put(sr);
		return store_fail(s, "cannot read the rows", e);
	}
	*out = sr;
	return 0;
}

static int rows_read(struct store *s, struct log_rows **out, struct err *e)
{
	return rows_read_sel(s, ROWS_ALL, 0, 0, out, e);
}

int store_rows_before(struct store *s, int before, size_t limit, bool best_only,
		      struct log_rows **out, struct err *e)
{
	return rows_read_sel(s, best_only ? ROWS_BEST_BEFORE : ROWS_BEFORE, before, limit, out, e);
}

int store_rows_chart(struct store *s, struct store_chart_row **out, size_t *n, struct err *e)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	int rc = prep(s, "SELECT iter, bench_ms, gate_v FROM iterations ORDER BY iter", &st, e);
	if (rc < 0)
		return rc;
	if ((cap = rows_room(s)))
		*out = xmalloc(cap * sizeof(**out));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = (struct store_chart_row){
			.iter = sqlite3_column_int(st, 0),
			.bench_ms = col_real(st, 1),
			.gate_v = (enum gate_verdict)sqlite3_column_int(st, 2),
		};
	}
	unprep(s, st);
	if (rc != SQLITE_DONE) {
		free(*out);
		*out = NULL;
		*n = 0;
		return store_fail(s, "cannot read the rows", e);
	}
	return 0;
}

int store_rows_newest(struct store *s, size_t limit, struct log_rows **out, size_t *older,
		      struct err *e)
{
	long long n, key;
	int rc;
	*out = NULL;
	*older = 0;
	/* in one read transaction (the caller's, or one of its own): the
	 * count and the rows agree */
	bool own = sqlite3_get_autocommit(s->db);
	if (own && (rc = store_exec(s, "BEGIN", e)) < 0)
		return rc;
	if ((rc = store_rows_count(s, &n, &key, e)) == 0)
		rc = rows_read_sel(s, ROWS_BEFORE, INT_MAX, limit, out, e);
	if (own)
		sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc == 0 && n > (long long)(*out)->n)
		*older = (size_t)(n - (long long)(*out)->n);
	return rc;
}

int store_rows_first(struct store *s, size_t limit, struct log_rows **out, struct err *e)
{
	return rows_read_sel(s, ROWS_FIRST, INT_MIN, limit, out, e);
}

int store_rows_best(struct store *s, struct log_rows **page, const struct log_row **best,
		    struct err *e)
{
	/* log_rows_best over the whole log is the newest row that can be the
	 * best: walked back a few candidates (baselines and keeps) at a time */
	int before = INT_MAX, rc;
	*page = NULL;
	*best = NULL;
	for (;;) {
		if ((rc = store_rows_before(s, before, 16, true, page, e)) < 0)
			return rc;
		if ((*best = log_rows_best((*page)->v, (*page)->n)) || (*page)->n < 16)
			return 0;
		before = (*page)->v[0].iter;
		log_rows_put(*page);
		*page = NULL;
	}
}

int store_rows_count(struct store *s, long long *n, long long *key, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s,
		      "SELECT (SELECT value FROM meta WHERE key = 'rows_n'),"
		      " (SELECT value FROM meta WHERE key = 'rows_key')",
		      &st, e);
	*n = *key = -1;
	if (rc < 0)
		return rc;
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
	    sqlite3_column_type(st, 1) != SQLITE_NULL) {
		*n = sqlite3_column_int64(st, 0);
		*key = sqlite3_column_int64(st, 1);
	}
	unprep(s, st);
	if (step != SQLITE_ROW)
		return store_fail(s, "cannot read the number of rows", e);
	if (*n < 0) {
		/* a count taken away by hand: counted once */
		int c;
		if ((rc = store_iter_count(s, &c, e)) < 0)
			return rc;
		*n = c;
	}
	return 0;
}

int store_iter_count(struct store *s, int *n, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "SELECT COUNT(*) FROM iterations", &st, e);
	*n = 0;
	if (rc < 0)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int(st, 0);
	unprep(s, st);
	return 0;
}

int store_iter_run(struct store *s, int iter, int *run_id, char **tree, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "SELECT run_id, tree FROM iterations WHERE iter = ?", &st, e);
	*run_id = 0;
	if (tree)
		*tree = NULL;
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, iter);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*run_id = sqlite3_column_int(st, 0);
		if (tree)
			*tree = col_text(st, 1);
		rc = 0;
	} else {
		rc = err_set(e, ERR_NOTFOUND, "no row for iteration %d", iter);
	}
	unprep(s, st);
	return rc;
}

int store_rows_gen(struct store *s, long long *gen, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "SELECT value FROM meta WHERE key = 'rows_gen'", &st, e);
	*gen = -1;
	if (rc < 0)
		return rc;
	int step = sqlite3_step(st);
	if (step == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*gen = sqlite3_column_int64(st, 0);
	unprep(s, st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return store_fail(s, "cannot read the rows' generation", e);
	return 0;
}

/* a string at path p of the run's result, else NULL (as jansson's
 * json_string_value reads it) */
#define RESULT_TEXT(p)                                                                     \
	"CASE WHEN json_type(result_json, '" p "') = 'text' THEN json_extract(result_json, '" p \
	"') END"

int store_env_line(struct store *s, char *out[4], struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s,
		      "SELECT " RESULT_TEXT("$.env.raw") ", " RESULT_TEXT("$.slurm.node") ", "
		      RESULT_TEXT("$.slurm.gpus") ", " RESULT_TEXT("$.slurm.job") " FROM runs"
		      " WHERE id = (SELECT run_id FROM iterations WHERE iter = (SELECT max(iter)"
		      " FROM iterations WHERE has_env)) AND json_valid(result_json)",
		      &st, e);
	memset(out, 0, 4 * sizeof(*out));
	if (rc < 0)
		return rc;
	int step = sqlite3_step(st);
	for (int i = 0; step == SQLITE_ROW && i < 4; i++)
		out[i] = col_text(st, i);
	unprep(s, st);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return store_fail(s, "cannot read the environment line", e);
	return 0;
}

/* ---- set-aside changes ------------------------------------------------------------ */

int store_aside_add(struct store *s, int iter, const char *sha, const char *ref, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "INSERT INTO aside(iter, sha, ref, created) VALUES (?,?,?,?)", &st, e);
	if (rc < 0)
		return rc;
	sqlite3_bind_int(st, 1, iter);
	bind_text(st, 2, sha);
	bind_text(st, 3, ref);
	sqlite3_bind_double(st, 4, now());
	return step_done(s, st, e, "cannot record the set-aside change");
}

int store_aside_pending(struct store *s, int *iter, char **sha, char **ref, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s,
		      "SELECT iter, sha, ref FROM aside WHERE restored IS NULL ORDER BY id LIMIT 1",
		      &st, e);
	*sha = *ref = NULL;
	if (rc < 0)
		return rc;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*iter = sqlite3_column_int(st, 0);
		*sha = col_text(st, 1);
		*ref = col_text(st, 2);
		rc = 0;
	} else {
		rc = ERR_NOTFOUND;
	}
	unprep(s, st);
	return rc;
}

int store_aside_done(struct store *s, const char *sha, struct err *e)
{
	sqlite3_stmt *st;
	int rc = prep(s, "UPDATE aside SET restored = ? WHERE sha = ? AND restored IS NULL", &st,
		      e);
	if (rc < 0)
		return rc;
	sqlite3_bind_double(st, 1, now());
	bind_text(st, 2, sha);
	return step_done(s, st, e, "cannot record the restored change");
}

/* ---- export ------------------------------------------------------------------------- */

static json_t *column_json(sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(st, i));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(st, i));
	case SQLITE_NULL:
		return json_null();
	default: {
		const char *t = (const char *)sqlite3_column_text(st, i);
		json_t *j = json_stringn_nocheck(t ? t : "", (size_t)sqlite3_column_bytes(st, i));
		return j ? j : json_null();
	}
	}
}

/* One table's rows, each a small object dumped and freed before the next
 * is read. */
static int export_table(struct store *s, const char *name, struct jsonw *w, struct err *e)
{
	sqlite3_stmt *st;
	char *q = sqlite3_mprintf("SELECT * FROM \"%w\" ORDER BY rowid", name);
	int rc = sqlite3_prepare_v2(s->db, q, -1, &st, NULL);
	sqlite3_free(q);
	if (rc != SQLITE_OK) {
		/* WITHOUT ROWID tables added by other modules */
		q = sqlite3_mprintf("SELECT * FROM \"%w\"", name);
		rc = sqlite3_prepare_v2(s->db, q, -1, &st, NULL);
		sqlite3_free(q);
		if (rc != SQLITE_OK)
			return store_fail(s, "cannot export a table", e);
	}
	rc = jsonw_array(w, name);
	while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		json_t *row = json_object();
		for (int i = 0; i < sqlite3_column_count(st); i++)
			json_object_set_new(row, sqlite3_column_name(st, i), column_json(st, i));
		rc = jsonw_value(w, NULL, row);
		json_decref(row);
	}
	if (rc == SQLITE_DONE)
		rc = jsonw_close(w);
	else if (rc > 0)
		rc = store_fail(s, "cannot read a table to export", e);
	sqlite3_finalize(st);
	return rc;
}

int store_export_json(struct store *s, json_t *extra, size_t flags, json_dump_callback_t write,
		      void *data, struct err *e)
{
	sqlite3_stmt *tabs;
	struct jsonw w;
	const char *key;
	json_t *v;
	/* (the list of tables stays open until the last row is out: every
	 * table is read in its one read transaction) */
	int rc = prep(s,
		      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
		      "'sqlite_%' ORDER BY name",
		      &tabs, e);
	if (rc < 0)
		return rc;
	jsonw_init(&w, flags, write, data);
	json_t *schema = json_integer(STORE_SCHEMA_VERSION);
	if (jsonw_object(&w, NULL) == 0 && jsonw_value(&w, "schema", schema) == 0)
		rc = jsonw_object(&w, "tables");
	json_decref(schema);
	while (rc == 0 && sqlite3_step(tabs) == SQLITE_ROW)
		rc = export_table(s, (const char *)sqlite3_column_text(tabs, 0), &w, e);
	unprep(s, tabs);
	if (rc == 0)
		rc = jsonw_close(&w);
	json_object_foreach(extra, key, v)
		if (rc == 0)
			rc = jsonw_value(&w, key, v);
	if (rc == 0)
		rc = jsonw_close(&w);
	if (w.write_failed)
		rc = err_set(e, ERR_IO, "export stopped: its output could not be written (a closed "
					"pipe or a full disk)");
	else if (w.dump_failed)
		rc = err_set(e, ERR_IO, "export stopped: the database holds text that is not valid "
					"UTF-8, which JSON cannot carry");
	return rc;
}
