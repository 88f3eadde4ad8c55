/* lint — `optloop lint`: the trap lints over the current kernel diff
 * (kernel and frozen paths against HEAD), recorded for the iteration in
 * progress; the log step asks for their acknowledgement. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/guards_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct lint_args {
	bool json;
};

static int lint_run(struct cmd_ctx *x)
{
	const struct lint_args *a = x->args;
	struct loop *l = x->l;
	struct lint_findings f = {0};
	struct err e = {0};
	bool json = a->json;
	int rc, iter = 0;
	if ((rc = loop_cli_iteration(l, &iter)) != 0)
		return rc;
	if (loop_lint(l, iter, &f, &e) < 0)
		return cli_fail(&e);
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "iteration", json_integer(iter));
		json_object_set_new(j, "findings", guards_cli_findings_json(&f));
		cli_print_json(j);
	} else if (f.n) {
		printf("iteration %d: %zu lint finding%s in the diff\n", iter, f.n,
		       f.n == 1 ? "" : "s");
		guards_cli_print_findings(stdout, &f);
		printf("acknowledge them when logging: optloop log ... --ack\n");
	} else {
		printf("iteration %d: no lint findings in the diff\n", iter);
	}
	rc = f.n ? 1 : 0;
	lint_findings_release(&f);
	return rc;
}

static const struct cli_opt lint_opts[] = {
	CLI_FLAG("--json", offsetof(struct lint_args, json), "print the findings as JSON"),
	CLI_END,
};

const struct command cmd_lint = {
	.name = "lint",
	.summary = "the trap lints over the current kernel diff (exit 1 on findings)",
	.open = OPEN_TRY,
	.opts = lint_opts,
	.args_size = sizeof(struct lint_args),
	.examples = (const char *const[]){"lint", NULL},
	.more = "The trap lints (assets/lints, then the workspace's lints/) over the\n"
		"diff of the kernel and frozen paths against HEAD; exit 1 on findings.",
	.run = lint_run,
};
