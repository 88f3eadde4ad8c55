/*
 * filter — which rows of the log the panes show while reviewing: all, the
 * keeps, the failed gates, one status, or one axis (the axis a row's
 * iteration was logged with, or the log's Axis column gives; for a row
 * without one, its direction naming it).  The panes read the
 * rows through struct wb_data, so a filter is a narrower array there (the
 * backend's rows copied shallowly, in order); every pane, the details and
 * the go-to key then work on the same rows.  The best stays the log's.
 */
#ifndef OPTLOOP_FILTER_H
#define OPTLOOP_FILTER_H

#include "core/model.h"

#include <stddef.h>

struct err;
struct wb_data;

struct row_filter {
	enum { RF_ALL, RF_STATUS, RF_FAIL, RF_AXIS } kind;
	enum row_status status; /* RF_STATUS */
	char *axis;             /* RF_AXIS */
	char *words;            /* the filter as typed ("keep", "axis tiling"); NULL for all */
	struct log_row *rows;   /* the rows shown, owned (shallow copies) */
	const struct log_row *all; /* the backend's rows it was made from */
	size_t nall;
};

/* Read what was typed at the filter prompt: "" (all rows), keep, fail,
 * revert, drop, floor, base, or axis NAME.  ERR_USAGE naming the words
 * it knows when it is none of them; *f is unchanged then. */
int row_filter_parse(struct row_filter *f, const char *text, struct err *e);
/* Narrow d's rows (the backend's, just loaded, or the ones this filter
 * was made from) to the filter's; d->filter and d->nrows_all say so.
 * Returns how many rows it keeps. */
size_t row_filter_apply(struct row_filter *f, struct wb_data *d);
void row_filter_release(struct row_filter *f);

#endif
