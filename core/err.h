/*
 * err — how the engine reports failure.
 *
 * Every core function that can fail returns 0 on success or one of the
 * negative ERR_* codes below, and fills an optional caller-owned struct err
 * with a message that says what happened and what to do next.  The core
 * never prints and never exits; front-ends map codes to exit statuses.
 */
#ifndef OPTLOOP_ERR_H
#define OPTLOOP_ERR_H

enum err_code {
	ERR_OK = 0,
	ERR_FAIL = -1,    /* a check failed (gate failed, precondition false) */
	ERR_USAGE = -2,   /* bad input from the user: arguments, field names */
	ERR_REFUSED = -3, /* the protocol does not allow this now */
	ERR_HARNESS = -4, /* the verify harness broke or the run was incomplete */
	ERR_IO = -5,      /* file system, database or git failure */
	ERR_NOMEM = -6,
	ERR_NOTFOUND = -7,
	ERR_BUSY = -8, /* another writer holds the workspace */
	ERR_NOTFILE = -9, /* a path that is there but is no file to read: a FIFO, a
			   * device, a directory, too big (fsutil_open_read) */
	ERR_READONLY = -10, /* the workspace cannot be written: a read-only file
			     * system, or files this user may not write */
};

#define ERR_MSG_MAX 4096

struct err {
	int code;
	char msg[ERR_MSG_MAX];
};

/* Fill *e (when not NULL) and return code, so callers can write
 * `return err_set(e, ERR_IO, "cannot open %s: %s", p, strerror(errno));`. */
int err_set(struct err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix an already-set message with more context ("log: " + old). */
int err_prefix(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void err_clear(struct err *e);

/* Exit status for the CLI: 0 ok; 1 only for a failed gate or check
 * (ERR_FAIL); 2 usage, or a file, repository or workspace that is not
 * there or is no file (ERR_USAGE, ERR_NOTFOUND, ERR_NOTFILE); 3 refused by
 * the protocol or by another writer (ERR_REFUSED, ERR_BUSY); 4 the harness
 * broke or the run was incomplete, or optloop's own I/O failed: disk,
 * database, git, a lock, a workspace it may not write (ERR_HARNESS, ERR_IO,
 * ERR_NOMEM, ERR_READONLY, anything else). */
int err_exit_status(int code);

/* The code's name for scripts ("io", "usage", "refused", "not_found", ...;
 * static). */
const char *err_code_name(int code);

/* Broken invariant: a bug in optloop, never a user error. */
#define BUG(...) bug_fl(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bug_fl(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
