/* lint — `optloop lint`: the trap lints over the current kernel diff
 * (kernel and frozen paths against HEAD), recorded for the iteration in
 * progress; the log step asks for their acknowledgement. */
#include "tui/cli_opts.h"
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/guards_cli.h"
#include "core/err.h"
#include "core/guards.h"
#include "core/lint.h"
#include "core/loop.h"

#include <stdio.h>
#include <string.h>

int cmd_lint(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct guards_owned o;
	struct lint_findings f = {0};
	struct err e = {0};
	bool json = false;
	int rc;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", &json, "print the findings as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {"lint", NULL};
	struct cli_cmd c = {.name = "lint", .opts = opts, .examples = examples,
			    .more = "The trap lints (assets/lints, then the workspace's lints/) over the\n"
				    "diff of the kernel and frozen paths against HEAD; exit 1 on findings."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if ((rc = guards_cli_open(cli, LOOP_TRY_WRITE, &l, &o)) != 0)
		return rc;
	if (guards_lint(&o.g, o.iteration, &f, &e) < 0) {
		guards_cli_close(l, &o);
		return cli_fail(&e);
	}
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "iteration", json_integer(o.iteration));
		json_object_set_new(j, "findings", guards_cli_findings_json(&f));
		cli_print_json(j);
	} else if (f.n) {
		printf("iteration %d: %zu lint finding%s in the diff\n", o.iteration, f.n,
		       f.n == 1 ? "" : "s");
		guards_cli_print_findings(stdout, &f);
		printf("acknowledge them when logging: optloop log ... --ack\n");
	} else {
		printf("iteration %d: no lint findings in the diff\n", o.iteration);
	}
	rc = f.n ? 1 : 0;
	lint_findings_release(&f);
	guards_cli_close(l, &o);
	return rc;
}
