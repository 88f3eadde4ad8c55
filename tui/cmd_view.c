/*
 * cmd_view — `optloop view PATH/OPT_LOG.md`: the workbench's panes,
 * read-only, on any log (hand-written ones too), with import problems
 * listed.  Needs a terminal; `optloop import` is the scriptable reader.
 */
#include "core/err.h"
#include "tui/app.h"
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/ws_view.h"
#include "views/sanitize.h"

#include <string.h>

int cmd_view(struct cli *cli, int argc, char **argv)
{
	struct app a;
	struct err e = {0};
	int rc;

	(void)cli;
	if (argc != 2 || argv[1][0] == '-')
		return cli_usage_error("view", "give one OPT_LOG.md to view");
	sanitize_init();
	if ((rc = ws_view_open(&a, argv[1], &e)) < 0)
		return cli_fail(&e);
	rc = app_run(&a, &e);
	app_release(&a);
	if (rc < 0)
		return cli_fail(&e);
	return rc;
}
