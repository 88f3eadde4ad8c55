/* report — `optloop report final|header ITER|pr [--json]`: Markdown on
 * stdout (or one JSON object) assembled from the loop's evidence. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/stats_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_report(struct cli *cli, int argc, char **argv)
{
	const char *kind = NULL, *output = NULL;
	bool json = false;
	int iter = -1, rc;
	if (argc >= 2 && !strcmp(argv[1], "nogo"))
		return report_nogo(cli, argc, argv);
	const struct cli_opt opts[] = {
		CLI_PTEXT("--output", &output, "FILE",
			 "write the report to FILE (atomically) instead of stdout"),
		CLI_PFLAG("--json", &json, "print the report's facts as JSON instead of Markdown"),
		CLI_END,
	};
	static const char *const examples[] = {"report final", "report header 7",
					       "report pr --output pr.md", "report nogo", NULL};
	struct cli_cmd c = {
		.name = "report",
		.opts = opts,
		.max_pos = 2,
		.examples = examples,
		.pos_help = "  final        the final claim: baseline against the promoted best\n"
			    "  header ITER  the header of a kept candidate's description\n"
			    "  pr           a pull-request body from the log and the verdicts\n"
			    "  nogo         the no-go record when the loop stops without a win",
	};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	kind = c.npos > 0 ? c.pos[0] : NULL;
	if (kind && !strcmp(kind, "header") && c.npos > 1) {
		char *end;
		long v = strtol(c.pos[1], &end, 10);
		if (*end || end == c.pos[1] || v < 0 || v > INT_MAX)
			return cli_usage_error("report", "header needs an iteration number, got '%s'",
					       c.pos[1]);
		iter = (int)v;
	} else if (c.npos > 1) {
		return cli_usage_error("report", "unexpected argument %s", c.pos[1]);
	}
	if (!kind || (strcmp(kind, "final") && strcmp(kind, "header") && strcmp(kind, "pr")))
		return cli_usage_error("report", "say which report: final, header ITER, pr or nogo");
	if (!strcmp(kind, "header") && iter < 0)
		return cli_usage_error("report", "header needs an iteration number");
	struct loop *l;
	if ((rc = loop_cli_open(cli, LOOP_READONLY, &l)) != 0)
		return rc;
	struct sb md = SB_INIT;
	struct err e = {0};
	json_t *j = NULL;
	enum loop_report k = !strcmp(kind, "final")    ? LOOP_REPORT_FINAL
			     : !strcmp(kind, "header") ? LOOP_REPORT_HEADER
						       : LOOP_REPORT_PR;
	rc = loop_report(l, k, iter, &md, json ? &j : NULL, &e);
	int wrc = 0;
	if (rc == 0)
		wrc = cli_emit(output, md.buf, json ? j : NULL);
	sb_release(&md);
	loop_close(l);
	return rc < 0 ? cli_fail(&e) : wrc;
}
