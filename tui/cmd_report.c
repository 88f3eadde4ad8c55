/* cmd_report — `optloop report final|header ITER|pr [--json]`: Markdown on
 * stdout (or one JSON object) assembled from the loop's evidence. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/guards_cli.h"
#include "tui/loop_cli.h"
#include "tui/stats_cli.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/report.h"
#include "core/sb.h"
#include "core/workspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_report(struct cli *cli, int argc, char **argv)
{
	const char *kind = NULL;
	int json = 0, iter = -1, rc;
	if (argc >= 2 && !strcmp(argv[1], "nogo"))
		return report_nogo(cli, argc, argv);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!kind) {
			kind = argv[i];
		} else if (!strcmp(kind, "header") && iter < 0) {
			char *end;
			long v = strtol(argv[i], &end, 10);
			if (*end || v < 0)
				return cli_usage_error("report", "header needs an iteration number");
			iter = (int)v;
		} else {
			return cli_usage_error("report", "unknown argument %s", argv[i]);
		}
	}
	if (!kind || (strcmp(kind, "final") && strcmp(kind, "header") && strcmp(kind, "pr")))
		return cli_usage_error("report", "say which report: final, header ITER, pr or nogo");
	if (!strcmp(kind, "header") && iter < 0)
		return cli_usage_error("report", "header needs an iteration number");
	struct loop *l;
	if ((rc = loop_cli_open(cli, LOOP_READONLY, &l)) != 0)
		return rc;
	struct report_ctx ctx;
	struct sb md = SB_INIT;
	struct err e = {0};
	json_t *j = NULL;
	const struct contract *c = stats_cli_ctx(l, &ctx);
	ctx.op = loop_workspace(l)->op;
	struct store *s = loop_store(l);
	if (!strcmp(kind, "final"))
		rc = report_final(s, &ctx, &md, json ? &j : NULL, &e);
	else if (!strcmp(kind, "header"))
		rc = report_header(s, &ctx, iter, &md, json ? &j : NULL, &e);
	else
		rc = report_pr(s, &ctx, &md, json ? &j : NULL, &e);
	if (rc == 0) {
		if (json)
			cli_print_json(j);
		else
			fputs(md.buf, stdout);
	}
	sb_release(&md);
	loop_contract_put(c);
	loop_close(l);
	return rc < 0 ? cli_fail(&e) : 0;
}
