/*
 * guards_cli — what the guard subcommands (trap, dispatch, lint, reassess,
 * report nogo) share: printing lint findings.
 */
#ifndef OPTLOOP_GUARDS_CLI_H
#define OPTLOOP_GUARDS_CLI_H

#include <jansson.h>
#include <stdio.h>

struct cli;
struct lint_findings;

/* One finding per line: "file:line lint [trap id]: message", then the line. */
void guards_cli_print_findings(FILE *out, const struct lint_findings *f);
/* The findings as a JSON array (caller owns). */
json_t *guards_cli_findings_json(const struct lint_findings *f);

/* `optloop report nogo [--json]` (argv[1] is "nogo"); cmd_report calls it. */
int report_nogo(struct cli *cli, int argc, char **argv);

#endif
