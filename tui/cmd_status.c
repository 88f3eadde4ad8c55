/* cmd_status — `optloop status [--json]`: where the loop stands. */
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
	int json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else
			return cli_usage_error("status", "unknown argument %s", argv[i]);
	}
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
