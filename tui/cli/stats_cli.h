/*
 * stats_cli — what verify and status share: the verdict and flags of a run
 * as JSON fields and as text.
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

/* Print which implausible rule fired, each with its number ("why:
 * implausible_shape: fwd ... at 859.00x is above 3x"), from a verdict's
 * detail (its implausible_why); nothing when none fired. */
void stats_cli_print_implausible(const json_t *detail, FILE *out);
/* The roofline of a verdict's detail: "roofline: LINE", then one line per
 * impossible shape with its arithmetic; nothing when the detail has none. */
void stats_cli_print_roofline(const json_t *detail, FILE *out);

#endif
