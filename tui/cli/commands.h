/*
 * commands — the one list of optloop's subcommands (tui/cli/commands.c),
 * in the order `optloop help` prints them.  main() dispatches from it, and
 * help, usage lines, completion, the man page and the README's command
 * list are printed from its rows (command.h).
 */
#ifndef OPTLOOP_COMMANDS_H
#define OPTLOOP_COMMANDS_H

#include "tui/cli/command.h"

#include <stdbool.h>
#include <stdio.h>

/* The rows, NULL-ended. */
extern const struct command *const optloop_commands[];

/* The command called name, or NULL. */
const struct command *cli_find_command(const char *name);
/* Usage line of a command ("parse FILE ..."), or NULL: made from its row
 * once and kept. */
const char *cli_usage(const char *name);
/* Its one-line summary, or NULL. */
const char *cli_summary(const char *name);
/* Run the command name (argv[0] is its name); 2 when there is none. */
int cli_run(struct cli *cli, const char *name, int argc, char **argv);
/* The names, NULL-terminated. */
const char *const *cli_command_names(void);
/* Print the commands that start with prefix, one per line. */
void cli_commands_offer(const char *prefix);
/* "'stauts' is not a command" with the command that was meant, if any, on
 * stderr after who; returns 2. */
int cli_not_a_command(const char *who, const char *word);
/* What optloop is, its commands with their summaries, the loop's rules and
 * the exit statuses (optloop help, optloop --help). */
void cli_overview(FILE *out);
/* The version optloop --version and optloop version print. */
#define OPTLOOP_VERSION "0.1.0"

/* The workbench on the current workspace (tui/cmd/tui.c); with
 * quiet_if_none, returns -1 without a message when there is no workspace. */
int tui_open_workspace(struct cli *cli, bool quiet_if_none);

/* Usage error for one command: prints the message and its usage line;
 * returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Commands that still read their own argv describe them so. */
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

/* The help of a command: usage, summary, options, positional arguments,
 * examples. */
void cli_help(const struct cli_cmd *c, FILE *out);

#define X(name) int cmd_##name(struct cli *cli, int argc, char **argv);



#undef X

#endif
