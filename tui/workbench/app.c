/*
 * app — the workbench's event loop and screen (see app.h).
 *
 * One pass: draw what changed into the windows (wnoutrefresh each), one
 * doupdate(), then poll the terminal, the signal pipe and the verify
 * child's descriptors together.  Keys are handled as they come; the
 * child's output is pumped without blocking and the live pane is redrawn
 * at most every 40 ms, so a child printing at full speed cannot starve the
 * keyboard.  OPTLOOP_PASS_LOG=FILE writes each pass's duration (for the
 * benchmarks).
 */
#include "tui/workbench/app.h"

#include "core/err.h"
#include "tui/workbench/passlog.h"
#include "tui/workbench/review.h"
#include "tui/workbench/term.h"
#include "views/live.h"
#include "views/sanitize.h"
#include "views/wizard.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#define LIVE_FRAME_S 0.040

double app_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct view_ops *const pane_ops[P_NPANES] = {
	[P_TIMELINE] = &timeline_view, [P_BEST] = &best_view,      [P_TRAPS] = &traps_view,
	[P_DISPATCH] = &dispatch_view, [P_LIVE] = &live_view,
};

void app_init(struct app *a, const struct backend *be, void *be_data)
{
	memset(a, 0, sizeof(*a));
	a->be = be;
	a->be_data = be_data;
	a->data.band_lo = a->data.band_hi = NAN;
	for (int i = 0; i < P_NPANES; i++) {
		a->views[i].ops = pane_ops[i];
		a->views[i].d = &a->data;
	}
	a->focus = P_TIMELINE;
	a->mark_iter = -1;
	sb_init(&a->msg);
	sb_init(&a->search);
	sb_init(&a->last_search);
	a->dirty = true;
}

void app_message(struct app *a, bool error, const char *fmt, ...)
{
	va_list ap;

	sb_reset(&a->msg);
	va_start(ap, fmt);
	sb_vaddf(&a->msg, fmt, ap);
	va_end(ap);
	a->msg_err = error;
	a->dirty = true;
}

void app_open_wizard(struct app *a, struct wizard *wz)
{
	wizard_free(a->wz);
	a->wz = wz;
	a->dirty = true;
}

static void relayout(struct app *a);

void app_external_run(struct app *a, bool on)
{
	if (on) {
		a->live_shown = true;
		a->views[P_LIVE].mode = 0; /* follow the end */
	}
	if (stdscr && a->wtop) /* the terminal is up: the panes move now */
		relayout(a);
	a->dirty = true;
}

void app_run_started(struct app *a, const char *name)
{
	a->running = true;
	a->run_name = name;
	a->live_shown = true;
	a->views[P_LIVE].mode = 0; /* follow the end */
	a->dirty = true;
}

/* ---- geometry ------------------------------------------------------------ */

static void del_windows(struct app *a)
{
	WINDOW **all[] = {&a->wtop, &a->wstatus, &a->wmsg, &a->wover, &a->wmodal};
	for (int i = 0; i < P_NPANES; i++)
		if (a->win[i]) {
			delwin(a->win[i]);
			a->win[i] = NULL;
		}
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (*all[i]) {
			delwin(*all[i]);
			*all[i] = NULL;
		}
}

static WINDOW *mkwin(struct rect r)
{
	return r.h > 0 ? newwin(r.h, r.w, r.y, r.x) : NULL;
}

static void relayout(struct app *a)
{
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	del_windows(a);
	layout_compute(&a->lay, rows, cols, a->live_shown,
		       a->wz ? wizard_height(a->wz, layout_modal_width(cols)) : 0);
	if (a->lay.too_small)
		return;
	a->wtop = mkwin(a->lay.top);
	a->wstatus = mkwin(a->lay.status);
	a->wmsg = mkwin(a->lay.message);
	a->wover = mkwin(a->lay.overlay);
	a->wmodal = mkwin(a->lay.modal);
	for (int i = 0; i < P_NPANES; i++)
		a->win[i] = mkwin(a->lay.pane[i]);
	/* Focus must be on a pane that is shown. */
	if (!a->win[a->focus])
		a->focus = a->live_shown && a->win[P_LIVE] ? P_LIVE : P_TIMELINE;
}

/* ---- drawing ------------------------------------------------------------- */

static void draw_too_small(struct app *a)
{
	char buf[160];
	int rows = a->lay.rows, cols = a->lay.cols;

	werase(stdscr);
	snprintf(buf, sizeof(buf), "terminal too small: %dx%d", cols, rows);
	draw_text(stdscr, rows / 2 - 1, 0, cols, buf, A_BOLD);
	snprintf(buf, sizeof(buf), "optloop needs at least %dx%d", LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
	draw_text(stdscr, rows / 2, 0, cols, buf, A_NORMAL);
	draw_text(stdscr, rows / 2 + 1, 0, cols, "enlarge the window, or press q to quit", A_DIM);
	wnoutrefresh(stdscr);
}

static void draw_top(struct app *a)
{
	struct sb s = SB_INIT;
	int w = a->lay.cols;

	sb_init(&s);
	sb_addf(&s, " optloop \xc2\xb7 %s", a->data.title ? a->data.title : "");
	if (a->data.readonly)
		sb_adds(&s, " (read-only)");
	if (a->data.nnotes)
		sb_addf(&s, " \xc2\xb7 %zu problem%s (p)", a->data.nnotes, a->data.nnotes == 1 ? "" : "s");
	draw_fill(a->wtop, 0, 0, w, theme_attr(R_STATUS));
	draw_text(a->wtop, 0, 0, w, s.buf, theme_attr(R_STATUS) | A_BOLD);
	wnoutrefresh(a->wtop);
	sb_release(&s);
}

static void draw_status(struct app *a)
{
	struct sb s = SB_INIT, right = SB_INIT;
	int w = a->lay.cols;

	sb_init(&s);
	sb_init(&right);
	/* action_first_key's buffer is static: one call per statement. */
	sb_addf(&right, "%s help \xc2\xb7 ", action_first_key(ACT_HELP));
	sb_addf(&right, "%s quit ", action_first_key(ACT_QUIT));
	int rw = sanitize_width(right.buf, right.len);
	/* The due step comes first: the help and quit keys give way to it. */
	a->be->status(a, w - rw - 2, &s);
	int sw = sanitize_width(s.buf, s.len);
	bool hint = sw <= w - rw - 2 && w - rw > 20;
	draw_fill(a->wstatus, 0, 0, w, theme_attr(R_STATUS));
	draw_text(a->wstatus, 0, 1, hint ? w - rw - 2 : w - 2, s.buf, theme_attr(R_STATUS));
	if (hint)
		draw_text(a->wstatus, 0, w - rw, rw, right.buf, theme_attr(R_STATUS));
	wnoutrefresh(a->wstatus);
	sb_release(&s);
	sb_release(&right);
}

static void draw_message(struct app *a)
{
	werase(a->wmsg);
	if (a->searching) {
		struct sb s = SB_INIT;
		sb_init(&s);
		sb_addf(&s, "%s%s",
			a->prompt == PROMPT_GOTO     ? "go to iteration: "
			: a->prompt == PROMPT_FILTER ? "filter (keep, fail, revert, drop, axis NAME; "
						       "nothing: all): "
						     : "/",
			a->search.buf);
		draw_text(a->wmsg, 0, 0, a->lay.cols, s.buf, A_BOLD);
		sb_release(&s);
	} else if (a->msg.len) {
		draw_text(a->wmsg, 0, 0, a->lay.cols, a->msg.buf,
			  theme_attr(a->msg_err ? R_ERROR : R_MESSAGE));
	}
	wnoutrefresh(a->wmsg);
}

static void draw_all(struct app *a)
{
	if (a->lay.too_small) {
		draw_too_small(a);
		return;
	}
	draw_top(a);
	a->data.has_sel = a->data.nrows && a->views[P_TIMELINE].sel >= 0;
	a->data.sel_row = a->data.has_sel ? (size_t)a->views[P_TIMELINE].sel : 0;
	if (a->data.live)
		a->data.live->now = app_now();
	if (a->overlay_on && a->wover) {
		a->overlay.focused = true;
		a->overlay.ops->draw(&a->overlay, a->wover);
		wnoutrefresh(a->wover);
	} else {
		for (int i = 0; i < P_NPANES; i++) {
			if (!a->win[i])
				continue;
			a->views[i].focused = i == a->focus;
			a->views[i].ops->draw(&a->views[i], a->win[i]);
			wnoutrefresh(a->win[i]);
		}
	}
	if (a->wz && a->wmodal) {
		wizard_draw(a->wz, a->wmodal);
		wnoutrefresh(a->wmodal);
	}
	draw_status(a);
	draw_message(a);
}

/* ---- actions ------------------------------------------------------------- */

static void open_overlay(struct app *a, const struct view_ops *ops)
{
	memset(&a->overlay, 0, sizeof(a->overlay));
	a->overlay.ops = ops;
	a->overlay.d = &a->data;
	a->overlay_on = true;
}

static struct view *focused_view(struct app *a)
{
	return a->overlay_on ? &a->overlay : &a->views[a->focus];
}

static void do_search(struct app *a, bool forward)
{
	struct view *v = focused_view(a);

	if (!a->last_search.len) {
		app_message(a, true, "no search yet: press / and type what to find");
		return;
	}
	if (view_search(v, a->last_search.buf, forward)) {
		if (v->ops == &live_view) /* stop following to show the match */
			v->mode = v->sel < v->ops->nitems(v) - 1;
		app_message(a, false, "/%s", a->last_search.buf);
	} else {
		app_message(a, true, "not found in the %s pane: %s", v->ops->name, a->last_search.buf);
	}
}

static void cycle_focus(struct app *a, int dir)
{
	for (int k = 1; k <= P_NPANES; k++) {
		int i = ((a->focus + dir * k) % P_NPANES + P_NPANES) % P_NPANES;
		if (a->win[i]) {
			a->focus = i;
			return;
		}
	}
}

static void backend_action(struct app *a, enum action act)
{
	struct err e = {0};
	bool had_wizard = a->wz != NULL;

	if (a->be->act(a, act, &e) < 0) {
		app_message(a, true, "%s", e.msg);
		return;
	}
	if (a->wz && !had_wizard)
		relayout(a);
	if ((act == ACT_VERIFY || act == ACT_NOISE || act == ACT_CONFIRM) && a->running)
		relayout(a);
}

/* Reload, and keep the newest row in view: a timeline resting on its last
 * row follows the rows another client (or this one) appends. */
static int reload_following(struct app *a, struct err *e)
{
	struct view *t = &a->views[P_TIMELINE];
	bool at_end = a->data.nrows == 0 || t->sel >= (int)a->data.nrows - 1;
	int rc = a->be->reload(a, e);
	if (rc == 0)
		row_filter_apply(&a->filter, &a->data);
	if (rc == 0 && at_end && a->data.nrows)
		t->sel = (int)a->data.nrows - 1;
	/* a reload drops the per-shape numbers: the pane showing them gets
	 * them again at once, never "no per-shape numbers" */
	if (rc == 0 && a->views[P_BEST].mode && !a->shapes_loaded && a->be->shapes) {
		rc = a->be->shapes(a, e);
		a->shapes_loaded = true;
	}
	return rc;
}

/* A long log's first frame showed its newest rows; the older ones are read
 * now, before the first key is taken.  The timeline keeps its row and its
 * place, so the frame after it is the same. */
static void rows_rest(struct app *a)
{
	struct view *t = &a->views[P_TIMELINE];
	struct err e = {0};
	int iter = t->sel >= 0 && (size_t)t->sel < a->data.nrows ? a->data.rows[t->sel].iter : -1;
	size_t had = a->data.nrows;

	if (!a->be->rows_rest || a->be->rows_rest(a, &e) < 0) {
		a->data.nrows_older = 0;
		if (e.msg[0])
			app_message(a, true, "%s", e.msg);
		return;
	}
	int shift = (int)(a->data.nrows - had);
	for (size_t i = a->data.nrows; iter >= 0 && i-- > 0;)
		if (a->data.rows[i].iter == iter) {
			shift = (int)i - t->sel;
			break;
		}
	t->sel += shift;
	t->top += shift;
	a->dirty = true;
}

static void finish_run(struct app *a)
{
	struct err e = {0};

	a->running = false;
	if (a->data.live) {
		live_flush(a->data.live);
		a->data.live->running = false;
		a->data.live->t_end = app_now();
	}
	if (a->be->run_end(a, &e) < 0)
		app_message(a, true, "%s", e.msg);
	err_clear(&e);
	if (reload_following(a, &e) < 0)
		app_message(a, true, "%s", e.msg);
	a->dirty = true;
}

static void handle_wizard_key(struct app *a, wint_t ch, bool fkey)
{
	struct err e = {0};
	enum wz_result r = wizard_key(a->wz, ch, fkey);

	if (r == WZ_CANCEL) {
		wizard_free(a->wz);
		a->wz = NULL;
		app_message(a, false, "cancelled: nothing was saved");
		relayout(a);
	} else if (r == WZ_SUBMIT) {
		if (a->be->submit(a, a->wz, &e) < 0) {
			free(a->wz->error);
			a->wz->error = xstrdup(e.msg);
		} else {
			wizard_free(a->wz);
			a->wz = NULL;
			err_clear(&e);
			if (reload_following(a, &e) < 0)
				app_message(a, true, "%s", e.msg);
			relayout(a);
		}
	}
	a->dirty = true;
}

static void handle_search_key(struct app *a, wint_t ch, bool fkey)
{
	bool enter = (!fkey && (ch == '\r' || ch == '\n')) || (fkey && ch == KEY_ENTER);
	if (!fkey && ch == KEY_ESC) {
		a->searching = false;
	} else if (enter && a->prompt == PROMPT_GOTO) {
		a->searching = false;
		struct sb m = SB_INIT;
		int sel = 0;
		if (review_go_to(&a->data, a->search.buf, &sel, &m) == 0) {
			a->overlay_on = false;
			if (a->win[P_TIMELINE])
				a->focus = P_TIMELINE;
			a->views[P_TIMELINE].sel = sel;
			app_message(a, false, "%s", m.buf);
		} else {
			app_message(a, true, "%s", m.buf);
		}
		sb_release(&m);
	} else if (enter && a->prompt == PROMPT_FILTER) {
		a->searching = false;
		struct sb m = SB_INIT;
		int rc = review_filter(&a->filter, &a->data, a->search.buf, &a->views[P_TIMELINE].sel, &m);
		if (rc >= 0) {
			struct err e = {0};
			a->overlay_on = false;
			if (a->shapes_loaded && a->be->shapes) /* per-shape series follow the rows */
				a->be->shapes(a, &e);
		}
		app_message(a, rc != 0, "%s", m.buf);
		sb_release(&m);
	} else if ((!fkey && (ch == '\r' || ch == '\n')) || (fkey && ch == KEY_ENTER)) {
		a->searching = false;
		if (a->search.len) {
			sb_reset(&a->last_search);
			sb_adds(&a->last_search, a->search.buf);
		}
		do_search(a, true);
	} else if ((fkey && ch == KEY_BACKSPACE) || (!fkey && (ch == 127 || ch == 8))) {
		if (a->search.len) {
			size_t n = a->search.len - 1;
			while (n > 0 && (a->search.buf[n] & 0xc0) == 0x80)
				n--;
			a->search.len = n;
			a->search.buf[n] = '\0';
		} else if (a->prompt == PROMPT_SEARCH) {
			a->searching = false;
		}
	} else if (!fkey && ch >= 0x20 && ch != 0x7f && a->search.len < 200) {
		char mb[8];
		mbstate_t st;
		memset(&st, 0, sizeof(st));
		size_t n = wcrtomb(mb, (wchar_t)ch, &st);
		if (n != (size_t)-1)
			sanitize_line(mb, n, &a->search);
	}
	a->dirty = true;
}

static void request_quit(struct app *a)
{
	if (!a->running) {
		a->quit = true;
		return;
	}
	a->quit_asked = true;
	app_message(a, true,
		    "a %s run is going: press q again to cancel it and quit (it is recorded as "
		    "incomplete), any other key to stay",
		    a->run_name);
}

/* The edit key: the kernel file(s) in the user's editor, curses suspended
 * meanwhile; the panes reload after, so an edit shows as EDITING at once. */
static void edit_kernel(struct app *a)
{
	const char *ed = getenv("VISUAL"), *name;
	struct err e = {0};
	int status = 0;

	if (!a->data.nkernel) {
		app_message(a, true, "edit: %s",
			    a->data.readonly && !a->data.due
				    ? "a log viewed read-only has no kernel file to open (open the "
				      "workbench in the kernel's repository: optloop tui)"
				    : "the contract names no kernel file (Kernel: in docs/draft.md)");
		return;
	}
	if (a->running || (a->data.live && a->data.live->running)) {
		app_message(a, true,
			    "edit refused: a run is going, and a change now is not the one it "
			    "measures (wait for it, or %s to cancel ours)",
			    action_first_key(ACT_CANCEL));
		return;
	}
	if (!ed || !*ed)
		ed = getenv("EDITOR");
	if (!ed || !*ed)
		ed = "vi";
	name = strrchr(ed, '/') ? strrchr(ed, '/') + 1 : ed;
	if (term_run_child(ed, a->data.repo, a->data.kernel, a->data.nkernel, &status, &e) < 0) {
		app_message(a, true, "edit: %s", e.msg);
		return;
	}
	relayout(a); /* the terminal may have been resized meanwhile */
	err_clear(&e);
	if (reload_following(a, &e) < 0) {
		app_message(a, true, "%s", e.msg);
		return;
	}
	if (status == 127)
		app_message(a, true,
			    "edit: the editor '%s' could not be run (the shell exited 127): set "
			    "VISUAL or EDITOR to your editor",
			    ed);
	else if (status)
		app_message(a, true, "edit: %s exited with status %d on %s", name, status,
			    a->data.nkernel ? a->data.kernel[0] : "");
	else
		app_message(a, false, "back from %s on %s%s \xc2\xb7 next: %s", name,
			    a->data.nkernel ? a->data.kernel[0] : "",
			    a->data.nkernel > 1 ? " and the other kernel files" : "",
			    a->data.due_brief ? a->data.due_brief : "verify (v) measures a change");
}

static void handle_key(struct app *a, wint_t ch, bool fkey)
{
	int key = (int)ch;

	if (fkey && ch == KEY_RESIZE) {
		relayout(a);
		clearok(curscr, TRUE);
		a->dirty = true;
		return;
	}
	if (a->lay.too_small) {
		if (!fkey && ch == 'q')
			request_quit(a);
		return;
	}
	if (a->quit_asked) {
		a->quit_asked = false;
		sb_reset(&a->msg);
		if (!fkey && ch == 'q') {
			if (a->running)
				a->be->run_cancel(a);
			a->quit = true;
		}
		a->dirty = true;
		return;
	}
	if (a->searching) {
		handle_search_key(a, ch, fkey);
		return;
	}
	if (a->wz) {
		handle_wizard_key(a, ch, fkey);
		return;
	}
	/* Wide characters never map to an action. */
	if (!fkey && ch > 0x7f)
		key = -1;
	enum action act = action_for_key(key);
	sb_reset(&a->msg);
	a->dirty = true;

	if (a->overlay_on) {
		if (act == ACT_BACK || act == ACT_QUIT || act == ACT_HELP) {
			a->overlay_on = false;
			return;
		}
		if (act == ACT_SEARCH) {
			a->searching = true;
			a->prompt = PROMPT_SEARCH;
			sb_reset(&a->search);
			return;
		}
		if (act == ACT_SEARCH_NEXT || act == ACT_SEARCH_PREV) {
			do_search(a, act == ACT_SEARCH_NEXT);
			return;
		}
		if (view_navigate(&a->overlay, act))
			return;
	}
	switch (act) {
	case ACT_QUIT:
		request_quit(a);
		return;
	case ACT_HELP:
		open_overlay(a, &help_view);
		return;
	case ACT_NOTES:
		if (!a->data.nnotes) {
			app_message(a, false, "no problems: the log imported cleanly");
			return;
		}
		open_overlay(a, &notes_view);
		return;
	case ACT_EDIT:
		edit_kernel(a);
		return;
	case ACT_NEXT_PANE:
	case ACT_PREV_PANE:
		cycle_focus(a, act == ACT_NEXT_PANE ? 1 : -1);
		return;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		return;
	case ACT_SEARCH:
		a->searching = true;
		a->prompt = PROMPT_SEARCH;
		sb_reset(&a->search);
		return;
	case ACT_GOTO:
		if (!a->data.nrows) {
			app_message(a, true, "go to: the timeline has no iterations yet");
			return;
		}
		a->searching = true;
		a->prompt = PROMPT_GOTO;
		sb_reset(&a->search);
		return;
	case ACT_FILTER:
		a->searching = true;
		a->prompt = PROMPT_FILTER;
		sb_reset(&a->search);
		return;
	case ACT_SEARCH_NEXT:
	case ACT_SEARCH_PREV:
		do_search(a, act == ACT_SEARCH_NEXT);
		return;
	case ACT_BACK:
		if (a->live_shown && !a->running) {
			a->live_shown = false;
			relayout(a);
		}
		return;
	case ACT_CANCEL:
		if (!a->running) {
			app_message(a, true,
				    "nothing to cancel: no verify, noise or confirm run is going");
			return;
		}
		a->be->run_cancel(a);
		app_message(a, false, "cancelling the %s run (it will be recorded as incomplete)",
			    a->run_name);
		return;
	case ACT_DETAIL: {
		struct err e = {0};
		if (a->focus != P_TIMELINE || a->data.nrows == 0) {
			app_message(a, true, "details: select an iteration in the timeline first (Tab to it)");
			return;
		}
		if (a->be->detail(a, a->views[P_TIMELINE].sel, &e) < 0) {
			app_message(a, true, "%s", e.msg);
			return;
		}
		review_compare(&a->data, a->views[P_TIMELINE].sel, a->mark_iter);
		open_overlay(a, &detail_view);
		return;
	}
	case ACT_MARK: {
		struct sb m = SB_INIT;
		if (a->focus != P_TIMELINE || a->data.nrows == 0)
			sb_adds(&m, "mark: select an iteration in the timeline first (Tab to it)");
		else
			a->mark_iter = review_mark(&a->data, a->views[P_TIMELINE].sel, a->mark_iter, &m);
		app_message(a, a->focus != P_TIMELINE || !a->data.nrows, "%s", m.buf);
		sb_release(&m);
		return;
	}
	case ACT_MODE:
		if (!a->shapes_loaded && a->be->shapes) {
			struct err e = {0};
			if (a->be->shapes(a, &e) < 0)
				app_message(a, true, "%s", e.msg);
			a->shapes_loaded = true;
		}
		best_view.action(&a->views[P_BEST], ACT_MODE);
		return;
	case ACT_VERIFY:
	case ACT_NOISE:
	case ACT_CONFIRM:
		if (a->running) {
			app_message(a, true, "%s refused: a %s run is already going (%s cancels it)",
				    action_table[act - 1].name, a->run_name, action_first_key(ACT_CANCEL));
			return;
		}
		/* fall through */
	case ACT_LOG:
	case ACT_COMMIT:
	case ACT_REASSESS:
	case ACT_STOP:
	case ACT_TOGGLE:
		if (act == ACT_TOGGLE && a->focus != P_TRAPS) {
			app_message(a, true, "t marks a trap: Tab to the traps pane first");
			return;
		}
		if (a->running && act != ACT_TOGGLE) {
			app_message(a, true, "%s refused: %s is still running (wait, or %s to cancel)",
				    action_table[act - 1].name, a->run_name, action_first_key(ACT_CANCEL));
			return;
		}
		backend_action(a, act);
		return;
	default:
		break;
	}
	struct view *v = focused_view(a);
	/* Sideways goes to the verify output while it is shown: it is the
	 * pane whose lines run wide. */
	if ((act == ACT_SCROLL_LEFT || act == ACT_SCROLL_RIGHT) && !v->ops->hscroll &&
	    a->live_shown && a->win[P_LIVE])
		v = &a->views[P_LIVE];
	if (v->ops->action && v->ops->action(v, act))
		return;
	if (view_navigate(v, act))
		return;
	if (act == ACT_NONE)
		app_message(a, true, "key %s does nothing here (? lists the keys)",
			    fkey ? keyname(key) : action_key_name(key));
}

/* ---- the loop ------------------------------------------------------------ */

static double t_start = -1;

void app_mark_start(void)
{
	if (t_start < 0)
		t_start = mono_now();
}

static void read_keys(struct app *a)
{
	/* Bounded, so that a paste cannot hold up the output pump. */
	for (int k = 0; k < 256 && !a->quit; k++) {
		wint_t ch;
		int r = wget_wch(stdscr, &ch);
		if (r == ERR)
			break;
		handle_key(a, ch, r == KEY_CODE_YES);
	}
}

static void hang_up(struct app *a)
{
	/* The terminal is gone: record a running verify as incomplete, lose
	 * nothing, touch the terminal no more. */
	term_lost();
	a->hangup = true;
	a->quit = true;
	if (a->running) {
		struct err e = {0};
		a->be->run_cancel(a);
		double t0 = mono_now();
		while (a->be->run_pump(a, &e) > 0 && mono_now() - t0 < 30)
			;
		a->running = false;
		a->be->run_end(a, &e);
		a->exit_status = 4;
	}
}

int app_run(struct app *a, struct err *e)
{
	struct pass_log pl = {0};
	int rc;

	app_mark_start();
	if ((rc = a->be->reload(a, e)) < 0)
		return rc;
	if ((rc = term_start(e)) < 0)
		return rc;
	pass_log_open(&pl);
	if (a->data.nnotes && !a->msg.len)
		app_message(a, true, "%zu problem%s found while reading (p lists them)", a->data.nnotes,
			    a->data.nnotes == 1 ? "" : "s");
	relayout(a);
	/* Start at the newest iteration. */
	a->views[P_TIMELINE].sel = (int)a->data.nrows - 1;

	while (!a->quit) {
		double t0 = mono_now();
		/* Keys redraw at once; the child's output at most once a frame. */
		if (a->dirty || (a->output_dirty && mono_now() - a->last_live_draw >= LIVE_FRAME_S)) {
			draw_all(a);
			doupdate();
			a->dirty = a->output_dirty = false;
			pass_log_frame(&pl, mono_now() - t_start);
			a->last_live_draw = mono_now();
		}
		if (a->data.nrows_older) {
			rows_rest(a);
			if (pl.f)
				pl.rows_whole = mono_now() - t_start;
			continue; /* drawn again (the same frame, whole) before a key */
		}
		pass_log_pass(&pl, mono_now() - t0);

		struct pollfd fds[5];
		int nfds = 0, run_first = 0, nrun = 0, watch_at = -1;
		fds[nfds++] = (struct pollfd){.fd = 0, .events = POLLIN};
		if (term_signal_fd() >= 0)
			fds[nfds++] = (struct pollfd){.fd = term_signal_fd(), .events = POLLIN};
		int wfd = a->be->watch_fd ? a->be->watch_fd(a) : -1;
		if (wfd >= 0) {
			watch_at = nfds;
			fds[nfds++] = (struct pollfd){.fd = wfd, .events = POLLIN};
		}
		if (a->running) {
			int rf[2];
			run_first = nfds;
			nrun = a->be->run_fds(a, rf);
			for (int i = 0; i < nrun; i++)
				fds[nfds++] = (struct pollfd){.fd = rf[i], .events = POLLIN};
		}
		/* While running, wake for the clock; a pending live redraw waits
		 * for its frame. */
		int timeout = a->running ? 250 : -1;
		if (a->output_dirty) {
			double wait = a->last_live_draw + LIVE_FRAME_S - mono_now();
			timeout = wait > 0 ? (int)(wait * 1000) + 1 : 0;
		}
		int n = poll(fds, (nfds_t)nfds, timeout);
		if (n < 0 && errno != EINTR)
			break;
		t0 = mono_now();
		if (n < 0) {
			/* A signal (SIGWINCH): curses queues KEY_RESIZE. */
			read_keys(a);
		} else {
			if (fds[0].revents & POLLIN)
				read_keys(a);
			if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				hang_up(a);
				break;
			}
			if (nfds > 1 && fds[1].fd == term_signal_fd() && (fds[1].revents & POLLIN)) {
				enum term_signal s = term_take_signal();
				if (s == TSIG_HUP) {
					hang_up(a);
					break;
				}
				if (s == TSIG_TERM) {
					if (a->running)
						a->be->run_cancel(a);
					a->quit = true;
				}
				if (s == TSIG_WINCH)
					read_keys(a); /* curses gives KEY_RESIZE */
			}
		}
		if (watch_at >= 0 && n > 0 && (fds[watch_at].revents & POLLIN)) {
			struct err we = {0};
			int r = a->be->watch_pump(a, &we);
			if (r < 0)
				app_message(a, true, "%s", we.msg);
			else if (r > 0 && reload_following(a, &we) < 0)
				app_message(a, true, "%s", we.msg);
			if (r != 0)
				a->dirty = true;
		}
		if (a->running) {
			bool ready = n == 0;
			for (int i = 0; i < nrun; i++)
				ready |= fds[run_first + i].revents != 0;
			if (ready) {
				struct err pe = {0};
				int r = a->be->run_pump(a, &pe);
				if (r < 0)
					app_message(a, true, "%s", pe.msg);
				if (r <= 0)
					finish_run(a);
				else
					a->output_dirty = true;
			} else if (n == 0) {
				a->output_dirty = true; /* the clock */
			}
		}
		if (pl.f && n >= 0) {
			/* Time spent handling this wake-up counts to the pass too. */
			pl.v[pl.n - 1] += mono_now() - t0;
		}
	}
	/* Quitting with a run still going (SIGTERM, or q confirmed). */
	if (a->running && !a->hangup) {
		struct err pe = {0};
		double t0 = mono_now();
		while (a->be->run_pump(a, &pe) > 0 && mono_now() - t0 < 30)
			;
		a->running = false;
		a->be->run_end(a, &pe);
		a->exit_status = 4;
	}
	del_windows(a);
	term_stop();
	pass_log_write(&pl);
	return a->exit_status;
}

void app_release(struct app *a)
{
	if (a->be && a->be->close)
		a->be->close(a);
	wizard_free(a->wz);
	a->wz = NULL;
	sb_release(&a->msg);
	sb_release(&a->search);
	sb_release(&a->last_search);
	row_filter_release(&a->filter);
}
