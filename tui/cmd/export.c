/* export — `optloop export --json`: the whole database as JSON. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stddef.h>
#include <string.h>

struct export_args {
	bool json;
};

static int export_run(struct cmd_ctx *x)
{
	struct loop *l = x->l;
	struct err e = {0};
	int rc = loop_export_json(l, CLI_JSON_FLAGS, cli_json_write, NULL, &e);
	if (rc == 0 && cli_json_write("\n", 1, NULL) < 0)
		rc = err_set(&e, ERR_IO, "export stopped: its output could not be written");
	return rc < 0 ? cli_fail(&e) : 0;
}

static const struct cli_opt export_opts[] = {
	CLI_FLAG("--json", offsetof(struct export_args, json),
		 "JSON output (the only form; accepted for scripts)"),
	CLI_END,
};

const struct command cmd_export = {
	.name = "export",
	.summary = "the whole workspace database as JSON",
	.open = OPEN_READ,
	.opts = export_opts,
	.args_size = sizeof(struct export_args),
	.examples = (const char *const[]){"export --json > workspace.json", NULL},
	.more = "Every table of optloop.db: runs, samples, rows, events, probes,\n"
		"confirm sessions; read-only, safe while another optloop writes.",
	.run = export_run,
};
