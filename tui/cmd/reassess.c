/* reassess — `optloop reassess`: the four prompts that lift a STALLED
 * loop (new profile under trace/, axes tried, techniques searched, next
 * direction); with --show, the stall and the log's directions by axis. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reassess_args {
	struct loop_reassess r;
	bool show;
};

static int reassess_run(struct cmd_ctx *x)
{
	struct reassess_args *a = x->args;
	struct loop *l = x->l;
	struct err e = {0};
	bool show = a->show;
	int rc;
	struct sb axes = SB_INIT;
	loop_axes_summary(l, &axes, NULL);
	if (show) {
		struct loop_status st;
		if (loop_status(l, &st, &e) < 0) {
			sb_release(&axes);
			return cli_fail(&e);
		}
		printf("state: %s\nnext: %s\n", loop_state_name(st.state), st.next);
		loop_status_release(&st);
		printf("directions by axis (confirm or edit them for --axes):\n%s", axes.buf ? axes.buf : "");
		sb_release(&axes);
		return 0;
	}
	rc = loop_reassess(l, &a->r, &e);
	if (rc == ERR_USAGE && axes.len)
		fprintf(stderr, "directions so far, by axis:\n%s", axes.buf);
	sb_release(&axes);
	if (rc < 0)
		return e.code == ERR_USAGE ? cli_usage_error("reassess", "%s", e.msg) : cli_fail(&e);
	struct loop_status st;
	printf("re-assessment recorded; the loop can go on\n");
	if (loop_status(l, &st, NULL) == 0) {
		printf("next: %s\n", st.next);
		loop_status_release(&st);
	}
	return 0;
}

static const struct cli_opt reassess_opts[] = {
	CLI_TEXT("--profile", offsetof(struct reassess_args, r.profile), "PATH",
		 "the profile of the current kernel, a file under the workspace's trace/"),
	CLI_TEXT("--axes", offsetof(struct reassess_args, r.axes), "TEXT",
		 "the axes tried so far and what they gave"),
	CLI_TEXT("--techniques", offsetof(struct reassess_args, r.techniques), "TEXT",
		 "the techniques not yet tried that the profile points at"),
	CLI_TEXT("--next", offsetof(struct reassess_args, r.next), "TEXT",
		 "the direction of the next iteration"),
	{.name = "--show", .kind = CO_FLAG, .off = offsetof(struct reassess_args, show),
	 .opens = OPEN_READ,
	 .help = "print the stall and the log's directions grouped by axis"},
	CLI_END,
};

/* recording needs the writer; --show only reads */
const struct command cmd_reassess = {
	.name = "reassess",
	.summary = "record the re-assessment that lifts a STALLED loop",
	.synopsis = "reassess --profile PATH --axes TEXT --techniques TEXT --next TEXT | reassess --show",
	.open = OPEN_WRITE,
	.opts = reassess_opts,
	.args_size = sizeof(struct reassess_args),
	.examples = (const char *const[]){
		"reassess --profile trace/ncu-iter7.txt --axes 'tiling: flat' --techniques "
		"'split-K' --next 'split the T loop'",
		"reassess --show",
		NULL,
	},
	.more = "Due after three iterations in a row without a win (STALLED); the\n"
		"next verify is refused until it is recorded.",
	.run = reassess_run,
};
