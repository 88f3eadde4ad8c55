/*
 * mdtable — the one Markdown table reader (and cell writer) for the files a
 * workspace keeps as tables: OPT_LOG.md and dispatch.md.
 *
 * A table line holds cells between pipes ("| a | b |", the outer pipes
 * optional); "\|" is a pipe inside a cell, "\\" a backslash before one, and
 * "<br>" a line break.  With code spans on (OPT_LOG.md's Direction cells
 * hold code), a pipe inside `code` does not separate cells.  A delimiter
 * row is "|---|:--:|": every cell dashes with optional alignment colons, and
 * at least one pipe, so a bare "---" rule is not one.
 *
 * Spans point into the caller's text; nothing is copied until
 * md_unescape_cell.  Rows are split without allocating once the cells
 * array has grown to the table's width.
 */
#ifndef OPTLOOP_MDTABLE_H
#define OPTLOOP_MDTABLE_H

#include <stdbool.h>
#include <stddef.h>

struct sb;

struct md_span {
	const char *s;
	size_t n;
};

struct md_cells {
	struct md_span *v;
	size_t n, cap;
};
void md_cells_release(struct md_cells *c);

/* Without leading and trailing blanks and tabs. */
struct md_span md_span_trim(struct md_span x);
/* p moved past blanks and tabs, not beyond end. */
const char *md_skip_ws(const char *p, const char *end);

/* Whether the line holds a pipe at all (a table line or delimiter row). */
bool md_has_pipe(struct md_span line);
/* Split one table line into trimmed cells (c->n of them, spans into line).
 * Returns how many separating pipes were seen. */
size_t md_split_row(struct md_span line, bool code_spans, struct md_cells *c);
/* Whether line is a delimiter row; c is scratch space. */
bool md_is_delim_row(struct md_span line, struct md_cells *c);

/* A cell's text with the escapes undone (\| -> |, \\ -> \, <br> -> newline,
 * a NUL as U+FFFD); md_unescape_into appends it to s. */
char *md_unescape_cell(struct md_span cell);
void md_unescape_into(struct md_span cell, struct sb *s);
/* Text written as one cell: the inverse of md_unescape_cell (pipes and the
 * backslashes before them escaped, line breaks as <br>). */
void md_escape_cell(const char *text, struct sb *out);

#endif
