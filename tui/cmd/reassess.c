/* reassess — `optloop reassess`: the four prompts that lift a STALLED
 * loop (new profile under trace/, axes tried, techniques searched, next
 * direction); with --show, the stall and the log's directions by axis. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_reassess(struct cli *cli, int argc, char **argv)
{
	struct loop_reassess r = {0};
	struct loop *l;
	struct err e = {0};
	bool show = false;
	int rc;

	const struct cli_opt opts[] = {
		CLI_PTEXT("--profile", &r.profile, "PATH",
			 "the profile of the current kernel, a file under the workspace's trace/"),
		CLI_PTEXT("--axes", &r.axes, "TEXT", "the axes tried so far and what they gave"),
		CLI_PTEXT("--techniques", &r.techniques, "TEXT",
			 "the techniques not yet tried that the profile points at"),
		CLI_PTEXT("--next", &r.next, "TEXT", "the direction of the next iteration"),
		CLI_PFLAG("--show", &show, "print the stall and the log's directions grouped by axis"),
		CLI_END,
	};
	static const char *const examples[] = {
		"reassess --profile trace/ncu-iter7.txt --axes 'tiling: flat' --techniques "
		"'split-K' --next 'split the T loop'",
		"reassess --show",
		NULL,
	};
	struct cli_cmd c = {
		.name = "reassess",
		.opts = opts,
		.examples = examples,
		.more = "Due after three iterations in a row without a win (STALLED); the\n"
			"next verify is refused until it is recorded.",
	};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, show ? LOOP_READONLY : 0, &l)) != 0)
		return rc;
	struct sb axes = SB_INIT;
	loop_axes_summary(l, &axes, NULL);
	if (show) {
		struct loop_status st;
		if (loop_status(l, &st, &e) < 0) {
			sb_release(&axes);
			loop_close(l);
			return cli_fail(&e);
		}
		printf("state: %s\nnext: %s\n", loop_state_name(st.state), st.next);
		loop_status_release(&st);
		printf("directions by axis (confirm or edit them for --axes):\n%s", axes.buf ? axes.buf : "");
		sb_release(&axes);
		loop_close(l);
		return 0;
	}
	rc = loop_reassess(l, &r, &e);
	if (rc == ERR_USAGE && axes.len)
		fprintf(stderr, "directions so far, by axis:\n%s", axes.buf);
	sb_release(&axes);
	if (rc < 0) {
		loop_close(l);
		return e.code == ERR_USAGE ? cli_usage_error("reassess", "%s", e.msg) : cli_fail(&e);
	}
	struct loop_status st;
	printf("re-assessment recorded; the loop can go on\n");
	if (loop_status(l, &st, NULL) == 0) {
		printf("next: %s\n", st.next);
		loop_status_release(&st);
	}
	loop_close(l);
	return 0;
}
