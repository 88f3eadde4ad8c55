/* commit — `optloop commit`: one commit holding only the kernel change,
 * its message carrying the logged row. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct commit_args {
	bool aside, json;
};

static int commit_run(struct cmd_ctx *x)
{
	const struct commit_args *a = x->args;
	struct loop *l = x->l;
	struct loop_status before, st;
	struct err e = {0};
	char sha[41];
	bool json = a->json, aside = a->aside;
	if (aside && loop_set_aside(l, &e) < 0)
		return cli_fail(&e);
	if (loop_status(l, &before, &e) < 0)
		return cli_fail(&e);
	if (loop_commit(l, sha, &e) < 0) {
		loop_status_release(&before);
		return cli_fail(&e);
	}
	int have_st = loop_status(l, &st, NULL) == 0;
	if (have_st && st.optlog_note) /* the Baseline line's write */
		fprintf(stderr, "optloop: %s\n", st.optlog_note);
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
	return 0;
}

static const struct cli_opt commit_opts[] = {
	CLI_FLAG("--set-aside", offsetof(struct commit_args, aside),
		 "set aside kernel edits made after the measurement; they come back after "
		 "the commit"),
	CLI_FLAG("--json", offsetof(struct commit_args, json), "print the commit as JSON"),
	CLI_END,
};

const struct command cmd_commit = {
	.name = "commit",
	.summary = "commit the logged iteration (kernel change only)",
	.open = OPEN_WRITE,
	.opts = commit_opts,
	.args_size = sizeof(struct commit_args),
	.examples = (const char *const[]){"commit", NULL},
	.more = "Commits only the kernel paths, with the row as trailers; after a\n"
		"revert or drop row a second commit restores the best kernel.",
	.run = commit_run,
};
