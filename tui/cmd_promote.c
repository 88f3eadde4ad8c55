/* cmd_promote — `optloop promote --check [--json]`, and the evidence the
 * check asks for: `--explain TEXT` (why a flagged speedup is real) and
 * `--attach FILE` (a profiler or roofline reading).  Evidence goes to
 * `--iter N`, else to the iteration of the latest confirm run (the candidate
 * being judged), else to the best. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/loop_cli.h"
#include "tui/stats_cli.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/measure.h"
#include "core/report.h"
#include "core/sb.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_promote(struct cli *cli, int argc, char **argv)
{
	const char *explain = NULL, *attach = NULL;
	int json = 0, check = 0, rc, want_iter = -1;
	struct err e = {0};
	struct loop *l;
	for (int i = 1; i < argc;) {
		const char *v;
		long k;
		/* loop_cli_optarg moves i past an option and its value */
		if (!strcmp(argv[i], "--json")) {
			json = 1;
			i++;
		} else if (!strcmp(argv[i], "--check")) {
			check = 1;
			i++;
		} else if ((rc = loop_cli_optarg(argc, argv, &i, "--explain", &v)) != 0) {
			if (rc < 0 || !*v)
				return cli_usage_error("promote", "--explain needs a text");
			explain = v;
		} else if ((rc = loop_cli_optcount(argc, argv, &i, "--iter", 0, INT_MAX, &k)) != 0) {
			if (rc < 0)
				return cli_usage_error("promote", "--iter needs an iteration number");
			want_iter = (int)k;
		} else if ((rc = loop_cli_optarg(argc, argv, &i, "--attach", &v)) != 0) {
			if (rc < 0 || !*v)
				return cli_usage_error("promote", "--attach needs a file");
			attach = v;
		} else {
			return cli_usage_error("promote", "unknown argument %s", argv[i]);
		}
	}
	if (!check && !explain && !attach)
		return cli_usage_error("promote", "say what to do: --check, --explain TEXT or "
						  "--attach FILE");
	if ((rc = loop_cli_open(cli, (explain || attach) ? 0 : LOOP_READONLY, &l)) != 0)
		return rc;
	struct store *s = loop_store(l);
	struct measure_best b;
	if (measure_best(s, &b, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	int iter = b.iter;
	bool have = b.have;
	measure_best_release(&b);
	struct measure_confirm lc;
	if (want_iter >= 0) {
		iter = want_iter;
	} else {
		struct loop_status stt;
		if (loop_status(l, &stt, NULL) == 0) {
			if (measure_confirm_last(s, stt.iteration, &lc, NULL) == 0) {
				iter = stt.iteration;
				measure_confirm_release(&lc);
			}
			loop_status_release(&stt);
		}
	}
	if ((explain || attach) && !have) {
		loop_close(l);
		err_set(&e, ERR_REFUSED, "promote refused: there is no best yet (measure the "
					 "baseline first)");
		return cli_fail(&e);
	}
	if (attach) {
		/* a relative path: from the current directory, else from the workspace */
		const char *kind = NULL;
		char *real = NULL;
		rc = measure_attach_check(s, iter, attach, loop_dir(l), &real, &kind, &e);
		if (rc == 0)
			rc = measure_attach(s, iter, real, &e);
		if (rc == 0 && !json)
			printf("attached to iteration %d: %s (recognised: %s)\n", iter, real, kind);
		free(real);
		if (rc < 0) {
			loop_close(l);
			return cli_fail(&e);
		}
	}
	if (explain) {
		bool promoted;
		if ((rc = measure_explain(s, iter, explain, &promoted, &e)) < 0) {
			loop_close(l);
			return cli_fail(&e);
		}
		if (!json)
			printf("explanation recorded for iteration %d%s\n", iter,
			       promoted ? "; its confirmed win is no longer held back: log it as "
					  "keep and it becomes the best"
					: "");
	}
	rc = 0;
	if (check) {
		struct sb out = SB_INIT;
		json_t *j = NULL;
		struct report_ctx ctx;
		const struct contract *k = stats_cli_ctx(l, &ctx);
		int r = measure_promote_check(s, loop_dir(l), k, &out, &j, &e);
		loop_contract_put(k);
		if (r < 0 && !j) {
			sb_release(&out);
			loop_close(l);
			return cli_fail(&e);
		}
		if (json)
			cli_print_json(j);
		else {
			fputs(out.buf, stdout);
			printf("%s\n", r == 0 ? "promotion check passed"
					      : "promotion check failed: do what the MISSING lines say");
			json_decref(j);
		}
		sb_release(&out);
		rc = r == 0 ? 0 : 1;
	}
	loop_close(l);
	return rc;
}
