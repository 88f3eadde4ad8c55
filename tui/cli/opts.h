/*
 * opts — the one option parser of the subcommands.
 *
 * Each command describes its options in a table at file scope (name, kind,
 * the offset of the value in the command's args, the value's name, one line
 * of help); cli_parse_argv reads argv by that table, and -h/--help, usage
 * lines, completion and the man page are printed from the same table, so
 * a command's help is always the options it really takes.
 * Values are "--name VALUE" or "--name=VALUE"; "--" ends the options; "-"
 * is a positional argument (stdin).  An unknown option gets a did-you-mean
 * when one is close.
 */
#ifndef OPTLOOP_CLI_OPTS_H
#define OPTLOOP_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cli_opt_kind {
	CO_FLAG,  /* bool *: set when given */
	CO_STR,   /* const char **: the value (argv's memory) */
	CO_LIST,  /* struct cli_list *: every value, in order (repeatable) */
	CO_INT,   /* long *: an integer in [lo, hi] */
	CO_NUM,   /* double *: a number in [lo, hi] */
};

#define CLI_LIST_MAX 32
struct cli_list {
	const char *v[CLI_LIST_MAX];
	int n;
};

/* How a command opens the workspace before it runs: the dispatcher opens
 * it so (tui/cli/command.c) and closes it after. */
enum cli_open {
	OPEN_NONE = 0, /* nothing, or on its own terms (init, demo, parse, view, watch) */
	OPEN_READ,     /* read-only: never takes the writer lock */
	OPEN_TRY,      /* the writer when no other optloop writes, else read-only */
	OPEN_WRITE,    /* the writer: refused while another optloop writes */
};

struct cli_opt {
	const char *name;   /* "--gate-k" */
	enum cli_opt_kind kind;
	size_t off;         /* where the value goes: an offset into the command's args */
	const char *arg;    /* the value's name in the help ("EXPR"); NULL for a flag */
	const char *help;   /* what it does, one line */
	const char *choices; /* the values it takes ("cap|floor|directions"), for the
			      * usage line and completion; the command checks them */
	double lo, hi;      /* CO_INT / CO_NUM bounds */
	bool nonempty;      /* CO_STR: an empty value is a usage error */
	bool required;      /* shown without brackets in the usage line; the command
			     * itself says when it is missing */
	enum cli_open opens; /* given, the command opens the workspace so instead of
			      * as its row says (the strongest of those given) */
};

/* Table entries, by kind; o is the offset of the value in the command's
 * args (offsetof). */
#define CLI_FLAG(n, o, h) {.name = (n), .kind = CO_FLAG, .off = (o), .help = (h)}
#define CLI_STR(n, o, a, h) {.name = (n), .kind = CO_STR, .off = (o), .arg = (a), .help = (h)}
#define CLI_TEXT(n, o, a, h) \
	{.name = (n), .kind = CO_STR, .off = (o), .arg = (a), .help = (h), .nonempty = true}
/* a non-empty value the command needs (no brackets in the usage line) */
#define CLI_NEED(n, o, a, h)                                                                   \
	{.name = (n), .kind = CO_STR, .off = (o), .arg = (a), .help = (h), .nonempty = true,   \
	 .required = true}
#define CLI_LIST(n, o, a, h) {.name = (n), .kind = CO_LIST, .off = (o), .arg = (a), .help = (h)}
#define CLI_INT(n, o, a, l, u, h) \
	{.name = (n), .kind = CO_INT, .off = (o), .arg = (a), .help = (h), .lo = (l), .hi = (u)}
#define CLI_NUM(n, o, a, l, u, h) \
	{.name = (n), .kind = CO_NUM, .off = (o), .arg = (a), .help = (h), .lo = (l), .hi = (u)}
#define CLI_END {.name = NULL}

#define CLI_POS_MAX 8

/* Given to any command, cli_parse_argv prints its options one per line, each
 * with the name of its value when it takes one ("--status STATUS"), and
 * stops: what shell completion offers (tui/cmd/completion.c). */
#define CLI_LIST_OPTIONS "--list-options"

/* What reading argv by a table found. */
enum cli_parsed {
	CLI_GO,     /* parsed: go on */
	CLI_HELP,   /* -h or --help: print the help (exit 0) */
	CLI_LISTED, /* --list-options: the options were printed (exit 0) */
	CLI_BAD,    /* a usage error, printed on stderr (exit 2) */
};

/* Read argv[1..] by opts: values go to args + each option's offset (or to
 * its own dest); positional arguments, at most max_pos, to pos[] and *npos;
 * bit i of *given is set when opts[i] was given.  who names the command in
 * messages, and usage (or NULL) is the usage line they end with. */
enum cli_parsed cli_parse_argv(const char *who, const char *usage, const struct cli_opt *opts,
			       void *args, int max_pos, int argc, char **argv, const char **pos,
			       int *npos, unsigned long long *given);


/* The same from its parts: "usage: optloop USAGE", the summary, the
 * arguments, the options one per line (-h last), more, the examples. */
void cli_help_print(FILE *out, const char *usage, const char *summary, const char *pos_help,
		    const struct cli_opt *opts, const char *more, const char *const *examples);

#endif
