/* commands — THE list of optloop's subcommands, in help order, and what
 * is read from it as a whole: the overview, names, lookups.  See
 * commands.h. */
#include "tui/cli/commands.h"
#include "tui/cli/util.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

extern const struct command cmd_help, cmd_version, cmd_demo, cmd_init, cmd_status, cmd_contract,
	cmd_verify, cmd_log, cmd_commit, cmd_export, cmd_repair, cmd_import, cmd_parse, cmd_tui,
	cmd_view, cmd_lint, cmd_trap, cmd_dispatch, cmd_reassess, cmd_stop, cmd_noise,
	cmd_confirm, cmd_warmup, cmd_dependents, cmd_promote, cmd_report, cmd_watch, cmd_mcp, cmd_chart,
	cmd_completion;

const struct command *const optloop_commands[] = {
	&cmd_help,        &cmd_version,      &cmd_demo,     &cmd_init,   &cmd_status,
	&cmd_contract, &cmd_verify,    &cmd_log,      &cmd_commit, &cmd_export,
	&cmd_repair,   &cmd_import,    &cmd_parse,    &cmd_tui,    &cmd_view,
	&cmd_lint,     &cmd_trap,      &cmd_dispatch, &cmd_reassess, &cmd_stop,
	&cmd_noise,    &cmd_confirm,   &cmd_warmup,   &cmd_dependents,
	&cmd_promote,  &cmd_report,    &cmd_watch,    &cmd_mcp,      &cmd_chart,  &cmd_completion,
	NULL,
};

#define NCOMMANDS (sizeof(optloop_commands) / sizeof(optloop_commands[0]) - 1)

const struct command *cli_find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(optloop_commands[i]->name, name) == 0)
			return optloop_commands[i];
	return NULL;
}

const char *const *cli_command_names(void)
{
	static const char *names[NCOMMANDS + 1];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = optloop_commands[i]->name;
	return names;
}

const char *cli_usage(const char *name)
{
	static char *made[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (strcmp(optloop_commands[i]->name, name) != 0)
			continue;
		if (!made[i]) {
			struct sb u = SB_INIT;
			command_usage(optloop_commands[i], NULL, &u);
			made[i] = sb_detach(&u);
		}
		return made[i];
	}
	return NULL;
}

const char *cli_summary(const char *name)
{
	const struct command *c = cli_find_command(name);
	return c ? c->summary : NULL;
}

void cli_commands_offer(const char *prefix)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strncmp(optloop_commands[i]->name, prefix, strlen(prefix)))
			printf("%s\n", optloop_commands[i]->name);
}

int cli_not_a_command(const char *who, const char *word)
{
	const char *near = loop_closest_word(word, cli_command_names());
	char msg[512];
	if (near)
		snprintf(msg, sizeof(msg), "'%s' is not a command; did you mean '%s'?", word, near);
	else
		snprintf(msg, sizeof(msg), "'%s' is not a command (run 'optloop help')", word);
	fprintf(stderr, "%s: %s\n", who, msg);
	cli_json_error(ERR_USAGE, 2, msg);
	return 2;
}

/* The rules every row is judged by (also in the README and the man page). */
static const char loop_rules[] =
	"statuses (log --status):\n"
	"  keep     the change stays and becomes the best; needs a passing gate, a bench\n"
	"           number and a win beyond noise (a fast confirm, or a fast verdict\n"
	"           against measured noise), or --unconfirmed WHY, recorded and shown\n"
	"  revert,  the change is undone: after the row's own commit optloop commits\n"
	"  drop     the kernel restored to the best (a failed gate is logged this way)\n"
	"  floor    a documented bound was reached\n"
	"the best is the baseline or the last keep: every row's vs best (time saved)\n"
	"is against it, and revert/drop restore it.  A run whose harness broke or that\n"
	"was cut off is an attempt, not an iteration: no row, verify runs again; only a\n"
	"full-gate pass with a bench number can be the baseline.\n";

void cli_overview(FILE *out)
{
	fprintf(out, "usage: optloop [-C DIR] [--op OP] COMMAND [ARGS]\n\n");
	fprintf(out, "The disciplined kernel optimization loop: one change, one gated verify,\n"
		     "one log row and one commit per iteration.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", optloop_commands[i]->name,
			optloop_commands[i]->summary);
	fprintf(out, "\n%s", loop_rules);
	fprintf(out, "\nexit status: 0 done, 1 gate or check failed (only that), 2 usage error\n"
		     "(or a repository, workspace or file that is not there or not a file),\n"
		     "3 refused by the protocol or by another writer, 4 harness broke or run\n"
		     "incomplete, or optloop's own I/O failed (disk, database, lock, git)\n");
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = cli_vusage_error(cmd, cli_usage(cmd), fmt, ap);
	va_end(ap);
	return rc;
}
