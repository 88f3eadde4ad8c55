/* stop — `optloop stop --reason cap|floor|directions [--bound TEXT]`:
 * record a stop condition after checking that it holds (a Slurm allocation
 * held for the runs is given back with it); `optloop stop --release` gives
 * back only the allocation. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int release_only(struct loop *l, bool json)
{
	struct err e = {0};
	bool had;
	struct loop_allocation a;
	loop_allocation(l, &a, NULL);
	char *job = a.job ? strdup(a.job) : NULL;
	loop_allocation_release(&a);
	if (loop_allocation_end(l, "given back (optloop stop --release)", false, &had, &e) < 0) {
		free(job);
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
	return 0;
}

struct stop_args {
	const char *reason, *bound;
	bool release, json;
};

static int stop_before(struct cmd_ctx *x)
{
	const struct stop_args *a = x->args;
	if (a->release && a->reason)
		return cli_usage_error("stop", "--release gives back only the allocation; use it "
					       "without --reason (a recorded stop gives it back too)");
	if (!a->release && !a->reason)
		return cli_usage_error("stop", "--reason cap|floor|directions is required (or "
					       "--release to give back only the Slurm allocation)");
	return CMD_GO;
}

static int stop_run(struct cmd_ctx *x)
{
	const struct stop_args *a = x->args;
	const char *reason = a->reason, *bound = a->bound;
	struct loop *l = x->l;
	struct err e = {0};
	bool json = a->json;

	if (a->release)
		return release_only(l, json);
	char *recorded = NULL;
	if (loop_stop(l, reason, bound, &recorded, &e) < 0)
		return e.code == ERR_USAGE ? cli_usage_error("stop", "%s", e.msg) : cli_fail(&e);
	bound = recorded;
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
		if (recorded)
			printf("bound: %s%s\n", recorded,
			       a->bound && *a->bound ? "" : " (computed from the best's run)");
		if (have)
			printf("next: %s\n", st.next);
	}
	if (have)
		loop_status_release(&st);
	free(recorded);
	return 0;
}

static const struct cli_opt stop_opts[] = {
	{.name = "--reason", .kind = CO_STR, .off = offsetof(struct stop_args, reason),
	 .arg = "REASON", .choices = "cap|floor|directions", .nonempty = true,
	 .help = "cap (the contract's iteration cap is reached), floor (a named bound "
		 "with its number is reached) or directions (three distinct directions, "
		 "by axis, have logged evidence)"},
	CLI_TEXT("--bound", offsetof(struct stop_args, bound), "TEXT",
		 "the bound reached, for --reason floor; without it the bound is computed "
		 "from the best's run (its roofline)"),
	CLI_FLAG("--release", offsetof(struct stop_args, release),
		 "give back the Slurm allocation the runs use (scancel) and nothing else; "
		 "the next run requests a new one"),
	CLI_FLAG("--json", offsetof(struct stop_args, json), "print the stop as JSON"),
	CLI_END,
};

const struct command cmd_stop = {
	.name = "stop",
	.summary = "stop the loop when a stop condition holds",
	.open = OPEN_WRITE,
	.opts = stop_opts,
	.args_size = sizeof(struct stop_args),
	.examples = (const char *const[]){"stop --reason cap", "stop --release",
					  "stop --reason floor --bound 'HBM roofline: 3.1 ms'", NULL},
	.more = "Refused unless the stop condition holds; then promote or report nogo.\n"
		"A recorded stop also gives back the Slurm allocation (Runner: slurm).",
	.before = stop_before,
	.run = stop_run,
};
