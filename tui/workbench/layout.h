/*
 * layout — the one place that owns window geometry.  Given the terminal
 * size and what is shown (live output, an overlay, a modal), it computes
 * every rectangle; the program recomputes it on every resize.
 */
#ifndef OPTLOOP_LAYOUT_H
#define OPTLOOP_LAYOUT_H

#include <stdbool.h>

#define LAYOUT_MIN_COLS 60
#define LAYOUT_MIN_ROWS 16

struct rect {
	int y, x, h, w; /* h == 0: not shown */
};

enum pane { P_TIMELINE, P_BEST, P_TRAPS, P_DISPATCH, P_LIVE, P_NPANES };

struct layout {
	int rows, cols;
	bool too_small;
	struct rect top;          /* title bar */
	struct rect pane[P_NPANES];
	struct rect overlay;      /* detail / help / notes: the whole pane area */
	struct rect modal;        /* a wizard, centred */
	struct rect status, message;
};

/* Columns a wizard gets on a terminal `cols` wide. */
int layout_modal_width(int cols);
/* live: show the live output pane; modal_h: rows a wizard wants (0: none). */
void layout_compute(struct layout *l, int rows, int cols, bool live, int modal_h);

#endif
