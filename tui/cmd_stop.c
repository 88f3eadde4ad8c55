/* cmd_stop — `optloop stop --reason cap|floor|directions [--bound TEXT]`:
 * record a stop condition after checking that it holds. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/guards_cli.h"
#include "tui/loop_cli.h"
#include "core/err.h"
#include "core/guards.h"
#include "core/loop.h"

#include <stdio.h>
#include <string.h>

int cmd_stop(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct guards_owned o;
	struct err e = {0};
	const char *reason = NULL, *bound = NULL, *v;
	int json = 0, rc;

	for (int i = 1; i < argc;) {
		int k;
		if ((k = loop_cli_optarg(argc, argv, &i, "--reason", &v)) == 1) {
			reason = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--bound", &v)) == 1) {
			bound = v;
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--json")) {
			json = 1;
			i++;
			continue;
		}
		return k < 0 ? cli_usage_error("stop", "%s needs a value", argv[i])
			     : cli_usage_error("stop", "unknown argument %s", argv[i]);
	}
	if (!reason)
		return cli_usage_error("stop", "--reason cap|floor|directions is required");
	if ((rc = guards_cli_open(cli, 0, &l, &o)) != 0)
		return rc;
	if (guards_stop(&o.g, reason, bound, &e) < 0) {
		guards_cli_close(l, &o);
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
	guards_cli_close(l, &o);
	return 0;
}
