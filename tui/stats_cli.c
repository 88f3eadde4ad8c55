/* stats_cli — verdict fields and report context for the subcommands. */
#include "tui/stats_cli.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/measure.h"
#include "core/report.h"
#include "core/sb.h"
#include "core/stats.h"

#include <stdlib.h>
#include <string.h>

void stats_cli_add_verdict(struct loop *l, int run_id, json_t *j)
{
	char *v = NULL;
	unsigned flags = 0;
	json_t *detail = NULL;
	if (run_id && measure_verdict_get(loop_store(l), run_id, &v, &flags, &detail, NULL) == 0) {
		json_object_set_new(j, "verdict", json_string(v));
		json_object_set_new(j, "flags", stats_flags_json(flags));
		json_object_set_new(j, "verdict_detail", detail ? detail : json_null());
	} else {
		json_object_set_new(j, "verdict", json_null());
		json_object_set_new(j, "flags", json_array());
		json_object_set_new(j, "verdict_detail", json_null());
	}
	free(v);
}



void stats_cli_print_verdict(struct loop *l, int run_id, FILE *out)
{
	char *v = NULL;
	unsigned flags = 0;
	json_t *d = NULL;
	if (!run_id || measure_verdict_get(loop_store(l), run_id, &v, &flags, &d, NULL) < 0)
		return;
	const char *why = json_string_value(json_object_get(d, "why"));
	fprintf(out, "verdict: %s%s%s%s\n", v, why ? " (" : "", why ? why : "", why ? ")" : "");
	if (flags) {
		struct sb f = SB_INIT;
		stats_flags_text(flags, &f);
		fprintf(out, "flags:   %s\n", f.buf);
		sb_release(&f);
	}
	json_decref(d);
	free(v);
}

const struct contract *stats_cli_ctx(struct loop *l, struct report_ctx *ctx)
{
	const struct contract *c = loop_contract_get(l);
	memset(ctx, 0, sizeof(*ctx));
	ctx->op = c->v[CF_OP];
	ctx->validation = c->v[CF_VALIDATION];
	ctx->benchmark = c->v[CF_BENCHMARK];
	ctx->target = c->v[CF_TARGET];
	ctx->threshold = c->threshold;
	ctx->workspace_dir = loop_dir(l);
	return c;
}
