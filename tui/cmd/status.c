/* status — `optloop status [--json] [--costs]`: where the loop stands. */
#include "tui/cli/alloc_cli.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/stats_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* vs baseline as time saved, the OPT_LOG convention */
static void print_workspaces(const struct loop_summary *v, size_t n, bool json)
{
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < n; i++) {
			const struct loop_summary *s = &v[i];
			json_t *o = json_object();
			json_object_set_new(o, "op", json_string(s->op));
			if (s->error) {
				json_object_set_new(o, "error", json_string(s->error));
			} else {
				json_object_set_new(o, "state", json_string(loop_state_name(s->state)));
				json_object_set_new(o, "iteration", json_integer(s->iteration));
				json_object_set_new(
					o, "best",
					s->has_best ? json_pack("{s:i,s:o,s:b}", "iter", s->best_iter,
								"bench_ms", loop_cli_real(s->best_ms),
								"unconfirmed", s->best_unconfirmed)
						    : json_null());
				json_object_set_new(o, "baseline_ms", loop_cli_real(s->base_ms));
				json_object_set_new(o, "vs_baseline",
						    loop_cli_real(optlog_vs_best(s->base_ms, s->best_ms)));
			}
			json_array_append_new(a, o);
		}
		json_t *j = json_object();
		json_object_set_new(j, "workspaces", a);
		json_object_set_new(j, "next", json_string("pick one with --op OP"));
		cli_print_json(j);
		return;
	}
	printf("%zu workspaces in this repository:\n", n);
	printf("  %-24s %-14s %5s  %-16s %s\n", "op", "state", "iter", "best (ms)", "vs baseline");
	for (size_t i = 0; i < n; i++) {
		const struct loop_summary *s = &v[i];
		if (s->error) {
			printf("  %-24s cannot be read: %s\n", s->op, s->error);
			continue;
		}
		struct sb best = SB_INIT, vs = SB_INIT;
		if (s->has_best) {
			optlog_fmt_bench(s->best_ms, &best);
			sb_addf(&best, " (iter %d%s)", s->best_iter, s->best_unconfirmed ? "?" : "");
			optlog_fmt_vs_best(optlog_vs_best(s->base_ms, s->best_ms), &vs);
		} else {
			sb_adds(&best, "-");
			sb_adds(&vs, "-");
		}
		printf("  %-24s %-14s %5d  %-16s %s\n", s->op, loop_state_name(s->state),
		       s->iteration, best.buf, vs.buf);
		sb_release(&best);
		sb_release(&vs);
	}
	printf("next: pick one with --op OP (optloop --op %s status)\n", v[0].op);
}

struct status_args {
	bool json, costs;
};

/* several workspaces and none picked: where each stands, nothing opened */
static int status_before(struct cmd_ctx *x)
{
	const struct status_args *a = x->args;
	struct loop_summary *v;
	struct err e = {0};
	size_t n;
	if (x->cli->op)
		return CMD_GO;
	/* (counted first: one workspace is opened once, by the table) */
	if (loop_workspaces(NULL, false, &v, &n, &e) == 0) {
		loop_summaries_release(v, n);
		if (n > 1 && loop_workspaces(NULL, true, &v, &n, &e) == 0) {
			print_workspaces(v, n, a->json);
			loop_summaries_release(v, n);
			return 0;
		}
	}
	return CMD_GO;
}

static int status_run(struct cmd_ctx *x)
{
	const struct status_args *a = x->args;
	struct loop *l = x->l;
	struct loop_status st;
	struct err e = {0};
	bool json = a->json, costs = a->costs;
	if (loop_status(l, &st, &e) < 0)
		return cli_fail(&e);
	/* The verdict of the iteration the due step belongs to (MEASURED,
	 * LOGGED); a committed one's verdict is in its row, not here. */
	int last = st.last_run;
	/* the noise band: the figure and words the workbench's best pane shows */
	struct loop_noise nz = {0};
	struct sb nzw = SB_INIT;
	sb_init(&nzw);
	if (!st.has_best || loop_noise_band(l, &nz, NULL) < 0)
		nz.have = false;
	loop_noise_words(&nz, &nzw);
	/* what deciding has cost: this iteration and the whole session */
	struct loop_cost cost = {0};
	if (loop_cost(l, json && costs ? LOOP_COST_ALL : st.iteration, &cost, NULL) < 0)
		memset(&cost, 0, sizeof(cost));
	const struct loop_cost_row *now = loop_cost_of(&cost, st.iteration);
	if (json) {
		json_t *j = loop_cli_status_json(&st);
		json_object_set_new(
			j, "noise",
			nz.have ? json_pack("{s:s,s:o,s:o,s:o,s:o,s:b}", "text", nzw.buf, "half",
					    loop_cli_real(nz.half), "sigma", loop_cli_real(nz.sigma),
					    "lo_ms", loop_cli_real(nz.lo_ms), "hi_ms",
					    loop_cli_real(nz.hi_ms), "assumed", nz.assumed)
				: json_null());
		json_object_set_new(j, "noise_runs", json_integer(nz.have ? nz.runs : 0));
		json_t *cj = json_pack("{s:o,s:o}", "iteration", loop_cost_json(now), "session",
				       loop_cost_json(&cost.total));
		if (costs) {
			json_t *its = json_array();
			for (size_t i = 0; i < cost.n; i++) {
				json_t *ci = loop_cost_json(&cost.v[i]);
				json_object_set_new(ci, "iter", json_integer(cost.v[i].iter));
				json_array_append_new(its, ci);
			}
			json_object_set_new(cj, "iterations", its);
		}
		json_object_set_new(j, "cost", cj);
		stats_cli_add_verdict(l, last, j);
		alloc_cli_add(l, j);
		cli_print_json(j);
	} else {
		printf("op:        %s\n", st.op);
		printf("workspace: %s\n", st.workspace);
		printf("state:     %s (iteration %d)", loop_state_name(st.state), st.iteration);
		if (st.readonly)
			printf(" [read-only: %s]", st.readonly_why ? st.readonly_why : "opened so");
		printf("\n");
		if (st.has_best)
			printf("best:      %.4g ms (iteration %d%s)\n", st.best_ms, st.best_iter,
			       st.best_unconfirmed ? ", kept unconfirmed" : "");
		else
			printf("best:      none yet\n");
		if (nz.have)
			printf("noise:     %s around the best (2 sigma of its run-to-run spread)\n",
			       nzw.buf);
		printf("stall:     %d/%d iterations without a win\n", st.stall, st.stall_limit);
		struct sb cw = SB_INIT;
		sb_init(&cw);
		loop_cost_words(now, &cw);
		sb_addf(&cw, " this iteration; session ");
		loop_cost_words(&cost.total, &cw);
		printf("cost:      %s\n", cw.buf);
		sb_release(&cw);
		/* file names (an --include'd one too): spelled out, never acted on */
		struct sb v = SB_INIT;
		printf("kernel:   ");
		for (size_t i = 0; i < st.nkernel; i++)
			printf(" %s", cli_vis(st.kernel[i], &v));
		printf("\nfrozen:   ");
		for (size_t i = 0; i < st.nfrozen; i++)
			printf(" %s", cli_vis(st.frozen[i], &v));
		printf("\n");
		sb_release(&v);
		loop_cli_print_commands(&st, stdout);
		alloc_cli_print(l, stdout);
		if (st.missing)
			printf("contract:  incomplete\n%s\n", st.missing);
		if (st.problems)
			printf("problems:\n%s", st.problems);
		if (st.attempt)
			printf("attempt:   %s\n", st.attempt);
		stats_cli_print_verdict(l, last, stdout);
		printf("next:      %s\n", st.next);
	}
	sb_release(&nzw);
	loop_cost_release(&cost);
	loop_status_release(&st);
	return 0;
}

static const struct cli_opt status_opts[] = {
	CLI_FLAG("--json", offsetof(struct status_args, json),
		 "print the status as JSON (state, due step, best, stall, paths)"),
	CLI_FLAG("--costs", offsetof(struct status_args, costs),
		 "with --json: each iteration's cost too (cost.iterations; a long history "
		 "makes it long)"),
	CLI_END,
};

/* status repairs what reconciliation can when it may write */
const struct command cmd_status = {
	.name = "status",
	.summary = "where the loop stands and the next required step",
	.open = OPEN_TRY,
	.opts = status_opts,
	.args_size = sizeof(struct status_args),
	.examples = (const char *const[]){"status", "status --json | jq .next",
					  "status --json --costs | jq .cost.iterations", NULL},
	.more = "Opened for writing when no other optloop writes, so the repairs\n"
		"start-up reconciliation can make on its own are made.",
	.before = status_before,
	.run = status_run,
};
