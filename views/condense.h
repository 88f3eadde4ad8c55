/*
 * condense — fit a block of lines that are wider than a pane into it
 * without losing their right-hand columns.
 *
 * Verify output prints result tables wider than an 80-column terminal
 * (FLA's table with --base is 109 columns, its ms column at the far
 * right); cut at the pane's edge, the lines lose exactly the numbers a
 * person looks for.  A table's columns line up from line to line, so the
 * columns that are blank in every line of the block are the gaps between
 * table columns: each gap shrinks to two blanks, or to one when two do not
 * fit.  When even that is too wide, the cheapest run of columns (blank
 * ones first, then letters, never a digit when it can be helped, a
 * header's text only when nothing else will do) gives way to one "…".
 * Separator lines (----, ====) follow the others' columns and never keep
 * a column open on their own.
 */
#ifndef OPTLOOP_CONDENSE_H
#define OPTLOOP_CONDENSE_H

#include <stdbool.h>
#include <stddef.h>

struct sb;

/* lines[0..n): clean text (sanitize_line), one line each.  Rewritten in
 * place so that each is at most `cells` wide; returns true when any line
 * changed. */
bool condense_block(struct sb *lines, size_t n, int cells);

#endif
