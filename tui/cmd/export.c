/* export — `optloop export --json`: the whole database as JSON. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <string.h>

int cmd_export(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct err e = {0};
	json_t *j;
	int rc;
	bool json = false;
	const struct cli_opt opts[] = {
		CLI_PFLAG("--json", &json, "JSON output (the only form; accepted for scripts)"),
		CLI_END,
	};
	static const char *const examples[] = {"export --json > workspace.json", NULL};
	struct cli_cmd c = {.name = "export", .opts = opts, .examples = examples,
			    .more = "Every table of optloop.db: runs, samples, rows, events, probes,\n"
				    "confirm sessions; read-only, safe while another optloop writes."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, LOOP_READONLY, &l)) != 0)
		return rc;
	if (loop_export_json(l, &j, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	cli_print_json(j);
	loop_close(l);
	return 0;
}
