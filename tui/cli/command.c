/* command — running a row of the command table, and its usage and help.
 * See command.h. */
#include "tui/cli/command.h"
#include "tui/cli/loop_cli.h"
#include "tui/cli/util.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdlib.h>
#include <string.h>

void command_usage(const struct command *c, const struct command *parent, struct sb *out)
{
	if (c->synopsis) {
		sb_adds(out, c->synopsis);
		return;
	}
	if (c->verbs && !c->run) {
		for (size_t i = 0; c->verbs[i]; i++) {
			if (i)
				sb_adds(out, " | ");
			command_usage(c->verbs[i], c, out);
		}
		return;
	}
	if (parent)
		sb_addf(out, "%s ", parent->name);
	sb_adds(out, c->name);
	if (c->pos_usage)
		sb_addf(out, " %s", c->pos_usage);
	for (const struct cli_opt *o = c->opts; o && o->name; o++) {
		const char *val = o->choices ? o->choices : o->arg;
		sb_addf(out, " %s%s%s%s%s%s", o->required ? "" : "[", o->name, val ? " " : "",
			val ? val : "", o->required ? "" : "]", o->kind == CO_LIST ? "..." : "");
	}
}

void command_help(const struct command *c, const struct command *parent, FILE *out)
{
	struct sb u = SB_INIT;
	command_usage(c, parent, &u);
	cli_help_print(out, sb_str(&u), c->summary, c->pos_help, c->opts, c->more, c->examples);
	sb_release(&u);
	if (c->verbs && !c->run)
		for (size_t i = 0; c->verbs[i]; i++) {
			fprintf(out, "\n");
			command_help(c->verbs[i], c, out);
		}
}

const struct command *command_verb(const struct command *c, const char *word)
{
	for (size_t i = 0; c->verbs && c->verbs[i]; i++)
		if (!strcmp(c->verbs[i]->name, word))
			return c->verbs[i];
	return NULL;
}

const struct cli_opt *command_option(const struct command *c, const char *name)
{
	for (const struct cli_opt *o = c->opts; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* "list, add or mark": the verbs of c, for a message. */
static void verb_words(const struct command *c, struct sb *out)
{
	for (size_t i = 0; c->verbs[i]; i++)
		sb_addf(out, "%s%s", i == 0 ? "" : c->verbs[i + 1] ? ", " : " or ",
			c->verbs[i]->name);
}

/* The mode the options given ask for (the strongest), else the row's. */
static enum cli_open open_mode(const struct command *c, unsigned long long given)
{
	enum cli_open mode = OPEN_NONE;
	for (size_t i = 0; c->opts && c->opts[i].name && i < 64; i++)
		if ((given >> i & 1) && c->opts[i].opens > mode)
			mode = c->opts[i].opens;
	return mode != OPEN_NONE ? mode : c->open;
}

static int open_workspace(struct cli *cli, const struct command *c, enum cli_open mode,
			  struct loop **l)
{
	int flags = mode == OPEN_READ ? LOOP_READONLY : mode == OPEN_TRY ? LOOP_TRY_WRITE : 0;
	if (c->any_contract)
		flags |= LOOP_ANY_CONTRACT;
	return loop_cli_open(cli, flags, l);
}

int command_run(struct cli *cli, const struct command *c, int argc, char **argv)
{
	FILE *help_out = stdout;
	const struct command *parent = NULL;
	/* errors end with the command's usage line (a verb's: the command's) */
	struct sb usage = SB_INIT;
	command_usage(c, NULL, &usage);
	if (c->verbs) {
		const char *a = argc > 1 ? argv[1] : NULL;
		if (!c->run && a && !strcmp(a, CLI_LIST_OPTIONS)) {
			for (size_t i = 0; c->verbs[i]; i++)
				printf("%s\n", c->verbs[i]->name);
			printf("--help\n");
			sb_release(&usage);
			return 0;
		}
		if (!c->run && a && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			command_help(c, NULL, help_out);
			sb_release(&usage);
			return 0;
		}
		const struct command *v = a ? command_verb(c, a) : NULL;
		if (v) {
			parent = c;
			c = v;
			argc--;
			argv++;
		} else if (!c->run) {
			struct sb w = SB_INIT;
			verb_words(c, &w);
			int rc = a ? cli_usage_error_at(c->name, sb_str(&usage),
							"unknown subcommand %s (%s)", a, sb_str(&w))
				   : cli_usage_error_at(c->name, sb_str(&usage), "which: %s",
							sb_str(&w));
			sb_release(&w);
			sb_release(&usage);
			return rc;
		}
	}
	const char *who = parent ? parent->name : c->name;
	struct cmd_ctx x = {.cli = cli, .cmd = c, .parent = parent, .argc = argc, .argv = argv};
	if (c->raw) {
		sb_release(&usage);
		return c->run(&x);
	}
	if (c->args_size) {
		x.args = xcalloc(1, c->args_size);
		if (c->defaults)
			memcpy(x.args, c->defaults, c->args_size);
	}
	unsigned long long given;
	int rc = 2;
	switch (cli_parse_argv(who, sb_str(&usage), c->opts, x.args, c->max_pos, argc, argv, x.pos,
			       &x.npos, &given)) {
	case CLI_HELP:
		command_help(c, parent, help_out);
		rc = 0;
		break;
	case CLI_LISTED:
		rc = 0;
		break;
	case CLI_BAD:
		rc = 2;
		break;
	case CLI_GO:
		rc = c->before ? c->before(&x) : CMD_GO;
		if (rc != CMD_GO)
			break;
		enum cli_open mode = open_mode(c, given);
		if (mode != OPEN_NONE && (rc = open_workspace(cli, c, mode, &x.l)) != 0)
			break;
		rc = c->run(&x);
		if (x.l)
			loop_close(x.l);
		break;
	}
	free(x.args);
	sb_release(&usage);
	return rc;
}
