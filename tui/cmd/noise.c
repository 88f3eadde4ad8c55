/* noise — `optloop noise [--runs K] [--paired] [--cmd CMD] [--json]`:
 * measure the current best K times in one session (benchmark only) to seed
 * the band; --paired: each run the best against itself in one process
 * (A/A), the noise of one in-process pair. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void progress(void *ctx, const char *line)
{
	fprintf(ctx, "%s\n", line);
	fflush(ctx);
}

struct noise_args {
	struct loop_session_opts o;
	long runs;
	bool json;
};

static int noise_run(struct cmd_ctx *x)
{
	const struct noise_args *a = x->args;
	struct loop_job_opts jo = {.kind = LOOP_JOB_NOISE, .session = a->o};
	struct loop_job_result res;
	const struct loop_session *r = &res.s;
	struct err e = {0};
	bool json = a->json;
	jo.session.runs = (int)a->runs;
	jo.session.ctx = json ? stderr : stdout;
	jo.stop = cli_stop_on_signals();
	if (loop_job_run(x->l, &jo, &res, &e) < 0) {
		cli_say_stopped("noise");
		return cli_fail(&e);
	}
	if (json) {
		cli_print_json(json_incref(r->json));
	} else {
		size_t i;
		json_t *s;
		printf("best (iteration %d) measured %d times in session %d\n",
		       (int)json_integer_value(json_object_get(r->json, "best_iter")), r->nruns,
		       r->session);
		json_array_foreach(json_object_get(r->json, "shapes"), i, s)
		{
			printf("  %-40s median %.4f ms, spread %.2f%%%s\n",
			       json_string_value(json_object_get(s, "shape")),
			       json_real_value(json_object_get(s, "median_ms")),
			       100 * json_real_value(json_object_get(s, "noise")),
			       json_is_true(json_object_get(s, "unstable")) ? " UNSTABLE" : "");
			json_t *pn = json_object_get(s, "pair_noise"), *pm = json_object_get(s, "pair_median");
			if (json_is_true(json_object_get(r->json, "paired")) && json_is_number(pm)) {
				printf("  %-40s A/A: median ratio %+.2f%%, ", "",
				       100 * json_number_value(pm));
				if (json_is_number(pn))
					printf("spread of one pair %.2f%%\n", 100 * json_number_value(pn));
				else
					printf("spread of one pair unknown (fewer than two pairs)\n");
			}
		}
	}
	loop_job_result_release(&res);
	return 0;
}

static const struct cli_opt noise_opts[] = {
	CLI_INT("--runs", offsetof(struct noise_args, runs), "K", 2, 100,
		"how many runs of the best (default 5)"),
	CLI_FLAG("--paired", offsetof(struct noise_args, o.paired),
		 "A/A: each run times the best against itself in one process (the command "
		 "gets --base <the best's commit>, or it at {best}); their ratios are the "
		 "noise a paired confirm decides by"),
	CLI_TEXT("--cmd", offsetof(struct noise_args, o.command), "CMD",
		 "the measuring command (default: the contract's validation command with "
		 "--no-gate)"),
	CLI_FLAG("--json", offsetof(struct noise_args, json), "print the per-shape spread as JSON"),
	CLI_END,
};

const struct command cmd_noise = {
	.name = "noise",
	.summary = "measure the current best K times in one session to seed the noise band",
	.open = OPEN_WRITE,
	.opts = noise_opts,
	.args_size = sizeof(struct noise_args),
	.defaults = &(const struct noise_args){.o = {.runs = 5, .progress = progress}, .runs = 5},
	.examples = (const char *const[]){"noise", "noise --runs 8",
					  "noise --paired --cmd 'python3 optloop_ab.py --op "
					  "chunk_linear_attn --no-gate'",
					  NULL},
	.more = "The best's commit is put in the work tree for the runs and the kernel\n"
		"comes back afterwards; the spread seeds the noise band every verdict uses.\n"
		"With --paired each run is an A/A pair (assets/bench/optloop_ab.py): the\n"
		"spread of their ratios is the noise of one pair of confirm --paired.",
	.run = noise_run,
};
