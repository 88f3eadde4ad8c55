/* stop — `optloop stop --reason cap|floor|directions [--bound TEXT]`:
 * record a stop condition after checking that it holds (a Slurm allocation
 * held for the runs is given back with it); `optloop stop --release` gives
 * back only the allocation. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int release_only(struct cli *cli, bool json)
{
	struct loop *l;
	struct err e = {0};
	bool had;
	int rc;
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	struct loop_allocation a;
	loop_allocation(l, &a, NULL);
	char *job = a.job ? strdup(a.job) : NULL;
	loop_allocation_release(&a);
	if (loop_allocation_end(l, "given back (optloop stop --release)", false, &had, &e) < 0) {
		free(job);
		loop_close(l);
		return cli_fail(&e);
	}
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "released", json_boolean(had));
		json_object_set_new(j, "job", job ? json_string(job) : json_null());
		cli_print_json(j);
	} else if (had) {
		printf("Slurm allocation %s given back (scancel); the next run requests a new one\n",
		       job ? job : "(not yet named)");
	} else {
		printf("no Slurm allocation is held: nothing to give back\n");
	}
	free(job);
	loop_close(l);
	return 0;
}

int cmd_stop(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct err e = {0};
	const char *reason = NULL, *bound = NULL;
	bool json = false, release = false;
	int rc;

	const struct cli_opt opts[] = {
		CLI_PTEXT("--reason", &reason, "REASON",
			 "cap (the contract's iteration cap is reached), floor (a named bound "
			 "with its number is reached) or directions (three distinct directions, "
			 "by axis, have logged evidence)"),
		CLI_PTEXT("--bound", &bound, "TEXT", "the bound reached, for --reason floor"),
		CLI_PFLAG("--release", &release,
			 "give back the Slurm allocation the runs use (scancel) and nothing else; "
			 "the next run requests a new one"),
		CLI_PFLAG("--json", &json, "print the stop as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {"stop --reason cap", "stop --release",
					       "stop --reason floor --bound 'HBM roofline: 3.1 ms'",
					       NULL};
	struct cli_cmd c = {.name = "stop", .opts = opts, .examples = examples,
			    .more = "Refused unless the stop condition holds; then promote or report nogo.\n"
				    "A recorded stop also gives back the Slurm allocation (Runner: slurm)."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if (release && reason)
		return cli_usage_error("stop", "--release gives back only the allocation; use it "
					       "without --reason (a recorded stop gives it back too)");
	if (release)
		return release_only(cli, json);
	if (!reason)
		return cli_usage_error("stop", "--reason cap|floor|directions is required (or "
					       "--release to give back only the Slurm allocation)");
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (loop_stop(l, reason, bound, &e) < 0) {
		loop_close(l);
		return e.code == ERR_USAGE ? cli_usage_error("stop", "%s", e.msg) : cli_fail(&e);
	}
	struct loop_status st;
	int have = loop_status(l, &st, NULL) == 0;
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "reason", json_string(reason));
		json_object_set_new(j, "bound", bound ? json_string(bound) : json_null());
		if (have)
			json_object_set_new(j, "state", json_string(loop_state_name(st.state)));
		cli_print_json(j);
	} else {
		printf("stop recorded (reason: %s)\n", reason);
		if (have)
			printf("next: %s\n", st.next);
	}
	if (have)
		loop_status_release(&st);
	loop_close(l);
	return 0;
}
