/*
 * loop_cli — what the loop subcommands (init, status, contract, verify, log,
 * commit, export) share: opening the workspace named by -C/--op with a
 * uniform refusal, and the JSON shapes of status and measurements.
 */
#ifndef OPTLOOP_LOOP_CLI_H
#define OPTLOOP_LOOP_CLI_H

#include <jansson.h>
#include <stdio.h>

struct cli;
struct loop;
struct loop_measurement;
struct loop_status;

/* loop_open for a subcommand; prints the failure and returns the exit
 * status (non-zero) when it cannot open, 0 with *l set otherwise. */
int loop_cli_open(struct cli *cli, int flags, struct loop **l);

/* The iteration the due step belongs to (loop_status().iteration); on a
 * failure prints it and returns the exit status, else 0. */
int loop_cli_iteration(struct loop *l, int *iter);

/* JSON of a status: state, iteration, next, best, kernel, frozen,
 * workspace, op, ... (caller owns the result). */
json_t *loop_cli_status_json(const struct loop_status *st);

/* What runs through /bin/sh -c (loop_status's validation and probe
 * commands): as "verify:" / "probe:" lines for the text output, and as the
 * "commands" object of the JSON ones (caller owns). */
void loop_cli_print_commands(const struct loop_status *st, FILE *out);
json_t *loop_cli_commands_json(const struct loop_status *st);

/* JSON of a measurement, with the parsed result embedded (caller owns). */
json_t *loop_cli_measurement_json(const struct loop_measurement *m);

/* A number, or null when not finite. */
json_t *loop_cli_real(double v);

#endif
