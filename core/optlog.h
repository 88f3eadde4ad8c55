/*
 * optlog — OPT_LOG.md as text: render the file from rows, and read any
 * OPT_LOG.md back, hand-written ones included.
 *
 * The rendered shape is fixed (assets/templates/OPT_LOG.md):
 *
 *   # Optimization log — <op>
 *
 *   Env: <verify environment line>
 *   Baseline (main): <baseline>
 *   Target: <target>
 *
 *   ## Summary
 *
 *   | Iter | Direction (one line) | Gate | Bench (median ms) | vs best | Status |
 *   |---|---|---|---|---|---|
 *   | 0 | baseline | pass | 0.973 | — | base |
 *
 * The reader is a hand-written line scanner, not a Markdown library: on a
 * 100,000-row table cmark-gfm needs seconds and hundreds of megabytes, the
 * scanner a few tens of milliseconds and little more than the rows.  It
 * follows GFM's table rules where they matter (leading and trailing pipes
 * optional, `\|` is a pipe inside a cell, a table ends at a blank line) and
 * is more forgiving than GFM where people are: pipes inside code spans,
 * columns matched by name in any order, `—` for missing numbers, status
 * words in any case, CRLF line ends.  Whatever it cannot read is listed as
 * a problem with its line number.
 *
 * Under the table, when the loop was re-assessed or stopped, a section of
 * optloop's own says so, one line each in the order of the rows:
 *
 *   ### Re-assessments and stops
 *
 *   - After iteration 3: **re-assessed**; axes tried: tiling; next direction: fuse
 *   - After iteration 6: **stopped**, at a floor: HBM bandwidth: 4.1 of 4.8 TB/s
 *
 * Cell escaping (render and parse are inverses): `|` is written `\|`, a
 * backslash followed by `\` or `|` is written `\\`, a newline `<br>`.
 */
#ifndef OPTLOOP_OPTLOG_H
#define OPTLOOP_OPTLOG_H

/* The mark after a vs best figure that its confirm sized ("+32% (confirm)");
 * the legend under the table says what it means. */
#define OPTLOG_CONFIRM_MARK "(confirm)"

#include "core/model.h"

#include <stddef.h>

struct err;
struct sb;


/* Append one row to d (the doc takes ownership of the row's strings). */
void optlog_doc_add_row(struct optlog_doc *d, struct log_row *row);

/* Append the whole file text to out, exactly the template's shape (header
 * lines, ## Summary, table, then d's re-assessments and stops when it has
 * any).  Rows are written in array order; a row's gate
 * cell comes from gate_v/scope (row->gate is used only when gate_v is
 * GATE_NONE and it is not empty). */
void optlog_render(const struct optlog_doc *d, struct sb *out);
/* The part of optlog_render's text above the rows (title, header lines,
 * legend, the table's head), appended to out. */
void optlog_render_head(const struct optlog_doc *d, struct sb *out);
/* The length of the head optlog_render wrote at the start of text (where
 * its first row starts), whatever its header values; 0 when text does not
 * start with one. */
size_t optlog_head_len(const char *text, size_t len);
/* Whether text is exactly what optlog_render(d) would write, checked a row
 * at a time without building the whole file (start-up compares a long log
 * that is almost always current). */
bool optlog_render_same(const struct optlog_doc *d, const char *text, size_t len);

/* A file a person edited (text), merged with what d renders: the text
 * above the table with d's title, Env, Baseline and Target lines and
 * legend; the table with d's rows in d's order, each row's Direction cell
 * the file's where it has a row for that iteration, its judged cells
 * (gate, bench, vs best, status) d's, and the file's other columns after
 * the six, their cells kept; under the table d's re-assessments and stops
 * in place of the file's (what differs is replaced), then the person's
 * text after the table as it was.  out
 * (may be NULL) receives the merged text; kept what of the person's
 * edits is carried over, replaced what d's rendering puts in place of
 * the file's, each a "; "-separated list ("" when none; either may be
 * NULL).  0, or ERR_FAIL with e saying why the file cannot be merged
 * without losing a line (no table, a line between its rows, a row of
 * the file d lacks, a row of more cells than columns); out, kept and
 * replaced are then untouched. */
int optlog_merge(const struct optlog_doc *d, const char *text, size_t len, struct sb *out,
		 struct sb *kept, struct sb *replaced, struct err *e);

/* The best's bench before row i (log_rows_best of the earlier rows: the
 * baseline or the last keep whose gate passed); NAN when there is none. */
double optlog_best_before(const struct log_row *rows, size_t i);

/* Fill vs_best of every row from the benches and statuses (used by the
 * importer when a log has no vs best column). */
void optlog_compute_vs_best(struct log_row *rows, size_t n);

/* The heading of the section under the table that lists the loop's
 * re-assessments and stops. */
#define OPTLOG_EVENTS_HEADING "### Re-assessments and stops"

/* d's re-assessments and stops as optlog_render writes them after the
 * rows (a blank line, the heading, a line each), appended to out; nothing
 * when d has none. */
void optlog_render_events(const struct optlog_doc *d, struct sb *out);
/* Read one line (without its line end) as one of the section's: true and
 * *ev filled (release it with optlog_event_release), false when the line
 * is not one (*ev then holds nothing to release). */
bool optlog_event_parse(const char *s, size_t n, struct optlog_event *ev);
void optlog_event_release(struct optlog_event *ev);
/* Where the section is in text (the text after a table): true with
 * [*start, *end) from the blank lines above its heading to the end of its
 * last line that is optloop's; false when text has none. */
bool optlog_events_span(const char *text, size_t len, size_t *start, size_t *end);

/* Parse a cell the way the importer does; 0 when understood, ERR_FAIL when
 * not (the out value is then NAN / GATE_NONE / RS_NONE).  Text is one
 * unescaped cell. */
int optlog_parse_bench(const char *cell, double *ms);
int optlog_parse_vs_best(const char *cell, double *frac);
int optlog_parse_gate(const char *cell, enum gate_verdict *g, enum gate_scope *s);
int optlog_parse_status(const char *cell, enum row_status *st);

#endif
