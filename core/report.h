/*
 * report — the Markdown blocks a loop ends with, assembled from the store:
 * the final claim (per-shape statistics, speedups with intervals, exact
 * commands, commits, GPU identity with idle-clock evidence), the
 * kept-candidate header of one iteration, and a pull-request body.  The
 * final claim and the PR body carry the bench per iteration as a Mermaid
 * chart (chart_mermaid).  Every report also comes as one JSON object with
 * the same facts.
 */
#ifndef OPTLOOP_REPORT_H
#define OPTLOOP_REPORT_H

#include <jansson.h>

struct err;
struct sb;
struct stats_cmp;
struct workspace;

/* Each reads the workspace's store and the contract its owner read (the op,
 * the validation and benchmark commands, the Target, the threshold); each
 * appends Markdown to md and, when json is not NULL, sets *json to a new
 * object (caller owns).  ERR_REFUSED with what is missing when the store
 * does not hold what the report needs yet. */
int report_final(const struct workspace *ws, struct sb *md, json_t **json, struct err *e);
/* report_header: ERR_NOTFOUND when iter has no row, ERR_REFUSED when it is no keep. */
int report_header(const struct workspace *ws, int iter, struct sb *md, json_t **json,
		  struct err *e);
int report_pr(const struct workspace *ws, struct sb *md, json_t **json, struct err *e);

/* The best against the baseline, per shape and overall: the one comparison
 * report final makes (the confirm session when it measured both, else every
 * run of each).  out is caller-owned (stats_cmp_release); its shape keys
 * are measure_shape_key's.  ERR_NOTFOUND while the best is the baseline. */
int report_best_vs_baseline(const struct workspace *ws, struct stats_cmp *out, struct err *e);

#endif
