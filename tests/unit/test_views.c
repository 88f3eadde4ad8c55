/* Render tests: each pane drawn offscreen into a curses window of a fixed
 * size and compared, as text, with what a user would see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sb.h"
#include "views/condense.h"
#include "views/live.h"
#include "views/sanitize.h"
#include "views/view.h"
#include "views/wizard.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

static SCREEN *scr;
static FILE *devnull_out, *devnull_in;
static struct sb dump;

static int setup(void **state)
{
	if (!setlocale(LC_ALL, "C.UTF-8"))
		return -1;
	sanitize_init();
	devnull_out = fopen("/dev/null", "w");
	devnull_in = fopen("/dev/null", "r");
	scr = newterm("xterm-256color", devnull_out, devnull_in);
	if (!scr)
		return -1;
	theme_init(false);
	return 0;
}

static int teardown(void **state)
{
	endwin();
	delscreen(scr);
	fclose(devnull_out);
	fclose(devnull_in);
	sb_release(&dump);
	return 0;
}

/* Line-drawing cells come back as their alternate-charset letters; show
 * them as ASCII so expected screens are easy to read and write. */
static wchar_t unacs(wchar_t c)
{
	switch (c) {
	case 'q':
		return '-';
	case 'x':
		return '|';
	default:
		return '+';
	}
}

/* The window's text, one line per row, trailing blanks removed. */
static const char *text_of(WINDOW *w)
{
	int h = getmaxy(w), wd = getmaxx(w);
	wchar_t line[512];
	chtype cells[512];
	char mb[2048];

	sb_reset(&dump);
	for (int y = 0; y < h; y++) {
		int n = mvwinnwstr(w, y, 0, line, wd);
		if (n < 0)
			n = 0;
		line[n] = 0;
		mvwinchnstr(w, y, 0, cells, wd);
		for (int i = 0, col = 0; i < n && col < wd; i++) {
			if (cells[col] & A_ALTCHARSET)
				line[i] = unacs(line[i]);
			int cw = wcwidth(line[i]);
			col += cw > 0 ? cw : 0;
		}
		size_t k = wcstombs(mb, line, sizeof(mb) - 1);
		if (k == (size_t)-1)
			k = 0;
		mb[k] = 0;
		while (k > 0 && mb[k - 1] == ' ')
			mb[--k] = 0;
		sb_adds(&dump, mb);
		sb_addc(&dump, '\n');
	}
	return dump.buf;
}

static void expect_screen(WINDOW *w, const char *want)
{
	const char *got = text_of(w);
	if (want[0] == '@') { /* a new screen: print it for review */
		printf("GOLDEN %s\n%sEND\n", want, got);
		return;
	}
	if (strcmp(got, want) != 0) {
		print_message("---- got ----\n%s---- want ----\n%s----\n", got, want);
		fail();
	}
}

static struct log_row row(int iter, const char *dir, enum gate_verdict g, enum gate_scope sc,
			  double ms, double vs, enum row_status st)
{
	struct log_row r = {.iter = iter, .direction = (char *)dir, .gate_v = g, .scope = sc,
			    .bench_ms = ms, .vs_best = vs, .status = st};
	return r;
}

static struct log_row rows5[5];
static struct wb_data data;

/* data holds rows r[0..n) with the best at best_iter (best_ms), no band. */
static void set_rows(struct log_row *r, size_t n, int best_iter, double best_ms)
{
	memset(&data, 0, sizeof(data));
	data.rows = r;
	data.nrows = n;
	data.has_best = true;
	data.best_iter = best_iter;
	data.best_ms = best_ms;
	data.band_lo = data.band_hi = NAN;
}

static void fill_rows(void)
{
	rows5[0] = row(0, "baseline", GATE_PASS, SCOPE_FULL, 0.973, NAN, RS_BASE);
	rows5[1] = row(1, "fuse gate cumsum into the chunk loop", GATE_PASS, SCOPE_FULL, 0.902,
		       0.073, RS_KEEP);
	rows5[2] = row(2, "TF32 for the inner matmul", GATE_FAIL, SCOPE_FULL, NAN, NAN, RS_REVERT);
	rows5[3] = row(3, "BT=128 tiles", GATE_INCOMPLETE, SCOPE_UNKNOWN, NAN, NAN, RS_DROP);
	rows5[4] = row(4, "num_warps 8 \x1b[31mred\x1b[0m", GATE_PASS, SCOPE_SUBSET, 0.883, 0.021,
		       RS_KEEP);
	set_rows(rows5, 5, 4, 0.883);
}

static void timeline_renders_every_column(void **state)
{
	WINDOW *w = newwin(9, 72, 0, 0);
	struct view v = {.ops = &timeline_view, .d = &data, .focused = true};

	fill_rows();
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Timeline · 5 iterations --------------------------------------------+\n"
		"| Iter Direction                    Gate        Bench ms vs best Status|\n"
		"|    0 baseline                     pass           0.973       — base  |\n"
		"|    1 fuse gate cumsum into the c… pass           0.902   +7.3% keep  |\n"
		"|!   2 TF32 for the inner matmul    FAIL               —       — revert|\n"
		"|?   3 BT=128 tiles                 incomplete         —       — drop  |\n"
		"|*   4 num_warps 8 red              pass (-k)      0.883   +2.1% keep  |\n"
		"|                                                                      |\n"
		"+----------------------------------------------------------------------+\n");
	delwin(w);
}

/* A log of 20,000 rows: the Iter column widens to the widest number, which
 * is never cut (199… read as another iteration). */
static void timeline_iter_column_fits_five_digits(void **state)
{
	WINDOW *w = newwin(5, 72, 0, 0);
	struct view v = {.ops = &timeline_view, .d = &data, .focused = false};
	struct log_row big[2];

	big[0] = row(19998, "tile 128", GATE_PASS, SCOPE_FULL, 0.973, NAN, RS_BASE);
	big[1] = row(19999, "tile 256", GATE_PASS, SCOPE_FULL, 0.902, 0.073, RS_KEEP);
	set_rows(big, 2, 19999, 0.902);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Timeline · 2 iterations --------------------------------------------+\n"
		"|  Iter Direction                   Gate        Bench ms vs best Status|\n"
		"| 19998 tile 128                    pass           0.973       — base  |\n"
		"|*19999 tile 256                    pass           0.902   +7.3% keep  |\n"
		"+----------------------------------------------------------------------+\n");
	delwin(w);
	fill_rows();
}

static void timeline_marks_failures_without_colour(void **state)
{
	WINDOW *w = newwin(9, 72, 0, 0);
	struct view v = {.ops = &timeline_view, .d = &data, .focused = false};

	fill_rows();
	v.ops->draw(&v, w);
	/* Row of iteration 2 (failed gate): bold + underline in monochrome. */
	chtype c = mvwinch(w, 4, 10);
	assert_true(c & A_BOLD);
	assert_true(c & A_UNDERLINE);
	/* Incomplete run: underlined, not the same as a pass. */
	c = mvwinch(w, 5, 10);
	assert_true(c & A_UNDERLINE);
	c = mvwinch(w, 2, 10);
	assert_false(c & (A_UNDERLINE | A_BOLD));
	delwin(w);
}

static void timeline_scrolls_to_keep_selection_visible(void **state)
{
	WINDOW *w = newwin(5, 72, 0, 0); /* two body rows */
	struct view v = {.ops = &timeline_view, .d = &data, .focused = true};

	fill_rows();
	v.ops->draw(&v, w);
	assert_int_equal(view_navigate(&v, ACT_BOTTOM), HANDLED | REDRAW);
	v.ops->draw(&v, w);
	assert_int_equal(v.sel, 4);
	assert_int_equal(v.top, 3);
	assert_non_null(strstr(text_of(w), "num_warps"));
	assert_null(strstr(text_of(w), "baseline"));
	assert_true(mvwinch(w, 3, 10) & A_REVERSE);
	view_navigate(&v, ACT_TOP);
	v.ops->draw(&v, w);
	assert_non_null(strstr(text_of(w), "baseline"));
	/* Search wraps and selects the match. */
	assert_true(view_search(&v, "bt=128", true));
	assert_int_equal(v.sel, 3);
	assert_false(view_search(&v, "no such text", true));
	delwin(w);
}

static void chart_draws_points_best_line_and_band(void **state)
{
	WINDOW *w = newwin(10, 40, 0, 0);
	struct view v = {.ops = &best_view, .d = &data};

	fill_rows();
	data.band_lo = 0.870;
	data.band_hi = 0.896;
	data.band_text = "noise ±1.5%";
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Best · bench per iteration (s: per…-+\n"
		"|best 0.883 ms @ iter 4 · noise ±1.5%  |\n"
		"|  0.973 o                             |\n"
		"|                                      |\n"
		"|                                      |\n"
		"|              o                       |\n"
		"|  0.883 ────────────────────────*─────|\n"
		"|  0.870 ······························|\n"
		"|        iter 0                  iter 4|\n"
		"+--------------------------------------+\n");
	delwin(w);
}

/* The chart follows the timeline's selection: an old row selected brings
 * the rows around it into the chart, its point marked and its iteration
 * named on the x axis; with none selected the newest rows are charted. */
static void chart_follows_the_selected_row(void **state)
{
	WINDOW *w = newwin(10, 40, 0, 0);
	struct view v = {.ops = &best_view, .d = &data};
	static struct log_row many[60];

	for (int i = 0; i < 60; i++)
		many[i] = row(i, "step", GATE_PASS, SCOPE_FULL, 1.0 - i * 0.001, NAN,
			      i ? RS_REVERT : RS_BASE);
	set_rows(many, 60, 0, 1.0);
	v.ops->draw(&v, w);
	const char *t = text_of(w);
	assert_non_null(strstr(t, "iter 30"));
	assert_non_null(strstr(t, "iter 59"));
	assert_null(strstr(t, "^"));
	data.has_sel = true;
	data.sel_row = 5;
	v.ops->draw(&v, w);
	t = text_of(w);
	assert_non_null(strstr(t, "iter 0 "));
	assert_non_null(strstr(t, "iter 29"));
	assert_non_null(strstr(t, "^5"));
	assert_null(strstr(t, "iter 59"));
	/* its point is drawn in reverse video */
	bool marked = false;
	for (int y = 2; y < 9 && !marked; y++)
		for (int x = 1; x < 39 && !marked; x++)
			marked = (mvwinch(w, y, x) & A_REVERSE) != 0;
	assert_true(marked);
	data.sel_row = 40; /* among the newest: they stay */
	v.ops->draw(&v, w);
	t = text_of(w);
	assert_non_null(strstr(t, "iter 59"));
	assert_non_null(strstr(t, "^40"));
	delwin(w);
	fill_rows();
}

/* The label on the best line is the best as written everywhere else: a
 * 12.3 us kernel reads 0.0123, not 0.012. */
static void chart_best_label_is_the_best(void **state)
{
	WINDOW *w = newwin(8, 40, 0, 0);
	struct view v = {.ops = &best_view, .d = &data};
	struct log_row r[3] = {
		row(0, "baseline", GATE_PASS, SCOPE_FULL, 0.0145, NAN, RS_BASE),
		row(1, "a", GATE_PASS, SCOPE_FULL, 0.0123, 0.15, RS_KEEP),
		row(2, "b", GATE_PASS, SCOPE_FULL, 0.0101, 0.18, RS_DROP),
	};
	set_rows(r, 3, 1, 0.0123);
	v.ops->draw(&v, w);
	const char *t = text_of(w);
	assert_non_null(strstr(t, "best 0.0123 ms @ iter 1"));
	assert_non_null(strstr(t, " 0.0123 ─"));
	assert_null(strstr(t, "0.012 "));
	assert_non_null(strstr(t, " 0.0145 "));
	assert_non_null(strstr(t, " 0.0101 "));
	delwin(w);
	memset(&data, 0, sizeof(data));
}

/* A long log's first frame holds its newest rows only (nrows_older more
 * before them): the timeline and the chart draw what they draw with every
 * row, cell for cell: the count of all iterations, the best's
 * "(unconfirmed)" though its row is not among them, the same y labels. */
static void a_first_frame_of_the_newest_rows_is_the_whole_frame(void **state)
{
	enum { N = 3000, K = 1024 };
	struct log_row *r = calloc(N, sizeof(*r));
	char *whole[2], *first[2];
	const struct view_ops *ops[2] = {&best_view, &timeline_view};

	r[0] = row(0, "baseline", GATE_PASS, SCOPE_FULL, 1234.5, NAN, RS_BASE);
	r[1] = row(1, "the keep", GATE_PASS, SCOPE_FULL, 0.95, 0.05, RS_KEEP);
	r[1].unconfirmed = "kept by hand";
	for (int i = 2; i < N; i++)
		r[i] = row(i, "a direction", GATE_PASS, SCOPE_FULL, 0.96 + (i % 7) * 0.01, -0.01,
			   i % 2 ? RS_REVERT : RS_DROP);
	for (int pass = 0; pass < 2; pass++) {
		set_rows(pass ? r + (N - K) : r, pass ? K : N, 1, 0.95);
		data.nrows_older = pass ? N - K : 0;
		data.best_unconfirmed = true;
		data.has_sel = true;
		data.sel_row = data.nrows - 1;
		for (int k = 0; k < 2; k++) {
			WINDOW *w = newwin(20, 100, 0, 0);
			struct view v = {.ops = ops[k], .d = &data, .sel = (int)data.nrows - 1,
					 .focused = true};
			v.ops->draw(&v, w);
			(pass ? first : whole)[k] = strdup(text_of(w));
			delwin(w);
		}
	}
	assert_non_null(strstr(whole[0], "best 0.950 ms @ iter 1 (unconfirmed)"));
	assert_null(strstr(whole[0], "1234.5")); /* the baseline is far off the chart */
	assert_non_null(strstr(whole[1], "Timeline \xc2\xb7 3000 iterations"));
	assert_non_null(strstr(whole[1], "2999 a direction"));
	for (int k = 0; k < 2; k++) {
		assert_string_equal(first[k], whole[k]);
		free(first[k]);
		free(whole[k]);
	}
	free(r);
	memset(&data, 0, sizeof(data));
	fill_rows();
}

/* In a short pane the best line can fall on the bottom (or top) row: that
 * row's label is then the best, not the edge of the band below it, which
 * read as if the best were the band's edge. */
static void chart_best_on_an_edge_row_is_labelled_the_best(void **state)
{
	WINDOW *w = newwin(7, 40, 0, 0);
	struct view v = {.ops = &best_view, .d = &data};
	struct log_row r[2] = {
		row(0, "baseline", GATE_PASS, SCOPE_FULL, 26.639, NAN, RS_BASE),
		row(1, "chunk 32", GATE_PASS, SCOPE_FULL, 18.039, 0.33, RS_KEEP),
	};
	set_rows(r, 2, 1, 18.039);
	data.band_lo = 17.704;
	data.band_hi = 18.374;
	v.ops->draw(&v, w);
	const char *t = text_of(w);
	assert_non_null(strstr(t, " 18.039 ─"));
	assert_null(strstr(t, "17.704"));
	assert_non_null(strstr(t, " 26.639 o"));
	delwin(w);
	memset(&data, 0, sizeof(data));
}

/* In a narrow pane the noise figure takes the line under the best rather
 * than being cut. */
static void chart_puts_the_noise_under_the_best_when_narrow(void **state)
{
	WINDOW *w = newwin(10, 40, 0, 0);
	struct view v = {.ops = &best_view, .d = &data};

	fill_rows();
	data.band_lo = 0.870;
	data.band_hi = 0.896;
	data.band_text = "noise ±4.0% (assumed)";
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · bench per iteration (s: per…-+\n"
		"|best 0.883 ms @ iter 4                |\n"
		"|noise ±4.0% (assumed)                 |\n"
		"|  0.973 o                             |\n"
		"|                                      |\n"
		"|                                      |\n"
		"|  0.883 ──────o─────────────────*─────|\n"
		"|  0.870 ······························|\n"
		"|        iter 0                  iter 4|\n"
		"+--------------------------------------+\n");
	delwin(w);
}

static struct wb_shape shapes[2];
static double sh_a[5] = {1.2, 1.1, NAN, NAN, 1.05}, sh_b[5] = {0.8, 0.74, NAN, NAN, 0.74};

static void chart_per_shape_mode_lists_shapes(void **state)
{
	WINDOW *w = newwin(6, 60, 0, 0);
	struct view v = {.ops = &best_view, .d = &data};

	fill_rows();
	shapes[0] = (struct wb_shape){.name = "fwd B=1 T=4096 H=16", .ms = sh_a};
	shapes[1] = (struct wb_shape){.name = "fwdbwd B=1 T=4096 H=16", .ms = sh_b};
	data.shapes = shapes;
	data.nshapes = 2;
	assert_int_equal(v.ops->action(&v, ACT_MODE), HANDLED | REDRAW);
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Best · per shape (s: chart) ----------------------------+\n"
		"|Shape                                base     best speedup|\n"
		"|fwd B=1 T=4096 H=16                 1.200    1.050   1.14x|\n"
		"|fwdbwd B=1 T=4096 H=16              0.800    0.740   1.08x|\n"
		"|                                                          |\n"
		"+----------------------------------------------------------+\n");
	data.nshapes = 0;
	v.ops->draw(&v, w);
	assert_non_null(strstr(text_of(w), "no per-shape numbers"));
	delwin(w);
}

/* In a workspace the per-shape table shows the one comparison of the best
 * with the baseline (what report final claims), not the two rows' single
 * runs divided. */
static void per_shape_shows_the_workspace_comparison(void **state)
{
	WINDOW *w = newwin(6, 60, 0, 0);
	struct view v = {.ops = &best_view, .d = &data, .mode = 1};

	fill_rows();
	shapes[0] = (struct wb_shape){.name = "fwd B=1 T=4096 H=16", .ms = sh_a, .base_ms = 1.25,
				      .best_ms = 0.5, .speedup = 2.5};
	shapes[1] = (struct wb_shape){.name = "fwdbwd B=1 T=4096 H=16", .ms = sh_b,
				      .speedup = NAN};
	data.shapes = shapes;
	data.nshapes = 2;
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · per shape (s: chart) ----------------------------+\n"
		"|Shape                                base     best speedup|\n"
		"|fwd B=1 T=4096 H=16                 1.250    0.500   2.50x|\n"
		"|fwdbwd B=1 T=4096 H=16              0.800    0.740   1.08x|\n"
		"|                                                          |\n"
		"+----------------------------------------------------------+\n");
	data.nshapes = 0;
	delwin(w);
}

/* Per shape, only rows that may be a best count: a run dropped or
 * reverted after the best, however fast, and a failed gate's numbers are
 * not where the loop stands. */
static void per_shape_uses_only_rows_that_may_be_the_best(void **state)
{
	WINDOW *w = newwin(5, 60, 0, 0);
	struct view v = {.ops = &best_view, .d = &data, .mode = 1};
	struct log_row r[5] = {
		row(0, "baseline", GATE_PASS, SCOPE_FULL, 1.0, NAN, RS_BASE),
		row(1, "fail", GATE_FAIL, SCOPE_FULL, 0.3, NAN, RS_DROP),
		row(2, "kept", GATE_PASS, SCOPE_FULL, 0.9, 0.1, RS_KEEP),
		row(3, "fast but dropped", GATE_PASS, SCOPE_FULL, 0.5, 0.4, RS_DROP),
		row(4, "slower, reverted", GATE_PASS, SCOPE_FULL, 0.95, -0.05, RS_REVERT),
	};
	double ms[5] = {1.0, 0.3, 0.9, 0.5, 0.95};
	struct wb_shape one = {.name = "fwd B=1 T=4096", .ms = ms};

	set_rows(r, 5, 2, 0.9);
	data.shapes = &one;
	data.nshapes = 1;
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · per shape (s: chart) ----------------------------+\n"
		"|Shape                                base     best speedup|\n"
		"|fwd B=1 T=4096                      1.000    0.900   1.11x|\n"
		"|                                                          |\n"
		"+----------------------------------------------------------+\n");
	/* a log whose baseline failed its gate has no base to compare with */
	r[0].gate_v = GATE_FAIL;
	v.ops->draw(&v, w);
	assert_non_null(strstr(text_of(w), "|fwd B=1 T=4096                          \xe2\x80\x94    0.900       \xe2\x80\x94|"));
	data.shapes = NULL;
	data.nshapes = 0;
	delwin(w);
}

static struct trap traps3[3];

static void traps_show_states_and_explain_selection(void **state)
{
	WINDOW *w = newwin(12, 50, 0, 0);
	struct view v = {.ops = &traps_view, .d = &data, .focused = true, .sel = 1};

	fill_rows();
	traps3[0] = (struct trap){.id = "tf32", .title = "TF32 turned on", .state = TRAP_CHECKED};
	traps3[1] = (struct trap){.id = "int64", .title = "int32 program-id arithmetic",
				  .fact = "pid * stride overflows int32 past 2^31 elements.",
				  .why = "Large T*H*D silently wraps.",
				  .how = "Cast to tl.int64 first.",
				  .state = TRAP_HIT};
	traps3[2] = (struct trap){.id = "skip", .title = "skip markers in the gate"};
	data.traps = traps3;
	data.ntraps = 3;
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Traps · 1/3 checked · 1 hit ------------------+\n"
		"|[x] TF32 turned on                              |\n"
		"|[!] int32 program-id arithmetic                 |\n"
		"|[ ] skip markers in the gate                    |\n"
		"|                                                |\n"
		"|                                                |\n"
		"|Fact: pid * stride overflows int32 past 2^31    |\n"
		"|elements.                                       |\n"
		"|Why: Large T*H*D silently wraps.                |\n"
		"|How: Cast to tl.int64 first.                    |\n"
		"|                                                |\n"
		"+------------------------------------------------+\n");
	delwin(w);
}

static struct dispatch_row disp2[2];

static void dispatch_table_renders(void **state)
{
	WINDOW *w = newwin(8, 60, 0, 0);
	struct view v = {.ops = &dispatch_view, .d = &data, .focused = true};

	fill_rows();
	disp2[0] = (struct dispatch_row){"T <= 2048", "chunk_fwd_small", 0.41, 0.33, 1.24,
					 "fewer blocks, one wave", "3,5"};
	disp2[1] = (struct dispatch_row){"T > 2048", "chunk_fwd", 0.973, 0.883, 1.10, NULL, NULL};
	data.disp = disp2;
	data.ndisp = 2;
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Dispatch -----------------------------------------------+\n"
		"|Bucket          Entry                Base    Cand Speedup |\n"
		"|T <= 2048       chunk_fwd_small     0.410   0.330   1.24x |\n"
		"|T > 2048        chunk_fwd           0.973   0.883   1.10x |\n"
		"|                                                          |\n"
		"|Why: fewer blocks, one wave (iterations 3,5)              |\n"
		"|                                                          |\n"
		"+----------------------------------------------------------+\n");
	delwin(w);
}

static void live_tail_follows_and_strips_escapes(void **state)
{
	WINDOW *w = newwin(9, 70, 0, 0);
	struct view v = {.ops = &live_view, .d = &data, .focused = true};
	struct live_buf *b = live_new(100, 200);
	const char *out = "Correctness gate: tests/test_gla.py (full)\n"
			  "\x1b[2J\x1b[H\x1b]0;pwned\x07test_gla.py ....  [ 40%]\n"
			  "\x1b[31mred\x1b[0m line\r\n"
			  "progress 10%\rprogress 90%\n"
			  "GATE PASSED.\n"
			  "partial";

	fill_rows();
	data.live = b;
	live_reset(b, "Verify \xc2\xb7 iter 5");
	b->running = true;
	b->t_start = 1000;
	b->now = 1072;
	b->progress = 40;
	/* Fed in odd-sized pieces: lines may split anywhere. */
	size_t len = strlen(out);
	for (size_t i = 0; i < len; i += 7)
		live_feed(b, out + i, len - i < 7 ? len - i : 7);
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Verify · iter 5 --------------------------------------------------+\n"
		"|running 01:12 · 5 lines [█████████··············]  40%   x cancel   |\n"
		"|Correctness gate: tests/test_gla.py (full)                          |\n"
		"|test_gla.py ....  [ 40%]                                            |\n"
		"|red line                                                            |\n"
		"|progress 90%                                                        |\n"
		"|GATE PASSED.                                                        |\n"
		"|partial                                                             |\n"
		"+--------------------------------------------------------------------+\n");
	assert_int_equal(live_count(b), 6);
	assert_int_equal((int)b->lines, 5);
	live_free(b);
	data.live = NULL;
	delwin(w);
}

/* The harness's progress as the parser reports it: the gate's percent, then
 * the benchmark's phase beside the bar; a finished run shows its verdict. */
static void live_shows_progress_and_the_benchmark_phase(void **state)
{
	WINDOW *w = newwin(5, 80, 0, 0);
	struct view v = {.ops = &live_view, .d = &data, .focused = true};
	struct live_buf *b = live_new(100, 200);
	const char *stage = "Warming up 3 shape(s)...";

	fill_rows();
	data.live = b;
	live_reset(b, "Verify · iter 2");
	b->running = true;
	b->t_start = 1000;
	b->now = 1003;
	live_feed(b, "PASSED [ 33%]\n", 14);
	live_set_progress(b, 33, NULL, 0);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Verify · iter 2 ------------------------------------------------------------+\n"
		"|running 00:03 · 1 lines [█████████·····················]  33%   x cancel      |\n"
		"|PASSED [ 33%]                                                                 |\n"
		"|                                                                              |\n"
		"+------------------------------------------------------------------------------+\n");
	/* a percent-less event leaves the bar; the phase is named beside it */
	live_set_progress(b, 100, NULL, 0);
	live_set_progress(b, -1, stage, strlen(stage));
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Verify · iter 2 ------------------------------------------------------------+\n"
		"|running 00:03 · 1 lines [██████████] 100% · Warming up 3 shape(s)...  x cancel|\n"
		"|PASSED [ 33%]                                                                 |\n"
		"|                                                                              |\n"
		"+------------------------------------------------------------------------------+\n");
	/* finished: the verdict replaces the phase */
	b->running = false;
	b->t_end = 1007;
	live_set_verdict(b, "gate pass", false);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Verify · iter 2 ------------------------------------------------------------+\n"
		"|finished 00:07 · 1 lines [██████████████████████████████] 100%   gate pass    |\n"
		"|PASSED [ 33%]                                                                 |\n"
		"|                                                                              |\n"
		"+------------------------------------------------------------------------------+\n");
	live_free(b);
	data.live = NULL;
	delwin(w);
}

/* FLA's result table with --base, as run.py printed it on an H200
 * (tests/fixtures/fla-h200/runpy-base-main.txt): 109 columns, the ms
 * columns at the far right. */
static const char *const fla_base_table[] = {
	"=============================================================================================================",
	"  Machine: NVIDIA H200 | CUDA 13.0 | PyTorch 2.11.0+cu130",
	"=============================================================================================================",
	"  fwd        B      T    H    D  op                             main[ce250a9](ms) opt-a[35f8256](ms)  speedup",
	"          ---------------------------------------------------------------------------------------------------",
	"             4   2048   16   64  chunk_linear_attn                          0.973              0.450    2.16x",
	"          ---------------------------------------------------------------------------------------------------",
	"             8   1024    8   64  chunk_linear_attn                          0.967              0.447    2.17x",
	"=============================================================================================================",
	NULL,
};

static struct live_buf *feed_lines(const char *const *lines)
{
	struct live_buf *b = live_new(100, 400);
	live_reset(b, "Verify \xc2\xb7 iter 1");
	b->t_start = 1000;
	b->t_end = b->now = 1042;
	for (const char *const *l = lines; *l; l++) {
		live_feed(b, *l, strlen(*l));
		live_feed(b, "\n", 1);
	}
	b->progress = 100;
	live_set_verdict(b, "gate pass \xc2\xb7 bench 0.448 ms \xc2\xb7 vs best +54%", false);
	return b;
}

/* At 80 columns the table is condensed: the gaps between its columns
 * shrink and the op's name gives way, so both ms columns and the speedup
 * stay on screen, each under its own header. */
static void live_condenses_a_wide_table_to_keep_its_numbers(void **state)
{
	WINDOW *w = newwin(13, 80, 0, 0);
	struct view v = {.ops = &live_view, .d = &data, .focused = true};
	struct live_buf *b = feed_lines(fla_base_table);

	fill_rows();
	data.live = b;
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Verify · iter 1 ------------------------------------------------------------+\n"
		"|finished 00:42 · 9 lines    gate pass · bench 0.448 ms · vs best +54%         |\n"
		"|==============================================================================|\n"
		"|  Machine: NVIDIA H200 | CUDA 13.0 | PyTorch 2.11.0+cu130                     |\n"
		"|==============================================================================|\n"
		"|fwd B    T  H  D op               main[ce250a9](ms) opt-a[35f8256](ms) speedup|\n"
		"|    --------------------------------------------------------------------------|\n"
		"|    4 2048 16 64 chunk_linear_att…            0.973              0.450   2.16x|\n"
		"|    --------------------------------------------------------------------------|\n"
		"|    8 1024  8 64 chunk_linear_att…            0.967              0.447   2.17x|\n"
		"|==============================================================================|\n"
		"|                                                                              |\n"
		"+--------------------------------------- wide lines condensed · Right scrolls -+\n");
	live_free(b);
	data.live = NULL;
	delwin(w);
}

/* Right shows the lines as printed, from a column further on; Left goes
 * back to the condensed table.  The border names the keys. */
static void live_scrolls_sideways_through_the_raw_lines(void **state)
{
	WINDOW *w = newwin(13, 80, 0, 0);
	struct view v = {.ops = &live_view, .d = &data, .focused = true};
	struct live_buf *b = feed_lines(fla_base_table);

	fill_rows();
	data.live = b;
	v.ops->draw(&v, w);
	assert_int_equal(v.hmax, 109 - 78);
	assert_int_equal(v.ops->action(&v, action_for_key(KEY_RIGHT)), HANDLED | REDRAW);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Verify · iter 1 ------------------------------------------------------------+\n"
		"|finished 00:42 · 9 lines    gate pass · bench 0.448 ms · vs best +54%         |\n"
		"|=============================================================================…|\n"
		"|00 | CUDA 13.0 | PyTorch 2.11.0+cu130                                         |\n"
		"|=============================================================================…|\n"
		"|T    H    D  op                             main[ce250a9](ms) opt-a[35f8256](…|\n"
		"|-----------------------------------------------------------------------------…|\n"
		"|8   16   64  chunk_linear_attn                          0.973              0.…|\n"
		"|-----------------------------------------------------------------------------…|\n"
		"|4    8   64  chunk_linear_attn                          0.967              0.…|\n"
		"|=============================================================================…|\n"
		"|                                                                              |\n"
		"+----------------------------------------- from column 21 · Left/Right scroll -+\n");
	/* Never past the end of the widest line. */
	for (int k = 0; k < 10; k++)
		v.ops->action(&v, action_for_key('>'));
	assert_int_equal(v.hscroll, v.hmax);
	for (int k = 0; k < 10; k++)
		v.ops->action(&v, action_for_key(KEY_LEFT));
	assert_int_equal(v.hscroll, 0);
	v.ops->draw(&v, w);
	assert_non_null(strstr(text_of(w), "wide lines condensed"));
	live_free(b);
	data.live = NULL;
	delwin(w);
}

/* The demo's own table (80 columns, one ms column) keeps two blanks
 * between its columns; a block of separators alone is only cut. */
static void condense_keeps_two_blanks_when_they_fit(void **state)
{
	static const char *const in[] = {
		"================================================================================",
		"  fwd        B      T    H    D  op                            main[5806748](ms)",
		"          ----------------------------------------------------------------------",
		"             2    512    4   64  chunk_linear_attn                        42.173",
		"          ----------------------------------------------------------------------",
		"             1   1024    2  128  chunk_linear_attn                        71.601",
	};
	struct sb l[6];
	for (int i = 0; i < 6; i++) {
		sb_init(&l[i]);
		sb_adds(&l[i], in[i]);
	}
	assert_true(condense_block(l, 6, 78));
	assert_string_equal(l[1].buf, " fwd  B     T  H    D  op                 main[5806748](ms)");
	assert_string_equal(l[3].buf, "      2   512  4   64  chunk_linear_attn             42.173");
	assert_string_equal(l[5].buf, "      1  1024  2  128  chunk_linear_attn             71.601");
	assert_string_equal(l[2].buf, "      -----------------------------------------------------");
	for (int i = 0; i < 6; i++)
		assert_true(sanitize_width(l[i].buf, l[i].len) <= 78);
	/* the === line alone above the Machine line: cut, not squeezed */
	struct sb one;
	sb_init(&one);
	sb_adds(&one, in[0]);
	assert_true(condense_block(&one, 1, 78));
	assert_int_equal((int)one.len, 78);
	/* lines that fit are left alone */
	assert_false(condense_block(&l[3], 1, 78));
	sb_release(&one);
	for (int i = 0; i < 6; i++)
		sb_release(&l[i]);
}

/* The detail pager scrolls sideways too (a long diff line). */
static void detail_scrolls_sideways(void **state)
{
	WINDOW *w = newwin(5, 40, 0, 0);
	struct view v = {.ops = &detail_view, .d = &data};
	struct wb_line lines[2] = {{"Iteration 2", R_HEADER},
				   {"+\tlong_name = compute(alpha, beta, gamma, delta) # TAIL", R_NORMAL}};

	fill_rows();
	data.detail = lines;
	data.ndetail = 2;
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Iteration detail (Esc back) --------+\n"
		"|Iteration 2                           |\n"
		"|+       long_name = compute(alpha, be…|\n"
		"|                                      |\n"
		"+---------- lines cut · Right scrolls -+\n");
	assert_int_equal(view_navigate(&v, ACT_SCROLL_RIGHT), HANDLED | REDRAW);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Iteration detail (Esc back) --------+\n"
		"|2                                     |\n"
		"|ng_name = compute(alpha, beta, gamma,…|\n"
		"|                                      |\n"
		"+- from column 11 · Left/Right scroll -+\n");
	/* the timeline fits its pane: Left/Right are not its keys */
	struct view tl = {.ops = &timeline_view, .d = &data};
	assert_int_equal(view_navigate(&tl, ACT_SCROLL_RIGHT), 0);
	data.detail = NULL;
	data.ndetail = 0;
	delwin(w);
}

static void live_keeps_bounded_memory(void **state)
{
	struct live_buf *b = live_new(8, 16);
	char line[64];

	for (int i = 0; i < 1000; i++) {
		snprintf(line, sizeof(line), "line %d is a bit longer than sixteen\n", i);
		live_feed(b, line, strlen(line));
	}
	assert_int_equal(live_count(b), 8);
	size_t len;
	const char *t = live_line(b, 7, &len);
	assert_int_equal(len, 16);
	assert_memory_equal(t, "line 999 is a bi", 16);
	assert_true(b->ring[(b->head + 7) % b->cap].cut);
	assert_int_equal((int)b->lines, 1000);
	live_free(b);
}

static void help_lists_every_action(void **state)
{
	WINDOW *w = newwin(40, 90, 0, 0);
	struct view v = {.ops = &help_view, .d = &data};

	v.ops->draw(&v, w);
	const char *t = text_of(w);
	for (int i = 0; i < ACT_COUNT - 1; i++)
		assert_non_null(strstr(t, action_table[i].help));
	assert_non_null(strstr(t, "v               run the verify command"));
	assert_non_null(strstr(t, "Tab             move focus"));
	delwin(w);
}

/* The legend names every mark the panes draw (from the table they draw
 * from), every state, and what the noise band is. */
static void help_has_a_legend_for_every_mark_and_state(void **state)
{
	WINDOW *w = newwin(120, 130, 0, 0);
	struct view v = {.ops = &help_view, .d = &data};
	char want[256];

	v.ops->draw(&v, w);
	const char *t = text_of(w);
	for (int g = 0; g < GL_NGLYPHS; g++) {
		snprintf(want, sizeof(want), "%-9s %s", glyph_table[g].pane, glyph_table[g].utf8);
		assert_non_null(strstr(t, want));
		assert_non_null(strstr(t, glyph_table[g].meaning));
	}
	assert_non_null(strstr(t, "timeline  !     the gate failed"));
	assert_non_null(strstr(t, "chart     \xc2\xb7     the noise band around the best"));
	static const char *const st[] = {"NO_CONTRACT", "NEED_BASELINE", "READY", "EDITING",
					 "VERIFYING", "MEASURED", "LOGGED", "STALLED", "STOPPING"};
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		snprintf(want, sizeof(want), "\n|%-16s%s", st[i], loop_state_meaning((enum loop_state)i));
		assert_non_null(strstr(t, want));
	}
	assert_non_null(strstr(t, "the noise band"));
	assert_non_null(strstr(t, "two sigma either side"));
	assert_non_null(strstr(t, "optloop status prints"));
	delwin(w);

	/* narrower: the prose wraps under its lead; ASCII: the marks too */
	w = newwin(120, 60, 0, 0);
	sanitize_set_ascii(true);
	v.ops->draw(&v, w);
	sanitize_set_ascii(false);
	t = text_of(w);
	assert_non_null(strstr(t, "|chart     -     the best's bench, across the chart"));
	assert_non_null(strstr(t, "|chart     :     the noise band around the best"));
	const char *m = strstr(t, "|MEASURED        verified and parsed: log the row (a ");
	assert_non_null(m);
	m = strchr(m, '\n');
	assert_non_null(m);
	assert_memory_equal(m + 1, "|                further kernel edit is refused until it", 56);
	delwin(w);
}

static void keymap_comes_from_the_action_table(void **state)
{
	assert_int_equal(action_for_key('v'), ACT_VERIFY);
	assert_int_equal(action_for_key(KEY_DOWN), ACT_DOWN);
	assert_int_equal(action_for_key('j'), ACT_DOWN);
	assert_int_equal(action_for_key(KEY_NPAGE), ACT_PAGE_DOWN);
	assert_int_equal(action_for_key('\t'), ACT_NEXT_PANE);
	assert_int_equal(action_for_key('Z'), ACT_NONE);
	assert_string_equal(action_first_key(ACT_LOG), "l");
	assert_string_equal(action_key_name(KEY_PPAGE), "PgUp");
}

static void detail_pages_prebuilt_lines(void **state)
{
	WINDOW *w = newwin(5, 40, 0, 0);
	struct view v = {.ops = &detail_view, .d = &data};
	struct wb_line lines[5] = {{"Iteration 2", R_HEADER}, {"gate: FAIL (full)", R_FAIL},
				   {"diff --git a/k.py b/k.py", R_NORMAL}, {"+x = 1\x1b[2J", R_NORMAL},
				   {"last", R_NORMAL}};

	fill_rows();
	data.detail = lines;
	data.ndetail = 5;
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Iteration detail (Esc back) --------+\n"
		"|Iteration 2                           |\n"
		"|gate: FAIL (full)                     |\n"
		"|diff --git a/k.py b/k.py              |\n"
		"+-------------------------------- 1/5 -+\n");
	view_navigate(&v, ACT_PAGE_DOWN);
	v.ops->draw(&v, w);
	expect_screen(w, 
		"+- Iteration detail (Esc back) --------+\n"
		"|diff --git a/k.py b/k.py              |\n"
		"|+x = 1                                |\n"
		"|last                                  |\n"
		"+-------------------------------- 3/5 -+\n");
	data.detail = NULL;
	data.ndetail = 0;
	delwin(w);
}

static void set_verdict(struct wb_verdict *v, int iter, const char *verdict, double gain,
			const char *flags, const char *confirm)
{
	*v = (struct wb_verdict){.have = true, .iter = iter, .verdict = (char *)verdict,
				 .gain = gain, .flags = (char *)flags, .confirm = (char *)confirm};
}

static void chart_shows_the_last_verdict_and_its_flags(void **state)
{
	WINDOW *w = newwin(12, 48, 0, 0);
	struct view v = {.ops = &best_view, .d = &data};

	fill_rows();
	data.band_lo = 0.870;
	data.band_hi = 0.896;
	data.band_text = "noise ±1.5%";
	set_verdict(&data.last, 4, "ambiguous", 0.021,
		    "implausible, win_confined_to_one_shape, noise_assumed",
		    "not confirmed yet: optloop confirm");
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · bench per iteration (s: per shape) --+\n"
		"|best 0.883 ms @ iter 4 · noise ±1.5%          |\n"
		"|last iter 4: ambiguous +2.1%                  |\n"
		"|not confirmed yet: optloop confirm            |\n"
		"|flags: implausible,                           |\n"
		"|win_confined_to_one_shape, noise_assumed      |\n"
		"|  0.973 o                                     |\n"
		"|                                              |\n"
		"|        ·······o······························|\n"
		"|  0.883 ────────────────────────────*─────────|\n"
		"|        iter 0                          iter 4|\n"
		"+----------------------------------------------+\n");
	/* Each verdict in its role: attributes survive without colour. */
	assert_true((mvwinch(w, 2, 14) & A_BOLD) != 0);
	assert_false((mvwinch(w, 2, 13) & A_BOLD) != 0);
	assert_int_equal(theme_verdict_role("fast"), R_KEEP);
	assert_int_equal(theme_verdict_role("slow"), R_REVERT);
	assert_int_equal(theme_verdict_role("ambiguous"), R_SUBSET);
	assert_int_equal(theme_verdict_role("not_comparable"), R_INCOMPLETE);
	assert_int_equal(theme_verdict_role("missing"), R_INCOMPLETE);
	assert_int_equal(theme_verdict_role("same"), R_NORMAL);

	/* Without flags the verdict takes one row; the chart gets the other. */
	set_verdict(&data.last, 4, "fast", 0.121, NULL, "confirm fast, promoted");
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · bench per iteration (s: per shape) --+\n"
		"|best 0.883 ms @ iter 4 · noise ±1.5%          |\n"
		"|last iter 4: fast +12%                        |\n"
		"|confirm fast, promoted                        |\n"
		"|  0.973 o                                     |\n"
		"|                                              |\n"
		"|                                              |\n"
		"|               o                              |\n"
		"|  0.883 ────────────────────────────*─────────|\n"
		"|  0.870 ······································|\n"
		"|        iter 0                          iter 4|\n"
		"+----------------------------------------------+\n");
	memset(&data.last, 0, sizeof(data.last));
	delwin(w);
}

static void per_shape_mode_keeps_the_verdict_at_the_foot(void **state)
{
	WINDOW *w = newwin(8, 60, 0, 0);
	struct view v = {.ops = &best_view, .d = &data, .mode = 1};

	fill_rows();
	shapes[0] = (struct wb_shape){.name = "fwd B=1 T=4096 H=16", .ms = sh_a};
	shapes[1] = (struct wb_shape){.name = "fwdbwd B=1 T=4096 H=16", .ms = sh_b};
	data.shapes = shapes;
	data.nshapes = 2;
	set_verdict(&data.last, 5, "not_comparable", NAN, "env_changed, busy_gpu", NULL);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · per shape (s: chart) ----------------------------+\n"
		"|Shape                                base     best speedup|\n"
		"|fwd B=1 T=4096 H=16                 1.200    1.050   1.14x|\n"
		"|fwdbwd B=1 T=4096 H=16              0.800    0.740   1.08x|\n"
		"|                                                          |\n"
		"|last iter 5: not_comparable                               |\n"
		"|flags: env_changed, busy_gpu                              |\n"
		"+----------------------------------------------------------+\n");
	data.nshapes = 0;
	memset(&data.last, 0, sizeof(data.last));
	delwin(w);
}

/* Two shapes on the roofline at row 4 (iter 4): one memory-bound, one
 * impossibly fast; rows 0-3 recorded none. */
static struct wb_roof roof_a[5], roof_b[5];
static char *roof_peaks5[5] = {NULL, NULL, NULL, NULL, "H200"};

static void set_roofline(void)
{
	memset(roof_a, 0, sizeof(roof_a));
	memset(roof_b, 0, sizeof(roof_b));
	roof_a[4] = (struct wb_roof){.have = true, .bw = 3.1e12, .rate = 120e12, .bw_share = 0.646,
				     .flop_share = 0.121, .bound = "memory", .dtype = "bf16"};
	roof_b[4] = (struct wb_roof){.have = true, .bw = 5.6e12, .rate = 990e12, .bw_share = 1.17,
				     .flop_share = 1.0, .bound = "compute", .dtype = "bf16",
				     .impossible = true};
	shapes[0] = (struct wb_shape){.name = "fwd B=1 T=4096 H=16", .ms = sh_a, .roof = roof_a};
	shapes[1] = (struct wb_shape){.name = "fwdbwd B=1 T=4096 H=16", .ms = sh_b, .roof = roof_b};
	data.shapes = shapes;
	data.nshapes = 2;
	data.roof_peaks = roof_peaks5;
	data.nroof_peaks = 5;
	data.has_sel = true;
	data.sel_row = 4;
}

/* The per-shape pane puts the selected row's roofline under each shape,
 * in the words that fit: the narrow pane of an 80x24 terminal and the
 * wider one of 120x40 both read. */
static void per_shape_shows_the_selected_rows_roofline(void **state)
{
	struct view v = {.ops = &best_view, .d = &data, .mode = 1};
	WINDOW *w = newwin(8, 40, 0, 0);

	fill_rows();
	set_roofline();
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · per shape (s: chart) --------+\n"
		"|roofline of iter 4 · H200 peaks       |\n"
		"|Shape            base     best speedup|\n"
		"|fwd B=1 T=4…    1.200    1.050   1.14x|\n"
		"|  mem · 3.10TB/s 65% · 120TF/s 12%    |\n"
		"|fwdbwd B=1 …    0.800    0.740   1.08x|\n"
		"|  IMPOSSIBLE · BW 117% · FLOP 100%    |\n"
		"+--------------------------------------+\n");
	delwin(w);
	w = newwin(8, 48, 0, 0);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · per shape (s: chart) ----------------+\n"
		"|roofline of iter 4 · H200 peaks               |\n"
		"|Shape                    base     best speedup|\n"
		"|fwd B=1 T=4096 H=16     1.200    1.050   1.14x|\n"
		"|  memory · 3.10 TB/s 65% · 120 TFLOP/s 12%    |\n"
		"|fwdbwd B=1 T=4096 H…    0.800    0.740   1.08x|\n"
		"|  IMPOSSIBLE · 5.60TB/s 117% · 990TF/s 100%   |\n"
		"+----------------------------------------------+\n");
	w = newwin(8, 80, 0, 0);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · per shape (s: chart) ------------------------------------------------+\n"
		"|roofline of iter 4 · H200 peaks                                               |\n"
		"|Shape                                                    base     best speedup|\n"
		"|fwd B=1 T=4096 H=16                                     1.200    1.050   1.14x|\n"
		"|  memory-bound · 3.10 TB/s, 65% of peak · 120 TFLOP/s, 12% of bf16            |\n"
		"|fwdbwd B=1 T=4096 H=16                                  0.800    0.740   1.08x|\n"
		"|  IMPOSSIBLE · 5.60 TB/s 117% · 990 TFLOP/s 100%                              |\n"
		"+------------------------------------------------------------------------------+\n");
	/* a row whose run has no roofline shows nothing new */
	data.sel_row = 2;
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Best · per shape (s: chart) ------------------------------------------------+\n"
		"|Shape                                                    base     best speedup|\n"
		"|fwd B=1 T=4096 H=16                                     1.200    1.050   1.14x|\n"
		"|fwdbwd B=1 T=4096 H=16                                  0.800    0.740   1.08x|\n"
		"|                                                                              |\n"
		"|                                                                              |\n"
		"|                                                                              |\n"
		"+------------------------------------------------------------------------------+\n");
	data.nshapes = 0;
	data.roof_peaks = NULL;
	data.nroof_peaks = 0;
	data.has_sel = false;
	delwin(w);
}

/* The detail's roofline table fits an 80-column terminal; a run with no
 * cost model adds no line, not even a heading. */
static void detail_roofline_table_fits_80_columns(void **state)
{
	struct view v = {.ops = &detail_view, .d = &data};
	struct wb_line *lines = NULL;
	size_t n = 0;
	char *names[2] = {"fwd B=1 T=4096 H=16 D=128", "fwdbwd B=1 T=4096 H=16 D=128"};

	set_roofline();
	detail_roof_lines("H200", names, roof_a + 4, 0, &lines, &n);
	assert_int_equal(n, 0);
	struct wb_roof two[2] = {roof_a[4], roof_b[4]};
	detail_roof_lines("H200", names, two, 2, &lines, &n);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		assert_true(sanitize_width(lines[i].text, strlen(lines[i].text)) <= 78);
	assert_int_equal(lines[4].role, R_FAIL);
	WINDOW *w = newwin(7, 80, 0, 0);
	memset(&data, 0, sizeof(data));
	data.detail = lines;
	data.ndetail = n;
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Iteration detail (Esc back) ------------------------------------------------+\n"
		"|                                                                              |\n"
		"|Roofline (H200 peaks; the run's verdict recorded it)                          |\n"
		"|Shape                        bandwidth of peak    FLOP rate of peak bound     |\n"
		"|fwd B=1 T=4096 H=16 D=128    3.10 TB/s     65%  120 TFLOP/s     12% memory    |\n"
		"|fwdbwd B=1 T=4096 H=16 D=1…  5.60 TB/s    117%  990 TFLOP/s    100% impossible|\n"
		"+------------------------------------------------------------------------------+\n");
	data.detail = NULL;
	data.ndetail = 0;
	wb_lines_free(lines, n);
	delwin(w);
}

static void detail_pins_the_rows_verdict_above_the_pages(void **state)
{
	WINDOW *w = newwin(6, 64, 0, 0);
	struct view v = {.ops = &detail_view, .d = &data};
	struct wb_line lines[4] = {{"Iteration 4 · keep · num_warps 8", R_HEADER},
				   {"Gate: pass (-k subset)", R_SUBSET},
				   {"Why: +2.1% vs best over 3 shape(s)", R_NORMAL},
				   {"last", R_NORMAL}};

	fill_rows();
	data.detail = lines;
	data.ndetail = 4;
	set_verdict(&data.sel, 4, "slow", -0.052, "unstable, subset_gate",
		    "confirm slow, not promoted");
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Iteration detail (Esc back) --------------------------------+\n"
		"|Verdict against the best: slow -5.2% · confirm slow, not prom…|\n"
		"|Flags: unstable, subset_gate                                  |\n"
		"|Iteration 4 · keep · num_warps 8                              |\n"
		"|Gate: pass (-k subset)                                        |\n"
		"+-------------------------------------------------------- 1/4 -+\n");
	view_navigate(&v, ACT_PAGE_DOWN);
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Iteration detail (Esc back) --------------------------------+\n"
		"|Verdict against the best: slow -5.2% · confirm slow, not prom…|\n"
		"|Flags: unstable, subset_gate                                  |\n"
		"|Gate: pass (-k subset)                                        |\n"
		"|Why: +2.1% vs best over 3 shape(s)                            |\n"
		"+-------------------------------------------------------- 2/4 -+\n");
	/* A row without a recorded verdict pages as before. */
	memset(&data.sel, 0, sizeof(data.sel));
	v.sel = 0;
	v.ops->draw(&v, w);
	expect_screen(w,
		"+- Iteration detail (Esc back) --------------------------------+\n"
		"|Iteration 4 · keep · num_warps 8                              |\n"
		"|Gate: pass (-k subset)                                        |\n"
		"|Why: +2.1% vs best over 3 shape(s)                            |\n"
		"|last                                                          |\n"
		"+--------------------------------------------------------------+\n");
	data.detail = NULL;
	data.ndetail = 0;
	delwin(w);
}

static void wizard_collects_and_validates(void **state)
{
	WINDOW *w = newwin(14, 76, 0, 0); /* a wizard on an 80-column terminal */
	struct wizard *wz = wizard_new("Log iteration 5", 1);
	static const char *const statuses[] = {"keep", "revert", "drop", "floor", NULL};

	wizard_info(wz, R_NORMAL, "gate: pass (full)   bench: 0.883 ms   vs best: +2%%");
	wizard_text(wz, "Direction", "one line: what this change tried", true, NULL);
	wizard_choice(wz, "Status", "keep / revert / drop / floor", statuses, 0);
	wizard_check(wz, "Lint: tf32 acknowledged", "the diff turns TF32 on", true);
	/* Enter on an empty required field at the end: not submitted. */
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_string_equal(wz->error, "Direction is required");
	assert_int_equal(wz->cur, 0);
	for (const char *p = "wider tiles"; *p; p++)
		wizard_key(wz, (wint_t)*p, false);
	wizard_key(wz, 0x07, false); /* not printable: ignored */
	wizard_key(wz, 0x9b, false);
	wizard_key(wz, 127, false);
	wizard_key(wz, 's', false);
	wizard_key(wz, KEY_DOWN, true);
	wizard_key(wz, 'r', false); /* its key picks "revert" */
	wizard_draw(wz, w);
	/* each choice's key is on screen, in the choice and in the help */
	expect_screen(w,
		"+- Log iteration 5 --------------------------------------------------------+\n"
		"|gate: pass (full)   bench: 0.883 ms   vs best: +2%                        |\n"
		"|                                                                          |\n"
		"|Direction                wider tiles                                      |\n"
		"|                                                                          |\n"
		"|Status                   ( ) [k]eep  (*) [r]evert  ( ) [d]rop  ( ) [f]loor|\n"
		"|                         keep / revert / drop / floor · keys k r d f      |\n"
		"|                         pick, or Left/Right                              |\n"
		"|Lint: tf32 acknowledged  [ ] no                                           |\n"
		"|                                                                          |\n"
		"|                                                                          |\n"
		"|                                                                          |\n"
		"|Enter next / save · Tab/Up/Down move · Esc cancel (nothing is saved)      |\n"
		"+--------------------------------------------------------------------------+\n");
	wizard_key(wz, '\n', false);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_string_equal(wz->error, "Lint: tf32 acknowledged must be confirmed");
	wizard_key(wz, ' ', false);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_SUBMIT);
	assert_string_equal(wz->f[0].value.buf, "wider tiles");
	assert_int_equal(wz->f[1].choice, 1);
	/* the keys shown pick: d drop, f floor, k keep; h and l move */
	wz->cur = 1;
	wizard_key(wz, 'd', false);
	assert_int_equal(wz->f[1].choice, 2);
	wizard_key(wz, 'f', false);
	assert_int_equal(wz->f[1].choice, 3);
	wizard_key(wz, 'k', false);
	assert_int_equal(wz->f[1].choice, 0);
	wizard_key(wz, 'h', false);
	assert_int_equal(wz->f[1].choice, 3);
	assert_int_equal(wizard_key(wz, KEY_ESC, false), WZ_CANCEL);
	wizard_free(wz);
	delwin(w);
}

static void wizard_step_mode_shows_one_prompt(void **state)
{
	WINDOW *w = newwin(10, 60, 0, 0);
	struct wizard *wz = wizard_new("Stall re-assessment", 2);

	wz->one_per_page = true;
	wizard_text(wz, "Re-profile", "what does the profiler say now?", true, NULL);
	wizard_text(wz, "New direction", "an axis not tried yet", true, NULL);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_int_equal(wz->cur, 0); /* a required answer first */
	wizard_key(wz, 'x', false);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_int_equal(wz->cur, 1);
	wizard_draw(wz, w);
	const char *t = text_of(w);
	assert_non_null(strstr(t, "step 2/2"));
	assert_non_null(strstr(t, "New direction"));
	assert_null(strstr(t, "Re-profile"));
	wizard_free(wz);
	delwin(w);
}

/* At 80x24 a long list of past directions must not hide the input: the
 * field is drawn, and the list says how much of it is not shown. */
static void wizard_field_stays_visible_under_a_long_context(void **state)
{
	WINDOW *w = newwin(16, 78, 0, 0);
	struct wizard *wz = wizard_new("Stall re-assessment", 2);

	wz->one_per_page = true;
	wizard_info(wz, R_REVERT, "3 rows in a row without a win: re-assess");
	wizard_info(wz, R_HEADER, "directions tried so far, by axis:");
	for (int i = 0; i < 20; i++)
		wizard_info(wz, R_NORMAL, "  tiling: direction %d", i);
	wizard_text(wz, "Re-profile", "a profiler file under trace/", true, NULL);
	wizard_text(wz, "New direction", "an axis not tried yet", true, NULL);
	for (const char *p = "trace/ncu.txt"; *p; p++)
		wizard_key(wz, (wint_t)*p, false);
	wizard_draw(wz, w);
	const char *t = text_of(w);
	const char *field = strstr(t, "|Re-profile ");
	assert_non_null(field);
	const char *eol = strchr(field, '\n');
	const char *val = strstr(field, "trace/ncu.txt");
	assert_true(val && eol && val < eol); /* the value on the field's own line */
	assert_non_null(strstr(t, "a profiler file under trace/"));
	assert_non_null(strstr(t, "more lines not shown"));
	assert_non_null(strstr(t, "direction 0"));
	assert_null(strstr(t, "direction 19"));
	wizard_free(wz);
	delwin(w);
}

/* The context the re-assessment asks to summarise scrolls: PgDn pages to
 * its end (every direction shown once, none hidden), PgUp back to the top;
 * the lines at either end say how many are out of sight and which key
 * shows them, and the key line names PgUp/PgDn. */
static void wizard_context_scrolls_to_every_line(void **state)
{
	WINDOW *w = newwin(16, 78, 0, 0);
	struct wizard *wz = wizard_new("Stall re-assessment", 2);
	bool seen[20] = {false};

	wz->one_per_page = true;
	wizard_info(wz, R_REVERT, "3 rows in a row without a win: re-assess");
	wizard_info(wz, R_HEADER, "directions tried so far, by axis:");
	for (int i = 0; i < 20; i++)
		wizard_info(wz, R_NORMAL, "  tiling: direction %02d", i);
	wizard_text(wz, "Re-profile", "a profiler file under trace/", true, NULL);
	wizard_draw(wz, w);
	const char *t = text_of(w);
	assert_non_null(strstr(t, "more lines not shown: PgDn shows them"));
	assert_non_null(strstr(t, "PgUp/PgDn context"));
	assert_null(strstr(t, "earlier line"));
	for (int page = 0; page < 30; page++) {
		t = text_of(w);
		for (int i = 0; i < 20; i++) {
			char want[32];
			snprintf(want, sizeof(want), "direction %02d", i);
			if (strstr(t, want))
				seen[i] = true;
		}
		if (strstr(t, "direction 19"))
			break;
		assert_int_equal(wizard_key(wz, KEY_NPAGE, true), WZ_CONTINUE);
		wizard_draw(wz, w);
	}
	for (int i = 0; i < 20; i++)
		assert_true(seen[i]);
	assert_non_null(strstr(t, "earlier lines: PgUp shows them"));
	assert_null(strstr(t, "more lines not shown"));
	assert_non_null(strstr(t, "|Re-profile ")); /* the field stays */
	/* PgDn past the end stays at the end; PgUp goes back to the top */
	wizard_key(wz, KEY_NPAGE, true);
	wizard_draw(wz, w);
	assert_non_null(strstr(text_of(w), "direction 19"));
	for (int k = 0; k < 10; k++)
		wizard_key(wz, KEY_PPAGE, true);
	wizard_draw(wz, w);
	t = text_of(w);
	assert_int_equal(wz->info_top, 0);
	assert_non_null(strstr(t, "3 rows in a row without a win"));
	assert_null(strstr(t, "earlier line"));
	/* a text field takes no character from the paging keys */
	assert_int_equal((int)wz->f[0].value.len, 0);
	wizard_free(wz);
	delwin(w);
}

/* A context line that wraps past the rows left is not cut silently: it
 * waits for PgDn with the line that says so, and PgDn shows it whole. */
static void wizard_context_never_cuts_a_line_silently(void **state)
{
	WINDOW *w = newwin(16, 44, 0, 0);
	struct wizard *wz = wizard_new("Log the iteration", 1);

	wizard_info(wz, R_NORMAL, "iteration 1 · gate pass · bench 28.829 ms · vs best +74%%");
	wizard_info(wz, R_REVERT, "flags: implausible · implausible_aggregate: the aggregate "
				  "speedup 4.01x is above 1.5x; implausible_shape: fwd B=1 T=1024 "
				  "at 4.20x is above 3x THE-END");
	wizard_text(wz, "Direction", "one line", true, NULL);
	wizard_text(wz, "Axis", "optional", false, NULL);
	wizard_draw(wz, w);
	const char *t = text_of(w);
	assert_non_null(strstr(t, "iteration 1"));
	assert_null(strstr(t, "THE-END")); /* its end is not shown... */
	assert_non_null(strstr(t, "1 more line not shown: PgDn shows them")); /* ...and it says so */
	wizard_key(wz, KEY_NPAGE, true);
	wizard_draw(wz, w);
	t = text_of(w);
	assert_non_null(strstr(t, "1 earlier line: PgUp shows them"));
	assert_non_null(strstr(t, "THE-END")); /* PgDn shows it whole */
	assert_null(strstr(t, "more line"));
	wizard_key(wz, KEY_PPAGE, true);
	wizard_draw(wz, w);
	assert_int_equal(wz->info_top, 0);
	wizard_free(wz);
	delwin(w);
}

static int profile_exists(void *ctx, const char *value, struct sb *why)
{
	if (!strcmp(value, "trace/ncu.txt"))
		return 0;
	sb_addf(why, "the profile %s does not exist (%s)", value, (const char *)ctx);
	return -1;
}

/* A field's own check runs when Enter leaves it: the step stays, with the
 * check's words, until the value passes; the hint wraps under the field. */
static void wizard_checks_a_field_at_its_step(void **state)
{
	WINDOW *w = newwin(12, 60, 0, 0);
	struct wizard *wz = wizard_new("Stall re-assessment", 2);

	wz->one_per_page = true;
	struct wz_field *f = wizard_text(wz, "Re-profile",
					 "a profiler file under trace/, written after the stall began "
					 "(Nsight Compute, torch.profiler, perf)",
					 true, NULL);
	wizard_field_check(f, profile_exists, "save it under trace/");
	wizard_text(wz, "New direction", "an axis not tried yet", true, NULL);
	for (const char *p = "trace/nope.txt"; *p; p++)
		wizard_key(wz, (wint_t)*p, false);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_int_equal(wz->cur, 0);
	assert_string_equal(wz->error,
			    "the profile trace/nope.txt does not exist (save it under trace/)");
	wizard_draw(wz, w);
	expect_screen(w,
		"+- Stall re-assessment · step 1/2 -------------------------+\n"
		"|Re-profile          trace/nope.txt                        |\n"
		"|                    a profiler file under trace/, written |\n"
		"|                    after the stall began (Nsight         |\n"
		"|                    Compute, torch.profiler, perf)        |\n"
		"|                                                          |\n"
		"|                                                          |\n"
		"|                                                          |\n"
		"|the profile trace/nope.txt does not exist (save it under  |\n"
		"|trace/)                                                   |\n"
		"|Enter next step · Up back · Esc cancel (nothing is saved) |\n"
		"+----------------------------------------------------------+\n");
	wizard_key(wz, CTRL_KEY('u'), false);
	for (const char *p = "trace/ncu.txt"; *p; p++)
		wizard_key(wz, (wint_t)*p, false);
	assert_int_equal(wizard_key(wz, '\n', false), WZ_CONTINUE);
	assert_int_equal(wz->cur, 1);
	assert_null(wz->error);
	/* the height a layout asks for holds the wrapped hint */
	assert_true(wizard_height(wz, 60) >= 10);
	wizard_free(wz);
	delwin(w);
}

static void ascii_locale_draws_ascii_only(void **state)
{
	WINDOW *w = newwin(9, 72, 0, 0);
	struct view v = {.ops = &timeline_view, .d = &data};

	fill_rows();
	sanitize_set_ascii(true);
	v.ops->draw(&v, w);
	sanitize_set_ascii(false);
	const char *t = text_of(w);
	for (const char *p = t; *p; p++)
		assert_true((unsigned char)*p < 0x80);
	assert_non_null(strstr(t, "+- Timeline . 5 iterations -"));
	assert_non_null(strstr(t, "fuse gate cumsum into the c~"));
	delwin(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timeline_renders_every_column),
		cmocka_unit_test(timeline_iter_column_fits_five_digits),
		cmocka_unit_test(timeline_marks_failures_without_colour),
		cmocka_unit_test(timeline_scrolls_to_keep_selection_visible),
		cmocka_unit_test(chart_draws_points_best_line_and_band),
		cmocka_unit_test(chart_follows_the_selected_row),
		cmocka_unit_test(chart_best_label_is_the_best),
		cmocka_unit_test(a_first_frame_of_the_newest_rows_is_the_whole_frame),
		cmocka_unit_test(chart_best_on_an_edge_row_is_labelled_the_best),
		cmocka_unit_test(chart_puts_the_noise_under_the_best_when_narrow),
		cmocka_unit_test(chart_per_shape_mode_lists_shapes),
		cmocka_unit_test(per_shape_shows_the_workspace_comparison),
		cmocka_unit_test(per_shape_uses_only_rows_that_may_be_the_best),
		cmocka_unit_test(traps_show_states_and_explain_selection),
		cmocka_unit_test(dispatch_table_renders),
		cmocka_unit_test(live_tail_follows_and_strips_escapes),
		cmocka_unit_test(live_shows_progress_and_the_benchmark_phase),
		cmocka_unit_test(live_condenses_a_wide_table_to_keep_its_numbers),
		cmocka_unit_test(live_scrolls_sideways_through_the_raw_lines),
		cmocka_unit_test(condense_keeps_two_blanks_when_they_fit),
		cmocka_unit_test(detail_scrolls_sideways),
		cmocka_unit_test(live_keeps_bounded_memory),
		cmocka_unit_test(help_lists_every_action),
		cmocka_unit_test(help_has_a_legend_for_every_mark_and_state),
		cmocka_unit_test(keymap_comes_from_the_action_table),
		cmocka_unit_test(detail_pages_prebuilt_lines),
		cmocka_unit_test(chart_shows_the_last_verdict_and_its_flags),
		cmocka_unit_test(per_shape_mode_keeps_the_verdict_at_the_foot),
		cmocka_unit_test(detail_pins_the_rows_verdict_above_the_pages),
		cmocka_unit_test(per_shape_shows_the_selected_rows_roofline),
		cmocka_unit_test(detail_roofline_table_fits_80_columns),
		cmocka_unit_test(wizard_collects_and_validates),
		cmocka_unit_test(wizard_step_mode_shows_one_prompt),
		cmocka_unit_test(wizard_field_stays_visible_under_a_long_context),
		cmocka_unit_test(wizard_context_scrolls_to_every_line),
		cmocka_unit_test(wizard_context_never_cuts_a_line_silently),
		cmocka_unit_test(wizard_checks_a_field_at_its_step),
		cmocka_unit_test(ascii_locale_draws_ascii_only),
	};
	return cmocka_run_group_tests_name("views", tests, setup, teardown);
}
