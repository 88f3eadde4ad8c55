/* cmd_report_nogo — `optloop report nogo [--json]`: the no-go record, only
 * with all five items (baseline number, reasoned candidate, gate status,
 * bench evidence, named bound with its number); otherwise the missing
 * items, exit 1.  cmd_report hands "nogo" here. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/guards_cli.h"
#include "core/err.h"
#include "core/guards.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>
#include <string.h>

int report_nogo(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct guards_owned o;
	struct err e = {0};
	struct sb md = SB_INIT;
	json_t *j = NULL;
	int json = 0, rc;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else
			return cli_usage_error("report", "unknown argument %s", argv[i]);
	}
	if ((rc = guards_cli_open(cli, LOOP_TRY_WRITE, &l, &o)) != 0)
		return rc;
	rc = guards_nogo(&o.g, &md, &j, &e);
	if (json)
		cli_print_json(j);
	else
		fputs(md.buf, stdout);
	if (!json)
		json_decref(j);
	if (rc < 0)
		fprintf(stderr, "optloop: %s\n", e.msg);
	sb_release(&md);
	guards_cli_close(l, &o);
	return rc < 0 ? 1 : 0;
}
