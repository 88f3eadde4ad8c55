/* cli_util — uniform CLI messages and JSON output. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int cli_fail(const struct err *e)
{
	fprintf(stderr, "optloop: %s\n", e->msg[0] ? e->msg : "failed");
	return err_exit_status(e->code ? e->code : ERR_FAIL);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	const char *u = cli_usage(cmd);

	fprintf(stderr, "optloop %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (u)
		fprintf(stderr, "usage: optloop %s\n", u);
	return 2;
}

void cli_print_json(json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		free(s);
	}
	json_decref(v);
}
