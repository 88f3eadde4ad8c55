/*
 * chart — the series of the bench-per-iteration chart (struct chart in
 * core/model.h): which rows are points and which are marks on the x axis,
 * the best so far after each row, the noise band around the best; and the
 * Mermaid xychart block the reports carry.  `optloop chart` draws the same
 * series with cairo (tui/chart_draw.c); front-ends reach it through
 * loop_chart.
 */
#ifndef OPTLOOP_CHART_H
#define OPTLOOP_CHART_H

#include "core/model.h"

#include <jansson.h>

struct err;
struct sb;
struct store;

/* Build c from rows[0..n), oldest first.  ms holds one value per row (a
 * shape's time, NAN where the row did not measure it); NULL charts each
 * row's bench_ms.  The best so far after row i is log_rows_best(rows, i+1),
 * taken at ms when given; the best is log_rows_best over every row.  Leaves
 * shape NULL, the band NAN and nshapes 0 for the caller.  Never fails; c is
 * caller-owned (chart_release). */
void chart_build(const struct log_row *rows, size_t n, const double *ms, struct chart *c);
void chart_release(struct chart *c);

/* The chart of a workspace from its store: every row, the best, the noise
 * band around the best (measure_noise_band).  shape (NULL: the bench column)
 * names one measured shape as the measured keys spell it ("fwd B=2 T=512
 * H=4 D=64") or as a contract's Target may ("B2-T512-H4-D64", "B=2
 * T=512"); ERR_USAGE naming the measured shapes when it names none of them
 * or more than one.  An empty log gives a chart with no items.  c is
 * caller-owned (chart_release), also on error. */
int chart_load(struct store *s, const char *shape, struct chart *c, struct err *e);

/* The most bars the Mermaid chart draws: past this many iterations with a
 * number, each bar stands for several. */
#define CHART_MERMAID_BARS 200

/* Append the chart as a fenced Mermaid `xychart-beta` block (the title
 * names op when not NULL), then one line saying what the series are and
 * which iterations were left out (the first 20 named, then how many more).
 * Mermaid wants every series as long as the x axis, so the categories are
 * the iterations with a number: a bar per iteration (its bench), a line for
 * the best so far.  Past CHART_MERMAID_BARS such iterations, each bar
 * stands for a run of consecutive ones, labelled "FIRST-LAST": the fastest
 * of them, and the line the best so far after the last; the caption says
 * how many to a bar.  Without a number anywhere, one line saying so. */
void chart_mermaid(const struct chart *c, const char *op, struct sb *md);

/* The series as JSON: {"shape", "best": {"iter", "ms"} or null, "band":
 * [lo, hi] or null, "band_assumed", "rows": [{"iter", "kind", "point",
 * "ms", "best_ms", "unconfirmed"}]}, NAN as null (caller owns). */
json_t *chart_json(const struct chart *c);

/* "base", "keep", "dropped", "failed". */
const char *chart_kind_name(enum chart_kind k);

#endif
