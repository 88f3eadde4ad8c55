/*
 * app — the workbench program: windows from the layout, the panes, the
 * modal stack (wizard over overlay over panes), the status and message
 * lines, and the event loop that polls the terminal, signals and the
 * verify child's output together.
 *
 * Where the data comes from is a backend: the live workspace through the
 * engine (tui/ws_loop.c) or a read-only OPT_LOG.md (tui/ws_view.c).  The
 * app has no loop logic of its own; it shows what the backend reports and
 * passes the user's actions to it.
 */
#ifndef OPTLOOP_APP_H
#define OPTLOOP_APP_H

#include "core/sb.h"
#include "tui/workbench/filter.h"
#include "tui/workbench/layout.h"
#include "views/actions.h"
#include "views/view.h"

#include <stdbool.h>

struct app;
struct err;
struct wizard;

struct backend {
	/* (Re)load everything the panes show into a->data. */
	int (*reload)(struct app *a, struct err *e);
	/* The status line: where the loop stands and which key does the due
	 * step, in words that fit `cells` columns (shorter ones on a narrow
	 * terminal) whenever they can. */
	void (*status)(struct app *a, int cells, struct sb *out);
	/* v, l, c, r, t: 0 when done or a wizard was opened (app_open_wizard);
	 * <0 with e saying why it was refused. */
	int (*act)(struct app *a, enum action act, struct err *e);
	/* The open wizard was submitted: 0 closes it, <0 keeps it open with e shown. */
	int (*submit)(struct app *a, struct wizard *wz, struct err *e);
	/* Fill a->data.detail for row index i. */
	int (*detail)(struct app *a, int i, struct err *e);
	/* Per-shape series for the chart's per-shape mode (may be NULL). */
	int (*shapes)(struct app *a, struct err *e);
	/* The running verify: descriptors to poll, read what is there (1 still
	 * running, 0 finished), ask it to stop, record it. */
	int (*run_fds)(struct app *a, int fds[2]);
	int (*run_pump)(struct app *a, struct err *e);
	void (*run_cancel)(struct app *a);
	int (*run_end)(struct app *a, struct err *e);
	void (*close)(struct app *a);
	/* Changes made by others (may be NULL): a descriptor to poll while no
	 * run of our own is going (-1: none), and reading what woke it: 1 when
	 * the panes must be reloaded, 0 when nothing changed. */
	int (*watch_fd)(struct app *a);
	int (*watch_pump)(struct app *a, struct err *e);
	/* The rows the first reload left out (data.nrows_older: a long log's
	 * first frame reads its newest rows only): read them all, right after
	 * that frame.  May be NULL where reload reads every row. */
	int (*rows_rest)(struct app *a, struct err *e);
};

struct app {
	const struct backend *be;
	void *be_data;
	struct wb_data data;
	struct view views[P_NPANES];
	int focus;
	struct view overlay;
	bool overlay_on;
	struct wizard *wz;
	bool running;
	const char *run_name; /* what is running: "verify" or "confirm" (static) */
	bool live_shown;
	bool shapes_loaded;
	struct layout lay;
	WINDOW *win[P_NPANES], *wtop, *wstatus, *wmsg, *wover, *wmodal;
	struct sb msg;
	bool msg_err;
	bool searching;
	/* what the message line's prompt asks for */
	enum { PROMPT_SEARCH, PROMPT_GOTO, PROMPT_FILTER } prompt;
	struct row_filter filter; /* the rows the panes show (filter.h) */
	int mark_iter;            /* the row details compare with (m), -1: none */
	struct sb search, last_search;
	bool quit_asked, quit, hangup;
	int exit_status;
	bool dirty;        /* redraw before the next wait */
	bool output_dirty; /* redraw when the frame time has come */
	double last_live_draw;
};

/* Set up an app around a backend (data filled by be->refresh in app_run). */
void app_init(struct app *a, const struct backend *be, void *be_data);
/* Start the terminal, run until quit, restore the terminal; returns the
 * exit status (0, or 4 when a run had to be abandoned). */
int app_run(struct app *a, struct err *e);
void app_release(struct app *a);

/* For backends. */
void app_message(struct app *a, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void app_open_wizard(struct app *a, struct wizard *wz);
/* A run (name: "verify", "confirm"; static) was started by the backend:
 * show the live pane. */
void app_run_started(struct app *a, const char *name);
/* A run another optloop drives is going (on) or has ended: the live pane
 * shows it (fed by the backend) the way it shows a run of our own. */
void app_external_run(struct app *a, bool on);
double app_now(void);
/* The moment the program started opening its data (first call wins):
 * the first-frame figure of OPTLOOP_PASS_LOG counts from here. */
void app_mark_start(void);

#endif
