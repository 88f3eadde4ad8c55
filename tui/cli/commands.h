/*
 * commands — the one list of optloop's subcommands.
 *
 * main() dispatches from it, `optloop help` prints it, and the README's
 * reference is kept in step with it.  Each command lives in its own
 * tui/cmd/<name>.c and returns the process exit status:
 * 0 done, 1 the gate or a check failed, 2 usage error (or nothing there),
 * 3 refused by the protocol, 4 the harness broke or the run was incomplete.
 */
#ifndef OPTLOOP_COMMANDS_H
#define OPTLOOP_COMMANDS_H

#include <stdbool.h>

struct cli {
	const char *dir; /* -C DIR, or NULL for the current directory */
	const char *op;  /* --op OP, or NULL */
	const char *argv0;
};

/* X(name, usage, summary) */
#define OPTLOOP_COMMANDS(X)                                                                   \
	X(help, "help [COMMAND | TOPIC] | help --man [--reference FILE] [--template FILE]", "show the commands, one command's usage, or a reference topic")                \
	X(version, "version [--json]", "print the version")                                           \
	X(demo, "demo [DIR] [--json]", "make a fresh git repository holding the demo kernel project") \
	X(init, "init --op OP [--test-file P] [--naive P] [--frozen P]... [--kernel P]... [--verify CMD] [--gate-workers N] [--bench CMD] [--target TEXT] [--languages TEXT] [--promotion TEXT]", \
	  "create the workspace profile/<op>-opt/ for an op")                                 \
	X(status, "status [--json [--costs]]", "where the loop stands and the next required step")      \
	X(contract, "contract [--check] [--set FIELD=VALUE]...", "show, check or set the task contract") \
	X(verify, "verify [--gate-k EXPR] [--base REF] [--profile] [--include PATH]... [--timeout SEC] [--quiet] [--json]", \
	  "run the gated verify-and-bench command and record the run")                        \
	X(log, "log --direction TEXT --status keep|revert|drop|floor [--axis TEXT] [--bound TEXT] [--unconfirmed WHY] [--ack] [--set-aside] [--commit] [--json]", \
	  "append the measured iteration's row to OPT_LOG.md (--commit: and commit it)")                               \
	X(commit, "commit [--set-aside] [--json]", "commit the logged iteration (kernel change only)") \
	X(export, "export --json", "the whole workspace database as JSON") \
	X(repair, "repair [--rebuild]", "apply the repairs start-up reconciliation offers (rows and commits)") \
	X(import, "import FILE [--json] [--strict]", "read an OPT_LOG.md and show its rows and what could not be read") \
	X(parse, "parse FILE [--exit-status N | --killed] [--patterns NAME] [--json]",       \
	  "read a saved verify log (- for stdin): gate verdict, pytest counts, env, result table")          \
	X(tui, "tui", "open the workbench on this workspace (also: optloop with no command)")  \
	X(view, "view PATH/OPT_LOG.md [--no-follow]", "open the workbench panes read-only on any OPT_LOG.md") \
	X(lint, "lint [--json]", "the trap lints over the current kernel diff (exit 1 on findings)") \
	X(trap, "trap list [--iter N] [--json] | trap add --title T --fact F --why W --how H | trap mark ID checked|hit|unchecked [--iter N]", \
	  "the TRAPS.md catalogue and the iteration's trap checklist")                        \
	X(dispatch, "dispatch add --bucket TEXT --entry NAME --evidence ITERS [--base-ms X] [--cand-ms Y] [--why TEXT] [--json] | dispatch list [--json]", \
	  "dispatch.md bucket rows, each backed by logged iterations")                         \
	X(reassess, "reassess --profile PATH --axes TEXT --techniques TEXT --next TEXT | reassess --show", \
	  "record the re-assessment that lifts a STALLED loop")                               \
	X(stop, "stop --reason cap|floor|directions [--bound TEXT] [--release] [--json]",                  \
	  "stop the loop when a stop condition holds")                                       \
	X(noise, "noise [--runs K] [--paired] [--cmd CMD] [--json]",                                      \
	  "measure the current best K times in one session to seed the noise band")           \
	X(confirm, "confirm [--baseline] [--max-pairs N] [--paired | --no-paired] [--cmd CMD] [--json]",                \
	  "measure best and candidate interleaved in one session (--baseline: the best against the baseline)") \
	X(warmup, "warmup [--workers N] [--json]",                                             \
	  "run the gate test once outside the loop to fill the compile caches")               \
	X(dependents, "dependents [--work] [--run] [--json]",                                  \
	  "who else runs the changed kernel files: other ops, test files; --run: their gates") \
	X(promote, "promote --check | --explain TEXT | --attach FILE [--iter N] [--json]",     \
	  "check the promotion bar, or record the evidence it asks for")                      \
	X(report, "report final|header ITER|pr|nogo [--output FILE] [--json]",                                 \
	  "Markdown reports from the loop's evidence: final claim, kept-candidate header, PR body, no-go record") \
	X(watch, "watch [--json] [--until STATE]",                                             \
	  "one line per event as the workspace changes (runs, progress, gate, rows, commits)") \
	X(chart, "chart [--svg FILE] [--png FILE] [--shape SHAPE] [--json]",                     \
	  "the bench-per-iteration chart as an SVG or PNG picture: best line, noise band, dropped and failed marks") \
	X(completion, "completion bash|zsh|fish",                                              \
	  "the shell completion script (commands, options, statuses, ops)")

#define X(name, usage, summary) int cmd_##name(struct cli *cli, int argc, char **argv);
OPTLOOP_COMMANDS(X)
#undef X

/* The workbench on the current workspace (tui/cmd/tui.c); with
 * quiet_if_none, returns -1 without a message when there is no workspace. */
int tui_open_workspace(struct cli *cli, bool quiet_if_none);

/* Usage line of a command ("parse FILE ..."), or NULL. */
const char *cli_usage(const char *name);
/* Its one-line summary, or NULL. */
const char *cli_summary(const char *name);
/* Run the command name (argv[0] is its name); 2 when there is none. */
int cli_run(struct cli *cli, const char *name, int argc, char **argv);
/* Is name a command?  The names, NULL-terminated.  Does the command take a
 * verb with options of its own (trap list, dispatch add, report nogo)? */
bool find_command_name(const char *name);
const char *const *cli_command_names(void);
bool cli_has_verbs(const char *name);
/* Print the commands that start with prefix, one per line. */
void cli_commands_offer(const char *prefix);

#endif
