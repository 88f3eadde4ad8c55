/* dispatch — `optloop dispatch add|list`: bucket rows of dispatch.md,
 * kept in the database; a row without evidence from the log is refused. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
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

struct dispatch_add_args {
	struct dispatch_row r;
	const char *base, *cand;
	bool json;
};

/* the numbers and the row's words, before anything is opened */
static int dispatch_add_check(struct cmd_ctx *x)
{
	struct dispatch_add_args *a = x->args;
	if (a->base && ms_arg(a->base, &a->r.base_ms) < 0)
		return cli_usage_error("dispatch", "--base-ms needs a positive number, got '%s'",
				       a->base);
	if (a->cand && ms_arg(a->cand, &a->r.cand_ms) < 0)
		return cli_usage_error("dispatch", "--cand-ms needs a positive number, got '%s'",
				       a->cand);
	if (!a->r.bucket || !a->r.entry)
		return cli_usage_error("dispatch", "add needs --bucket TEXT and --entry NAME");
	return CMD_GO;
}

static int dispatch_add_cmd(struct cmd_ctx *x)
{
	struct dispatch_add_args *a = x->args;
	struct dispatch_row r = a->r;
	struct loop *l = x->l;
	struct err e = {0};
	bool json = a->json;

	if (loop_dispatch_add(l, &r, &e) < 0)
		return e.code == ERR_USAGE ? cli_usage_error("dispatch", "%s", e.msg) : cli_fail(&e);
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
	return 0;
}

struct dispatch_list_args {
	bool json;
};

static int dispatch_list_cmd(struct cmd_ctx *x)
{
	const struct dispatch_list_args *args = x->args;
	struct loop *l = x->l;
	struct dispatch_doc d;
	struct err e = {0};
	bool json = args->json;

	if (loop_dispatch_rows(l, &d, &e) < 0)
		return cli_fail(&e);
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
	return 0;
}

static const struct cli_opt dispatch_add_opts[] = {
	CLI_NEED("--bucket", offsetof(struct dispatch_add_args, r.bucket), "TEXT",
		 "the shapes the row covers: conditions ('T <= 1024', 'D = 64 and T > 512') "
		 "or shapes ('B4_T2048_H16_D128', 'T=2048 H=16')"),
	CLI_NEED("--entry", offsetof(struct dispatch_add_args, r.entry), "NAME",
		 "the kernel entry those shapes dispatch to"),
	CLI_NEED("--evidence", offsetof(struct dispatch_add_args, r.evidence), "ITERS",
		 "the logged iterations that back it (e.g. '3,5')"),
	CLI_STR("--base-ms", offsetof(struct dispatch_add_args, base), "X",
		"the bucket's time before, in ms (default: the geomean of the bucket's shapes "
		"in the baseline's run)"),
	CLI_STR("--cand-ms", offsetof(struct dispatch_add_args, cand), "Y",
		"the bucket's time with the entry, in ms (default: the same in the fastest "
		"cited keep)"),
	CLI_STR("--why", offsetof(struct dispatch_add_args, r.why), "TEXT",
		"why this entry wins for the bucket"),
	CLI_FLAG("--json", offsetof(struct dispatch_add_args, json), "print the new row as JSON"),
	CLI_END,
};

static const struct command dispatch_add_verb = {
	.name = "add",
	.summary = "add a bucket row to dispatch.md, backed by logged iterations",
	.open = OPEN_WRITE,
	.opts = dispatch_add_opts,
	.args_size = sizeof(struct dispatch_add_args),
	.defaults = &(const struct dispatch_add_args){
		.r = {.base_ms = NAN, .cand_ms = NAN, .speedup = NAN}},
	.examples = (const char *const[]){
		"dispatch add --bucket 'T <= 1024' --entry fwd_small --evidence 3,5", NULL},
	.more = "Every cited iteration needs a logged bench number from a gate that did\n"
		"not fail, in the baseline's environment.  --base-ms and --cand-ms\n"
		"default to the bucket's own times: the equal-weight geomean of the\n"
		"shapes the bucket takes in, in the baseline's run and in the fastest\n"
		"cited row that may be a best (a keep whose gate passed), never a\n"
		"dropped or reverted run's; a bucket that takes in none of them, or\n"
		"other shapes in the two runs, is refused.",
	.before = dispatch_add_check,
	.run = dispatch_add_cmd,
};

static const struct cli_opt dispatch_list_opts[] = {
	CLI_FLAG("--json", offsetof(struct dispatch_list_args, json), "print the rows as JSON"),
	CLI_END,
};

static const struct command dispatch_list_verb = {
	.name = "list",
	.summary = "the rows of dispatch.md",
	.open = OPEN_READ,
	.opts = dispatch_list_opts,
	.args_size = sizeof(struct dispatch_list_args),
	.examples = (const char *const[]){"dispatch list", NULL},
	.run = dispatch_list_cmd,
};

const struct command cmd_dispatch = {
	.name = "dispatch",
	.summary = "dispatch.md bucket rows, each backed by logged iterations",
	.verbs = (const struct command *const[]){&dispatch_add_verb, &dispatch_list_verb, NULL},
	.pos_help = "  add    add a bucket row to dispatch.md, backed by logged iterations\n"
		    "  list   the rows of dispatch.md",
	.examples = (const char *const[]){"dispatch list", "dispatch add --help", NULL},
	.more = "optloop dispatch VERB --help lists a verb's options.",
};
