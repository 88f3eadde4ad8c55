/* cmd_log — `optloop log`: append the measured iteration's row to
 * OPT_LOG.md (gate and bench come from the measurement); with --commit,
 * commit it in the same process, as `optloop commit` would. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/optlog.h"
#include "core/sb.h"

#include <stdio.h>
#include <string.h>

int cmd_log(struct cli *cli, int argc, char **argv)
{
	struct loop_log_opts o = {0};
	struct log_row row;
	struct loop *l;
	struct err e = {0};
	int json = 0, aside = 0, commit = 0, rc;
	char sha[41] = "";
	const char *v, *status = NULL;

	for (int i = 1; i < argc;) {
		int k;
		if ((k = loop_cli_optarg(argc, argv, &i, "--direction", &v)) == 1) {
			o.direction = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--status", &v)) == 1) {
			status = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--axis", &v)) == 1) {
			o.axis = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--unconfirmed", &v)) == 1) {
			if (!*v)
				return cli_usage_error("log", "--unconfirmed needs the reason for "
							      "keeping without a win beyond noise");
			o.unconfirmed = v;
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--json")) {
			json = 1;
			i++;
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--ack")) {
			o.ack_lints = true;
			i++;
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--commit")) {
			commit = 1;
			i++;
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--set-aside")) {
			aside = 1;
			i++;
			continue;
		}
		return k < 0 ? cli_usage_error("log", "%s needs a value", argv[i])
			     : cli_usage_error("log", "unknown argument %s", argv[i]);
	}
	if (!o.direction || !*o.direction)
		return cli_usage_error("log", "--direction TEXT is required (one line: what changed)");
	if (status) {
		o.status = row_status_parse(status);
		if (o.status == RS_NONE)
			return cli_usage_error("log", "--status must be keep, revert, drop or floor "
						      "(base for the baseline), got '%s'",
					       status);
	}
	o.commit_next = commit;
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (aside && loop_set_aside(l, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	if (aside)
		fprintf(stderr, "optloop: the extra kernel change is set aside; it comes back after "
				"the commit\n");
	if (loop_log(l, &o, &row, &e) < 0) {
		loop_close(l);
		return e.code == ERR_USAGE ? cli_usage_error("log", "%s", e.msg) : cli_fail(&e);
	}
	if (commit && loop_commit(l, sha, &e) < 0) {
		/* the row stays logged (LOGGED): say so, and how to finish */
		err_prefix(&e, "iteration %d is logged, but its commit failed (fix what follows, then "
			       "run optloop commit): ",
			   row.iter);
		log_row_release(&row);
		loop_close(l);
		return cli_fail(&e);
	}
	struct loop_status st;
	int have_st = loop_status(l, &st, NULL) == 0;
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "iteration", json_integer(row.iter));
		json_object_set_new(j, "direction", json_string(row.direction));
		json_object_set_new(j, "gate", json_string(row.gate));
		json_object_set_new(j, "bench_ms", loop_cli_real(row.bench_ms));
		json_object_set_new(j, "vs_best", loop_cli_real(row.vs_best));
		json_object_set_new(j, "status", json_string(row_status_name(row.status)));
		json_object_set_new(j, "axis", row.axis ? json_string(row.axis) : json_null());
		json_object_set_new(j, "unconfirmed",
				    row.unconfirmed ? json_string(row.unconfirmed) : json_null());
		if (commit)
			json_object_set_new(j, "commit", json_string(sha));
		if (have_st) {
			json_object_set_new(j, "state", json_string(loop_state_name(st.state)));
			json_object_set_new(j, "next", json_string(st.next));
		}
		cli_print_json(j);
	} else {
		struct sb line = SB_INIT;
		optlog_render_row(&row, &line);
		printf("logged: %s", line.buf);
		if (commit)
			printf("committed iteration %d as %.12s\n", row.iter, sha);
		if (have_st)
			printf("next: %s\n", st.next);
		sb_release(&line);
	}
	if (have_st)
		loop_status_release(&st);
	log_row_release(&row);
	loop_close(l);
	return 0;
}
