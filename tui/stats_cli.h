/*
 * stats_cli — what the statistics subcommands (noise, confirm, promote,
 * report) and the loop's verify and status share: the verdict and flags of
 * a run as JSON fields and as one line of text.
 */
#ifndef OPTLOOP_STATS_CLI_H
#define OPTLOOP_STATS_CLI_H

#include <jansson.h>
#include <stdio.h>

struct loop;

/* Add "verdict" (string or null), "flags" (array) and "verdict_detail"
 * (the comparison, or null) for run_id to the object j. */
void stats_cli_add_verdict(struct loop *l, int run_id, json_t *j);

/* Print "verdict: fast (+12.3% vs best, 95% interval ...); flags: ..." for
 * run_id, or nothing when the run has no verdict. */
void stats_cli_print_verdict(struct loop *l, int run_id, FILE *out);

/* The report context from the workspace's contract: its strings belong to
 * the contract returned, a reference the caller lets go with
 * loop_contract_put when done with ctx. */
struct report_ctx;
struct contract;
const struct contract *stats_cli_ctx(struct loop *l, struct report_ctx *ctx);

#endif
