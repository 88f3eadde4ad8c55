/*
 * tui — `optloop tui`: the workbench on the workspace found from the
 * current directory (-C DIR, --op OP as everywhere).  `optloop` with no
 * command opens it too when run on a terminal inside a workspace.
 */
#include "core/err.h"
#include "tui/workbench/app.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/workbench/live.h"
#include "views/sanitize.h"

#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

int tui_open_workspace(struct cli *cli, bool quiet_if_none)
{
	struct app a;
	struct err e = {0};
	int rc;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		err_set(&e, ERR_USAGE,
			"the workbench needs a terminal (stdin and stdout are not both terminals); "
			"use the subcommands (optloop status, verify, log, commit) in scripts");
		return cli_fail(&e);
	}
	/* The first-frame figure counts opening the workspace (reconciliation
	 * included), not only drawing it. */
	app_mark_start();
	sanitize_init();
	if ((rc = ws_loop_open(&a, cli->op, &e)) < 0) {
		if (quiet_if_none)
			return -1;
		return cli_fail(&e);
	}
	rc = app_run(&a, &e);
	app_release(&a);
	if (rc < 0)
		return cli_fail(&e);
	return rc;
}

static int tui_run(struct cmd_ctx *x)
{
	return tui_open_workspace(x->cli, false);
}

/* the workbench opens the workspace itself (a live loop of its own) */
const struct command cmd_tui = {
	.name = "tui",
	.summary = "open the workbench on this workspace (also: optloop with no command)",
	.examples = (const char *const[]){"tui", "-C ~/src/fla --op chunk_gla tui", NULL},
	.more = "Pick the repository with -C DIR and the workspace with --op OP\n"
		"(global options, before the command).  ? in the workbench lists its keys.",
	.run = tui_run,
};
