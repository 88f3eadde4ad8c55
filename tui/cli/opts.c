/*
 * opts — the one option parser of the subcommands.  See opts.h.
 */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "core/loop.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct cli_opt *find(const struct cli_cmd *c, const char *arg, const char **val)
{
	*val = NULL;
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		size_t n = strlen(o->name);
		if (strncmp(arg, o->name, n) != 0)
			continue;
		if (arg[n] == '\0')
			return o;
		if (arg[n] == '=' && o->kind != CO_FLAG) {
			*val = arg + n + 1;
			return o;
		}
	}
	return NULL;
}

static bool unknown(const struct cli_cmd *c, const char *arg)
{
	const char *names[64];
	size_t n = 0;
	for (const struct cli_opt *o = c->opts; o && o->name && n < 62; o++)
		names[n++] = o->name;
	names[n++] = "--help";
	names[n] = NULL;
	char word[64];
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg, "="), arg);
	const char *near = loop_closest_word(word, names);
	if (near)
		cli_usage_error(c->name, "unknown option %s (did you mean %s?)", arg, near);
	else
		cli_usage_error(c->name, "unknown option %s (optloop %s --help lists them)", arg,
				c->name);
	return false;
}

static bool take(struct cli_cmd *c, const struct cli_opt *o, const char *v)
{
	char *end;
	switch (o->kind) {
	case CO_FLAG:
		*(bool *)o->dest = true;
		return true;
	case CO_STR:
		if (o->nonempty && !*v) {
			cli_usage_error(c->name, "%s needs a non-empty %s", o->name, o->arg);
			return false;
		}
		*(const char **)o->dest = v;
		return true;
	case CO_LIST: {
		struct cli_list *l = o->dest;
		if (l->n >= CLI_LIST_MAX) {
			cli_usage_error(c->name, "%s is given more than %d times", o->name,
					CLI_LIST_MAX);
			return false;
		}
		l->v[l->n++] = v;
		return true;
	}
	case CO_INT: {
		errno = 0;
		long k = strtol(v, &end, 10);
		if (end == v || *end || errno || k < o->lo || k > o->hi) {
			cli_usage_error(c->name, "%s needs a whole number from %.0f to %.0f, got '%s'",
					o->name, o->lo, o->hi, v);
			return false;
		}
		*(long *)o->dest = k;
		return true;
	}
	case CO_NUM: {
		double x = strtod(v, &end);
		if (end == v || *end || !isfinite(x) || x < o->lo || x > o->hi) {
			cli_usage_error(c->name, "%s needs a number from %g to %g, got '%s'", o->name,
					o->lo, o->hi, v);
			return false;
		}
		*(double *)o->dest = x;
		return true;
	}
	}
	return false;
}

FILE *cli_help_out;

bool cli_parse(struct cli_cmd *c, int argc, char **argv, int *exit)
{
	bool opts_done = false;
	c->npos = 0;
	*exit = 2;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!opts_done && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			cli_help(c, cli_help_out ? cli_help_out : stdout);
			*exit = 0;
			return false;
		}
		if (!opts_done && !strcmp(a, CLI_LIST_OPTIONS)) {
			for (const struct cli_opt *o = c->opts; o && o->name; o++)
				printf("%s%s%s\n", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
			printf("--help\n");
			*exit = 0;
			return false;
		}
		if (!opts_done && !strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (!opts_done && a[0] == '-' && a[1] != '\0') {
			const char *v;
			const struct cli_opt *o = find(c, a, &v);
			if (!o)
				return unknown(c, a);
			if (o->kind != CO_FLAG && !v) {
				if (i + 1 >= argc) {
					cli_usage_error(c->name, "%s needs a value (%s)", o->name,
							o->arg);
					return false;
				}
				v = argv[++i];
			}
			if (!take(c, o, v))
				return false;
			continue;
		}
		if (c->npos >= c->max_pos || c->npos >= CLI_POS_MAX) {
			if (c->max_pos == 0)
				cli_usage_error(c->name, "unexpected argument %s", a);
			else
				cli_usage_error(c->name, "too many arguments (%s)", a);
			return false;
		}
		c->pos[c->npos++] = a;
	}
	/* a command given --json answers its failures in JSON too */
	for (const struct cli_opt *o = c->opts; o && o->name; o++)
		if (o->kind == CO_FLAG && !strcmp(o->name, "--json") && *(bool *)o->dest)
			cli_json_errors(true);
	*exit = 0;
	return true;
}

#define HELP_COL 26 /* where an option's help starts */
#define HELP_WIDTH 79

/* text from column HELP_COL, wrapped at spaces before HELP_WIDTH */
static void put_wrapped(FILE *out, const char *text)
{
	size_t room = HELP_WIDTH - HELP_COL;
	while (strlen(text) > room) {
		size_t cut = room;
		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (cut == 0)
			break;
		fprintf(out, "%.*s\n%*s", (int)cut, text, HELP_COL, "");
		text += cut + 1;
	}
	fprintf(out, "%s\n", text);
}

void cli_help(const struct cli_cmd *c, FILE *out)
{
	const char *u = c->usage ? c->usage : cli_usage(c->name);
	const char *s = c->summary ? c->summary : cli_summary(c->name);
	fprintf(out, "usage: optloop %s\n", u ? u : c->name);
	if (s)
		fprintf(out, "\n%s\n", s);
	if (c->pos_help)
		fprintf(out, "\narguments:\n%s\n", c->pos_help);
	bool any = false;
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		if (!any)
			fprintf(out, "\noptions:\n");
		any = true;
		char left[64];
		snprintf(left, sizeof(left), "%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		if (strlen(left) > HELP_COL - 4)
			fprintf(out, "  %s\n%*s", left, HELP_COL, "");
		else
			fprintf(out, "  %-*s  ", HELP_COL - 4, left);
		put_wrapped(out, o->help);
	}
	fprintf(out, "%s  %-22s  %s\n", any ? "" : "\noptions:\n", "-h, --help", "show this help");
	if (c->more)
		fprintf(out, "\n%s\n", c->more);
	if (c->examples && c->examples[0]) {
		fprintf(out, "\nexample%s:\n", c->examples[1] ? "s" : "");
		for (size_t i = 0; c->examples[i]; i++)
			fprintf(out, "  optloop %s\n", c->examples[i]);
	}
}
