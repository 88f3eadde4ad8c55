/*
 * guards_cli — what the guard subcommands (trap, dispatch, lint, reassess,
 * stop, report nogo) share: opening the workspace together with a guards
 * context, and printing lint findings.
 */
#ifndef OPTLOOP_GUARDS_CLI_H
#define OPTLOOP_GUARDS_CLI_H

#include <jansson.h>
#include <stdio.h>

struct cli;
struct guards_owned;
struct lint_findings;
struct loop;

/* Open the workspace (flags as for loop_open) and build the guards
 * context.  Returns 0, or the exit status after printing the failure. */
int guards_cli_open(struct cli *cli, int flags, struct loop **l, struct guards_owned *o);
void guards_cli_close(struct loop *l, struct guards_owned *o);

/* One finding per line: "file:line lint [trap id]: message", then the line. */
void guards_cli_print_findings(FILE *out, const struct lint_findings *f);
/* The findings as a JSON array (caller owns). */
json_t *guards_cli_findings_json(const struct lint_findings *f);

/* `optloop report nogo [--json]` (argv[1] is "nogo"); cmd_report calls it. */
int report_nogo(struct cli *cli, int argc, char **argv);

#endif
