/* status — `optloop status [--json]`: where the loop stands. */
#include "tui/cli_opts.h"
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/loop_cli.h"
#include "tui/stats_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/measure.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int cmd_status(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct loop_status st;
	struct err e = {0};
	bool json = false;
	int rc;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", &json, "print the status as JSON (state, due step, best, stall, paths)"),
		CLI_END,
	};
	static const char *const examples[] = {"status", "status --json | jq .next", NULL};
	struct cli_cmd c = {.name = "status", .opts = opts, .examples = examples,
			    .more = "Opened for writing when no other optloop writes, so the repairs\n"
				    "start-up reconciliation can make on its own are made."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	/* status repairs what reconciliation can when it may write */
	if ((rc = loop_cli_open(cli, LOOP_TRY_WRITE, &l)) != 0)
		return rc;
	if (loop_status(l, &st, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	/* The verdict of the iteration the due step belongs to (MEASURED,
	 * LOGGED); a committed one's verdict is in its row, not here. */
	int last = st.last_run;
	if (json) {
		json_t *j = loop_cli_status_json(&st);
		stats_cli_add_verdict(l, last, j);
		cli_print_json(j);
	} else {
		printf("op:        %s\n", st.op);
		printf("workspace: %s\n", st.workspace);
		printf("state:     %s (iteration %d)%s\n", loop_state_name(st.state), st.iteration,
		       st.readonly ? " [read-only: another optloop is writing]" : "");
		if (st.has_best)
			printf("best:      %.4g ms (iteration %d%s)\n", st.best_ms, st.best_iter,
			       st.best_unconfirmed ? ", kept unconfirmed" : "");
		else
			printf("best:      none yet\n");
		printf("stall:     %d/%d iterations without a win\n", st.stall, st.stall_limit);
		printf("kernel:   ");
		for (size_t i = 0; i < st.nkernel; i++)
			printf(" %s", st.kernel[i]);
		printf("\nfrozen:   ");
		for (size_t i = 0; i < st.nfrozen; i++)
			printf(" %s", st.frozen[i]);
		printf("\n");
		if (st.missing)
			printf("contract:  incomplete\n%s\n", st.missing);
		if (st.problems)
			printf("problems:\n%s", st.problems);
		if (st.attempt)
			printf("attempt:   %s\n", st.attempt);
		stats_cli_print_verdict(l, last, stdout);
		printf("next:      %s\n", st.next);
	}
	loop_status_release(&st);
	loop_close(l);
	return 0;
}
