/* review — go to iteration N and the filter of the rows (see review.h). */
#include "tui/workbench/review.h"

#include "core/err.h"
#include "core/sb.h"
#include "tui/workbench/filter.h"
#include "views/actions.h"
#include "views/view.h"

#include <stdlib.h>
#include <string.h>

int review_go_to(const struct wb_data *d, const char *text, int *sel, struct sb *msg)
{
	char *end;
	long n = strtol(text, &end, 10);
	int lo = d->nrows ? d->rows[0].iter : 0, hi = lo;

	while (*end == ' ')
		end++;
	if (!*text || *end || n < 0 || n > 1000000000L) {
		sb_addf(msg, "go to: '%s' is not an iteration number (type its digits, then Enter)",
			text);
		return -1;
	}
	for (size_t i = 0; i < d->nrows; i++) {
		const struct log_row *r = &d->rows[i];
		lo = r->iter < lo ? r->iter : lo;
		hi = r->iter > hi ? r->iter : hi;
		if (r->iter == (int)n) {
			*sel = (int)i;
			sb_addf(msg, "iteration %ld: %s", n, r->direction ? r->direction : "");
			return 0;
		}
	}
	sb_addf(msg, "go to: no iteration %ld in the timeline (it has %d to %d)", n, lo, hi);
	return -1;
}

int review_filter(struct row_filter *f, struct wb_data *d, const char *text, int *sel,
		  struct sb *msg)
{
	int iter = *sel >= 0 && (size_t)*sel < d->nrows ? d->rows[*sel].iter : -1;
	struct err e = {0};

	if (row_filter_parse(f, text, &e) < 0) {
		sb_adds(msg, e.msg);
		return -1;
	}
	size_t n = row_filter_apply(f, d);
	*sel = (int)n - 1;
	for (size_t i = 0; i < n; i++)
		if (d->rows[i].iter == iter)
			*sel = (int)i;
	if (!f->words)
		sb_addf(msg, "every row: %zu", n);
	else
		sb_addf(msg, "filter %s: %s%zu of %zu rows (%s, then Enter on nothing, shows all)",
			f->words, n ? "" : "no row matches, ", n, d->nrows_all,
			action_first_key(ACT_FILTER));
	return n || !f->words ? 0 : 1;
}
