/* dispatch — `optloop dispatch add|list`: bucket rows of dispatch.md,
 * kept in the database; a row without evidence from the log is refused. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ms_arg(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v <= 0)
		return -1;
	*out = v;
	return 0;
}

static json_t *row_json(const struct dispatch_row *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "bucket", json_string(r->bucket));
	json_object_set_new(o, "entry", json_string(r->entry));
	json_object_set_new(o, "base_ms", loop_cli_real(r->base_ms));
	json_object_set_new(o, "cand_ms", loop_cli_real(r->cand_ms));
	json_object_set_new(o, "speedup", loop_cli_real(r->speedup));
	json_object_set_new(o, "why", json_string(r->why ? r->why : ""));
	json_object_set_new(o, "evidence", json_string(r->evidence ? r->evidence : ""));
	return o;
}

static int dispatch_add_cmd(struct cli *cli, int argc, char **argv)
{
	struct dispatch_row r = {.base_ms = NAN, .cand_ms = NAN, .speedup = NAN};
	struct loop *l;
	struct err e = {0};
	bool json = false;
	int rc;

	const char *base = NULL, *cand = NULL;
	const struct cli_opt opts[] = {
		CLI_PTEXT("--bucket", &r.bucket, "TEXT",
			 "the shapes the row covers: conditions ('T <= 1024', 'D = 64 and T > 512') "
			 "or shapes ('B4_T2048_H16_D128', 'T=2048 H=16')"),
		CLI_PTEXT("--entry", &r.entry, "NAME", "the kernel entry those shapes dispatch to"),
		CLI_PTEXT("--evidence", &r.evidence, "ITERS",
			 "the logged iterations that back it (e.g. '3,5')"),
		CLI_PSTR("--base-ms", &base, "X",
			"the bucket's time before, in ms (default: the geomean of the bucket's shapes "
			"in the baseline's run)"),
		CLI_PSTR("--cand-ms", &cand, "Y",
			"the bucket's time with the entry, in ms (default: the same in the fastest "
			"cited keep)"),
		CLI_PSTR("--why", &r.why, "TEXT", "why this entry wins for the bucket"),
		CLI_PFLAG("--json", &json, "print the new row as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {
		"dispatch add --bucket 'T <= 1024' --entry fwd_small --evidence 3,5",
		NULL,
	};
	struct cli_cmd c = {.name = "dispatch", .opts = opts, .examples = examples,
			    .usage = "dispatch add --bucket TEXT --entry NAME --evidence ITERS "
				     "[--base-ms X] [--cand-ms Y] [--why TEXT] [--json]",
			    .summary = "add a bucket row to dispatch.md, backed by logged iterations",
			    .more = "Every cited iteration needs a logged bench number from a gate that did\n"
				    "not fail, in the baseline's environment.  --base-ms and --cand-ms\n"
				    "default to the bucket's own times: the equal-weight geomean of the\n"
				    "shapes the bucket takes in, in the baseline's run and in the fastest\n"
				    "cited row that may be a best (a keep whose gate passed), never a\n"
				    "dropped or reverted run's; a bucket that takes in none of them, or\n"
				    "other shapes in the two runs, is refused."};
	if (!cli_parse(&c, argc - 1, argv + 1, &rc))
		return rc;
	if (base && ms_arg(base, &r.base_ms) < 0)
		return cli_usage_error("dispatch", "--base-ms needs a positive number, got '%s'", base);
	if (cand && ms_arg(cand, &r.cand_ms) < 0)
		return cli_usage_error("dispatch", "--cand-ms needs a positive number, got '%s'", cand);
	if (!r.bucket || !r.entry)
		return cli_usage_error("dispatch", "add needs --bucket TEXT and --entry NAME");
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (loop_dispatch_add(l, &r, &e) < 0) {
		loop_close(l);
		return e.code == ERR_USAGE ? cli_usage_error("dispatch", "%s", e.msg) : cli_fail(&e);
	}
	struct dispatch_doc d;
	if (loop_dispatch_rows(l, &d, &e) == 0 && d.n) {
		const struct dispatch_row *last = &d.v[d.n - 1];
		if (json)
			cli_print_json(row_json(last));
		else
			printf("dispatch row added: %s -> %s (%.2fx, iterations %s); dispatch.md "
			       "rewritten\n",
			       last->bucket, last->entry, last->speedup, last->evidence);
	}
	dispatch_doc_release(&d);
	loop_close(l);
	return 0;
}

static int dispatch_list_cmd(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct dispatch_doc d;
	struct err e = {0};
	bool json = false;
	int rc;

	const struct cli_opt opts[] = {
		CLI_PFLAG("--json", &json, "print the rows as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {"dispatch list", NULL};
	struct cli_cmd c = {.name = "dispatch", .opts = opts, .examples = examples,
			    .usage = "dispatch list [--json]", .summary = "the rows of dispatch.md"};
	if (!cli_parse(&c, argc - 1, argv + 1, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, LOOP_READONLY, &l)) != 0)
		return rc;
	if (loop_dispatch_rows(l, &d, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < d.n; i++)
			json_array_append_new(a, row_json(&d.v[i]));
		json_t *j = json_object();
		json_object_set_new(j, "rows", a);
		cli_print_json(j);
	} else if (!d.n) {
		printf("no dispatch rows yet (optloop dispatch add --bucket TEXT --entry NAME "
		       "--evidence ITERS)\n");
	} else {
		d.preamble = strdup("");
		struct sb out = SB_INIT;
		dispatch_render(&d, &out);
		/* the table only: skip the default heading and its sentence */
		const char *t = strstr(out.buf, "| Bucket");
		fputs(t ? t : out.buf, stdout);
		sb_release(&out);
	}
	dispatch_doc_release(&d);
	loop_close(l);
	return 0;
}

int cmd_dispatch(struct cli *cli, int argc, char **argv)
{
	static const char *const examples[] = {"dispatch list", "dispatch add --help", NULL};
	struct cli_cmd c = {
		.name = "dispatch",
		.examples = examples,
		.pos_help = "  add    add a bucket row to dispatch.md, backed by logged iterations\n"
			    "  list   the rows of dispatch.md",
		.more = "optloop dispatch VERB --help lists a verb's options.",
	};
	int rc;
	if (argc > 1 && !strcmp(argv[1], CLI_LIST_OPTIONS)) {
		static const char *const verbs[] = {"add", "list", "--help"};
		for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			printf("%s\n", verbs[i]);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		cli_parse(&c, argc, argv, &rc);
		/* and each verb's own */
		static char *const add[] = {"dispatch", "add", "--help"};
		static char *const list[] = {"dispatch", "list", "--help"};
		printf("\n");
		dispatch_add_cmd(cli, 3, (char **)add);
		printf("\n");
		dispatch_list_cmd(cli, 3, (char **)list);
		return rc;
	}
	if (argc < 2)
		return cli_usage_error("dispatch", "which: add or list");
	if (!strcmp(argv[1], "add"))
		return dispatch_add_cmd(cli, argc, argv);
	if (!strcmp(argv[1], "list"))
		return dispatch_list_cmd(cli, argc, argv);
	return cli_usage_error("dispatch", "unknown subcommand %s (add or list)", argv[1]);
}
