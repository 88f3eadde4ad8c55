/* stats_cli — a run's verdict as JSON fields and as text, for the subcommands. */
#include "tui/cli/stats_cli.h"
#include "core/loop.h"

void stats_cli_add_verdict(struct loop *l, int run_id, json_t *j)
{
	struct loop_run r;
	bool have = run_id && loop_run_get(l, run_id, &r, NULL) == 0;
	if (have && r.verdict) {
		json_object_set_new(j, "verdict", json_string(r.verdict));
		json_object_set_new(j, "flags", json_incref(r.flags_json));
		json_object_set_new(j, "verdict_detail", r.detail ? json_incref(r.detail) : json_null());
	} else {
		json_object_set_new(j, "verdict", json_null());
		json_object_set_new(j, "flags", json_array());
		json_object_set_new(j, "verdict_detail", json_null());
	}
	if (have)
		loop_run_release(&r);
}

void stats_cli_print_implausible(const json_t *detail, FILE *out)
{
	const json_t *a = json_object_get(detail, "implausible_why");
	size_t i;
	const json_t *v;
	json_array_foreach(a, i, v)
	{
		fprintf(out, "%s %s: %s\n", i ? "        " : "why:    ",
			json_string_value(json_object_get(v, "rule")),
			json_string_value(json_object_get(v, "detail")));
	}
}

void stats_cli_print_roofline(const json_t *detail, FILE *out)
{
	const json_t *rl = json_object_get(detail, "roofline");
	const char *line = json_string_value(json_object_get(rl, "line"));
	if (!line)
		return;
	fprintf(out, "roofline: %s\n", line);
	size_t i;
	const json_t *v;
	json_array_foreach(json_object_get(rl, "impossible_why"), i, v)
		fprintf(out, "%s %s\n", i ? "          " : "impossible:", json_string_value(v));
}

void stats_cli_print_verdict(struct loop *l, int run_id, FILE *out)
{
	struct loop_run r;
	if (!run_id || loop_run_get(l, run_id, &r, NULL) < 0)
		return;
	if (r.verdict) {
		fprintf(out, "verdict: %s%s%s%s\n", r.verdict, r.why ? " (" : "", r.why ? r.why : "",
			r.why ? ")" : "");
		if (r.flags_text)
			fprintf(out, "flags:   %s\n", r.flags_text);
		stats_cli_print_implausible(r.detail, out);
		stats_cli_print_roofline(r.detail, out);
	}
	loop_run_release(&r);
}
