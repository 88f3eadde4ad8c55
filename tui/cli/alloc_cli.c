/*
 * alloc_cli — the Slurm allocation for status.  See alloc_cli.h.
 */
#include "tui/cli/alloc_cli.h"
#include "tui/cli/loop_cli.h"

#include "core/loop.h"
#include "core/sb.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *time_or_null(double t)
{
	return t > 0 ? json_real(t) : json_null();
}

void alloc_cli_add(struct loop *l, json_t *j)
{
	struct loop_allocation a;
	if (loop_allocation(l, &a, NULL) < 0)
		return;
	struct sb w = SB_INIT;
	loop_allocation_words(&a, &w);
	json_t *o = json_object();
	json_object_set_new(o, "runner", json_string(a.runner));
	json_object_set_new(o, "slurm", json_boolean(a.slurm));
	json_object_set_new(o, "held", json_boolean(a.held));
	json_object_set_new(o, "job", str_or_null(a.job));
	json_object_set_new(o, "state", str_or_null(a.state));
	json_object_set_new(o, "reason", str_or_null(a.reason));
	json_object_set_new(o, "node", str_or_null(a.node));
	json_object_set_new(o, "requested", time_or_null(a.requested));
	json_object_set_new(o, "granted", time_or_null(a.granted));
	json_object_set_new(o, "last_used", time_or_null(a.last_used));
	json_object_set_new(o, "idle_s", json_real(a.idle_s));
	json_object_set_new(o, "last_job", str_or_null(a.last_job));
	json_object_set_new(o, "last_why", str_or_null(a.last_why));
	json_object_set_new(o, "text", json_string(sb_str(&w)));
	json_object_set_new(j, "allocation", o);
	sb_release(&w);
	loop_allocation_release(&a);
}

void alloc_cli_print(struct loop *l, FILE *out)
{
	struct loop_allocation a;
	if (loop_allocation(l, &a, NULL) < 0)
		return;
	if (a.slurm || a.held) {
		struct sb w = SB_INIT;
		loop_allocation_words(&a, &w);
		fprintf(out, "runner:    %s\n", a.runner);
		fprintf(out, "slurm:     %s\n", sb_str(&w));
		sb_release(&w);
	}
	loop_allocation_release(&a);
}
