/* promote — `optloop promote --check [--json]`, and the evidence the
 * check asks for: `--explain TEXT` (why a flagged speedup is real) and
 * `--attach FILE` (a profiler or roofline reading).  Evidence goes to
 * `--iter N`, else to the iteration of the latest confirm run (the candidate
 * being judged), else to the best. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/stats_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct promote_args {
	bool check;
	const char *explain, *attach;
	long iter;
	bool json;
};

static int promote_before(struct cmd_ctx *x)
{
	const struct promote_args *a = x->args;
	if (!a->check && !a->explain && !a->attach)
		return cli_usage_error("promote", "say what to do: --check, --explain TEXT or "
						  "--attach FILE");
	return CMD_GO;
}

static int promote_run(struct cmd_ctx *x)
{
	const struct promote_args *a = x->args;
	const char *explain = a->explain, *attach = a->attach;
	bool json = a->json, check = a->check;
	int rc, want_iter = (int)a->iter;
	struct err e = {0};
	struct loop *l = x->l;
	int iter = 0;
	bool have = loop_promote_iter(l, &iter, &e) == 0;
	if (want_iter >= 0)
		iter = want_iter;
	if ((explain || attach) && !have)
		return cli_fail(&e);
	/* what --attach and --explain recorded, for --json */
	json_t *done = json ? json_object() : NULL;
	if (attach) {
		/* a relative path: from the current directory, else from the workspace */
		const char *kind = NULL;
		char *real = NULL;
		rc = loop_attach(l, iter, attach, &real, &kind, &e);
		if (rc == 0 && !json)
			printf("attached to iteration %d: %s (recognised: %s)\n", iter, real, kind);
		else if (rc == 0)
			json_object_set_new(done, "attached",
					    json_pack("{s:i, s:s, s:s}", "iteration", iter, "path", real,
						      "kind", kind));
		free(real);
		if (rc < 0) {
			json_decref(done);
			return cli_fail(&e);
		}
	}
	if (explain) {
		bool promoted;
		if ((rc = loop_explain(l, iter, explain, &promoted, &e)) < 0) {
			json_decref(done);
			return cli_fail(&e);
		}
		if (json)
			json_object_set_new(done, "explained",
					    json_pack("{s:i, s:b}", "iteration", iter, "promoted", promoted));
		/* "log it as keep" only where its row is still to be written */
		struct loop_status st;
		bool unlogged = false;
		if (loop_status(l, &st, NULL) == 0) {
			unlogged = st.state == ST_MEASURED && st.iteration == iter;
			loop_status_release(&st);
		}
		if (!json)
			printf("explanation recorded for iteration %d%s\n", iter,
			       !promoted  ? ""
			       : unlogged ? "; its confirmed win is no longer held back: log it as "
					    "keep and it becomes the best"
					  : "; its confirmed win is no longer held back (its row is "
					    "already logged)");
	}
	rc = 0;
	if (check) {
		struct sb out = SB_INIT;
		json_t *j = NULL;
		int r = loop_promote_check(l, &out, &j, &e);
		if (r < 0 && !j) {
			sb_release(&out);
			json_decref(done);
			return cli_fail(&e);
		}
		if (json) {
			json_object_update(j, done); /* the check, beside what was recorded */
			cli_print_json(j);
		} else {
			fputs(out.buf, stdout);
			printf("%s\n", r == 0 ? "promotion check passed"
					      : "promotion check failed: do what the MISSING lines say");
			json_decref(j);
		}
		sb_release(&out);
		rc = r == 0 ? 0 : 1;
	} else if (json) {
		cli_print_json(json_incref(done));
	}
	json_decref(done);
	return rc;
}

static const struct cli_opt promote_opts[] = {
	CLI_FLAG("--check", offsetof(struct promote_args, check),
		 "check the promotion bar: full gate, confirm against the baseline, Target, "
		 "lints, evidence (exit 1 with what is missing)"),
	{.name = "--explain", .kind = CO_STR, .off = offsetof(struct promote_args, explain),
	 .arg = "TEXT", .nonempty = true, .opens = OPEN_WRITE,
	 .help = "record why a confirmed win is what it is (the bar asks for it)"},
	{.name = "--attach", .kind = CO_STR, .off = offsetof(struct promote_args, attach),
	 .arg = "FILE", .nonempty = true, .opens = OPEN_WRITE,
	 .help = "record a profiler or roofline reading of the candidate, under the "
		 "workspace, written after its verify"},
	CLI_INT("--iter", offsetof(struct promote_args, iter), "N", 0, INT_MAX,
		"the iteration --explain or --attach is for (default: the current one when it is measured or has a confirm, else the best)"),
	CLI_FLAG("--json", offsetof(struct promote_args, json), "print the check as JSON"),
	CLI_END,
};

/* the check only reads; recording evidence needs the writer */
const struct command cmd_promote = {
	.name = "promote",
	.summary = "check the promotion bar, or record the evidence it asks for",
	.synopsis = "promote --check | --explain TEXT | --attach FILE [--iter N] [--json]",
	.open = OPEN_READ,
	.opts = promote_opts,
	.args_size = sizeof(struct promote_args),
	.defaults = &(const struct promote_args){.iter = -1},
	.examples = (const char *const[]){"promote --check", "promote --attach trace/ncu-iter7.txt",
					  NULL},
	.before = promote_before,
	.run = promote_run,
};
