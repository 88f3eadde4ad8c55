/* cmd_commit — `optloop commit`: one commit holding only the kernel change,
 * its message carrying the logged row. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stdio.h>
#include <string.h>

int cmd_commit(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct loop_status before, st;
	struct err e = {0};
	char sha[41];
	int json = 0, aside = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--set-aside"))
			aside = 1;
		else
			return cli_usage_error("commit", "unknown argument %s", argv[i]);
	}
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (aside && loop_set_aside(l, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	if (loop_status(l, &before, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	if (loop_commit(l, sha, &e) < 0) {
		loop_status_release(&before);
		loop_close(l);
		return cli_fail(&e);
	}
	int have_st = loop_status(l, &st, NULL) == 0;
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "iteration", json_integer(before.iteration));
		json_object_set_new(j, "commit", json_string(sha));
		if (have_st) {
			json_object_set_new(j, "state", json_string(loop_state_name(st.state)));
			json_object_set_new(j, "next", json_string(st.next));
		}
		cli_print_json(j);
	} else {
		printf("committed iteration %d as %.12s\n", before.iteration, sha);
		if (have_st)
			printf("next: %s\n", st.next);
	}
	if (have_st)
		loop_status_release(&st);
	loop_status_release(&before);
	loop_close(l);
	return 0;
}
