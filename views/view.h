/*
 * view — what every pane of the workbench shares: the data the panes show
 * (owned by the program, never by a view), colour roles, the callback table
 * a pane plugs in with, and small drawing helpers that always go through
 * the sanitiser.
 */
#ifndef OPTLOOP_VIEW_H
#define OPTLOOP_VIEW_H

#include "core/model.h"
#include "views/actions.h"

#include <curses.h>
#include <stdbool.h>
#include <stddef.h>

struct sb;
struct live_buf;

/* ---- colour roles ------------------------------------------------------- */

enum role {
	R_NORMAL,
	R_TITLE,       /* pane titles */
	R_TITLE_FOCUS, /* the focused pane's title */
	R_HEADER,      /* table headers */
	R_SELECTED,    /* the selected row of the focused pane */
	R_BASE,
	R_KEEP,
	R_REVERT,
	R_DROP,
	R_FLOOR,
	R_FAIL,       /* failed gates, harness errors */
	R_INCOMPLETE, /* killed / cut-off runs */
	R_SUBSET,     /* -k runs: a signal only */
	R_BEST,       /* the best line and the best row marker */
	R_BAND,       /* the noise band */
	R_POINT,      /* chart points */
	R_DIM,
	R_STATUS,  /* status line */
	R_MESSAGE, /* message line */
	R_ERROR,   /* refusals and errors in the message line */
	R_PROGRESS,
	R_KEY, /* key names in hints */
	R_MATCH,
	R_NROLES
};

/* Set up the roles.  colour=false (NO_COLOR, or a terminal without
 * colours) gives attributes only; must run after initscr/newterm. */
void theme_init(bool colour);
attr_t theme_attr(enum role r);
/* Role of a timeline row: failures and incomplete runs win over status. */
enum role theme_row_role(const struct log_row *r);

/* ---- glyphs ---------------------------------------------------------------- */

/* Every mark the timeline, the chart and the traps draw, declared once:
 * the panes draw them from here and the help's legend lists them. */
enum glyph_id {
	GL_ROW_FAIL,       /* timeline, first column */
	GL_ROW_INCOMPLETE,
	GL_ROW_BEST,
	GL_KEEP_UNCONFIRMED, /* timeline, Status column */
	GL_PT_FAIL,        /* chart points */
	GL_PT_INCOMPLETE,
	GL_PT_BEST,
	GL_PT_UNDONE,
	GL_PT,
	GL_BEST_LINE,      /* chart lines */
	GL_BAND,
	GL_TRAP_CHECKED,   /* trap checklist */
	GL_TRAP_HIT,
	GL_TRAP_UNCHECKED,
	GL_NGLYPHS
};

struct glyph {
	const char *pane;    /* "timeline", "chart", "traps" */
	const char *utf8, *ascii;
	const char *meaning;
};
extern const struct glyph glyph_table[GL_NGLYPHS];
/* The glyph as this terminal draws it (ASCII when the locale is not UTF-8). */
const char *glyph(enum glyph_id g);

/* ---- what the panes show ------------------------------------------------ */

/* One shape of a run on the roofline, as the run's verdict recorded it:
 * what the engine computed from the shape's time, its cost model and the
 * device's peaks. */
struct wb_roof {
	bool have;
	double bw, rate;             /* achieved bytes/s and FLOP/s; NAN unknown */
	double bw_share, flop_share; /* of the bandwidth and FLOP peaks; NAN unknown */
	char bound[8];               /* nearest: "memory", "compute", "launch"; "" none */
	char dtype[8];               /* whose FLOP peak counts ("bf16") */
	bool impossible;             /* faster than the peaks allow */
};

/* Per-shape series: one value per row of the log (NAN where not measured). */
struct wb_shape {
	char *name; /* "fwd B=1 T=4096 H=16 D=128" */
	double *ms; /* nrows entries */
	/* the best against the baseline, the comparison report final makes
	 * (loop_best_shapes); speedup 0 or NAN where there is none (a plain
	 * log: the rows' own times are divided) */
	double base_ms, best_ms, speedup;
	/* nrows entries: each row's run on the roofline at this shape (have
	 * false where it has none); NULL when no row's run has one */
	struct wb_roof *roof;
};

/* One line of the detail pane (or any pre-built text). */
struct wb_line {
	char *text;
	enum role role;
};

/* A verify run's verdict against the best, as the statistics recorded it.
 * The program fills it and owns the strings (wb_verdict_clear). */
struct wb_verdict {
	bool have;
	int iter;
	char *verdict; /* "fast", "same", "slow", "ambiguous", "missing",
			* "not_comparable", or "none" (nothing to compare with) */
	double gain;   /* vs best as a fraction; NAN when not compared */
	char *flags;   /* "implausible, unstable, busy_gpu", NULL when none */
	char *why;     /* each implausible rule that fired, with its number
			* ("implausible_shape: fwd B=4 T=8192 at 859.00x is above
			* 3x"), "; "-joined; NULL when none */
	char *confirm; /* the iteration's confirm ("confirm fast, promoted") or
			* what to do about one; NULL when nothing to say */
};

struct wb_data {
	const char *title;     /* shown in the top bar */
	/* the kernel files (repository-relative) and the repository they are
	 * in, for the edit key; 0 files in a read-only view */
	char *const *kernel;
	size_t nkernel;
	const char *repo;
	bool readonly;
	const struct log_row *rows;  /* oldest first */
	size_t nrows;
	size_t nrows_older;          /* rows older than rows[0] not read yet: a long log's
				      * first frame shows its newest rows, and the
				      * workbench reads the rest right after it */
	const char *filter;          /* the rows are those of this filter ("keep"); NULL: all */
	bool has_sel;                /* the timeline's selected row, which the chart follows */
	size_t sel_row;
	size_t nrows_all;            /* with a filter: the rows of the whole log */
	struct trap *traps;
	size_t ntraps;
	struct dispatch_row *disp;
	size_t ndisp;
	bool has_best;
	bool best_unconfirmed; /* the best was kept --unconfirmed */
	int best_iter;
	double best_ms;
	double band_lo, band_hi; /* ms; NAN when unknown */
	const char *band_text;   /* the band in the engine's words ("noise ±1.5%"),
				  * the same as optloop status says; NULL when none */
	/* The engine's due step (optloop status's next) as the status line
	 * words it, in full and brief; NULL in a read-only view */
	const char *due, *due_brief;
	struct wb_shape *shapes;
	size_t nshapes;
	/* the peaks each row's roofline was read against ("H200"), one per
	 * row (nroof_peaks, the rows when it was filled), NULL where the row
	 * has none; NULL when no row has one */
	char **roof_peaks;
	size_t nroof_peaks;
	struct wb_line *detail; /* the detail pane's text for the selected row */
	size_t ndetail;
	struct wb_line *notes;  /* import problems, reconciliation findings */
	size_t nnotes;
	struct live_buf *live;  /* verify output; NULL before the first run */
	struct wb_verdict last; /* the last verify run's verdict (best pane) */
	struct wb_verdict sel;  /* the verdict of the row in the detail */
};

/* ---- panes ---------------------------------------------------------------- */

/* What a key handler tells the event loop (htop style). */
enum {
	HANDLED = 1 << 0,
	REDRAW = 1 << 1,
	RELAYOUT = 1 << 2,
	QUIT = 1 << 3,
};

struct view;

struct view_ops {
	const char *name;
	void (*draw)(struct view *v, WINDOW *w);
	int (*nitems)(const struct view *v);
	/* Text of item i for searching (clean text appended to out). */
	void (*item_text)(const struct view *v, int i, struct sb *out);
	/* Keys beyond the common navigation; returns flags, 0 when unhandled. */
	int (*action)(struct view *v, enum action a);
	/* Lines may be wider than the pane: Left/Right scroll sideways
	 * (view_navigate), up to hmax as the last draw measured it. */
	bool hscroll;
};

struct view {
	const struct view_ops *ops;
	struct wb_data *d;
	int sel, top; /* selection and first visible item */
	int hscroll;  /* cells scrolled sideways (ops->hscroll) */
	int hmax;     /* how far it can go: the widest line drawn less the pane */
	int mode;     /* view-specific (chart: per-shape) */
	bool focused;
	int h, w;     /* last drawn size */
	int body_h;   /* rows available for items at the last draw */
};

extern const struct view_ops timeline_view, best_view, traps_view, dispatch_view, live_view,
	detail_view, notes_view, help_view;

/* Common navigation (up/down/pages/top/bottom, and left/right for a pane
 * that scrolls sideways) for list views; returns flags. */
int view_navigate(struct view *v, enum action a);
/* Keep sel visible in a body of body_h rows. */
void view_clamp(struct view *v);
/* Search items from sel (exclusive) forwards or backwards; selects and
 * returns true on a match (case-insensitive substring of clean text). */
bool view_search(struct view *v, const char *needle, bool forward);

/* ---- drawing helpers (all text is sanitised on the way) ------------------ */

/* Border with a title; the focused pane's title stands out. */
void draw_frame(WINDOW *w, const char *title, bool focused);
/* Put text at (y, x) cut to `cells` columns; returns the width written. */
int draw_text(WINDOW *w, int y, int x, int cells, const char *text, attr_t attr);
/* Fill the rest of the line from x with spaces in attr up to x_end. */
void draw_fill(WINDOW *w, int y, int x, int x_end, attr_t attr);
/* Text with its first `skip` cells left out (horizontal scroll), cut to
 * `cells` columns at (y, x); returns the width written. */
int draw_text_from(WINDOW *w, int y, int x, int cells, const char *text, int skip, attr_t attr);
/* A short note on the bottom border, right-aligned (a pager's position,
 * the scroll keys). */
void draw_foot(WINDOW *w, const char *text);
/* Word-wrap text into lines of at most `cells` and draw them from (y, x),
 * at most max_lines; returns how many lines it took.  w NULL only counts. */
int draw_wrapped(WINDOW *w, int y, int x, int cells, int max_lines, const char *text,
		 attr_t attr);

/* Cells shared by the timeline, the chart and the detail. */
void fmt_bench(double ms, struct sb *out);
void fmt_vs_best(double frac, struct sb *out);
void fmt_gate(const struct log_row *r, struct sb *out);
/* A rate as the roofline words it: "3.10 TB/s", "989 TFLOP/s"; tight
 * drops the space and shortens FLOP to F ("3.10TB/s", "989TF/s"); "—"
 * when not finite. */
void fmt_rate(double v, const char *unit, bool tight, struct sb *out);
/* A shape's roofline in the longest of its wordings that fits `cells`:
 * "memory-bound · 1.49 TB/s, 31% of peak · 20.1 TFLOP/s, 2% of bf16" down
 * to "mem 31%"; an impossible time says so first. */
void fmt_roof(const struct wb_roof *r, int cells, struct sb *out);
/* The detail's roofline section of one run: a heading naming the peaks,
 * then per shape (names[i]) its bandwidth and FLOP rate, each with its
 * share of the peak, and the bound it is nearest, in lines that fit 78
 * cells (an 80-column terminal); appended to *lines (n of them).  Nothing
 * when nroof is 0: a run with no cost model has no heading. */
void detail_roof_lines(const char *peaks, char *const *names, const struct wb_roof *roof,
		       size_t nroof, struct wb_line **lines, size_t *n);

void wb_lines_free(struct wb_line *v, size_t n);
/* Free the per-shape series and the rooflines of d and empty them. */
void wb_shapes_clear(struct wb_data *d);
void wb_verdict_clear(struct wb_verdict *v);

/* Role of a verdict name: fast KEEP, slow REVERT, ambiguous SUBSET,
 * missing / not_comparable INCOMPLETE, others NORMAL. */
enum role theme_verdict_role(const char *verdict);
/* At (y, x) in `cells`: label, the verdict in its role and the gain (the
 * confirm and the flags are the caller's).  Returns the width written. */
int draw_verdict(WINDOW *w, int y, int x, int cells, const char *label,
		 const struct wb_verdict *v);



/* The scroll keys' note for the bottom border when lines are cut ("lines
 * cut · Right scrolls", "from column 20 · Left/Right scroll"), appended
 * to out; nothing when every line fits. */
void view_hscroll_note(const struct view *v, const char *cut, struct sb *out);

/* A scrolling page of pre-built lines (detail, notes, help), scrolling
 * sideways too (Left/Right) when a line is wider than the pane. */
void pager_draw(struct view *v, WINDOW *w, const char *title, const struct wb_line *lines,
		size_t n);
/* The same with the first `pinned` inner rows left for the caller to draw. */
void pager_draw_pinned(struct view *v, WINDOW *w, const char *title, int pinned,
		       const struct wb_line *lines, size_t n);
#endif
