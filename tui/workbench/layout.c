/*
 * layout — see layout.h.  Wide terminals get a 2x2 grid (timeline and
 * chart over traps and dispatch); narrow ones put the timeline across the
 * top.  While verify output is shown it takes the lower half, full width,
 * because output lines are long.
 */
#include "tui/workbench/layout.h"

#include <string.h>

static struct rect R(int y, int x, int h, int w)
{
	struct rect r = {y, x, h > 0 ? h : 0, w > 0 ? w : 0};
	if (!r.h || !r.w)
		r.h = r.w = 0;
	return r;
}

int layout_modal_width(int cols)
{
	return cols - 4 > 84 ? 84 : cols - 4;
}

void layout_compute(struct layout *l, int rows, int cols, bool live, int modal_h)
{
	memset(l, 0, sizeof(*l));
	l->rows = rows;
	l->cols = cols;
	if (rows < LAYOUT_MIN_ROWS || cols < LAYOUT_MIN_COLS) {
		l->too_small = true;
		return;
	}
	l->top = R(0, 0, 1, cols);
	l->status = R(rows - 2, 0, 1, cols);
	l->message = R(rows - 1, 0, 1, cols);

	int y0 = 1, ph = rows - 3;
	/* upper row; verify output gets the larger share while it is shown,
	 * so a result table and its header fit together at 80x24 */
	int th = live ? ph * 2 / 5 : ph * 11 / 20;
	int bh = ph - th;
	bool wide = cols >= 100;
	int lw = wide ? cols * 3 / 5 : cols;

	l->overlay = R(y0, 0, ph, cols);
	if (wide) {
		l->pane[P_TIMELINE] = R(y0, 0, th, lw);
		l->pane[P_BEST] = R(y0, lw, th, cols - lw);
		if (live) {
			l->pane[P_LIVE] = R(y0 + th, 0, bh, cols);
		} else {
			l->pane[P_TRAPS] = R(y0 + th, 0, bh, lw);
			l->pane[P_DISPATCH] = R(y0 + th, lw, bh, cols - lw);
		}
	} else {
		int hw = cols / 2;
		l->pane[P_TIMELINE] = R(y0, 0, th, cols);
		if (live) {
			l->pane[P_LIVE] = R(y0 + th, 0, bh, cols);
		} else {
			int dh = bh / 2;
			l->pane[P_BEST] = R(y0 + th, 0, bh, hw);
			l->pane[P_TRAPS] = R(y0 + th, hw, bh - dh, cols - hw);
			l->pane[P_DISPATCH] = R(y0 + th + bh - dh, hw, dh, cols - hw);
		}
	}
	if (modal_h > 0) {
		int mw = layout_modal_width(cols);
		int mh = modal_h > ph ? ph : modal_h;
		l->modal = R(y0 + (ph - mh) / 2, (cols - mw) / 2, mh, mw);
	}
}
