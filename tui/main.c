/*
 * main — optloop's entry point: global options, then one subcommand from
 * the table in commands.h.
 */
#include "tui/cli/commands.h"
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/manpage.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPTLOOP_VERSION "0.1.0"

struct command {
	const char *name;
	int (*fn)(struct cli *, int, char **);
	const char *usage;
	const char *summary;
};

static const struct command commands[] = {
#define X(name, usage, summary) {#name, cmd_##name, usage, summary},
	OPTLOOP_COMMANDS(X)
#undef X
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

bool find_command_name(const char *name)
{
	return find_command(name) != NULL;
}

const char *const *cli_command_names(void)
{
	static const char *names[NCOMMANDS + 1];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	return names;
}

bool cli_has_verbs(const char *name)
{
	return !strcmp(name, "trap") || !strcmp(name, "dispatch") || !strcmp(name, "report");
}

const char *cli_usage(const char *name)
{
	const struct command *c = find_command(name);
	return c ? c->usage : NULL;
}

const char *cli_summary(const char *name)
{
	const struct command *c = find_command(name);
	return c ? c->summary : NULL;
}

int cli_run(struct cli *cli, const char *name, int argc, char **argv)
{
	const struct command *c = find_command(name);
	return c ? c->fn(cli, argc, argv) : 2;
}

void cli_commands_offer(const char *prefix)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strncmp(commands[i].name, prefix, strlen(prefix)))
			printf("%s\n", commands[i].name);
}

/* "'stauts' is not a command" with the command that was meant, if any. */
static int not_a_command(const char *who, const char *word)
{
	const char *names[NCOMMANDS + 1];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	names[NCOMMANDS] = NULL;
	const char *near = loop_closest_word(word, names);
	if (near)
		fprintf(stderr, "%s: '%s' is not a command; did you mean '%s'?\n", who, word, near);
	else
		fprintf(stderr, "%s: '%s' is not a command (run 'optloop help')\n", who, word);
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

static void print_overview(FILE *out)
{
	fprintf(out, "usage: optloop [-C DIR] [--op OP] COMMAND [ARGS]\n\n");
	fprintf(out, "The disciplined kernel optimization loop: one change, one gated verify,\n"
		     "one log row and one commit per iteration.\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n%s", loop_rules);
	fprintf(out, "\nexit status: 0 done, 1 gate or check failed (only that), 2 usage error\n"
		     "(or a repository, workspace or file that is not there or not a file),\n"
		     "3 refused by the protocol or by another writer, 4 harness broke or run\n"
		     "incomplete, or optloop's own I/O failed (disk, database, lock, git)\n");
}

/* The reference topics of assets/man/ (TOPIC.md), as optloop help TOPIC
 * prints them. */
static const char *const help_topics[] = {"commands",   "workbench", "statistics", "slurm",
					  "gpu",        "patterns",  "building",   NULL};

static bool is_topic(const char *word)
{
	for (const char *const *t = help_topics; *t; t++)
		if (!strcmp(*t, word))
			return true;
	return false;
}

/* assets/man/NAME in the assets folder in use (caller frees), or NULL with e. */
static char *man_asset(const char *name, struct err *e)
{
	const char *dir = loop_assets_dir(e);
	return dir ? xasprintf("%s/man/%s", dir, name) : NULL;
}

/* Print assets/man/TOPIC.md of the assets folder in use. */
static int print_topic(const char *topic, struct err *e)
{
	char *name = xasprintf("%s.md", topic), *path = man_asset(name, e);
	struct sb text = SB_INIT;
	int rc = path ? fsutil_read_file(path, &text, e) : e->code;
	if (rc == 0)
		fwrite(text.buf, 1, text.len, stdout);
	sb_release(&text);
	free(path);
	free(name);
	return rc;
}

int cmd_help(struct cli *cli, int argc, char **argv)
{
	int rc;
	bool man = false;
	const char *reference = NULL, *tmpl = NULL;
	const struct cli_opt opts[] = {
		CLI_FLAG("--man", &man,
			 "print the man page, made from the command reference "
			 "(assets/man/commands.md), each command's option table and the key table "
			 "(make docs writes it)"),
		CLI_STR("--reference", &reference, "FILE",
			"the command reference to read (default: assets/man/commands.md in the "
			"assets folder)"),
		CLI_STR("--template", &tmpl, "FILE",
			"the man page's prose (default: assets/man/optloop.1.in in the assets folder)"),
		CLI_END,
	};
	static const char *const examples[] = {"help",        "help confirm", "confirm --help",
					       "help statistics", "help --man > assets/man/optloop.1",
					       NULL};
	struct cli_cmd c = {.name = "help", .opts = opts, .max_pos = 1, .examples = examples,
			    .pos_help = "  COMMAND  one command: its options and examples\n"
					"  TOPIC    a reference topic: commands, workbench, statistics, "
					"slurm, gpu, patterns, building"};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if (man) {
		struct err e = {0};
		struct sb missing = SB_INIT;
		char *ref = reference ? xstrdup(reference) : man_asset("commands.md", &e);
		char *tp = tmpl ? xstrdup(tmpl) : ref ? man_asset("optloop.1.in", &e) : NULL;
		sb_init(&missing);
		rc = tp ? manpage_print(stdout, ref, tp, &missing, &e) : e.code;
		if (rc == 0 && missing.len)
			fprintf(stderr, "optloop help --man: %s has no row for: %s(their lines come "
					"from the command table)\n",
				ref, missing.buf);
		sb_release(&missing);
		free(ref);
		free(tp);
		return rc < 0 ? cli_fail(&e) : 0;
	}
	if (c.npos == 0) {
		print_overview(stdout);
		printf("\n'optloop help COMMAND' or 'optloop COMMAND --help' describes one "
		       "command;\n'optloop help TOPIC' prints a reference topic:");
		for (const char *const *t = help_topics; *t; t++)
			printf(" %s", *t);
		printf(".\n");
		return 0;
	}
	const struct command *cmd = find_command(c.pos[0]);
	if (!cmd) {
		struct err e = {0};
		if (!is_topic(c.pos[0]))
			return not_a_command("optloop help", c.pos[0]);
		return print_topic(c.pos[0], &e) < 0 ? cli_fail(&e) : 0;
	}
	/* the command's own help, from its option table */
	char help[] = "--help";
	char *hargv[] = {(char *)c.pos[0], help, NULL};
	return cmd->fn(cli, 2, hargv);
}

int cmd_version(struct cli *cli, int argc, char **argv)
{
	(void)cli;
	bool json = false;
	int rc;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", &json, "print the version and the assets folder as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {"version", "--version", NULL};
	struct cli_cmd c = {.name = "version", .opts = opts, .examples = examples,
			    .more = "Also: optloop --version, optloop -V."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	struct err e = {0};
	const char *assets = loop_assets_dir(&e);
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "version", json_string(OPTLOOP_VERSION));
		json_object_set_new(j, "assets", assets ? json_string(assets) : json_null());
		if (!assets)
			json_object_set_new(j, "assets_error", json_string(e.msg));
		cli_print_json(j);
		return 0;
	}
	printf("optloop %s\n", OPTLOOP_VERSION);
	printf("assets: %s\n", assets ? assets : e.msg);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli cli = {.argv0 = argv[0]};
	int i = 1;

	/* Only the character set comes from the environment (the panes and the
	 * CLI tables measure text with wcwidth).  Numbers, dates and messages
	 * stay in the C locale: optloop's output is read by scripts, and loading
	 * every category of the user's locale cost ~0.7 ms per command. */
	setlocale(LC_CTYPE, "");
	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "-C") || !strcmp(argv[i], "--op")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "optloop: %s needs a value\n", argv[i]);
				return 2;
			}
			if (argv[i][1] == 'C')
				cli.dir = argv[i + 1];
			else
				cli.op = argv[i + 1];
			i += 2;
		} else if (!strncmp(argv[i], "--op=", 5)) {
			cli.op = argv[i] + 5;
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			print_overview(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
			return cmd_version(&cli, 0, NULL);
		} else {
			fprintf(stderr, "optloop: unknown option %s (run 'optloop help')\n", argv[i]);
			return 2;
		}
	}
	if (cli.dir && chdir(cli.dir) < 0) {
		fprintf(stderr, "optloop: cannot change to %s: ", cli.dir);
		perror(NULL);
		return 2;
	}
	if (i >= argc) {
		/* On a terminal inside a workspace, no command means the workbench. */
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
			int rc = tui_open_workspace(&cli, true);
			if (rc >= 0)
				return rc;
		}
		print_overview(stderr);
		return 2;
	}
	const struct command *c = find_command(argv[i]);
	if (!c)
		return not_a_command("optloop", argv[i]);
	/* --op may also follow the command (optloop status --op chunk_gla); init
	 * reads it itself, and completion reads the words as typed.  "--" ends
	 * the options. */
	if (c->fn != cmd_init && c->fn != cmd_completion) {
		int k = i + 1;
		for (int j = i + 1; j < argc; j++) {
			if (!strcmp(argv[j], "--")) {
				while (j < argc)
					argv[k++] = argv[j++];
				break;
			}
			if (!strcmp(argv[j], "--op") && j + 1 < argc) {
				cli.op = argv[++j];
				continue;
			}
			if (!strncmp(argv[j], "--op=", 5)) {
				cli.op = argv[j] + 5;
				continue;
			}
			argv[k++] = argv[j];
		}
		argc = k;
	}
	return c->fn(&cli, argc - i, argv + i);
}
