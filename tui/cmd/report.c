/* report — `optloop report final|header ITER|pr [--json]`: Markdown on
 * stdout (or one JSON object) assembled from the loop's evidence. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/stats_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report_args {
	const char *output;
	bool json;
	int iter; /* header's ITER */
};

/* which report, before anything is opened */
static int report_before(struct cmd_ctx *x)
{
	struct report_args *a = x->args;
	const char *kind = x->npos > 0 ? x->pos[0] : NULL;
	if (kind && !strcmp(kind, "header") && x->npos > 1) {
		char *end;
		long v = strtol(x->pos[1], &end, 10);
		if (*end || end == x->pos[1] || v < 0 || v > INT_MAX)
			return cli_usage_error("report", "header needs an iteration number, got '%s'",
					       x->pos[1]);
		a->iter = (int)v;
	} else if (x->npos > 1) {
		return cli_usage_error("report", "unexpected argument %s", x->pos[1]);
	}
	if (!kind || (strcmp(kind, "final") && strcmp(kind, "header") && strcmp(kind, "pr")))
		return cli_usage_error("report", "say which report: final, header ITER, pr or nogo");
	if (!strcmp(kind, "header") && a->iter < 0)
		return cli_usage_error("report", "header needs an iteration number");
	return CMD_GO;
}

static int report_run(struct cmd_ctx *x)
{
	const struct report_args *a = x->args;
	const char *kind = x->pos[0];
	struct loop *l = x->l;
	bool json = a->json;
	int rc;
	struct sb md = SB_INIT;
	struct err e = {0};
	json_t *j = NULL;
	enum loop_report k = !strcmp(kind, "final")    ? LOOP_REPORT_FINAL
			     : !strcmp(kind, "header") ? LOOP_REPORT_HEADER
						       : LOOP_REPORT_PR;
	rc = loop_report(l, k, a->iter, &md, json ? &j : NULL, &e);
	int wrc = 0;
	if (rc == 0)
		wrc = cli_emit(a->output, md.buf, json ? j : NULL);
	sb_release(&md);
	return rc < 0 ? cli_fail(&e) : wrc;
}

static const struct cli_opt report_opts[] = {
	CLI_TEXT("--output", offsetof(struct report_args, output), "FILE",
		 "write the report to FILE (atomically) instead of stdout"),
	CLI_FLAG("--json", offsetof(struct report_args, json),
		 "print the report's facts as JSON instead of Markdown"),
	CLI_END,
};

const struct command cmd_report = {
	.name = "report",
	.summary = "Markdown reports from the loop's evidence: final claim, kept-candidate header, "
		   "PR body, no-go record",
	.synopsis = "report final|header ITER|pr|nogo [--output FILE] [--json]",
	.open = OPEN_READ,
	.opts = report_opts,
	.args_size = sizeof(struct report_args),
	.defaults = &(const struct report_args){.iter = -1},
	.max_pos = 2,
	.pos_help = "  final        the final claim: baseline against the promoted best\n"
		    "  header ITER  the header of a kept candidate's description\n"
		    "  pr           a pull-request body from the log and the verdicts\n"
		    "  nogo         the no-go record when the loop stops without a win",
	.words = (const char *const[]){"final", "header", "pr", NULL},
	.verbs = (const struct command *const[]){&report_nogo_verb, NULL},
	.examples = (const char *const[]){"report final", "report header 7",
					  "report pr --output pr.md", "report nogo", NULL},
	.before = report_before,
	.run = report_run,
};
