/* report_nogo — `optloop report nogo [--json]`: the no-go record, only
 * with all five items (baseline number, reasoned candidate, gate status,
 * bench evidence, named bound with its number); otherwise the missing
 * items, exit 1.  cmd_report hands "nogo" here. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/guards_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>
#include <string.h>

int report_nogo(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct err e = {0};
	struct sb md = SB_INIT;
	json_t *j = NULL;
	bool json = false;
	const char *output = NULL;
	int rc;

	const struct cli_opt opts[] = {
		CLI_PTEXT("--output", &output, "FILE",
			 "write the record to FILE (atomically) instead of stdout"),
		CLI_PFLAG("--json", &json, "print the record's facts as JSON instead of Markdown"),
		CLI_END,
	};
	static const char *const examples[] = {"report nogo --output NOGO.md", NULL};
	struct cli_cmd c = {.name = "report", .opts = opts, .examples = examples,
			    .usage = "report nogo [--output FILE] [--json]",
			    .summary = "the no-go record, in Markdown",
			    .more = "nogo: the record of a loop that stopped without a win: what was\n"
				    "tried, the evidence, and what is missing to try again."};
	if (!cli_parse(&c, argc - 1, argv + 1, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, LOOP_TRY_WRITE, &l)) != 0)
		return rc;
	rc = loop_nogo(l, &md, &j, &e);
	int wrc = cli_emit(output, md.buf, json ? j : NULL);
	if (!json)
		json_decref(j);
	if (rc < 0)
		fprintf(stderr, "optloop: %s\n", e.msg);
	sb_release(&md);
	loop_close(l);
	/* 1 when the record lacks an item; 4 when the store could not be read */
	return rc < 0 ? err_exit_status(rc) : wrc;
}
