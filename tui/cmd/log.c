/* log — `optloop log`: append the measured iteration's row to
 * OPT_LOG.md (gate and bench come from the measurement); with --commit,
 * commit it in the same process, as `optloop commit` would. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct log_args {
	struct loop_log_opts o;
	const char *status;
	bool ack, aside, commit, json;
};

/* the values, before anything is opened */
static int log_before(struct cmd_ctx *x)
{
	struct log_args *a = x->args;
	const char *status = a->status;
	if (!a->o.direction || !*a->o.direction)
		return cli_usage_error("log", "--direction TEXT is required (one line: what changed)");
	if (status) {
		a->o.status = row_status_parse(status);
		if (a->o.status == RS_NONE) {
			const char *names[RS_FLOOR - RS_BASE + 2];
			size_t k = 0;
			for (int s = RS_BASE; s <= RS_FLOOR; s++)
				names[k++] = row_status_name(s);
			names[k] = NULL;
			const char *near = loop_closest_word(status, names);
			return cli_usage_error("log", "--status must be keep, revert, drop or floor "
						      "(base for the baseline), got '%s'%s%s%s",
					       status, near ? " (did you mean " : "", near ? near : "",
					       near ? "?)" : "");
		}
	}
	return CMD_GO;
}

static int log_run(struct cmd_ctx *x)
{
	const struct log_args *a = x->args;
	struct loop_log_opts o = a->o;
	struct log_row row;
	struct loop *l = x->l;
	struct err e = {0};
	bool json = a->json, aside = a->aside, commit = a->commit;
	char sha[41] = "";

	o.ack_lints = a->ack;
	o.commit_next = commit;
	if (aside) {
		/* done already (a log --set-aside cut off after its set-aside, run
		 * again) or nothing to do: the log goes on */
		struct loop_status st;
		if (loop_status(l, &st, &e) < 0)
			return cli_fail(&e);
		bool telescoped = st.telescoped;
		loop_status_release(&st);
		if (telescoped && loop_set_aside(l, &e) < 0)
			return cli_fail(&e);
		fprintf(stderr, telescoped ? "optloop: the extra kernel change is set aside; it comes "
					     "back after the commit\n"
					   : "optloop: nothing to set aside (the kernel is as it was "
					     "measured)\n");
	}
	if (loop_log(l, &o, &row, &e) < 0)
		return e.code == ERR_USAGE ? cli_usage_error("log", "%s", e.msg) : cli_fail(&e);
	if (commit && loop_commit(l, sha, &e) < 0) {
		/* the row stays logged (LOGGED) unless the commit was made and what
		 * follows it (a revert/drop restore) failed: say which, and how to
		 * finish */
		struct loop_status after;
		bool committed = false;
		if (loop_status(l, &after, NULL) == 0) {
			committed = after.state != ST_LOGGED;
			loop_status_release(&after);
		}
		if (!committed) /* else the message says what was done */
			err_prefix(&e, "iteration %d is logged, but its commit failed (fix what "
				       "follows, then run optloop commit): ",
				   row.iter);
		log_row_release(&row);
		return cli_fail(&e);
	}
	struct loop_status st;
	int have_st = loop_status(l, &st, NULL) == 0;
	if (have_st && st.optlog_note) /* what the row's write kept of a hand edit */
		fprintf(stderr, "optloop: %s\n", st.optlog_note);
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
	return 0;
}

static const struct cli_opt log_opts[] = {
	CLI_NEED("--direction", offsetof(struct log_args, o.direction), "TEXT",
		 "one line: what this iteration changed (required)"),
	{.name = "--status", .kind = CO_STR, .off = offsetof(struct log_args, status),
	 .arg = "STATUS", .choices = "keep|revert|drop|floor", .nonempty = true,
	 .help = "keep, revert, drop or floor (the baseline is logged as base without it)"},
	CLI_STR("--axis", offsetof(struct log_args, o.axis), "TEXT",
		"the optimization axis the change belongs to"),
	CLI_TEXT("--bound", offsetof(struct log_args, o.bound), "TEXT",
		 "with --status floor: the named bound and its number (HBM: 4.1 of 4.8 TB/s)"),
	CLI_TEXT("--unconfirmed", offsetof(struct log_args, o.unconfirmed), "WHY",
		 "keep without a win beyond noise; the reason is recorded and shown"),
	CLI_FLAG("--ack", offsetof(struct log_args, ack),
		 "acknowledge the diff's lint findings (you reviewed them)"),
	CLI_FLAG("--set-aside", offsetof(struct log_args, aside),
		 "set aside kernel edits made after the measurement first"),
	CLI_FLAG("--commit", offsetof(struct log_args, commit), "commit the row in the same step"),
	CLI_FLAG("--json", offsetof(struct log_args, json), "print the row as JSON"),
	CLI_END,
};

const struct command cmd_log = {
	.name = "log",
	.summary = "append the measured iteration's row to OPT_LOG.md (--commit: and commit it)",
	.open = OPEN_WRITE,
	.opts = log_opts,
	.args_size = sizeof(struct log_args),
	.examples = (const char *const[]){
		"log --direction 'baseline' --commit",
		"log --direction 'BT 64 -> 128 in the fwd kernel' --status keep --commit",
		"log --direction 'num_warps 8' --status drop --commit",
		NULL,
	},
	.more = "keep needs a passing gate, a bench number and a win beyond noise (a\n"
		"fast confirm, or a fast verdict against measured noise), or --unconfirmed.\n"
		"revert and drop restore the best kernel after the commit; so does floor,\n"
		"which needs a passing gate and --bound (the bound reached, with its number).",
	.before = log_before,
	.run = log_run,
};
