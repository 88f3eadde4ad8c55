/* help — `optloop help [COMMAND | TOPIC]`: the overview, one command's help
 * (from its row), or a reference topic of assets/man/; `optloop help
 * --man`: the man page.  version — `optloop version`. */
#include "tui/cli/commands.h"
#include "tui/cli/manpage.h"
#include "tui/cli/util.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct help_args {
	bool man;
	const char *reference, *tmpl;
};

static int print_man(const struct help_args *a)
{
	struct err e = {0};
	struct sb missing = SB_INIT;
	char *ref = a->reference ? xstrdup(a->reference) : man_asset("commands.md", &e);
	char *tp = a->tmpl ? xstrdup(a->tmpl) : ref ? man_asset("optloop.1.in", &e) : NULL;
	sb_init(&missing);
	int rc = tp ? manpage_print(stdout, ref, tp, &missing, &e) : e.code;
	if (rc == 0 && missing.len)
		fprintf(stderr, "optloop help --man: %s has no row for: %s(their lines come "
				"from the command table)\n",
			ref, missing.buf);
	sb_release(&missing);
	free(ref);
	free(tp);
	return rc < 0 ? cli_fail(&e) : 0;
}

static int help_run(struct cmd_ctx *x)
{
	const struct help_args *a = x->args;
	if (a->man)
		return print_man(a);
	if (x->npos == 0) {
		cli_overview(stdout);
		printf("\n'optloop help COMMAND' or 'optloop COMMAND --help' describes one "
		       "command;\n'optloop help TOPIC' prints a reference topic:");
		for (const char *const *t = help_topics; *t; t++)
			printf(" %s", *t);
		printf(".\n");
		return 0;
	}
	const struct command *c = cli_find_command(x->pos[0]);
	if (!c) {
		struct err e = {0};
		if (!is_topic(x->pos[0]))
			return cli_not_a_command("optloop help", x->pos[0]);
		return print_topic(x->pos[0], &e) < 0 ? cli_fail(&e) : 0;
	}
	/* the command's own help, from its row */
	command_help(c, NULL, stdout);
	return 0;
}

static const struct cli_opt help_opts[] = {
	CLI_FLAG("--man", offsetof(struct help_args, man),
		 "print the man page, made from the command reference "
		 "(assets/man/commands.md), each command's option table and the key table "
		 "(make docs writes it)"),
	CLI_STR("--reference", offsetof(struct help_args, reference), "FILE",
		"the command reference to read (default: assets/man/commands.md in the "
		"assets folder)"),
	CLI_STR("--template", offsetof(struct help_args, tmpl), "FILE",
		"the man page's prose (default: assets/man/optloop.1.in in the assets folder)"),
	CLI_END,
};

const struct command cmd_help = {
	.name = "help",
	.summary = "show the commands, one command's usage, or a reference topic",
	.synopsis = "help [COMMAND | TOPIC] | help --man [--reference FILE] [--template FILE]",
	.opts = help_opts,
	.args_size = sizeof(struct help_args),
	.max_pos = 1,
	.pos_help = "  COMMAND  one command: its options and examples\n"
		    "  TOPIC    a reference topic: commands, workbench, statistics, "
		    "slurm, gpu, patterns, building",
	.examples = (const char *const[]){"help", "help confirm", "confirm --help",
					  "help statistics", "help --man > assets/man/optloop.1",
					  NULL},
	.run = help_run,
};

struct version_args {
	bool json;
};

static int version_run(struct cmd_ctx *x)
{
	const struct version_args *a = x->args;
	struct err e = {0};
	const char *assets = loop_assets_dir(&e);
	if (a->json) {
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

static const struct cli_opt version_opts[] = {
	CLI_FLAG("--json", offsetof(struct version_args, json),
		 "print the version and the assets folder as JSON"),
	CLI_END,
};

const struct command cmd_version = {
	.name = "version",
	.summary = "print the version",
	.opts = version_opts,
	.args_size = sizeof(struct version_args),
	.examples = (const char *const[]){"version", "--version", NULL},
	.more = "Also: optloop --version, optloop -V.",
	.run = version_run,
};
