/*
 * guards_cli — what the guard subcommands (trap, dispatch, lint, reassess,
 * report nogo) share: printing lint findings.
 */
#ifndef OPTLOOP_GUARDS_CLI_H
#define OPTLOOP_GUARDS_CLI_H

#include <jansson.h>
#include <stdio.h>

struct command;
struct lint_findings;

/* One finding per line: "file:line lint [trap id]: message", then the line. */
void guards_cli_print_findings(FILE *out, const struct lint_findings *f);
/* The findings as a JSON array (caller owns). */
json_t *guards_cli_findings_json(const struct lint_findings *f);

/* report's verb nogo (tui/cmd/report_nogo.c). */
extern const struct command report_nogo_verb;

#endif
