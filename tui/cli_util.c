/* cli_util — uniform CLI messages and JSON output. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "core/err.h"
#include "core/sb.h"
#include "core/fsutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_fail(const struct err *e)
{
	fprintf(stderr, "optloop: %s\n", e->msg[0] ? e->msg : "failed");
	/* a file, repository or workspace that is not there: the command was
	 * given the wrong place (2), not a failed gate or check (1) */
	if (e->code == ERR_NOTFOUND)
		return 2;
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

int cli_emit(const char *output, const char *text, json_t *json)
{
	struct sb s = SB_INIT;
	if (json) {
		char *t = json_dumps(json, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
						   JSON_REAL_PRECISION(10));
		if (t) {
			sb_adds(&s, t);
			sb_addc(&s, '\n');
		}
		free(t);
		json_decref(json);
	} else {
		sb_adds(&s, text ? text : "");
	}
	int rc = 0;
	if (!output) {
		fwrite(s.buf ? s.buf : "", 1, s.len, stdout);
	} else {
		struct err e = {0};
		if (fsutil_write_atomic(output, s.buf ? s.buf : "", s.len, &e) < 0)
			rc = cli_fail(&e);
		else
			fprintf(stderr, "optloop: wrote %s\n", output);
	}
	sb_release(&s);
	return rc;
}

void cli_print_json(json_t *v)
{
	cli_emit(NULL, NULL, v);
}

static volatile sig_atomic_t stop_flag;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

const volatile sig_atomic_t *cli_stop_on_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return &stop_flag;
}
