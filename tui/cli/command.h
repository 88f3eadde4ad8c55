/*
 * command — one row of optloop's command table: a subcommand's name and
 * summary, how it opens the workspace, its options (a table at file scope
 * whose entries are offsets into the command's args struct), positional
 * arguments, verbs, examples and further help, and the function that runs
 * it.  Usage lines, --help, `optloop help`, completion and the man page are
 * printed from the rows, never by running a command; tui/cli/commands.c
 * holds the list, and each tui/cmd/<name>.c ends with its row.
 *
 * A command returns the process exit status: 0 done, 1 the gate or a
 * check failed, 2 usage error (or nothing there), 3 refused by the
 * protocol, 4 the harness broke or the run was incomplete.
 */
#ifndef OPTLOOP_CLI_COMMAND_H
#define OPTLOOP_CLI_COMMAND_H

#include "tui/cli/opts.h"
#include "tui/cli/util.h"

#include <stdbool.h>
#include <stdio.h>

struct loop;
struct sb;

/* What a row's before and run functions get. */
struct cmd_ctx {
	struct cli *cli;
	const struct command *cmd;    /* the row that runs (a verb's own row) */
	const struct command *parent; /* the command a verb belongs to, else NULL */
	struct loop *l;               /* the workspace as the row opens it; NULL for OPEN_NONE */
	void *args;                   /* the row's args, filled from the options given */
	const char *pos[CLI_POS_MAX]; /* the positional arguments */
	int npos;
	int argc;                     /* the words as given, argv[0] the command's (or */
	char **argv;                  /* the verb's) name */
};

/* before returns this to go on to opening the workspace and run. */
#define CMD_GO (-1)

struct command {
	const char *name;     /* "status"; a verb's own word ("list") */
	const char *summary;  /* one line */
	const char *synopsis; /* the usage line where it is an alternation the rows
			       * cannot say ("help [COMMAND | TOPIC] | help --man ...");
			       * NULL: made from the rows */
	enum cli_open open;   /* how the workspace is opened before run (an option
			       * given may say otherwise: cli_opt.opens) */
	const struct cli_opt *opts;      /* ended by CLI_END; NULL: none */
	size_t args_size;                /* sizeof the args struct the offsets point into */
	const void *defaults;            /* its values before the options (NULL: zero) */
	int max_pos;                     /* positional arguments allowed */
	const char *pos_usage;           /* them in the usage line ("FILE", "[DIR]") */
	const char *pos_help;            /* and in the help ("  FILE  the log to read") */
	const char *const *words;        /* the words the first argument takes, for
					  * completion (NULL-ended) */
	const struct command *const *verbs; /* NULL-ended: the first argument picks one;
					     * a row without run needs one */
	const char *const *examples;     /* command lines without "optloop ", NULL-ended */
	const char *more;                /* further help text, or NULL */
	bool own_op;                     /* --op after the command is its own (init), or a
					  * word it reads as typed (completion) */
	bool raw;                        /* run gets the words as typed, none read as an
					  * option (completion --list: the words being typed) */
	bool any_contract;               /* opens a docs/draft.md that does not read as a
					  * contract (contract --set is how it is mended) */
	/* Before anything is opened: check the values (print the usage error and
	 * return 2), or do all the work where no workspace is needed; CMD_GO
	 * to go on.  NULL: go on. */
	int (*before)(struct cmd_ctx *x);
	int (*run)(struct cmd_ctx *x);
};

/* The usage line of c (a verb's: "trap list ..." with parent "trap"),
 * without "optloop ", appended to out. */
void command_usage(const struct command *c, const struct command *parent, struct sb *out);
/* The help of c from its row: usage, summary, arguments, options,
 * further help, examples; a command that only has verbs adds each verb's. */
void command_help(const struct command *c, const struct command *parent, FILE *out);
/* c's verb called word, or NULL. */
const struct command *command_verb(const struct command *c, const char *word);
/* c's option called name ("--status"), or NULL. */
const struct cli_opt *command_option(const struct command *c, const char *name);
/* Run c on argv (argv[0] its name): the verb, the options, before, the
 * workspace opened per the row, run, the workspace closed.  Returns the
 * exit status. */
int command_run(struct cli *cli, const struct command *c, int argc, char **argv);

#endif
