/*
 * view — `optloop view PATH/OPT_LOG.md`: the workbench's panes,
 * read-only, on any log (hand-written ones too), with import problems
 * listed.  Needs a terminal; `optloop import` is the scriptable reader.
 */
#include "core/err.h"
#include "tui/workbench/app.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/workbench/readonly.h"
#include "views/sanitize.h"

#include <stddef.h>
#include <string.h>

struct view_args {
	bool no_follow;
};

static int view_run(struct cmd_ctx *x)
{
	const struct view_args *args = x->args;
	struct app a;
	struct err e = {0};
	int rc;

	if (x->npos != 1)
		return cli_usage_error("view", "give one OPT_LOG.md, or a workspace folder, to view");
	sanitize_init();
	if ((rc = ws_view_open(&a, x->pos[0], !args->no_follow, &e)) < 0)
		return cli_fail(&e);
	rc = app_run(&a, &e);
	app_release(&a);
	if (rc < 0)
		return cli_fail(&e);
	return rc;
}

static const struct cli_opt view_opts[] = {
	CLI_FLAG("--no-follow", offsetof(struct view_args, no_follow),
		 "a snapshot: do not follow the files as they change"),
	CLI_END,
};

/* reads the files itself: nothing is opened for writing */
const struct command cmd_view = {
	.name = "view",
	.summary = "open the workbench panes read-only on any OPT_LOG.md",
	.opts = view_opts,
	.args_size = sizeof(struct view_args),
	.max_pos = 1,
	.pos_usage = "PATH/OPT_LOG.md",
	.pos_help = "  PATH  an OPT_LOG.md (any: written by optloop or by hand), or a\n"
		    "        workspace folder",
	.examples = (const char *const[]){"view ~/src/fla/profile/chunk_gla-opt/OPT_LOG.md",
					  "view profile/chunk_gla-opt", NULL},
	.more = "Read-only: nothing is written; the panes follow OPT_LOG.md,\n"
		"TRAPS.md and dispatch.md as they change.  q quits, ? lists the keys.",
	.run = view_run,
};
