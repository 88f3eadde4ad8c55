/* repair — `optloop repair`: apply the repairs the start-up
 * reconciliation offers (re-link rows to their commits, rebuild rows from
 * optloop commits, and with --rebuild the rows a lost database dropped). */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>

int cmd_repair(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct loop_status st;
	struct sb done = SB_INIT;
	struct err e = {0};
	bool rebuild = false;
	int rc;
	const struct cli_opt opts[] = {
		CLI_PFLAG("--rebuild", &rebuild,
			 "take back the rows OPT_LOG.md holds and optloop.db lost (a database "
			 "replaced, emptied or cut short), each linked to its commit"),
		CLI_END,
	};
	static const char *const examples[] = {"repair", "repair --rebuild", NULL};
	struct cli_cmd c = {.name = "repair", .opts = opts, .examples = examples,
			    .more = "Re-links a row to the commit that carries its iteration, and gives\n"
				    "an optloop commit without a row its row back from the trailers.\n"
				    "With --rebuild it first takes back the rows the database lost."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (loop_repair(l, rebuild, &done, &e) < 0) {
		loop_close(l);
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
	loop_close(l);
	return rc;
}
