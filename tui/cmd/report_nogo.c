/* report_nogo — `optloop report nogo [--json]`: the no-go record, only
 * with all five items (baseline number, reasoned candidate, gate status,
 * bench evidence, named bound with its number); otherwise the missing
 * items, exit 1.  cmd_report hands "nogo" here. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/guards_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct nogo_args {
	const char *output;
	bool json;
};

static int nogo_run(struct cmd_ctx *x)
{
	const struct nogo_args *a = x->args;
	struct loop *l = x->l;
	struct err e = {0};
	struct sb md = SB_INIT;
	json_t *j = NULL;
	bool json = a->json;
	const char *output = a->output;
	int rc;

	rc = loop_nogo(l, &md, &j, &e);
	int wrc = cli_emit(output, md.buf, json ? j : NULL);
	if (!json)
		json_decref(j);
	if (rc < 0)
		fprintf(stderr, "optloop: %s\n", e.msg);
	sb_release(&md);
	/* 1 when the record lacks an item; 4 when the store could not be read */
	return rc < 0 ? err_exit_status(rc) : wrc;
}

static const struct cli_opt nogo_opts[] = {
	CLI_TEXT("--output", offsetof(struct nogo_args, output), "FILE",
		 "write the record to FILE (atomically) instead of stdout"),
	CLI_FLAG("--json", offsetof(struct nogo_args, json),
		 "print the record's facts as JSON instead of Markdown"),
	CLI_END,
};

/* the writer when free: the record is kept in the store */
const struct command report_nogo_verb = {
	.name = "nogo",
	.summary = "the no-go record, in Markdown",
	.open = OPEN_TRY,
	.opts = nogo_opts,
	.args_size = sizeof(struct nogo_args),
	.examples = (const char *const[]){"report nogo --output NOGO.md", NULL},
	.more = "nogo: the record of a loop that stopped without a win: what was\n"
		"tried, the evidence, and what is missing to try again.",
	.run = nogo_run,
};
