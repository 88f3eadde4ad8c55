/*
 * util — helpers shared by the subcommands: messages in one format,
 * JSON output, and mapping engine errors to exit statuses.
 */
#ifndef OPTLOOP_CLI_UTIL_H
#define OPTLOOP_CLI_UTIL_H

#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct err;

/* The global options, read before the command. */
struct cli {
	const char *dir; /* -C DIR, or NULL; main has changed into it already, so
			  * commands open the current directory, never dir again */
	const char *op;  /* --op OP, or NULL */
	const char *argv0;
};

/* "optloop: <msg>" on stderr; returns the exit status for e->code.  After
 * a command was given --json (cli_json_errors), the failure is also one
 * JSON object on stdout, {"error": {"code": "io", "exit": 4, "message":
 * "..."}}, unless the command already printed its JSON there. */
int cli_fail(const struct err *e);
/* cli_fail of a message made here: code (ERR_*) and printf's fmt. */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether the command's output is JSON: main sets it when --json is on the
 * command line before any "--", so that even an error in reading the
 * command line (a mistyped option, a missing value, -C to nowhere) is
 * answered in JSON. */
void cli_json_errors(bool on);
/* The JSON error object of a failure already said on stderr, when errors
 * are JSON and no JSON was printed yet (status: the exit status). */
void cli_json_error(int code, int status, const char *msg);
/* Usage error for one command: prints "optloop CMD: message" and the
 * usage line (when not NULL); returns 2.  (cli_usage_error of commands.h
 * looks the usage line up by the command's name.) */
int cli_usage_error_at(const char *cmd, const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cli_vusage_error(const char *cmd, const char *usage, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* The output of a report: text, or json when not NULL (its reference is
 * taken), on stdout, or written atomically to output when not NULL (saying
 * so on stderr).  Returns 0 or the exit status of the write failure. */
int cli_emit(const char *output, const char *text, json_t *json);
/* A child's output as it comes, onto the stream ctx (a FILE *), flushed:
 * the output callback of a run. */
void cli_to_stream(void *ctx, const char *buf, size_t len);
/* Print a JSON value on stdout (indented, one trailing newline) and take its reference. */
void cli_print_json(json_t *v);
/* How the commands lay out their JSON (jansson's dump flags). */
#define CLI_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
/* A JSON document written to stdout piece by piece (the engine's streamed
 * output, write callback of jansson's json_dump_callback; data unused):
 * once a byte is out, a failure is no longer printed as JSON after it.
 * Returns -1 when stdout refuses the bytes. */
int cli_json_write(const char *buf, size_t len, void *data);

/* s with every byte a terminal would act on spelled out (vis_escape), for
 * printing a command the user is asked to trust; the text lives in *tmp
 * (caller releases it with sb_release). */
struct sb;
const char *cli_vis(const char *s, struct sb *tmp);
/* cli_vis, but the text's own line breaks kept (a message of several lines). */
const char *cli_vis_lines(const char *s, struct sb *tmp);

/* How to run this optloop in a command the user pastes into a shell, into
 * *out: "optloop" when that word on $PATH is this very program, else the
 * program's absolute path, quoted for the shell (a build tree's ./optloop
 * is not on PATH, and a bare "optloop" would not work as printed). */
void cli_self_command(struct sb *out);

/* From now on SIGINT, SIGTERM and SIGHUP only set the flag returned (a run
 * going is then stopped by its owner, recorded, and the kernel put back);
 * a second signal of the same kind is handled the same way. */
const volatile sig_atomic_t *cli_stop_on_signals(void);

/* What stopped this process, once a signal set the flag: "SIGTERM from pid
 * N (its command line)", allocated; NULL when no signal came. */
char *cli_stop_cause(void);

/* "optloop: WHAT stopped by <cause>" on stderr, when a signal stopped it. */
void cli_say_stopped(const char *what);

#endif
