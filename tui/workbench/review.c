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

int review_mark(const struct wb_data *d, int sel, int mark_iter, struct sb *msg)
{
	const struct log_row *r = &d->rows[sel];
	if (r->iter == mark_iter) {
		sb_addf(msg, "iteration %d unmarked: details no longer compare", r->iter);
		return -1;
	}
	sb_addf(msg, "iteration %d marked: Enter on another row compares it with this one "
		     "(m on it again unmarks)",
		r->iter);
	return r->iter;
}

/* Insert a line at index at of the detail. */
static void insert_line(struct wb_data *d, size_t at, enum role role, const char *text)
{
	d->detail = xrealloc(d->detail, (d->ndetail + 1) * sizeof(*d->detail));
	memmove(d->detail + at + 1, d->detail + at, (d->ndetail - at) * sizeof(*d->detail));
	d->detail[at] = (struct wb_line){xstrdup(text), role};
	d->ndetail++;
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "\xe2\x80\x94";
}

void review_compare(struct wb_data *d, int sel, int mark_iter)
{
	const struct log_row *r = sel >= 0 && (size_t)sel < d->nrows ? &d->rows[sel] : NULL, *m = NULL;
	struct sb s = SB_INIT, g1 = SB_INIT, g2 = SB_INIT;

	for (size_t i = 0; r && mark_iter >= 0 && i < d->nrows; i++)
		if (d->rows[i].iter == mark_iter)
			m = &d->rows[i];
	if (!r || !m || m == r || !d->ndetail)
		return;
	/* worded to fit 80 columns: here first, then the marked row */
	sb_addf(&s, "Compared with marked iteration %d: ", m->iter);
	fmt_bench(r->bench_ms, &s);
	sb_adds(&s, " ms vs ");
	fmt_bench(m->bench_ms, &s);
	sb_adds(&s, " ms");
	if (r->bench_ms > 0 && m->bench_ms > 0) {
		double x = m->bench_ms / r->bench_ms;
		sb_addf(&s, ", this one %.2fx %s", x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower");
	}
	insert_line(d, 1, R_HEADER, s.buf);
	fmt_gate(r, &g1);
	fmt_gate(m, &g2);
	sb_reset(&s);
	sb_addf(&s, "  here / there: gate %s / %s \xc2\xb7 status %s / %s \xc2\xb7 axis %s / %s",
		g1.buf, g2.buf, or_dash(row_status_name(r->status)), or_dash(row_status_name(m->status)),
		or_dash(r->axis), or_dash(m->axis));
	insert_line(d, 2, R_NORMAL, s.buf);
	sb_reset(&s);
	sb_addf(&s, "  iteration %d tried: %s", m->iter, or_dash(m->direction));
	insert_line(d, 3, R_DIM, s.buf);
	sb_release(&s);
	sb_release(&g1);
	sb_release(&g2);
}
