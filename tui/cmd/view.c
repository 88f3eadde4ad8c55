/*
 * view — `optloop view PATH/OPT_LOG.md`: the workbench's panes,
 * read-only, on any log (hand-written ones too), with import problems
 * listed.  Needs a terminal; `optloop import` is the scriptable reader.
 */
#include "core/err.h"
#include "tui/workbench/app.h"
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/workbench/readonly.h"
#include "views/sanitize.h"

#include <string.h>

int cmd_view(struct cli *cli, int argc, char **argv)
{
	struct app a;
	struct err e = {0};
	int rc;

	bool no_follow = false;
	(void)cli;
	const struct cli_opt opts[] = {
		CLI_PFLAG("--no-follow", &no_follow,
			 "a snapshot: do not follow the files as they change"),
		CLI_END,
	};
	static const char *const examples[] = {"view ~/src/fla/profile/chunk_gla-opt/OPT_LOG.md",
					       "view profile/chunk_gla-opt", NULL};
	struct cli_cmd c = {.name = "view", .opts = opts, .max_pos = 1, .examples = examples,
			    .pos_help = "  PATH  an OPT_LOG.md (any: written by optloop or by hand), or a\n"
					"        workspace folder",
			    .more = "Read-only: nothing is written; the panes follow OPT_LOG.md,\n"
				    "TRAPS.md and dispatch.md as they change.  q quits, ? lists the keys."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if (c.npos != 1)
		return cli_usage_error("view", "give one OPT_LOG.md, or a workspace folder, to view");
	sanitize_init();
	if ((rc = ws_view_open(&a, c.pos[0], !no_follow, &e)) < 0)
		return cli_fail(&e);
	rc = app_run(&a, &e);
	app_release(&a);
	if (rc < 0)
		return cli_fail(&e);
	return rc;
}
