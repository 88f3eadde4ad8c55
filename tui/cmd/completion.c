/* completion — `optloop completion bash|zsh|fish`: the shell completion
 * script; `optloop completion --list WORD...`: the candidates for the last
 * of the words typed after "optloop", one per line (what the scripts ask).
 * The candidates come from the command table: the rows' names, verbs,
 * words and option tables, so completion offers exactly what is accepted. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "core/err.h"
#include "core/loop.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bash_script[] =
	"# bash completion for optloop (optloop completion bash)\n"
	"_optloop() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\\n'\n"
	"\tCOMPREPLY=($(optloop completion --list \"${COMP_WORDS[@]:1:COMP_CWORD}\" "
	"2>/dev/null))\n"
	"\tif [ ${#COMPREPLY[@]} -eq 0 ]; then\n"
	"\t\tcompopt -o default 2>/dev/null\n"
	"\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	"\tfi\n"
	"}\n"
	"complete -F _optloop optloop\n";

static const char zsh_script[] =
	"#compdef optloop\n"
	"# zsh completion for optloop (optloop completion zsh)\n"
	"_optloop() {\n"
	"\tlocal -a c\n"
	"\tc=(${(f)\"$(optloop completion --list \"${(@)words[2,CURRENT]}\" 2>/dev/null)\"})\n"
	"\tif (( ${#c} )); then\n"
	"\t\tcompadd -a c\n"
	"\telse\n"
	"\t\t_files\n"
	"\tfi\n"
	"}\n"
	"_optloop \"$@\"\n";

static const char fish_script[] =
	"# fish completion for optloop (optloop completion fish)\n"
	"complete -c optloop -f -a '(optloop completion --list (commandline -opc)[2..-1] "
	"(commandline -ct) 2>/dev/null)'\n";

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static void offer(const char *word, const char *prefix)
{
	if (word[0] == '-' && prefix[0] != '-')
		return; /* options only once a dash is typed */
	if (starts(word, prefix))
		printf("%s\n", word);
}

/* The ops of the repository's workspaces. */
static void offer_ops(const char *prefix)
{
	struct loop_summary *v;
	size_t n;
	struct err e = {0};
	if (loop_workspaces(NULL, false, &v, &n, &e) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		offer(v[i].op, prefix);
	loop_summaries_release(v, n);
}

/* The values of an option that names them ("keep|revert|drop|floor"). */
static void offer_choices(const char *choices, const char *prefix)
{
	char word[64];
	for (const char *p = choices; *p;) {
		size_t n = strcspn(p, "|");
		snprintf(word, sizeof(word), "%.*s", (int)n, p);
		offer(word, prefix);
		p += n + (p[n] == '|');
	}
}

/* The options of a row, then --help. */
static void offer_options(const struct command *c, const char *prefix)
{
	for (const struct cli_opt *o = c->opts; o && o->name; o++)
		offer(o->name, prefix);
	offer("--help", prefix);
}

static int list(int n, char **w)
{
	const char *cur = n ? w[n - 1] : "";
	const char *prev = n > 1 ? w[n - 2] : "";
	if (!strcmp(prev, "--op")) {
		offer_ops(cur);
		return 0;
	}
	if (!strcmp(prev, "-C"))
		return 0; /* a directory: the shell's own completion */
	/* the command: the first word that is not a global option or its value */
	int ci = -1;
	for (int i = 0; i < n - 1 && ci < 0; i++) {
		if (!strcmp(w[i], "-C") || !strcmp(w[i], "--op"))
			i++;
		else if (w[i][0] != '-')
			ci = i;
	}
	if (ci < 0) {
		if (cur[0] == '-') {
			static const char *const g[] = {"-C", "--op", "--help", "--version", "-V"};
			for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
				offer(g[i], cur);
		} else {
			cli_commands_offer(cur);
		}
		return 0;
	}
	const struct command *c = cli_find_command(w[ci]);
	if (!c)
		return 0;
	const struct command *verb = ci + 1 < n - 1 ? command_verb(c, w[ci + 1]) : NULL;
	const struct command *row = verb ? verb : c;
	/* a value for the option before: its values, or the shell's own */
	const struct cli_opt *o = prev[0] == '-' ? command_option(row, prev) : NULL;
	if (o && o->choices) {
		offer_choices(o->choices, cur);
		return 0;
	}
	if (o && o->kind != CO_FLAG)
		return 0;
	if (!strcmp(c->name, "help") && cur[0] != '-') {
		cli_commands_offer(cur);
		return 0;
	}
	if (!verb && c->words && ci + 1 == n - 1 && cur[0] != '-') {
		for (size_t i = 0; c->words[i]; i++)
			offer(c->words[i], cur);
		for (size_t i = 0; c->verbs && c->verbs[i]; i++)
			offer(c->verbs[i]->name, cur);
		return 0;
	}
	if (c->verbs && !c->run && !verb) {
		for (size_t i = 0; c->verbs[i]; i++)
			offer(c->verbs[i]->name, cur);
		return 0;
	}
	if (cur[0] == '-')
		offer_options(row, cur);
	return 0;
}

/* completion --list WORD...: the words as typed, not options of its own */
static int list_run(struct cmd_ctx *x)
{
	return list(x->argc - 1, x->argv + 1);
}

static const struct command completion_list = {
	.name = "--list",
	.summary = "the candidates for the last of the words typed after optloop, one per line",
	.raw = true,
	.run = list_run,
};

static int completion_run(struct cmd_ctx *x)
{
	const char *sh = x->npos ? x->pos[0] : NULL;
	if (!sh)
		return cli_usage_error("completion", "which shell: bash, zsh or fish");
	if (!strcmp(sh, "bash"))
		fputs(bash_script, stdout);
	else if (!strcmp(sh, "zsh"))
		fputs(zsh_script, stdout);
	else if (!strcmp(sh, "fish"))
		fputs(fish_script, stdout);
	else
		return cli_usage_error("completion", "no completion for '%s' (bash, zsh or fish)",
				       sh);
	return 0;
}

const struct command cmd_completion = {
	.name = "completion",
	.summary = "the shell completion script (commands, options, statuses, ops)",
	.max_pos = 1,
	.pos_usage = "bash|zsh|fish",
	.pos_help = "  SHELL  bash, zsh or fish",
	.words = (const char *const[]){"bash", "zsh", "fish", NULL},
	.verbs = (const struct command *const[]){&completion_list, NULL},
	.examples = (const char *const[]){
		"completion bash > ~/.local/share/bash-completion/completions/optloop",
		"completion zsh > ~/.zfunc/_optloop",
		"completion fish > ~/.config/fish/completions/optloop.fish",
		NULL,
	},
	.more = "make install puts the three scripts where the shells look for them.\n"
		"The scripts ask optloop completion --list WORD... for the candidates:\n"
		"commands, each command's options, statuses, stop reasons, the\n"
		"workspaces' ops for --op, and the verbs of trap, dispatch and report.",
	.own_op = true,
	.run = completion_run,
};
