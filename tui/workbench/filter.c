/* filter — the rows a review shows (see filter.h). */
#include "tui/workbench/filter.h"

#include "core/err.h"
#include "core/sb.h"
#include "views/view.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char known[] =
	"type keep, fail, revert, drop, floor, base or axis NAME (nothing: every row)";

int row_filter_parse(struct row_filter *f, const char *text, struct err *e)
{
	const char *p = text;
	size_t n;

	while (isspace((unsigned char)*p))
		p++;
	n = strlen(p);
	while (n && isspace((unsigned char)p[n - 1]))
		n--;
	char *t = xstrndup(p, n);
	enum row_status st = row_status_parse(t);
	if (!*t) {
		free(f->axis);
		free(f->words);
		f->axis = f->words = NULL;
		f->kind = RF_ALL;
	} else if (!strcasecmp(t, "fail") || !strcasecmp(t, "failed")) {
		free(f->axis);
		f->axis = NULL;
		f->kind = RF_FAIL;
	} else if (!strcasecmp(t, "keeps")) {
		free(f->axis);
		f->axis = NULL;
		f->kind = RF_STATUS;
		f->status = RS_KEEP;
	} else if (st != RS_NONE) {
		free(f->axis);
		f->axis = NULL;
		f->kind = RF_STATUS;
		f->status = st;
	} else if (!strncasecmp(t, "axis", 4) && (t[4] == ' ' || t[4] == '\0')) {
		const char *a = t + 4;
		while (*a == ' ')
			a++;
		if (!*a) {
			free(t);
			return err_set(e, ERR_USAGE, "filter: axis needs its name (axis tiling)");
		}
		free(f->axis);
		f->axis = xstrdup(a);
		f->kind = RF_AXIS;
	} else {
		int rc = err_set(e, ERR_USAGE, "filter: '%s' is no filter: %s", t, known);
		free(t);
		return rc;
	}
	if (f->kind != RF_ALL) {
		free(f->words);
		f->words = t;
		t = NULL;
	}
	free(t);
	return 0;
}

/* Whether name starts a word of text, any case ("tile" in "BT=64 tiles"). */
static bool starts_a_word(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; p && *p; p++)
		if ((p == text || !isalnum((unsigned char)p[-1])) && !strncasecmp(p, name, n))
			return true;
	return false;
}

/* A row's axis is the one optloop recorded (or the log's Axis column
 * gives); a row without one is on the axis its direction names. */
static bool on_axis(const struct log_row *r, const char *axis)
{
	if (r->axis && *r->axis)
		return !strcasecmp(r->axis, axis);
	return starts_a_word(r->direction, axis);
}

static bool keeps(const struct row_filter *f, const struct log_row *r)
{
	switch (f->kind) {
	case RF_ALL:
		return true;
	case RF_STATUS:
		return r->status == f->status;
	case RF_FAIL:
		return r->gate_v == GATE_FAIL || r->gate_v == GATE_ERROR;
	case RF_AXIS:
		return on_axis(r, f->axis);
	}
	return true;
}

size_t row_filter_apply(struct row_filter *f, struct wb_data *d)
{
	/* rows this filter made are narrowed again from the ones they came from */
	if (!f->rows || d->rows != f->rows) {
		f->all = d->rows;
		f->nall = d->nrows;
	}
	free(f->rows);
	f->rows = NULL;
	d->rows = f->all;
	d->nrows = f->nall;
	d->nrows_all = f->nall;
	d->filter = NULL;
	if (f->kind == RF_ALL)
		return d->nrows;
	size_t n = 0;
	f->rows = xcalloc(f->nall ? f->nall : 1, sizeof(*f->rows));
	for (size_t i = 0; i < f->nall; i++)
		if (keeps(f, &f->all[i]))
			f->rows[n++] = f->all[i];
	d->rows = f->rows;
	d->nrows = n;
	d->filter = f->words;
	return n;
}

void row_filter_release(struct row_filter *f)
{
	free(f->rows);
	free(f->axis);
	free(f->words);
	memset(f, 0, sizeof(*f));
}
