/*
 * parse — `optloop parse FILE`: read a saved verify log with a pattern
 * set and print what optloop makes of it (the same reading the loop uses).
 */
#include "tui/cli/commands.h"
#include "tui/cli/util.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_num(const char *fmt, double v)
{
	if (isnan(v))
		printf("%10s", "-");
	else
		printf(fmt, v);
}

static void print_dim(const char *name, long v)
{
	if (v >= 0)
		printf(" %s=%ld", name, v);
}

static void print_human(const struct parse_result *r, const char *set)
{
	const char *scope = parse_scope_name(r->scope);

	printf("gate:      %s", gate_verdict_name(r->gate));
	if (r->scope == SCOPE_SUBSET)
		printf(" (subset: -k %s; a signal only, never counts as full)", r->gate_k ? r->gate_k : "");
	else if (scope)
		printf(" (%s)", scope);
	printf("\n");
	if (r->gate_test)
		printf("gate test: %s\n", r->gate_test);
	if (r->runpy_json) {
		printf("run:       read from run.py --json results (no gate, no log)\n");
		goto env;
	}
	printf("run:       %s", r->killed ? "killed" : r->complete ? "complete" : "cut off");
	if (r->exit_status >= 0)
		printf(", exit status %d", r->exit_status);
	else if (!r->killed)
		printf(", exit status unknown (judged from the text alone)");
	printf("; %zu lines read with pattern set %s\n", r->lines, set);
	if (r->pytest.passed >= 0)
		printf("pytest:    %d passed, %d failed, %d errors, %d skipped, %d deselected\n",
		       r->pytest.passed, r->pytest.failed, r->pytest.errors, r->pytest.skipped,
		       r->pytest.deselected);
	else if (r->cases_passed || r->cases_failed || r->cases_skipped)
		printf("tests:     %d passed, %d failed, %d skipped (no summary line)\n",
		       r->cases_passed, r->cases_failed, r->cases_skipped);
env:
	if (r->env.raw) {
		printf("env:       %s\n", r->env.raw);
		printf("           device=%s backend=%s pytorch=%s triton=%s branch=%s sha=%s\n",
		       r->env.device ? r->env.device : "?", r->env.backend ? r->env.backend : "?",
		       r->env.pytorch ? r->env.pytorch : "?", r->env.triton ? r->env.triton : "?",
		       r->env.branch ? r->env.branch : "?", r->env.sha ? r->env.sha : "?");
	}
	if (r->nrows) {
		printf("results:   %zu row%s", r->nrows, r->nrows == 1 ? "" : "s");
		if (r->col_base || r->col_new)
			printf(" (%s%s%s)", r->col_base ? r->col_base : "",
			       r->col_base ? " -> " : "", r->col_new ? r->col_new : "");
		printf("\n");
		for (size_t i = 0; i < r->nrows; i++) {
			const struct parse_row *w = &r->rows[i];
			printf("  %-7s", w->mode ? w->mode : "-");
			if (r->has_L)
				print_dim("L", w->L);
			print_dim("B", w->B);
			print_dim("T", w->T);
			print_dim("H", w->H);
			print_dim("D", w->D);
			printf("  %-24s", w->op ? w->op : "-");
			print_num("%10.3f", w->base_ms);
			print_num("%10.3f", w->new_ms);
			if (!isnan(w->speedup))
				printf("  %.2fx", w->speedup);
			printf("\n");
		}
		if (r->rows_dropped)
			printf("  (%zu more rows not kept)\n", r->rows_dropped);
	} else {
		printf("results:   no result table\n");
	}
	if (r->exception)
		printf("exception: %s\n", r->exception);
	for (size_t i = 0; i < r->nwarnings; i++)
		printf("warning:   %s\n", r->warnings[i]);
}

/* Exit status mirrors the verdict: 0 pass/none/unverified, 1 fail,
 * 4 error or incomplete. */
static int verdict_status(enum gate_verdict g)
{
	switch (g) {
	case GATE_FAIL:
		return 1;
	case GATE_ERROR:
	case GATE_INCOMPLETE:
		return 4;
	default:
		return 0;
	}
}

struct parse_args {
	long exit_status;
	bool killed;
	const char *patterns;
	bool json;
};

/* the log and how its run ended, before anything is read */
static int parse_before(struct cmd_ctx *x)
{
	const struct parse_args *a = x->args;
	if (!x->npos)
		return cli_usage_error("parse", "which verify log? give its FILE");
	if (a->killed && a->exit_status >= 0)
		return cli_usage_error("parse",
				       "--exit-status and --killed exclude each other: a killed "
				       "run has no exit status");
	return CMD_GO;
}

static int parse_run(struct cmd_ctx *x)
{
	const struct parse_args *a = x->args;
	const char *file = x->pos[0], *set = a->patterns;
	int exit_status = a->exit_status >= 0 ? (int)a->exit_status : -1;
	bool killed = a->killed, json = a->json;
	char *set_name = NULL;
	struct parse_result r;
	struct err e = {0};
	int rc;

	/* a workspace's own pattern sets (profile/<op>-opt/patterns) come first */
	if ((rc = loop_parse_log(file, set, x->cli->op, exit_status, killed, &r, &set_name, &e)) < 0)
		return cli_fail(&e);
	if (!parse_recognised(&r)) {
		rc = cli_usage_error_at("parse", NULL,
					"no verify or benchmark output was recognised in %s (no gate, "
					"no pytest lines, no Machine line, no result table); give the "
					"log of benchmarks.ops.verify or run.py, or run.py's --json "
					"results file",
					!strcmp(file, "-") ? "standard input" : file);
		parse_result_release(&r);
		free(set_name);
		return rc;
	}
	if (json) {
		json_t *j = parse_result_json(&r);
		json_object_set_new(j, "patterns", json_string(set_name));
		cli_print_json(j);
	} else {
		print_human(&r, set_name);
	}
	rc = verdict_status(r.gate);
	parse_result_release(&r);
	free(set_name);
	return rc;
}

static const struct cli_opt parse_opts[] = {
	CLI_INT("--exit-status", offsetof(struct parse_args, exit_status), "N", 0, 255,
		"the run's exit status (128 + N: killed by signal N)"),
	CLI_FLAG("--killed", offsetof(struct parse_args, killed),
		 "the run was killed before it finished"),
	CLI_TEXT("--patterns", offsetof(struct parse_args, patterns), "NAME",
		 "the pattern set: fla (default), kernelbench, a workspace's own, or a "
		 ".pat path"),
	CLI_FLAG("--json", offsetof(struct parse_args, json), "print the result as JSON"),
	CLI_END,
};

const struct command cmd_parse = {
	.name = "parse",
	.summary = "read a saved verify log (- for stdin): gate verdict, pytest counts, env, result "
		   "table",
	.synopsis = "parse FILE [--exit-status N | --killed] [--patterns NAME] [--json]",
	.opts = parse_opts,
	.args_size = sizeof(struct parse_args),
	.defaults = &(const struct parse_args){.exit_status = -1},
	.max_pos = 1,
	.pos_help = "  FILE  a saved verify or run log; - reads standard input",
	.examples = (const char *const[]){"parse trace/iter-3.log --exit-status 0",
					  "parse - --killed < run.txt", NULL},
	.before = parse_before,
	.run = parse_run,
};
