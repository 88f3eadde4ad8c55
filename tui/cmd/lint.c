/* lint — `optloop lint`: the trap lints over the current kernel diff
 * (kernel and frozen paths against HEAD), recorded for the iteration in
 * progress; the log step asks for their acknowledgement. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/guards_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stdio.h>
#include <string.h>

int cmd_lint(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct lint_findings f = {0};
	struct err e = {0};
	bool json = false;
	int rc, iter = 0;
	const struct cli_opt opts[] = {
		CLI_PFLAG("--json", &json, "print the findings as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {"lint", NULL};
	struct cli_cmd c = {.name = "lint", .opts = opts, .examples = examples,
			    .more = "The trap lints (assets/lints, then the workspace's lints/) over the\n"
				    "diff of the kernel and frozen paths against HEAD; exit 1 on findings."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, LOOP_TRY_WRITE, &l)) != 0)
		return rc;
	if ((rc = loop_cli_iteration(l, &iter)) != 0) {
		loop_close(l);
		return rc;
	}
	if (loop_lint(l, iter, &f, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
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
	loop_close(l);
	return rc;
}
