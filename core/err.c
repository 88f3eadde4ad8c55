/* err — status codes and caller-owned error messages for the engine. */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int err_set(struct err *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
		e->code = code;
	}
	return code;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	char pre[ERR_MSG_MAX], old[ERR_MSG_MAX];
	va_list ap;

	if (!e)
		return ERR_FAIL;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	size_t n = strlen(pre);
	if (n >= sizeof(e->msg))
		n = sizeof(e->msg) - 1;
	memcpy(e->msg, pre, n);
	size_t m = strnlen(old, sizeof(old));
	if (m > sizeof(e->msg) - 1 - n)
		m = sizeof(e->msg) - 1 - n;
	memcpy(e->msg + n, old, m);
	e->msg[n + m] = '\0';
	return e->code;
}

void err_clear(struct err *e)
{
	if (e) {
		e->code = 0;
		e->msg[0] = '\0';
	}
}

int err_exit_status(int code)
{
	switch (code) {
	case ERR_OK:
		return 0;
	case ERR_FAIL:
		return 1;
	case ERR_USAGE:
	case ERR_NOTFOUND:
	case ERR_NOTFILE:
		return 2;
	case ERR_REFUSED:
	case ERR_BUSY:
		return 3;
	default:
		/* ERR_HARNESS, and optloop's own failures (ERR_IO, ERR_NOMEM): never
		 * 1, which an agent would read as a failed gate or check */
		return 4;
	}
}

const char *err_code_name(int code)
{
	switch (code) {
	case ERR_OK:
		return "ok";
	case ERR_FAIL:
		return "failed";
	case ERR_USAGE:
		return "usage";
	case ERR_REFUSED:
		return "refused";
	case ERR_HARNESS:
		return "harness";
	case ERR_IO:
		return "io";
	case ERR_NOMEM:
		return "no_memory";
	case ERR_NOTFOUND:
		return "not_found";
	case ERR_BUSY:
		return "busy";
	case ERR_NOTFILE:
		return "not_a_file";
	case ERR_READONLY:
		return "read_only";
	default:
		return "error";
	}
}

_Noreturn void bug_fl(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	/* The one place the core may write and stop: an invariant is broken,
	 * so continuing could corrupt the workspace. */
	fprintf(stderr, "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}
