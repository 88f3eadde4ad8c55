/* commit — `optloop commit`: one commit holding only the kernel change,
 * its message carrying the logged row. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
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
	bool json = false, aside = false;
	int rc;
	const struct cli_opt opts[] = {
		CLI_PFLAG("--set-aside", &aside,
			 "set aside kernel edits made after the measurement; they come back after "
			 "the commit"),
		CLI_PFLAG("--json", &json, "print the commit as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {"commit", NULL};
	struct cli_cmd c = {.name = "commit", .opts = opts, .examples = examples,
			    .more = "Commits only the kernel paths, with the row as trailers; after a\n"
				    "revert or drop row a second commit restores the best kernel."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
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
