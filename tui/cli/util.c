/* util — uniform CLI messages and JSON output. */
#include "tui/cli/util.h"
#include "core/err.h"
#include "core/sb.h"
#include "core/vis.h"
#include "core/fsutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>

/* The command speaks JSON; whether its JSON is already out on stdout. */
static bool json_errors, json_printed;

void cli_json_errors(bool on)
{
	json_errors = on;
}

/* A failure as the JSON object a script reads instead of the output. */
void cli_json_error(int code, int status, const char *msg)
{
	if (!json_errors || json_printed)
		return;
	json_t *o = json_pack("{s:{s:s,s:i,s:s}}", "error", "code", err_code_name(code), "exit",
			      status, "message", msg);
	cli_print_json(o);
}

int cli_fail(const struct err *e)
{
	const char *msg = e->msg[0] ? e->msg : "failed";
	int code = e->code ? e->code : ERR_FAIL;
	int status = err_exit_status(code);
	struct sb v = SB_INIT;
	/* a message may quote a name (a file, a trap) the user did not choose;
	 * its own line breaks stay line breaks */
	fprintf(stderr, "optloop: %s\n", cli_vis_lines(msg, &v));
	sb_release(&v);
	cli_json_error(code, status, msg);
	return status;
}

int cli_error(int code, const char *fmt, ...)
{
	struct err e;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	e.code = code;
	return cli_fail(&e);
}

int cli_vusage_error(const char *cmd, const char *usage, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	struct sb m = SB_INIT, v = SB_INIT;
	sb_vaddf(&m, fmt, ap);
	fprintf(stderr, "optloop %s: %s\n", cmd, cli_vis(sb_str(&m), &v));
	sb_release(&m);
	sb_release(&v);
	if (usage)
		fprintf(stderr, "usage: optloop %s\n", usage);
	if (json_errors) {
		char msg[1024];
		vsnprintf(msg, sizeof(msg), fmt, again);
		cli_json_error(ERR_USAGE, 2, msg);
	}
	va_end(again);
	return 2;
}

int cli_usage_error_at(const char *cmd, const char *usage, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = cli_vusage_error(cmd, usage, fmt, ap);
	va_end(ap);
	return rc;
}

int cli_emit(const char *output, const char *text, json_t *json)
{
	struct sb s = SB_INIT;
	if (json) {
		char *t = json_dumps(json, CLI_JSON_FLAGS);
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
		json_printed = json_printed || json;
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

void cli_to_stream(void *ctx, const char *buf, size_t len)
{
	FILE *f = ctx;
	fwrite(buf, 1, len, f);
	fflush(f);
}

void cli_print_json(json_t *v)
{
	cli_emit(NULL, NULL, v);
}

int cli_json_write(const char *buf, size_t len, void *data)
{
	(void)data;
	json_printed = true;
	return fwrite(buf, 1, len, stdout) == len ? 0 : -1;
}

static volatile sig_atomic_t stop_flag, stop_sig, stop_pid;

static void on_stop_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!stop_flag) {
		stop_sig = sig;
		stop_pid = si ? (sig_atomic_t)si->si_pid : 0;
	}
	stop_flag = 1;
}

const volatile sig_atomic_t *cli_stop_on_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	return &stop_flag;
}

static const char *stop_sig_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "a signal";
	}
}

char *cli_stop_cause(void)
{
	if (!stop_flag)
		return NULL;
	int pid = (int)stop_pid;
	if (pid <= 0)
		return xasprintf("%s (from the terminal or the kernel)", stop_sig_name((int)stop_sig));
	/* the sender's command line, when it is still there to read */
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	size_t n = fsutil_read_head(path, buf, sizeof(buf));
	for (size_t i = 0; i < n; i++)
		if (buf[i] == 0 || (unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = 0;
	return n ? xasprintf("%s from pid %d (%s)", stop_sig_name((int)stop_sig), pid, buf)
		 : xasprintf("%s from pid %d", stop_sig_name((int)stop_sig), pid);
}

void cli_say_stopped(const char *what)
{
	char *why = cli_stop_cause();
	if (why)
		fprintf(stderr, "optloop: %s stopped by %s\n", what, why);
	free(why);
}

const char *cli_vis(const char *s, struct sb *tmp)
{
	sb_reset(tmp);
	vis_escape(s, tmp);
	return tmp->buf ? tmp->buf : "";
}

const char *cli_vis_lines(const char *s, struct sb *tmp)
{
	sb_reset(tmp);
	struct sb line = SB_INIT;
	for (;;) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		sb_reset(&line);
		sb_add(&line, s, n);
		vis_escape(sb_str(&line), tmp);
		if (!nl)
			break;
		sb_addc(tmp, '\n');
		s = nl + 1;
	}
	sb_release(&line);
	return tmp->buf ? tmp->buf : "";
}

/* Whether "optloop" looked up on $PATH as a shell would is the file st. */
static bool path_word_is(const struct stat *self)
{
	const char *path = getenv("PATH");
	struct sb dir = SB_INIT;
	bool same = false;

	while (path && !same) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		struct stat st;
		sb_reset(&dir);
		if (n)
			sb_addf(&dir, "%.*s/optloop", (int)n, path);
		else
			sb_adds(&dir, "./optloop"); /* an empty entry is the current directory */
		if (access(dir.buf, X_OK) == 0 && stat(dir.buf, &st) == 0 && S_ISREG(st.st_mode)) {
			/* the first executable found is the one the shell runs */
			same = st.st_dev == self->st_dev && st.st_ino == self->st_ino;
			break;
		}
		path = colon ? colon + 1 : NULL;
	}
	sb_release(&dir);
	return same;
}

void cli_self_command(struct sb *out)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat self;

	if (n <= 0 || (exe[n] = '\0', stat(exe, &self) != 0) || path_word_is(&self)) {
		sb_adds(out, "optloop");
		return;
	}
	vis_shell_word(exe, out);
}
