/* promote — `optloop promote --check [--json]`, and the evidence the
 * check asks for: `--explain TEXT` (why a flagged speedup is real) and
 * `--attach FILE` (a profiler or roofline reading).  Evidence goes to
 * `--iter N`, else to the iteration of the latest confirm run (the candidate
 * being judged), else to the best. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/stats_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_promote(struct cli *cli, int argc, char **argv)
{
	const char *explain = NULL, *attach = NULL;
	bool json = false, check = false;
	int rc, want_iter;
	struct err e = {0};
	struct loop *l;
	long it = -1;
	const struct cli_opt opts[] = {
		CLI_PFLAG("--check", &check,
			 "check the promotion bar: full gate, confirm against the baseline, Target, "
			 "lints, evidence (exit 1 with what is missing)"),
		CLI_PTEXT("--explain", &explain, "TEXT",
			 "record why a confirmed win is what it is (the bar asks for it)"),
		CLI_PTEXT("--attach", &attach, "FILE",
			 "record a profiler or roofline reading of the candidate, under the "
			 "workspace, written after its verify"),
		CLI_PINT("--iter", &it, "N", 0, INT_MAX,
			"the iteration --explain or --attach is for (default: the current one when it is measured or has a confirm, else the best)"),
		CLI_PFLAG("--json", &json, "print the check as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {
		"promote --check",
		"promote --attach trace/ncu-iter7.txt",
		NULL,
	};
	struct cli_cmd c = {.name = "promote", .opts = opts, .examples = examples};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	want_iter = (int)it;
	if (!check && !explain && !attach)
		return cli_usage_error("promote", "say what to do: --check, --explain TEXT or "
						  "--attach FILE");
	if ((rc = loop_cli_open(cli, (explain || attach) ? 0 : LOOP_READONLY, &l)) != 0)
		return rc;
	int iter = 0;
	bool have = loop_promote_iter(l, &iter, &e) == 0;
	if (want_iter >= 0)
		iter = want_iter;
	if ((explain || attach) && !have) {
		loop_close(l);
		return cli_fail(&e);
	}
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
			loop_close(l);
			return cli_fail(&e);
		}
	}
	if (explain) {
		bool promoted;
		if ((rc = loop_explain(l, iter, explain, &promoted, &e)) < 0) {
			json_decref(done);
			loop_close(l);
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
			loop_close(l);
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
	loop_close(l);
	return rc;
}
