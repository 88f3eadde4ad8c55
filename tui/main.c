/*
 * main — optloop's entry point: global options, then one subcommand from
 * the table (tui/cli/commands.c).
 */
#include "tui/cli/commands.h"
#include "tui/cli/util.h"
#include "core/err.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern const struct command cmd_version;

/* -C DIR, --op OP, --op=OP, -h/--help, --version/-V before the command;
 * returns the index of the command's word, or -1 with *rc the exit status. */
static int global_options(struct cli *cli, int argc, char **argv, int *rc)
{
	int i = 1;
	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-C") || !strcmp(argv[i], "--op")) {
			if (i + 1 >= argc)
				return *rc = cli_error(ERR_USAGE, "%s needs a value (%s)", argv[i],
						       argv[i][1] == 'C' ? "DIR" : "OP"),
				       -1;
			if (argv[i][1] == 'C')
				cli->dir = argv[i + 1];
			else
				cli->op = argv[i + 1];
			i += 2;
		} else if (!strncmp(argv[i], "--op=", 5)) {
			cli->op = argv[i++] + 5;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_overview(stdout);
			return *rc = 0, -1;
		} else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
			char *v[] = {(char *)"version", NULL};
			return *rc = command_run(cli, &cmd_version, 1, v), -1;
		} else {
			return *rc = cli_error(ERR_USAGE, "unknown option %s (run 'optloop help')",
					       argv[i]),
			       -1;
		}
	}
	return i;
}

/* Whether --json is on the command line (before "--"): its errors are then
 * JSON too, also those found before the command reads its options. */
static bool wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

/* --op may also follow the command (optloop status --op chunk_gla); "--"
 * ends the options.  Returns the new argc. */
static int op_after_command(struct cli *cli, int argc, char **argv, int i)
{
	int k = i + 1;
	for (int j = i + 1; j < argc; j++) {
		if (!strcmp(argv[j], "--")) {
			while (j < argc)
				argv[k++] = argv[j++];
			break;
		}
		if (!strcmp(argv[j], "--op") && j + 1 < argc)
			cli->op = argv[++j];
		else if (!strncmp(argv[j], "--op=", 5))
			cli->op = argv[j] + 5;
		else
			argv[k++] = argv[j];
	}
	return k;
}

int main(int argc, char **argv)
{
	struct cli cli = {.argv0 = argv[0]};
	int rc = 0;

	/* Only the character set comes from the environment (the panes and the
	 * CLI tables measure text with wcwidth).  Numbers, dates and messages
	 * stay in the C locale: optloop's output is read by scripts, and loading
	 * every category of the user's locale cost ~0.7 ms per command. */
	setlocale(LC_CTYPE, "");
	cli_json_errors(wants_json(argc, argv));
	int i = global_options(&cli, argc, argv, &rc);
	if (i < 0)
		return rc;
	if (cli.dir && chdir(cli.dir) < 0) {
		int e = errno;
		return cli_error(e == ENOENT ? ERR_NOTFOUND : e == ENOTDIR ? ERR_NOTFILE : ERR_USAGE,
				 "cannot change to %s (-C): %s; -C takes the directory to run in",
				 cli.dir, strerror(e));
	}
	if (i >= argc) {
		/* On a terminal inside a workspace, no command means the workbench. */
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
			rc = tui_open_workspace(&cli, true);
			if (rc >= 0)
				return rc;
		}
		cli_overview(stderr);
		return 2;
	}
	const struct command *c = cli_find_command(argv[i]);
	if (!c)
		return cli_not_a_command("optloop", argv[i]);
	if (!c->own_op)
		argc = op_after_command(&cli, argc, argv, i);
	return command_run(&cli, c, argc - i, argv + i);
}
