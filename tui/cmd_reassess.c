/* cmd_reassess — `optloop reassess`: the four prompts that lift a STALLED
 * loop (new profile under trace/, axes tried, techniques searched, next
 * direction); with --show, the stall and the log's directions by axis. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/guards_cli.h"
#include "tui/loop_cli.h"
#include "core/err.h"
#include "core/guards.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_reassess(struct cli *cli, int argc, char **argv)
{
	struct guards_reassess r = {0};
	struct loop *l;
	struct guards_owned o;
	struct err e = {0};
	const char *v;
	int show = 0, rc;

	for (int i = 1; i < argc;) {
		int k;
		if ((k = loop_cli_optarg(argc, argv, &i, "--profile", &v)) == 1) {
			r.profile = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--axes", &v)) == 1) {
			r.axes = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--techniques", &v)) == 1) {
			r.techniques = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--next", &v)) == 1) {
			r.next = v;
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--show")) {
			show = 1;
			i++;
			continue;
		}
		return k < 0 ? cli_usage_error("reassess", "%s needs a value", argv[i])
			     : cli_usage_error("reassess", "unknown argument %s", argv[i]);
	}
	if ((rc = guards_cli_open(cli, show ? LOOP_READONLY : 0, &l, &o)) != 0)
		return rc;
	struct sb axes = SB_INIT;
	guards_axes_summary(&o.g, &axes, NULL);
	if (show) {
		char *next = guards_next_step(&o.g, o.state);
		printf("state: %s\n%s%s", loop_state_name(o.state), next ? next : "",
		       next ? "\n" : "");
		printf("directions by axis (confirm or edit them for --axes):\n%s", axes.buf ? axes.buf : "");
		free(next);
		sb_release(&axes);
		guards_cli_close(l, &o);
		return 0;
	}
	rc = guards_reassess(&o.g, &r, &e);
	if (rc == ERR_USAGE && axes.len)
		fprintf(stderr, "directions so far, by axis:\n%s", axes.buf);
	sb_release(&axes);
	if (rc < 0) {
		guards_cli_close(l, &o);
		return e.code == ERR_USAGE ? cli_usage_error("reassess", "%s", e.msg) : cli_fail(&e);
	}
	struct loop_status st;
	printf("re-assessment recorded; the loop can go on\n");
	if (loop_status(l, &st, NULL) == 0) {
		printf("next: %s\n", st.next);
		loop_status_release(&st);
	}
	guards_cli_close(l, &o);
	return 0;
}
