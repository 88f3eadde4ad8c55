/* mcp_tools — the MCP tools, their schemas from the command table, and
 * their argv.  See mcp_tools.h. */
#include "tui/cli/mcp_tools.h"
#include "tui/cli/commands.h"
#include "core/sb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct mcp_pos report_pos[] = {
	{.name = "report", .type = "string", .choices = "final|header|pr|nogo", .required = true,
	 .help = "which report: final (the final claim), header (a kept candidate's header; "
		 "needs iter), pr (a pull-request body) or nogo (the no-go record)"},
	{.name = "iter", .type = "integer", .help = "the kept iteration, for report header"},
	{.name = NULL},
};

static const struct mcp_tool tools[] = {
	{.name = "status", .command = "status", .read_only = true, .idempotent = true},
	{.name = "contract", .command = "contract"},
	{.name = "verify", .command = "verify", .drop = (const char *const[]){"--quiet", NULL},
	 .long_work = true},
	{.name = "log", .command = "log"},
	{.name = "commit", .command = "commit"},
	{.name = "confirm", .command = "confirm", .long_work = true},
	{.name = "noise", .command = "noise", .long_work = true},
	{.name = "promote_check", .command = "promote", .fixed = "--check",
	 .summary = "check the promotion bar: full gate, confirm against the baseline, Target, "
		    "lints, evidence (an error result lists what is missing)",
	 .take = (const char *const[]){NULL}, .read_only = true, .idempotent = true},
	{.name = "promote_explain", .command = "promote", .need = "--explain",
	 .summary = "record why a confirmed win is what it is (the promotion bar asks for it)",
	 .take = (const char *const[]){"--explain", "--iter", NULL}},
	{.name = "promote_attach", .command = "promote", .need = "--attach",
	 .summary = "attach a profiler or roofline reading of the candidate (a file under the "
		    "workspace, written after its verify)",
	 .take = (const char *const[]){"--attach", "--iter", NULL}},
	{.name = "report", .command = "report", .pos = report_pos},
	{.name = "reassess", .command = "reassess"},
	{.name = "stop", .command = "stop", .destructive = true},
	{.name = "dependents", .command = "dependents", .long_work = true},
	{.name = "export", .command = "export", .read_only = true, .idempotent = true},
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

const struct mcp_tool *mcp_tool_find(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			return &tools[i];
	return NULL;
}

bool mcp_tool_json(const struct mcp_tool *t)
{
	return command_option(cli_find_command(t->command), "--json") != NULL;
}

static bool in_list(const char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* Whether the tool takes option o (--json is given by the server). */
static bool takes(const struct mcp_tool *t, const struct cli_opt *o)
{
	if (!strcmp(o->name, "--json") || (t->fixed && !strcmp(o->name, t->fixed)))
		return false;
	if (t->take)
		return in_list(t->take, o->name);
	return !in_list(t->drop, o->name);
}

/* "--gate-k" -> "gate_k" into buf */
static const char *prop_name(const char *opt, char *buf, size_t n)
{
	size_t i = 0;
	for (const char *p = opt + 2; *p && i + 1 < n; p++)
		buf[i++] = *p == '-' ? '_' : *p;
	buf[i] = 0;
	return buf;
}

static json_t *choices_json(const char *choices)
{
	json_t *a = json_array();
	for (const char *p = choices; *p;) {
		size_t n = strcspn(p, "|");
		json_array_append_new(a, json_stringn(p, n));
		p += n + (p[n] == '|');
	}
	return a;
}

static json_t *opt_schema(const struct cli_opt *o)
{
	json_t *s = json_object();
	switch (o->kind) {
	case CO_FLAG:
		json_object_set_new(s, "type", json_string("boolean"));
		break;
	case CO_STR:
		json_object_set_new(s, "type", json_string("string"));
		if (o->nonempty)
			json_object_set_new(s, "minLength", json_integer(1));
		if (o->choices)
			json_object_set_new(s, "enum", choices_json(o->choices));
		break;
	case CO_LIST:
		json_object_set_new(s, "type", json_string("array"));
		json_object_set_new(s, "items", json_pack("{s:s}", "type", "string"));
		break;
	case CO_INT:
		json_object_set_new(s, "type", json_string("integer"));
		json_object_set_new(s, "minimum", json_integer((json_int_t)o->lo));
		json_object_set_new(s, "maximum", json_integer((json_int_t)o->hi));
		break;
	case CO_NUM:
		json_object_set_new(s, "type", json_string("number"));
		json_object_set_new(s, "minimum", json_real(o->lo));
		json_object_set_new(s, "maximum", json_real(o->hi));
		break;
	}
	json_object_set_new(s, "description", json_string(o->help));
	return s;
}

static json_t *input_schema(const struct mcp_tool *t, const struct command *c)
{
	json_t *props = json_object(), *req = json_array();
	char name[64];
	for (const struct mcp_pos *p = t->pos; p && p->name; p++) {
		json_t *s = json_pack("{s:s, s:s}", "type", p->type, "description", p->help);
		if (p->choices)
			json_object_set_new(s, "enum", choices_json(p->choices));
		json_object_set_new(props, p->name, s);
		if (p->required)
			json_array_append_new(req, json_string(p->name));
	}
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		if (!takes(t, o))
			continue;
		prop_name(o->name, name, sizeof(name));
		json_object_set_new(props, name, opt_schema(o));
		if (o->required || (t->need && !strcmp(t->need, o->name)))
			json_array_append_new(req, json_string(name));
	}
	json_t *s = json_pack("{s:s, s:o, s:b}", "type", "object", "properties", props,
			      "additionalProperties", 0);
	if (json_array_size(req))
		json_object_set_new(s, "required", req);
	else
		json_decref(req);
	return s;
}

json_t *mcp_tools_json(void)
{
	json_t *a = json_array();
	for (size_t i = 0; i < NTOOLS; i++) {
		const struct mcp_tool *t = &tools[i];
		const struct command *c = cli_find_command(t->command);
		json_t *ann = json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", t->read_only,
					"destructiveHint", t->destructive, "idempotentHint",
					t->idempotent, "openWorldHint", 0);
		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o}", "name", t->name,
						   "description", t->summary ? t->summary : c->summary,
						   "inputSchema", input_schema(t, c), "annotations",
						   ann));
	}
	return a;
}

/* ---- a call's arguments as argv ------------------------------------------ */

struct words {
	char **v;
	size_t n, cap;
};

static void add_word(struct words *w, char *s)
{
	if (w->n + 2 > w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
	}
	w->v[w->n++] = s;
	w->v[w->n] = NULL;
}

void mcp_argv_free(char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}

static const char *json_type_word(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static bool is_choice(const char *choices, const char *v)
{
	size_t n = strlen(v);
	for (const char *p = choices; *p;) {
		size_t k = strcspn(p, "|");
		if (k == n && !strncmp(p, v, n))
			return true;
		p += k + (p[k] == '|');
	}
	return false;
}

/* The value of option o as it goes on the command line (NULL: leave it out;
 * *bad set with what is wrong). */
static void opt_words(const struct cli_opt *o, const char *prop, json_t *v, struct words *w,
		      struct sb *why)
{
	double d = 0;
	switch (o->kind) {
	case CO_FLAG:
		if (!json_is_boolean(v))
			goto type;
		if (json_is_true(v))
			add_word(w, xstrdup(o->name));
		return;
	case CO_STR:
		if (!json_is_string(v))
			goto type;
		if (o->nonempty && !*json_string_value(v)) {
			sb_addf(why, "argument '%s' must not be empty", prop);
			return;
		}
		if (o->choices && !is_choice(o->choices, json_string_value(v))) {
			sb_addf(why, "argument '%s' is one of %s, not '%s'", prop, o->choices,
				json_string_value(v));
			return;
		}
		add_word(w, xasprintf("%s=%s", o->name, json_string_value(v)));
		return;
	case CO_LIST: {
		size_t i;
		json_t *x;
		if (!json_is_array(v))
			goto type;
		json_array_foreach(v, i, x) {
			if (!json_is_string(x)) {
				sb_addf(why, "argument '%s' is an array of strings; item %zu is %s",
					prop, i, json_type_word(x));
				return;
			}
		}
		json_array_foreach(v, i, x)
			add_word(w, xasprintf("%s=%s", o->name, json_string_value(x)));
		return;
	}
	case CO_INT:
		if (!json_is_integer(v))
			goto type;
		d = (double)json_integer_value(v);
		break;
	case CO_NUM:
		if (!json_is_number(v))
			goto type;
		d = json_number_value(v);
		break;
	}
	if (!(d >= o->lo && d <= o->hi)) {
		sb_addf(why, "argument '%s' is %g, outside [%g, %g]", prop, d, o->lo, o->hi);
		return;
	}
	if (o->kind == CO_INT)
		add_word(w, xasprintf("%s=%lld", o->name, (long long)json_integer_value(v)));
	else
		add_word(w, xasprintf("%s=%.17g", o->name, d));
	return;
type:
	sb_addf(why, "argument '%s' must be %s, not %s", prop,
		o->kind == CO_FLAG ? "a boolean" : o->kind == CO_STR ? "a string"
		: o->kind == CO_LIST ? "an array of strings" : o->kind == CO_INT ? "an integer"
		: "a number", json_type_word(v));
}

static const struct cli_opt *find_prop(const struct mcp_tool *t, const struct command *c,
				       const char *prop)
{
	char name[64];
	for (const struct cli_opt *o = c->opts; o && o->name; o++)
		if (takes(t, o) && !strcmp(prop_name(o->name, name, sizeof(name)), prop))
			return o;
	return NULL;
}

static void pos_words(const struct mcp_pos *p, json_t *v, struct words *w, struct sb *why)
{
	if (!strcmp(p->type, "integer")) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			sb_addf(why, "argument '%s' must be a non-negative integer, not %s",
				p->name, json_type_word(v));
			return;
		}
		add_word(w, xasprintf("%lld", (long long)json_integer_value(v)));
		return;
	}
	if (!json_is_string(v)) {
		sb_addf(why, "argument '%s' must be a string, not %s", p->name,
			json_type_word(v));
		return;
	}
	if (p->choices && !is_choice(p->choices, json_string_value(v))) {
		sb_addf(why, "argument '%s' is one of %s, not '%s'", p->name, p->choices,
			json_string_value(v));
		return;
	}
	add_word(w, xstrdup(json_string_value(v)));
}

/* "a, b or c": the properties t takes, for a message */
static void prop_words(const struct mcp_tool *t, const struct command *c, struct sb *out)
{
	char name[64];
	size_t n = 0;
	for (const struct mcp_pos *p = t->pos; p && p->name; p++)
		sb_addf(out, "%s%s", n++ ? ", " : "", p->name);
	for (const struct cli_opt *o = c->opts; o && o->name; o++)
		if (takes(t, o))
			sb_addf(out, "%s%s", n++ ? ", " : "", prop_name(o->name, name, sizeof(name)));
	if (!n)
		sb_adds(out, "none");
}

static void check_known(const struct mcp_tool *t, const struct command *c, json_t *args,
			struct sb *why)
{
	const char *k;
	json_t *v;
	json_object_foreach(args, k, v) {
		bool known = find_prop(t, c, k) != NULL;
		for (const struct mcp_pos *p = t->pos; p && p->name; p++)
			known = known || !strcmp(p->name, k);
		if (!known) {
			sb_addf(why, "tool %s takes no argument '%s' (it takes: ", t->name, k);
			prop_words(t, c, why);
			sb_adds(why, ")");
			return;
		}
	}
}

char **mcp_tool_argv(const struct mcp_tool *t, json_t *args, struct sb *why)
{
	const struct command *c = cli_find_command(t->command);
	struct words w = {0};
	char name[64];
	size_t had = why->len;

	if (args && !json_is_object(args)) {
		sb_addf(why, "arguments must be an object, not %s", json_type_word(args));
		return NULL;
	}
	check_known(t, c, args, why);
	add_word(&w, xstrdup(c->name));
	for (const struct mcp_pos *p = t->pos; p && p->name && why->len == had; p++) {
		json_t *v = json_object_get(args, p->name);
		if (v)
			pos_words(p, v, &w, why);
		else if (p->required)
			sb_addf(why, "tool %s needs argument '%s'", t->name, p->name);
	}
	for (const struct cli_opt *o = c->opts; o && o->name && why->len == had; o++) {
		if (!takes(t, o))
			continue;
		prop_name(o->name, name, sizeof(name));
		json_t *v = json_object_get(args, name);
		if (v)
			opt_words(o, name, v, &w, why);
		else if (o->required || (t->need && !strcmp(t->need, o->name)))
			sb_addf(why, "tool %s needs argument '%s'", t->name, name);
	}
	if (why->len != had) {
		mcp_argv_free(w.v);
		return NULL;
	}
	if (t->fixed)
		add_word(&w, xstrdup(t->fixed));
	if (mcp_tool_json(t))
		add_word(&w, xstrdup("--json"));
	return w.v;
}
