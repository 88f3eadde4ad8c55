/*
 * review — what the go-to and filter prompts do with what was typed: the
 * timeline's row of iteration N, or the rows a filter keeps (filter.h).
 * Each fills msg with what it did, or with what was wrong with the text
 * and what to type instead; the caller shows it and moves the selection.
 */
#ifndef OPTLOOP_REVIEW_H
#define OPTLOOP_REVIEW_H

struct row_filter;
struct sb;
struct wb_data;

/* text: the iteration's number as typed.  0 with *sel its row's index in
 * d->rows; -1 when it is no number or no row has it. */
int review_go_to(const struct wb_data *d, const char *text, int *sel, struct sb *msg);
/* text: a filter as row_filter_parse reads it ("" for every row).  0 with
 * d narrowed and *sel the row of the iteration that was at *sel where it
 * is still shown, else the last row; 1 when no row matches; -1 when the
 * text is no filter (d unchanged). */
int review_filter(struct row_filter *f, struct wb_data *d, const char *text, int *sel,
		  struct sb *msg);

/* The m key on row sel: the iteration to compare with from now on (-1
 * when it unmarks the one marked); msg says which and what to do next. */
int review_mark(const struct wb_data *d, int sel, int mark_iter, struct sb *msg);
/* The details of row sel just filled (d->detail): lines comparing it with
 * iteration mark_iter go in under their first line, when that row is
 * shown and is another one. */
void review_compare(struct wb_data *d, int sel, int mark_iter);

#endif
