/* guards_cli — shared plumbing of the guard subcommands. */
#include "tui/cli/guards_cli.h"

#include "core/model.h"

void guards_cli_print_findings(FILE *out, const struct lint_findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct lint_finding *x = &f->v[i];
		fprintf(out, "%s:%d %s [trap %s]: %s\n    %c %s\n", x->file, x->line, x->lint, x->trap,
			x->message, x->side, x->text);
	}
}

json_t *guards_cli_findings_json(const struct lint_findings *f)
{
	json_t *a = json_array();
	for (size_t i = 0; i < f->n; i++) {
		const struct lint_finding *x = &f->v[i];
		char side[2] = {x->side, 0};
		json_t *o = json_object();
		json_object_set_new(o, "lint", json_string(x->lint));
		json_object_set_new(o, "trap", json_string(x->trap));
		json_object_set_new(o, "file", json_string(x->file));
		json_object_set_new(o, "line", json_integer(x->line));
		json_object_set_new(o, "side", json_string(side));
		json_object_set_new(o, "text", json_string(x->text));
		json_object_set_new(o, "message", json_string(x->message));
		json_array_append_new(a, o);
	}
	return a;
}
