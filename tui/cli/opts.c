/*
 * opts — the one option parser of the subcommands.  See opts.h.
 */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "core/loop.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct cli_opt *find(const struct cli_opt *opts, const char *arg, const char **val)
{
	*val = NULL;
	for (const struct cli_opt *o = opts; o && o->name; o++) {
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

static bool unknown(const char *who, const char *usage, const struct cli_opt *opts,
		    const char *arg)
{
	const char *names[64];
	size_t n = 0;
	for (const struct cli_opt *o = opts; o && o->name && n < 62; o++)
		names[n++] = o->name;
	names[n++] = "--help";
	names[n] = NULL;
	char word[64];
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg, "="), arg);
	const char *near = loop_closest_word(word, names);
	if (near)
		cli_usage_error_at(who, usage, "unknown option %s (did you mean %s?)", arg, near);
	else
		cli_usage_error_at(who, usage, "unknown option %s (optloop %s --help lists them)",
				   arg, who);
	return false;
}

/* Where o's value goes. */
static void *dest(const struct cli_opt *o, void *args)
{
	return (char *)args + o->off;
}

static bool take(const char *who, const char *usage, const struct cli_opt *o, void *args,
		 const char *v)
{
	char *end;
	switch (o->kind) {
	case CO_FLAG:
		*(bool *)dest(o, args) = true;
		return true;
	case CO_STR:
		if (o->nonempty && !*v) {
			cli_usage_error_at(who, usage, "%s needs a non-empty %s", o->name, o->arg);
			return false;
		}
		*(const char **)dest(o, args) = v;
		return true;
	case CO_LIST: {
		struct cli_list *l = dest(o, args);
		if (l->n >= CLI_LIST_MAX) {
			cli_usage_error_at(who, usage, "%s is given more than %d times", o->name,
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
			cli_usage_error_at(who, usage,
					   "%s needs a whole number from %.0f to %.0f, got '%s'",
					   o->name, o->lo, o->hi, v);
			return false;
		}
		*(long *)dest(o, args) = k;
		return true;
	}
	case CO_NUM: {
		double x = strtod(v, &end);
		if (end == v || *end || !isfinite(x) || x < o->lo || x > o->hi) {
			cli_usage_error_at(who, usage, "%s needs a number from %g to %g, got '%s'",
					   o->name, o->lo, o->hi, v);
			return false;
		}
		*(double *)dest(o, args) = x;
		return true;
	}
	}
	return false;
}

enum cli_parsed cli_parse_argv(const char *who, const char *usage, const struct cli_opt *opts,
			       void *args, int max_pos, int argc, char **argv, const char **pos,
			       int *npos, unsigned long long *given)
{
	bool opts_done = false;
	*npos = 0;
	*given = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!opts_done && (!strcmp(a, "-h") || !strcmp(a, "--help")))
			return CLI_HELP;
		if (!opts_done && !strcmp(a, CLI_LIST_OPTIONS)) {
			for (const struct cli_opt *o = opts; o && o->name; o++)
				printf("%s%s%s\n", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
			printf("--help\n");
			return CLI_LISTED;
		}
		if (!opts_done && !strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (!opts_done && a[0] == '-' && a[1] != '\0') {
			const char *v;
			const struct cli_opt *o = find(opts, a, &v);
			if (!o) {
				unknown(who, usage, opts, a);
				return CLI_BAD;
			}
			if (o->kind != CO_FLAG && !v) {
				if (i + 1 >= argc) {
					cli_usage_error_at(who, usage, "%s needs a value (%s)",
							   o->name, o->arg);
					return CLI_BAD;
				}
				v = argv[++i];
			}
			if (!take(who, usage, o, args, v))
				return CLI_BAD;
			if (o - opts < 64)
				*given |= 1ull << (o - opts);
			continue;
		}
		if (*npos >= max_pos || *npos >= CLI_POS_MAX) {
			if (max_pos == 0)
				cli_usage_error_at(who, usage, "unexpected argument %s", a);
			else
				cli_usage_error_at(who, usage, "too many arguments (%s)", a);
			return CLI_BAD;
		}
		pos[(*npos)++] = a;
	}
	/* a command given --json answers its failures in JSON too */
	for (const struct cli_opt *o = opts; o && o->name; o++)
		if (o->kind == CO_FLAG && !strcmp(o->name, "--json") && *(bool *)dest(o, args))
			cli_json_errors(true);
	return CLI_GO;
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

void cli_help_print(FILE *out, const char *usage, const char *summary, const char *pos_help,
		    const struct cli_opt *opts, const char *more, const char *const *examples)
{
	fprintf(out, "usage: optloop %s\n", usage);
	if (summary)
		fprintf(out, "\n%s\n", summary);
	if (pos_help)
		fprintf(out, "\narguments:\n%s\n", pos_help);
	bool any = false;
	for (const struct cli_opt *o = opts; o && o->name; o++) {
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
	if (more)
		fprintf(out, "\n%s\n", more);
	if (examples && examples[0]) {
		fprintf(out, "\nexample%s:\n", examples[1] ? "s" : "");
		for (size_t i = 0; examples[i]; i++)
			fprintf(out, "  optloop %s\n", examples[i]);
	}
}
