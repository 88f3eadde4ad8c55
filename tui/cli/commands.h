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

#endif
