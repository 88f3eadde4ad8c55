/* loop_cli — shared plumbing of the loop subcommands. */
#include "tui/cli/loop_cli.h"
#include "tui/cli/util.h"
#include "tui/cli/util.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/model.h"
#include "core/sb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int loop_cli_open(struct cli *cli, int flags, struct loop **l)
{
	struct err e = {0};
	if (loop_open(NULL, cli->op, flags, l, &e) < 0)
		return cli_fail(&e);
	return 0;
}

json_t *loop_cli_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_array(char *const *v, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

int loop_cli_iteration(struct loop *l, int *iter)
{
	struct loop_status st;
	struct err e = {0};

	if (loop_status(l, &st, &e) < 0)
		return cli_fail(&e);
	*iter = st.iteration;
	loop_status_release(&st);
	return 0;
}

void loop_cli_print_commands(const struct loop_status *st, FILE *out)
{
	struct sb v = SB_INIT;
	fprintf(out, "verify:    %s\n",
		st->validation ? cli_vis(st->validation, &v)
			       : "(none: optloop contract --set validation=CMD)");
	fprintf(out, "probe:     %s (%s)\n", cli_vis(st->probe, &v),
		st->probe_env ? "from $OPTLOOP_PROBE / $OPTLOOP_PROBE_APPS"
			      : "default; $OPTLOOP_PROBE sets another");
	if (st->probe_apps[0])
		fprintf(out, "           %s\n", cli_vis(st->probe_apps, &v));
	sb_release(&v);
	fprintf(out, "run by:    /bin/sh -c in the repository (noise and confirm: the verify "
		     "command + --no-gate, or --cmd; the probe before and after every run)\n");
}

json_t *loop_cli_commands_json(const struct loop_status *st)
{
	json_t *c = json_object();
	json_object_set_new(c, "validation",
			    st->validation ? json_string(st->validation) : json_null());
	json_object_set_new(c, "probe", json_string(st->probe));
	json_object_set_new(c, "probe_apps", json_string(st->probe_apps));
	json_object_set_new(c, "probe_source",
			    json_string(st->probe_env ? "environment" : "default"));
	json_object_set_new(c, "shell", json_string("/bin/sh -c"));
	return c;
}

json_t *loop_cli_status_json(const struct loop_status *st)
{
	json_t *j = json_object();
	json_object_set_new(j, "state", json_string(loop_state_name(st->state)));
	json_object_set_new(j, "iteration", json_integer(st->iteration));
	json_object_set_new(j, "next", json_string(st->next ? st->next : ""));
	/* the status the evidence supports, as the workbench's log wizard proposes it */
	json_object_set_new(j, "suggest",
			    st->suggest == RS_NONE ? json_null() : json_string(row_status_name(st->suggest)));
	json_object_set_new(j, "suggest_why", st->suggest_why ? json_string(st->suggest_why) : json_null());
	if (st->has_best) {
		json_t *b = json_object();
		json_object_set_new(b, "iter", json_integer(st->best_iter));
		json_object_set_new(b, "bench_ms", loop_cli_real(st->best_ms));
		json_object_set_new(b, "vs_best", loop_cli_real(st->best_vs_best));
		json_object_set_new(b, "unconfirmed", json_boolean(st->best_unconfirmed));
		json_object_set_new(j, "best", b);
	} else {
		json_object_set_new(j, "best", json_null());
	}
	json_object_set_new(j, "kernel", str_array(st->kernel, st->nkernel));
	json_object_set_new(j, "frozen", str_array(st->frozen, st->nfrozen));
	json_object_set_new(j, "workspace", json_string(st->workspace));
	json_object_set_new(j, "op", json_string(st->op));
	json_object_set_new(j, "repo", json_string(st->repo));
	json_object_set_new(j, "telescoped", json_boolean(st->telescoped));
	json_object_set_new(j, "readonly", json_boolean(st->readonly));
	json_object_set_new(j, "missing", st->missing ? json_string(st->missing) : json_null());
	json_object_set_new(j, "problems", st->problems ? json_string(st->problems) : json_null());
	json_object_set_new(j, "stall", json_pack("{s:i,s:i}", "count", st->stall, "limit",
						   st->stall_limit));
	json_object_set_new(j, "commands", loop_cli_commands_json(st));
	json_object_set_new(j, "attempt",
			    st->attempt_run ? json_pack("{s:i,s:s}", "run_id", st->attempt_run,
							"why", st->attempt ? st->attempt : "")
					    : json_null());
	return j;
}

json_t *loop_cli_measurement_json(const struct loop_measurement *m)
{
	json_t *j = json_object();
	json_object_set_new(j, "iteration", json_integer(m->iter));
	json_object_set_new(j, "run_id", json_integer(m->run_id));
	json_object_set_new(j, "gate", json_string(gate_verdict_name(m->gate)));
	json_object_set_new(j, "scope", json_string(m->scope == SCOPE_SUBSET ? "subset"
						    : m->scope == SCOPE_FULL ? "full"
									     : "unknown"));
	json_object_set_new(j, "bench_ms", loop_cli_real(m->bench_ms));
	json_object_set_new(j, "vs_best", loop_cli_real(m->vs_best));
	json_object_set_new(j, "exit_status", json_integer(m->exit_status));
	json_object_set_new(j, "timed_out", json_boolean(m->timed_out));
	json_object_set_new(j, "cancelled", json_boolean(m->cancelled));
	json_object_set_new(j, "no_change", json_boolean(m->no_change));
	json_object_set_new(j, "attempt", json_boolean(m->attempt));
	json_object_set_new(j, "seconds", json_real(m->seconds));
	json_object_set_new(j, "command", m->command ? json_string(m->command) : json_null());
	json_object_set_new(j, "log", m->log_path ? json_string(m->log_path) : json_null());
	json_t *res = m->result_json ? json_loads(m->result_json, 0, NULL) : NULL;
	json_object_set_new(j, "result", res ? res : json_null());
	return j;
}

