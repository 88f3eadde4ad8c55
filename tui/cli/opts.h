/*
 * opts — the one option parser of the subcommands.
 *
 * Each command describes its options in a table (name, kind, where the
 * value goes, the value's name, one line of help) and its positional
 * arguments; cli_parse reads argv by that table and answers -h/--help
 * from it, so a command's help is always the options it really takes.
 * Values are "--name VALUE" or "--name=VALUE"; "--" ends the options; "-"
 * is a positional argument (stdin).  An unknown option gets a did-you-mean
 * when one is close.
 */
#ifndef OPTLOOP_CLI_OPTS_H
#define OPTLOOP_CLI_OPTS_H

#include <stdbool.h>
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

struct cli_opt {
	const char *name;   /* "--gate-k" */
	enum cli_opt_kind kind;
	void *dest;
	const char *arg;    /* the value's name in the help ("EXPR"); NULL for a flag */
	const char *help;   /* what it does, one line */
	double lo, hi;      /* CO_INT / CO_NUM bounds */
	bool nonempty;      /* CO_STR: an empty value is a usage error */
};

/* Table entries, by kind. */
#define CLI_FLAG(n, d, h) {.name = (n), .kind = CO_FLAG, .dest = (d), .help = (h)}
#define CLI_STR(n, d, a, h) {.name = (n), .kind = CO_STR, .dest = (d), .arg = (a), .help = (h)}
#define CLI_TEXT(n, d, a, h) \
	{.name = (n), .kind = CO_STR, .dest = (d), .arg = (a), .help = (h), .nonempty = true}
#define CLI_LIST(n, d, a, h) {.name = (n), .kind = CO_LIST, .dest = (d), .arg = (a), .help = (h)}
#define CLI_INT(n, d, a, l, u, h) \
	{.name = (n), .kind = CO_INT, .dest = (d), .arg = (a), .help = (h), .lo = (l), .hi = (u)}
#define CLI_NUM(n, d, a, l, u, h) \
	{.name = (n), .kind = CO_NUM, .dest = (d), .arg = (a), .help = (h), .lo = (l), .hi = (u)}
#define CLI_END {.name = NULL}

#define CLI_POS_MAX 8

/* Given to any command, cli_parse prints its options one per line, each
 * with the name of its value when it takes one ("--status STATUS"), and
 * stops: what shell completion offers (tui/cmd/completion.c). */
#define CLI_LIST_OPTIONS "--list-options"

struct cli_cmd {
	const char *name;            /* "verify": its usage and summary are commands.h's */
	const struct cli_opt *opts;  /* ended by an entry whose name is NULL */
	int max_pos;                 /* positional arguments allowed (0: none) */
	const char *pos_help;        /* what they are, for the help ("FILE  the log to read") */
	const char *const *examples; /* ended by NULL: command lines, without "optloop " */
	const char *more;            /* further help text, or NULL */
	const char *usage;           /* a verb's own usage line ("trap list ..."); NULL: the
				      * command's from commands.h */
	const char *summary;         /* a verb's own summary; NULL: the command's */
	/* filled by cli_parse */
	const char *pos[CLI_POS_MAX];
	int npos;
};

/* Read argv[1..] by c's table.  true: parsed, go on.  false: return *exit at
 * once: 0 after -h/--help printed the help on stdout, 2 after a usage error
 * was printed on stderr. */
bool cli_parse(struct cli_cmd *c, int argc, char **argv, int *exit);

/* Where -h/--help prints (NULL: stdout); the man page generator reads the
 * help of every command through it. */
extern FILE *cli_help_out;

/* The help of a command: usage, summary, options, positional arguments,
 * examples. */
void cli_help(const struct cli_cmd *c, FILE *out);

#endif
