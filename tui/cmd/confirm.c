/* confirm — `optloop confirm [--baseline] [--max-pairs N] [--paired | --no-paired] [--cmd CMD] [--json]`:
 * best and candidate measured interleaved in one session (with --baseline:
 * the best against the baseline commit); exit 0 on a win beyond noise, 1
 * when the confirm shows none. */
#include "tui/cli/util.h"
#include "tui/cli/stats_cli.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void progress(void *ctx, const char *line)
{
	fprintf(ctx, "%s\n", line);
	fflush(ctx);
}

static void print_speedup(double x)
{
	if (isfinite(x))
		printf("%.3fx", x);
	else
		printf("\xe2\x80\x94");
}

/* The all-shapes geomean beside the target-shape one (baseline: of the best
 * over the baseline). */
static void print_geomeans(const struct loop_session *r, bool baseline)
{
	/* a speedup (best/candidate time), beside the verdict's time saved */
	printf("geomean: ");
	print_speedup(r->speedup);
	printf(" speedup%s over all %zu shape%s", baseline ? " of the best against the baseline" : "",
	       r->ncommon, r->ncommon == 1 ? "" : "s");
	if (r->ntargets == 0) {
		printf(" (the contract's Target names no shapes: every shape counts)\n");
		return;
	}
	printf("; ");
	print_speedup(r->target_speedup);
	printf(" on the target shapes (%zu named, %zu measured: %s)\n", r->ntargets,
	       r->target_ncommon, r->target_verdict);
	for (size_t i = 0; i < r->nmissing; i++)
		printf("target:  %s was not measured: promote --check fails until the benchmark "
		       "covers it\n",
		       r->missing[i]);
}

struct confirm_args {
	struct loop_session_opts o;
	long pairs;
	bool json;
};

static int confirm_run(struct cmd_ctx *x)
{
	const struct confirm_args *a = x->args;
	struct loop_job_opts jo = {.kind = LOOP_JOB_CONFIRM, .session = a->o};
	struct loop_session_opts *o = &jo.session;
	struct loop_job_result res;
	const struct loop_session *r = &res.s;
	struct err e = {0};
	bool json = a->json;
	int rc;
	o->max_pairs = (size_t)a->pairs;
	o->ctx = json ? stderr : stdout;
	jo.stop = cli_stop_on_signals();
	if (loop_job_run(x->l, &jo, &res, &e) < 0)
		return cli_fail(&e);
	if (r->cancelled) {
		cli_say_stopped("confirm");
		if (json) {
			char *why = cli_stop_cause();
			json_t *j = json_deep_copy(r->json);
			json_object_set_new(j, "stopped_by", why ? json_string(why) : json_null());
			free(why);
			cli_print_json(j);
		}
		else
			printf("confirm stopped after %d run%s: no verdict, not promoted; the candidate "
			       "is back in the tree and the stopped run is recorded as incomplete\n",
			       r->nruns, r->nruns == 1 ? "" : "s");
		loop_job_result_release(&res);
		return 4;
	}
	if (json) {
		cli_print_json(json_incref(r->json));
	} else {
		printf("confirm: %s after %zu pair%s (%d runs, %.1f s) in session %d: %s\n",
		       r->verdict, r->pairs, r->pairs == 1 ? "" : "s", r->nruns, r->gpu_s, r->session,
		       r->why ? r->why : "");
		if (r->flags_text)
			printf("flags:   %s\n", r->flags_text);
		stats_cli_print_implausible(r->json, stdout);
		print_geomeans(r, o->baseline);
		if (r->worst)
			printf("worst:   %s (%.3fx)\n", r->worst, r->worst_speedup);
		if (r->promoted && o->baseline)
			printf("against the baseline: a win beyond noise; promote --check reads the "
			       "Target's speedup from this session\n");
		else if (r->promoted)
			printf("promoted: log this iteration as keep and it becomes the best\n");
		else if (r->held)
			printf("held back: the win is beyond noise but implausible; find out why, then "
			       "optloop promote --explain TEXT (a silently skipped path looks like "
			       "this too)\n");
		else if (r->busy_gpu)
			printf("not promoted: the GPU was busy during the session; confirm again on an "
			       "idle GPU\n");
		else if (o->baseline)
			printf("against the baseline: no win beyond the threshold and the noise band; "
			       "promote --check reads the Target's speedup from this session\n");
		else
			printf("not promoted: no win beyond the threshold and the noise band (log it as "
			       "revert or drop, or keep it with --unconfirmed \"why\")\n");
	}
	rc = r->promoted ? 0 : 1;
	loop_job_result_release(&res);
	return rc;
}

static const struct cli_opt confirm_opts[] = {
	CLI_FLAG("--baseline", offsetof(struct confirm_args, o.baseline),
		 "the best against the baseline commit: the promotion verdict"),
	CLI_INT("--max-pairs", offsetof(struct confirm_args, pairs),
		"N", CONFIRM_PAIRS, CONFIRM_MAX_LOOKS,
		"stop after N best/candidate pairs at the most (default 8)"),
	CLI_FLAG("--paired", offsetof(struct confirm_args, o.paired),
		 "one run is a pair: the command gets --base <the best's commit> and the "
		 "harness measures that ref beside the work tree (FLA's verify, the demo's); "
		 "{best} in the command puts the commit there instead"),
	CLI_FLAG("--no-paired", offsetof(struct confirm_args, o.unpaired),
		 "measure best and candidate in turns, even where confirm would pair by "
		 "itself (the contract's benchmark command passes --base, or an earlier "
		 "paired confirm of this command reached a verdict)"),
	CLI_TEXT("--cmd", offsetof(struct confirm_args, o.command), "CMD",
		 "the measuring command (default: the contract's validation command with "
		 "--no-gate)"),
	CLI_FLAG("--json", offsetof(struct confirm_args, json), "print the comparison as JSON"),
	CLI_END,
};

const struct command cmd_confirm = {
	.name = "confirm",
	.summary = "measure best and candidate interleaved in one session (--baseline: the best "
		   "against the baseline)",
	.synopsis = "confirm [--baseline] [--max-pairs N] [--paired | --no-paired] [--cmd CMD] [--json]",
	.open = OPEN_WRITE,
	.opts = confirm_opts,
	.args_size = sizeof(struct confirm_args),
	.defaults = &(const struct confirm_args){.o = {.progress = progress}},
	.examples = (const char *const[]){"confirm", "confirm --baseline", "confirm --paired", NULL},
	.more = "Runs best and candidate interleaved in one session, one pair at a time,\n"
		"until a sequential ratio test decides (a win, or no win of the threshold)\n"
		"or --max-pairs is reached; noise learned from earlier sessions counts.\n"
		"Ctrl-C stops the run going, puts the candidate back and ends without a\n"
		"verdict.  exit: 0 promoted, 1 not promoted, 4 stopped or a run broke.",
	.run = confirm_run,
};
