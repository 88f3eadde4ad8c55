/* cmd_noise — `optloop noise [--runs K] [--cmd CMD] [--json]`: measure the
 * current best K times in one session (benchmark only) to seed the band. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void progress(void *ctx, const char *line)
{
	fprintf(ctx, "%s\n", line);
	fflush(ctx);
}

int cmd_noise(struct cli *cli, int argc, char **argv)
{
	struct session_opts o = {.runs = 5, .progress = progress};
	struct session_result r;
	struct err e = {0};
	struct loop *l;
	int json = 0, rc;
	for (int i = 1; i < argc;) {
		const char *v;
		long k;
		/* loop_cli_optarg moves i past an option and its value */
		if (!strcmp(argv[i], "--json")) {
			json = 1;
			i++;
		} else if ((rc = loop_cli_optcount(argc, argv, &i, "--runs", 2, 100, &k)) != 0) {
			if (rc < 0)
				return cli_usage_error("noise", "--runs needs a count from 2 to 100");
			o.runs = (int)k;
		} else if ((rc = loop_cli_optarg(argc, argv, &i, "--cmd", &v)) != 0) {
			if (rc < 0)
				return cli_usage_error("noise", "--cmd needs a command");
			o.command = v;
		} else {
			return cli_usage_error("noise", "unknown argument %s", argv[i]);
		}
	}
	o.ctx = json ? stderr : stdout;
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (session_noise(l, &o, &r, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	if (json) {
		cli_print_json(json_incref(r.json));
	} else {
		size_t i;
		json_t *s;
		printf("best (iteration %d) measured %d times in session %d\n",
		       (int)json_integer_value(json_object_get(r.json, "best_iter")), r.nruns,
		       r.session);
		json_array_foreach(json_object_get(r.json, "shapes"), i, s)
		{
			printf("  %-40s median %.4f ms, spread %.2f%%%s\n",
			       json_string_value(json_object_get(s, "shape")),
			       json_real_value(json_object_get(s, "median_ms")),
			       100 * json_real_value(json_object_get(s, "noise")),
			       json_is_true(json_object_get(s, "unstable")) ? " UNSTABLE" : "");
		}
	}
	session_result_release(&r);
	loop_close(l);
	return 0;
}
