/*
 * readonly — the read-only backend: the panes over any OPT_LOG.md (and the
 * TRAPS.md and dispatch.md beside it when present), hand-written ones
 * included.  What the importer could not read is listed as problems with
 * line numbers.  Loop actions are refused with the reason.  Unless it is a
 * snapshot (--no-follow), the panes follow the files as they change: an
 * inotify watch on their folder wakes the workbench, nothing polls.
 */
#include "tui/workbench/readonly.h"

#include "core/err.h"
#include "core/model.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"
#include "core/rules.h"
#include "tui/workbench/app.h"
#include "tui/workbench/files.h"
#include "views/sanitize.h"

#include <ctype.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

struct ws_view {
	char *path;
	char *base;  /* the log's file name, what the watch answers to */
	int ino;     /* inotify on the folder (follow), -1 for a snapshot */
	char *title;
	struct optlog_doc doc;
	struct problems probs;
	struct ws_files files;
	char *dir;
};

static void add_line(struct wb_line **v, size_t *n, enum role role, const char *text)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct wb_line){xstrdup(text), role};
}

static void clear_data(struct app *a)
{
	wb_shapes_clear(&a->data);
	a->shapes_loaded = false;
	wb_lines_free(a->data.notes, a->data.nnotes);
	a->data.notes = NULL;
	a->data.nnotes = 0;
	wb_lines_free(a->data.detail, a->data.ndetail);
	a->data.detail = NULL;
	a->data.ndetail = 0;
}

/* The one best of the log (log_rows_best), as the engine defines it. */
static void find_best(struct wb_data *d)
{
	const struct log_row *b = log_rows_best(d->rows, d->nrows);
	d->has_best = b != NULL;
	d->best_unconfirmed = b && b->unconfirmed;
	if (b) {
		d->best_ms = b->bench_ms;
		d->best_iter = b->iter;
	}
}

static int cmp_row_iter(const void *k, const void *r)
{
	int a = *(const int *)k, b = ((const struct log_row *)r)->iter;
	return a < b ? -1 : a > b;
}

/* The axis optloop recorded of each iteration (log --axis), for the rows
 * of a log without an Axis column: when the log is a workspace's (an
 * optloop.db beside it in <repo>/profile/<op>-opt/), its database is read,
 * read-only.  Any other log is left as it is. */
static void axes_from_store(struct ws_view *w, struct optlog_doc *doc)
{
	bool missing = false;
	for (size_t i = 0; i < doc->nrows && !missing; i++)
		missing = !doc->rows[i].axis || !*doc->rows[i].axis;
	const char *name = strrchr(w->dir, '/');
	name = name ? name + 1 : w->dir;
	size_t n = strlen(name);
	if (!missing || n <= 4 || strcmp(name + n - 4, "-opt"))
		return;
	char *db = fsutil_join(w->dir, "optloop.db"), *op = xstrndup(name, n - 4);
	struct loop *l = NULL;
	struct log_rows *rows = NULL;
	if (fsutil_exists(db) &&
	    loop_open(w->dir, op, LOOP_READONLY | LOOP_ANY_CONTRACT, &l, NULL) == 0 &&
	    loop_rows(l, &rows, NULL) == 0) {
		for (size_t i = 0; i < doc->nrows; i++) {
			struct log_row *r = &doc->rows[i];
			const struct log_row *s =
				bsearch(&r->iter, rows->v, rows->n, sizeof(*rows->v), cmp_row_iter);
			if ((!r->axis || !*r->axis) && s && s->axis && *s->axis) {
				free(r->axis);
				r->axis = xstrdup(s->axis);
			}
		}
	}
	if (rows)
		log_rows_put(rows);
	if (l)
		loop_close(l);
	free(db);
	free(op);
}

static int view_reload(struct app *a, struct err *e)
{
	struct ws_view *w = a->be_data;
	struct sb text = SB_INIT;
	int rc;

	/* Read and parse into new storage first: the panes keep drawing the
	 * rows they have until the new ones are whole (a log removed, cut to
	 * nothing or replaced by something else leaves the last good one on
	 * screen, and the error says why). */
	struct optlog_doc doc;
	struct problems probs;
	memset(&doc, 0, sizeof(doc));
	memset(&probs, 0, sizeof(probs));
	sb_init(&text);
	if ((rc = fsutil_read_file(w->path, &text, e)) < 0) {
		sb_release(&text);
		return err_prefix(e, "view: ");
	}
	rc = optlog_parse(text.buf, text.len, &doc, &probs, e);
	sb_release(&text);
	if (rc < 0) {
		optlog_doc_release(&doc);
		problems_release(&probs);
		return err_prefix(e, "view %s: ", w->path);
	}
	axes_from_store(w, &doc);
	clear_data(a);
	optlog_doc_release(&w->doc);
	problems_release(&w->probs);
	ws_files_release(&w->files);
	w->doc = doc;
	w->probs = probs;
	a->data.title = w->title;
	a->data.readonly = true;
	a->data.rows = w->doc.rows;
	a->data.nrows = w->doc.nrows;
	find_best(&a->data);
	a->data.band_lo = a->data.band_hi = NAN;
	for (size_t i = 0; i < w->probs.n; i++) {
		struct sb s = SB_INIT;
		sb_init(&s);
		if (w->probs.v[i].lineno > 0)
			sb_addf(&s, "OPT_LOG.md line %d: %s", w->probs.v[i].lineno, w->probs.v[i].msg);
		else
			sb_addf(&s, "OPT_LOG.md: %s", w->probs.v[i].msg);
		add_line(&a->data.notes, &a->data.nnotes, R_NORMAL, s.buf);
		sb_release(&s);
	}
	ws_files_load(&w->files, w->dir, &a->data);
	return 0;
}

/* One line of a Notes cell as a shape's time: "B8-T8192: 0.978 (+6.0%)"
 * gives the name and the number; a remark gives nothing (false). */
static bool notes_shape(const char *line, size_t n, struct sb *name, double *ms)
{
	const char *colon = memchr(line, ':', n), *end = line + n;
	if (!colon || colon == line || colon - line > 64)
		return false;
	const char *p = colon + 1;
	while (p < end && *p == ' ')
		p++;
	char num[32];
	size_t k = 0;
	while (p < end && k + 1 < sizeof(num) && (isdigit((unsigned char)*p) || *p == '.'))
		num[k++] = *p++;
	num[k] = '\0';
	/* the number ends the line, or is followed by "ms" or a remark in
	 * brackets: "2 ops" is no time */
	const char *q = p;
	while (q < end && *q == ' ')
		q++;
	if (end - q >= 2 && !strncmp(q, "ms", 2))
		q += 2;
	while (q < end && *q == ' ')
		q++;
	if (!k || (q < end && *q != '('))
		return false;
	char *stop;
	*ms = strtod(num, &stop);
	if (*stop || !isfinite(*ms) || *ms <= 0)
		return false;
	const char *a = line, *b = colon;
	while (a < b && *a == ' ')
		a++;
	while (b > a && b[-1] == ' ')
		b--;
	if (a == b)
		return false;
	sb_reset(name);
	sb_add(name, a, (size_t)(b - a));
	return true;
}

/* Per-shape series from the rows' Notes cells (a hand-written log's
 * per-shape numbers, one "SHAPE: ms" a line): each shape in the order it
 * first appears, NAN where a row does not give it. */
static int view_shapes(struct app *a, struct err *e)
{
	struct wb_data *d = &a->data;
	struct sb name = SB_INIT;

	(void)e;
	wb_shapes_clear(d);
	for (size_t i = 0; i < d->nrows; i++) {
		const char *p = d->rows[i].notes;
		while (p && *p) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			double ms;
			if (notes_shape(p, n, &name, &ms)) {
				size_t s = 0;
				while (s < d->nshapes && strcmp(d->shapes[s].name, name.buf))
					s++;
				if (s == d->nshapes) {
					d->shapes = xrealloc(d->shapes, (s + 1) * sizeof(*d->shapes));
					d->shapes[s] = (struct wb_shape){.name = xstrdup(name.buf),
									 .ms = xcalloc(d->nrows, sizeof(double)),
									 .base_ms = NAN, .best_ms = NAN,
									 .speedup = NAN};
					for (size_t k = 0; k < d->nrows; k++)
						d->shapes[s].ms[k] = NAN;
					d->nshapes++;
				}
				d->shapes[s].ms[i] = ms;
			}
			p += n + (nl ? 1 : 0);
		}
	}
	sb_release(&name);
	return 0;
}

static void view_status(struct app *a, int cells, struct sb *out)
{
	struct ws_view *w = a->be_data;
	size_t start = out->len;

	for (int brief = 0; brief < 2; brief++) {
		out->len = start;
		out->buf[start] = '\0';
		/* the path is in the title bar too: the first thing to go */
		if (brief)
			sb_adds(out, "read-only view");
		else
			sb_addf(out, "read-only view of %s", w->path);
		sb_addf(out, " \xc2\xb7 %zu row%s", a->data.nrows, a->data.nrows == 1 ? "" : "s");
		if (a->data.has_best) {
			sb_adds(out, " \xc2\xb7 best ");
			optlog_fmt_bench(a->data.best_ms, out);
			sb_addf(out, " ms @ iter %d", a->data.best_iter);
		}
		if (sanitize_width(out->buf + start, out->len - start) <= cells)
			break;
	}
}

static int view_act(struct app *a, enum action act, struct err *e)
{
	struct ws_view *w = a->be_data;

	return err_set(e, ERR_REFUSED,
		       "%s refused: this is a read-only view of %s (run optloop tui inside the "
		       "workspace's repository to work on it)",
		       act > ACT_NONE && act < ACT_COUNT ? action_table[act - 1].name : "action",
		       w->path);
}

static int view_submit(struct app *a, struct wizard *wz, struct err *e)
{
	return view_act(a, ACT_NONE, e);
}

static int view_detail(struct app *a, int i, struct err *e)
{
	struct ws_view *w = a->be_data;
	const struct log_row *r;
	struct sb s = SB_INIT;

	if (i < 0 || (size_t)i >= a->data.nrows)
		return err_set(e, ERR_USAGE, "details: no row selected");
	r = &a->data.rows[i];
	wb_lines_free(a->data.detail, a->data.ndetail);
	a->data.detail = NULL;
	a->data.ndetail = 0;
	sb_init(&s);
#define LINE(role)                                                                   \
	do {                                                                         \
		add_line(&a->data.detail, &a->data.ndetail, role, s.buf);           \
		sb_reset(&s);                                                        \
	} while (0)
	sb_addf(&s, "Iteration %d \xc2\xb7 %s", r->iter, row_status_name(r->status));
	LINE(R_HEADER);
	sb_addf(&s, "Direction: %s", r->direction ? r->direction : "\xe2\x80\x94");
	LINE(R_NORMAL);
	sb_adds(&s, "Gate: ");
	fmt_gate(r, &s);
	sb_addf(&s, " (scope %s)", r->scope == SCOPE_SUBSET ? "-k subset: a signal only"
				  : r->scope == SCOPE_FULL  ? "full"
							    : "not stated");
	LINE(theme_row_role(r) == R_FAIL ? R_FAIL : R_NORMAL);
	sb_adds(&s, "Bench (median ms): ");
	fmt_bench(r->bench_ms, &s);
	sb_adds(&s, "   vs best: ");
	fmt_vs_best(r->vs_best, &s);
	LINE(R_NORMAL);
	if (r->axis) {
		sb_addf(&s, "Axis: %s", r->axis);
		LINE(R_NORMAL);
	}
	if (r->notes) {
		sb_adds(&s, "Notes:");
		LINE(R_NORMAL);
		for (const char *p = r->notes; *p;) {
			size_t n = strcspn(p, "\n");
			sb_adds(&s, "  ");
			sb_add(&s, p, n);
			LINE(R_NORMAL);
			p += n;
			if (*p)
				p++;
		}
	}
	sb_addf(&s, "Commit: %s", r->commit ? r->commit : "\xe2\x80\x94 (not recorded in the log)");
	LINE(R_NORMAL);
	if (w->doc.env) {
		sb_addf(&s, "Env: %s", w->doc.env);
		LINE(R_NORMAL);
	}
	for (size_t k = 0; k < w->doc.nevents; k++)
		if (w->doc.events[k].iter == r->iter) {
			sb_adds(&s, "After it: ");
			optlog_event_text(&w->doc.events[k], &s);
			LINE(w->doc.events[k].stop ? R_HEADER : R_NORMAL);
		}
	if (r->lineno) {
		sb_addf(&s, "Source: %s line %d", w->path, r->lineno);
		LINE(R_DIM);
	}
	for (size_t k = 0; k < w->probs.n; k++)
		if (r->lineno && w->probs.v[k].lineno == r->lineno) {
			sb_addf(&s, "Problem: %s", w->probs.v[k].msg);
			LINE(R_ERROR);
		}
	sb_adds(&s, "Per-shape numbers, probe readings, the diff and lint findings live in the "
		    "workspace database: open the workspace with optloop tui to see them.");
	LINE(R_DIM);
#undef LINE
	sb_release(&s);
	return 0;
}

static int view_run_fds(struct app *a, int fds[2])
{
	return 0;
}

static int view_run_pump(struct app *a, struct err *e)
{
	return 0;
}

static void view_run_cancel(struct app *a)
{
}

static int view_run_end(struct app *a, struct err *e)
{
	return 0;
}

static int view_watch_fd(struct app *a)
{
	struct ws_view *w = a->be_data;
	return w->ino;
}

/* 1 when the log, TRAPS.md or dispatch.md beside it changed. */
static int view_watch_pump(struct app *a, struct err *e)
{
	struct ws_view *w = a->be_data;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;
	int changed = 0;

	(void)e;
	while ((len = read(w->ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ie = (const struct inotify_event *)p;
			p += sizeof(*ie) + ie->len;
			if (ie->len && (!strcmp(ie->name, w->base) || !strcmp(ie->name, "TRAPS.md") ||
					!strcmp(ie->name, "dispatch.md")))
				changed = 1;
		}
	}
	return changed;
}

static void view_close(struct app *a)
{
	struct ws_view *w = a->be_data;

	clear_data(a);
	optlog_doc_release(&w->doc);
	problems_release(&w->probs);
	ws_files_release(&w->files);
	if (w->ino >= 0)
		close(w->ino);
	free(w->dir);
	free(w->path);
	free(w->base);
	free(w->title);
	free(w);
	a->be_data = NULL;
}

static const struct backend view_backend = {
	.reload = view_reload,
	.status = view_status,
	.act = view_act,
	.submit = view_submit,
	.detail = view_detail,
	.shapes = view_shapes,
	.run_fds = view_run_fds,
	.run_pump = view_run_pump,
	.run_cancel = view_run_cancel,
	.run_end = view_run_end,
	.close = view_close,
	.watch_fd = view_watch_fd,
	.watch_pump = view_watch_pump,
};

int ws_view_open(struct app *a, const char *path, bool follow, struct err *e)
{
	struct ws_view *w;
	char *file;

	app_mark_start();
	/* a workspace folder stands for its OPT_LOG.md */
	if (fsutil_is_dir(path)) {
		file = fsutil_join(path, "OPT_LOG.md");
		if (!fsutil_exists(file)) {
			err_set(e, ERR_NOTFOUND,
				"view: %s holds no OPT_LOG.md (give an OPT_LOG.md, or a workspace "
				"folder such as profile/<op>-opt)",
				path);
			free(file);
			return ERR_NOTFOUND;
		}
	} else if (!fsutil_exists(path)) {
		return err_set(e, ERR_NOTFOUND,
			       "view: %s is not there (give the path of an OPT_LOG.md or of a "
			       "workspace folder)",
			       path);
	} else {
		file = xstrdup(path);
	}
	w = xcalloc(1, sizeof(*w));
	w->path = file;
	w->title = xasprintf("%s%s", file, follow ? "" : " (snapshot)");
	char *copy = xstrdup(file);
	w->dir = xstrdup(dirname(copy));
	free(copy);
	copy = xstrdup(file);
	w->base = xstrdup(basename(copy));
	free(copy);
	w->ino = -1;
	if (follow) {
		w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (w->ino >= 0 &&
		    inotify_add_watch(w->ino, w->dir,
				      IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE) < 0) {
			close(w->ino);
			w->ino = -1;
		}
	}
	app_init(a, &view_backend, w);
	return 0;
}
