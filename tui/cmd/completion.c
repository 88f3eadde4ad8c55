/* completion — `optloop completion bash|zsh|fish`: the shell completion
 * script; `optloop completion --list WORD...`: the candidates for the last
 * of the words typed after "optloop", one per line (what the scripts ask).
 * The candidates come from the command table and each command's own option
 * table (--list-options), so completion offers exactly what is accepted. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "core/err.h"
#include "core/loop.h"

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

/* A command's (or a verb's) own list: --list-options, one option per line
 * with the name of its value when it takes one.  Caller frees. */
static char *listed(struct cli *cli, const char *cmd, const char *verb)
{
	fflush(stdout);
	char *tmp = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&tmp, &len);
	if (!mem)
		return NULL;
	FILE *saved = stdout;
	stdout = mem;
	char opt[] = CLI_LIST_OPTIONS;
	char *args[] = {(char *)cmd, (char *)verb, opt, NULL};
	if (!verb) {
		args[1] = opt;
		args[2] = NULL;
	}
	cli_run(cli, cmd, verb ? 3 : 2, args);
	fflush(mem);
	stdout = saved;
	fclose(mem);
	return tmp;
}

/* The names of the list, filtered by prefix. */
static void offer_listed(struct cli *cli, const char *cmd, const char *verb, const char *prefix)
{
	char *text = listed(cli, cmd, verb);
	for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		line[strcspn(line, " ")] = '\0';
		offer(line, prefix);
	}
	free(text);
}

/* Whether opt takes a value, as the command's table says ("--kernel PATH"). */
static bool takes_value(struct cli *cli, const char *cmd, const char *verb, const char *opt)
{
	if (!strcmp(opt, "-C") || !strcmp(opt, "--op"))
		return true;
	if (!cmd || opt[0] != '-')
		return false;
	char *text = listed(cli, cmd, verb);
	size_t n = strlen(opt);
	bool yes = false;
	for (char *line = text ? strtok(text, "\n") : NULL; line && !yes; line = strtok(NULL, "\n"))
		yes = !strncmp(line, opt, n) && line[n] == ' ';
	free(text);
	return yes;
}

static int list(struct cli *cli, int n, char **w)
{
	const char *cur = n ? w[n - 1] : "";
	const char *prev = n > 1 ? w[n - 2] : "";
	/* a value for the option before */
	if (!strcmp(prev, "--op")) {
		offer_ops(cur);
		return 0;
	}
	if (!strcmp(prev, "--status")) {
		static const char *const st[] = {"keep", "revert", "drop", "floor"};
		for (size_t i = 0; i < 4; i++)
			offer(st[i], cur);
		return 0;
	}
	if (!strcmp(prev, "--reason")) {
		static const char *const r[] = {"cap", "floor", "directions"};
		for (size_t i = 0; i < 3; i++)
			offer(r[i], cur);
		return 0;
	}
	/* the command: the first word that is not a global option or its value */
	const char *cmd = NULL;
	int ci = -1;
	for (int i = 0; i < n - 1; i++) {
		if (!strcmp(w[i], "-C") || !strcmp(w[i], "--op")) {
			i++;
			continue;
		}
		if (w[i][0] != '-') {
			cmd = w[i];
			ci = i;
			break;
		}
	}
	if (!cmd && takes_value(cli, NULL, NULL, prev))
		return 0; /* -C DIR: the shell's own completion */
	if (!cmd) {
		if (cur[0] == '-') {
			static const char *const g[] = {"-C", "--op", "--help", "--version", "-V"};
			for (size_t i = 0; i < 5; i++)
				offer(g[i], cur);
		} else {
			cli_commands_offer(cur);
		}
		return 0;
	}
	if (!cli_usage(cmd))
		return 0;
	bool verbs = !strcmp(cmd, "trap") || !strcmp(cmd, "dispatch");
	const char *verb = verbs && ci + 1 < n - 1 ? w[ci + 1] : NULL;
	if (takes_value(cli, cmd, verb, prev))
		return 0; /* a path or free text: the shell's own completion */
	if (!strcmp(cmd, "help") && cur[0] != '-') {
		cli_commands_offer(cur);
		return 0;
	}
	if (!strcmp(cmd, "completion") && cur[0] != '-') {
		static const char *const sh[] = {"bash", "zsh", "fish"};
		for (size_t i = 0; i < 3; i++)
			offer(sh[i], cur);
		return 0;
	}
	if (!strcmp(cmd, "report") && ci + 1 == n - 1 && cur[0] != '-') {
		static const char *const k[] = {"final", "header", "pr", "nogo"};
		for (size_t i = 0; i < 4; i++)
			offer(k[i], cur);
		return 0;
	}
	if (verbs && !verb) {
		offer_listed(cli, cmd, NULL, cur); /* the verbs */
		return 0;
	}
	if (cur[0] == '-')
		offer_listed(cli, cmd, verb, cur);
	return 0;
}

int cmd_completion(struct cli *cli, int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--list"))
		return list(cli, argc - 2, argv + 2);
	int rc;
	static const char *const examples[] = {
		"completion bash > ~/.local/share/bash-completion/completions/optloop",
		"completion zsh > ~/.zfunc/_optloop",
		"completion fish > ~/.config/fish/completions/optloop.fish",
		NULL,
	};
	struct cli_cmd c = {
		.name = "completion",
		.max_pos = 1,
		.examples = examples,
		.pos_help = "  SHELL  bash, zsh or fish",
		.more = "make install puts the three scripts where the shells look for them.\n"
			"The scripts ask optloop completion --list WORD... for the candidates:\n"
			"commands, each command's options, statuses, stop reasons, the\n"
			"workspaces' ops for --op, and the verbs of trap, dispatch and report.",
	};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	const char *sh = c.npos ? c.pos[0] : NULL;
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
