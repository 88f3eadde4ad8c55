/* repair — `optloop repair`: apply the repairs the start-up
 * reconciliation offers (re-link rows to their commits, rebuild rows from
 * optloop commits, and with --rebuild the rows a lost database dropped). */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>

struct repair_args {
	bool rebuild;
};

static int repair_run(struct cmd_ctx *x)
{
	const struct repair_args *a = x->args;
	struct loop *l = x->l;
	struct loop_status st;
	struct sb done = SB_INIT;
	struct err e = {0};
	int rc;
	if (loop_repair(l, a->rebuild, &done, &e) < 0) {
		sb_release(&done);
		return cli_fail(&e);
	}
	fputs(done.buf ? done.buf : "", stdout);
	rc = 0;
	if (loop_status(l, &st, &e) == 0) {
		if (st.problems) {
			printf("still to do by hand:\n%s", st.problems);
			rc = 1;
		}
		printf("next: %s\n", st.next);
		loop_status_release(&st);
	}
	sb_release(&done);
	return rc;
}

static const struct cli_opt repair_opts[] = {
	CLI_FLAG("--rebuild", offsetof(struct repair_args, rebuild),
		 "take back the rows OPT_LOG.md holds and optloop.db lost (a database "
		 "replaced, emptied or cut short), each linked to its commit, then "
		 "the re-assessments and stops it lists under the table; with the "
		 "workspace deleted whole, the rows the op's commits' trailers carry"),
	CLI_END,
};

const struct command cmd_repair = {
	.name = "repair",
	.summary = "apply the repairs start-up reconciliation offers (rows and commits)",
	.open = OPEN_WRITE,
	.opts = repair_opts,
	.args_size = sizeof(struct repair_args),
	.examples = (const char *const[]){"repair", "repair --rebuild", NULL},
	.more = "Re-links a row to the commit that carries its iteration, and gives\n"
		"an optloop commit without a row its row back from the trailers.\n"
		"With --rebuild it first takes back the rows the database lost.",
	.run = repair_run,
};
