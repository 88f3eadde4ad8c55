/*
 * cmd_import — `optloop import FILE [--json] [--strict]`: read any
 * OPT_LOG.md (hand-written ones too) and show what optloop understood: the
 * header lines, every row, and each thing it could not read with its line
 * number.
 *
 * Exit status: 0 when a summary table was read, problems or not (they are
 * listed); 1 when the file has no summary table or cannot be read, and with
 * --strict also when any problem was found; 2 usage.
 */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/optlog.h"
#include "core/sb.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

static json_t *json_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *json_num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Print one JSON value compactly; the document is streamed a row at a time
 * so a 100,000-row log never holds a whole JSON tree in memory. */
static void put_json(json_t *v)
{
	char *s = json_dumps(v, JSON_FLAGS | JSON_ENCODE_ANY);
	if (s) {
		fputs(s, stdout);
		free(s);
	}
	json_decref(v);
}

static void print_json(const char *file, const struct optlog_doc *d,
		       const struct optlog_problems *probs)
{
	struct sb cell = SB_INIT;

	printf("{\"file\": ");
	put_json(json_string(file));
	printf(", \"op\": ");
	put_json(json_str_or_null(d->op));
	printf(", \"env\": ");
	put_json(json_str_or_null(d->env));
	printf(", \"baseline\": ");
	put_json(json_str_or_null(d->baseline));
	printf(", \"target\": ");
	put_json(json_str_or_null(d->target));
	printf(", \"table_line\": %d,\n\"rows\": [", d->table_lineno);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct log_row *r = &d->rows[i];
		json_t *o = json_object();
		sb_reset(&cell);
		optlog_fmt_gate(r->gate_v, r->scope, &cell);
		json_object_set_new(o, "iter", json_integer(r->iter));
		json_object_set_new(o, "direction", json_str_or_null(r->direction));
		json_object_set_new(o, "gate", json_str_or_null(r->gate));
		json_object_set_new(o, "gate_verdict", json_string(gate_verdict_name(r->gate_v)));
		json_object_set_new(o, "gate_scope",
				    json_string(r->scope == SCOPE_SUBSET ? "subset"
						: r->scope == SCOPE_FULL ? "full"
									  : "unknown"));
		json_object_set_new(o, "bench_ms", json_num_or_null(r->bench_ms));
		json_object_set_new(o, "vs_best", json_num_or_null(r->vs_best));
		json_object_set_new(o, "status", r->status == RS_NONE
							 ? json_null()
							 : json_string(row_status_name(r->status)));
		json_object_set_new(o, "axis", json_str_or_null(r->axis));
		json_object_set_new(o, "commit", json_str_or_null(r->commit));
		json_object_set_new(o, "line", json_integer(r->lineno));
		fputs(i ? ",\n  " : "\n  ", stdout);
		put_json(o);
	}
	printf("%s],\n\"problems\": [", d->nrows ? "\n" : "");
	for (size_t i = 0; probs && i < probs->n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "line", json_integer(probs->v[i].lineno));
		json_object_set_new(o, "message", json_string(probs->v[i].msg));
		fputs(i ? ",\n  " : "\n  ", stdout);
		put_json(o);
	}
	printf("%s]}\n", probs && probs->n ? "\n" : "");
	sb_release(&cell);
}

/* Direction on one line for the terminal: line breaks shown as " / ". */
static void put_oneline(const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\n')
			fputs(" / ", stdout);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			putchar('?');
		else
			putchar(*s);
	}
}

static void print_text(const char *file, const struct optlog_doc *d,
		       const struct optlog_problems *probs)
{
	struct sb c = SB_INIT;

	printf("%s: op %s, %zu row%s, summary table at line %d\n", file, d->op ? d->op : "(none)",
	       d->nrows, d->nrows == 1 ? "" : "s", d->table_lineno);
	printf("Env: %s\nBaseline (main): %s\nTarget: %s\n\n", d->env ? d->env : "\xe2\x80\x94",
	       d->baseline ? d->baseline : "\xe2\x80\x94", d->target ? d->target : "\xe2\x80\x94");
	printf("%5s  %-12s %12s %8s  %-6s  %s\n", "iter", "gate", "bench ms", "vs best", "status",
	       "direction");
	for (size_t i = 0; i < d->nrows; i++) {
		const struct log_row *r = &d->rows[i];
		printf("%5d  ", r->iter);
		sb_reset(&c);
		if (r->gate_v == GATE_NONE && r->gate && *r->gate)
			sb_adds(&c, r->gate);
		else
			optlog_fmt_gate(r->gate_v, r->scope, &c);
		printf("%-12s ", c.buf);
		sb_reset(&c);
		optlog_fmt_bench(r->bench_ms, &c);
		printf("%*s%s ", (int)(12 - (isfinite(r->bench_ms) ? c.len : 1)), "", c.buf);
		sb_reset(&c);
		optlog_fmt_vs_best(r->vs_best, &c);
		printf("%*s%s  ", (int)(8 - (isfinite(r->vs_best) ? c.len : 1)), "", c.buf);
		printf("%-6s  ", r->status == RS_NONE ? "?" : row_status_name(r->status));
		put_oneline(r->direction);
		putchar('\n');
	}
	if (probs && probs->n) {
		printf("\n%zu problem%s (rows above are what could be read):\n", probs->n,
		       probs->n == 1 ? "" : "s");
		for (size_t i = 0; i < probs->n; i++)
			printf("%s:%d: %s\n", file, probs->v[i].lineno, probs->v[i].msg);
	}
	sb_release(&c);
}

int cmd_import(struct cli *cli, int argc, char **argv)
{
	const char *file = NULL;
	bool json = false, strict = false;
	struct sb text = SB_INIT;
	struct optlog_doc d = {0};
	struct optlog_problems probs = {0};
	struct err e = {0};
	int rc;

	(void)cli;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--strict"))
			strict = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("import", "unknown option %s", argv[i]);
		else if (file)
			return cli_usage_error("import", "one file at a time (got %s and %s)", file,
					       argv[i]);
		else
			file = argv[i];
	}
	if (!file)
		return cli_usage_error("import", "which OPT_LOG.md? give its path");

	rc = fsutil_read_file(file, &text, &e);
	if (rc < 0) {
		sb_release(&text);
		err_prefix(&e, "import: ");
		e.code = ERR_FAIL;
		return cli_fail(&e);
	}
	rc = optlog_parse(text.buf, text.len, &d, &probs, &e);
	sb_release(&text);
	if (rc < 0) {
		err_prefix(&e, "import: %s: ", file);
		optlog_doc_release(&d);
		optlog_problems_release(&probs);
		return cli_fail(&e);
	}
	if (json)
		print_json(file, &d, &probs);
	else
		print_text(file, &d, &probs);
	rc = strict && probs.n ? 1 : 0;
	optlog_doc_release(&d);
	optlog_problems_release(&probs);
	return rc;
}
