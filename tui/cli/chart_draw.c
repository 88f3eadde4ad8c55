/*
 * chart_draw — struct chart drawn with cairo: the noise band around the
 * best, the best-so-far line as steps, a point per row that may be the
 * best, and a mark on the x axis for every other row (dropped, failed, or a
 * keep without a number), each kind with its own shape as well as its own
 * colour, so they stay apart in grey print.
 */
#include "tui/cli/chart_draw.h"

#include "core/err.h"
#include "core/model.h"
#include "core/sb.h"
#include "views/sanitize.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct rgb {
	double r, g, b;
};

static const struct rgb C_TEXT = {0.13, 0.13, 0.13}, C_DIM = {0.42, 0.42, 0.42},
			C_GRID = {0.91, 0.91, 0.91}, C_AXIS = {0.27, 0.27, 0.27},
			C_BEST = {0.16, 0.60, 0.25}, C_POINT = {0.12, 0.40, 0.85},
			C_DROP = {0.85, 0.55, 0.0}, C_FAIL = {0.82, 0.12, 0.16},
			C_WHITE = {1, 1, 1};

#define BAND_ALPHA 0.18

/* cairo is opened by the first chart drawn, not linked: as a dependency of
 * the binary its 19 shared objects (pixman, fontconfig, freetype, libpng,
 * X11's libraries) doubled the start-up of every optloop command (7 to
 * 15 ms for `optloop version` on a 2-core VM). */
#define CAIRO_SONAME "libcairo.so.2"
#define CAIRO_CALLS(X) X(arc) X(clip) X(close_path) X(create) X(debug_reset_static_data) X(destroy) \
	X(fill) \
	X(fill_preserve) X(image_surface_create) X(line_to) X(move_to) X(new_sub_path) X(paint) \
	X(rectangle) X(restore) X(rotate) X(save) X(select_font_face) X(set_font_size) \
	X(set_line_join) X(set_line_width) X(set_source_rgb) X(set_source_rgba) X(show_text) \
	X(status) X(status_to_string) X(stroke) X(surface_destroy) X(surface_finish) \
	X(surface_status) X(surface_write_to_png_stream) X(svg_surface_create_for_stream) \
	X(svg_surface_set_document_unit) X(text_extents) X(translate)

static struct {
#define X(f) __typeof__(cairo_##f) *f;
	CAIRO_CALLS(X)
#undef X
} K;

static void *lib;

static int cairo_load(struct err *e)
{
	void *h, *p;

	if (lib)
		return 0;
	if (!(h = dlopen(CAIRO_SONAME, RTLD_NOW | RTLD_LOCAL)))
		return err_set(e, ERR_IO, "chart: cannot load the cairo library (%s); install it "
					  "(Debian: apt-get install libcairo2) and run again", dlerror());
#define X(f)                                                                                       \
	if (!(p = dlsym(h, "cairo_" #f))) {                                                        \
		dlclose(h);                                                                        \
		return err_set(e, ERR_IO, "chart: the cairo library lacks cairo_" #f                \
					  " (cairo 1.16 or newer is needed)");                      \
	}                                                                                          \
	memcpy(&K.f, &p, sizeof(p));
	CAIRO_CALLS(X)
#undef X
	lib = h;
	return 0;
}

/* The plot area and its scales. */
struct frame {
	double x0, x1, y0, y1; /* pixels */
	double lo, hi, step;   /* ms at the bottom and the top; the grid step */
	int dec;               /* decimals of the y labels */
	size_t n;              /* rows along x */
	bool has_y;            /* some number to scale by */
};

static void colour(cairo_t *cr, const struct rgb *c)
{
	K.set_source_rgb(cr, c->r, c->g, c->b);
}

static double fx(const struct frame *f, size_t i)
{
	return f->x0 + ((double)i + 0.5) * (f->x1 - f->x0) / (double)(f->n ? f->n : 1);
}

static double fy(const struct frame *f, double v)
{
	return f->y1 - (v - f->lo) / (f->hi - f->lo) * (f->y1 - f->y0);
}

/* Text at x (align 0 left, 0.5 centre, 1 right) on baseline y, through the
 * sanitiser like every text from outside; returns its width. */
static double text(cairo_t *cr, double x, double y, double size, bool bold, const struct rgb *c,
		   double align, const char *s)
{
	struct sb clean = SB_INIT;
	cairo_text_extents_t ex;

	sb_init(&clean);
	sanitize_line(s, strlen(s), &clean);
	K.select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	K.set_font_size(cr, size);
	K.text_extents(cr, clean.buf, &ex);
	colour(cr, c);
	K.move_to(cr, x - align * ex.x_advance, y);
	K.show_text(cr, clean.buf);
	sb_release(&clean);
	return ex.x_advance;
}

/* ---- shapes of the points and marks ---- */

static void shape_square(cairo_t *cr, double x, double y, const struct rgb *c)
{
	K.rectangle(cr, x - 5, y - 5, 10, 10);
	colour(cr, c);
	K.fill(cr);
}

static void shape_circle(cairo_t *cr, double x, double y, const struct rgb *c, bool hollow)
{
	K.new_sub_path(cr);
	K.arc(cr, x, y, 5.5, 0, 2 * M_PI);
	colour(cr, hollow ? &C_WHITE : c);
	K.fill_preserve(cr);
	colour(cr, c);
	K.set_line_width(cr, 2);
	K.stroke(cr);
}

static void shape_ring(cairo_t *cr, double x, double y, const struct rgb *c)
{
	K.new_sub_path(cr);
	K.arc(cr, x, y, 10, 0, 2 * M_PI);
	colour(cr, c);
	K.set_line_width(cr, 2.5);
	K.stroke(cr);
}

static void shape_triangle(cairo_t *cr, double x, double y, const struct rgb *c)
{
	K.move_to(cr, x - 7, y - 6);
	K.line_to(cr, x + 7, y - 6);
	K.line_to(cr, x, y + 6);
	K.close_path(cr);
	colour(cr, c);
	K.fill_preserve(cr);
	colour(cr, &C_WHITE);
	K.set_line_width(cr, 1);
	K.stroke(cr);
}

static void shape_cross(cairo_t *cr, double x, double y, const struct rgb *c)
{
	colour(cr, &C_WHITE);
	K.set_line_width(cr, 6);
	for (int pass = 0; pass < 2; pass++) {
		K.move_to(cr, x - 6, y - 6);
		K.line_to(cr, x + 6, y + 6);
		K.move_to(cr, x + 6, y - 6);
		K.line_to(cr, x - 6, y + 6);
		K.stroke(cr);
		colour(cr, c);
		K.set_line_width(cr, 3);
	}
}

static void shape_diamond(cairo_t *cr, double x, double y, const struct rgb *c)
{
	K.move_to(cr, x, y - 7);
	K.line_to(cr, x + 6, y);
	K.line_to(cr, x, y + 7);
	K.line_to(cr, x - 6, y);
	K.close_path(cr);
	colour(cr, c);
	K.fill(cr);
}

/* ---- scales ---- */

static double nice_step(double span)
{
	double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void y_scale(const struct chart *c, struct frame *f)
{
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < c->n; i++) {
		const struct chart_item *it = &c->v[i];
		if (it->point) {
			lo = fmin(lo, it->ms);
			hi = fmax(hi, it->ms);
		}
		if (isfinite(it->best_ms)) {
			lo = fmin(lo, it->best_ms);
			hi = fmax(hi, it->best_ms);
		}
	}
	if (isfinite(c->band_lo) && isfinite(lo)) {
		lo = fmin(lo, c->band_lo);
		hi = fmax(hi, c->band_hi);
	}
	f->has_y = isfinite(lo) && isfinite(hi);
	if (!f->has_y)
		return;
	double span = hi - lo;
	if (span <= 0)
		span = hi > 0 ? hi * 0.1 : 1;
	lo -= 0.08 * span;
	hi += 0.08 * span;
	if (lo < 0)
		lo = 0;
	f->step = nice_step(hi - lo);
	f->lo = floor(lo / f->step) * f->step;
	f->hi = ceil(hi / f->step) * f->step;
	f->dec = f->step >= 1 ? 0 : (int)ceil(-log10(f->step) - 1e-9);
}

/* ---- the parts ---- */

static void draw_heading(cairo_t *cr, const struct chart *c, const char *title)
{
	struct sb s = SB_INIT;
	sb_init(&s);
	if (title)
		sb_addf(&s, "%s \xc2\xb7 ", title);
	if (c->shape)
		sb_addf(&s, "%s \xc2\xb7 time per iteration", c->shape);
	else
		sb_adds(&s, "bench per iteration");
	text(cr, 24, 32, 19, true, &C_TEXT, 0, s.buf);
	sb_reset(&s);
	if (!c->shape && c->nshapes > 1)
		sb_addf(&s, "equal-weight geomean of %zu shapes \xc2\xb7 ", c->nshapes);
	if (c->has_best && isfinite(c->best_ms)) {
		sb_addf(&s, "best %.4g ms at iteration %d", c->best_ms, c->best_iter);
		if (isfinite(c->band_lo) && c->best_ms > 0)
			sb_addf(&s, " \xc2\xb7 noise \xc2\xb1%.1f %%%s",
				(c->band_hi - c->band_lo) / 2 / c->best_ms * 100,
				c->band_assumed ? " (assumed: no repeated runs yet)" : "");
	} else if (c->has_best) {
		sb_addf(&s, "the best (iteration %d) did not measure this shape", c->best_iter);
	} else {
		sb_adds(&s, "no best yet");
	}
	text(cr, 24, 56, 13, false, &C_DIM, 0, s.buf);
	sb_release(&s);
}

static void draw_grid(cairo_t *cr, const struct frame *f)
{
	char lab[32];
	K.set_line_width(cr, 1);
	for (double v = f->lo; v <= f->hi + f->step / 2; v += f->step) {
		double y = round(fy(f, v)) + 0.5;
		colour(cr, &C_GRID);
		K.move_to(cr, f->x0, y);
		K.line_to(cr, f->x1, y);
		K.stroke(cr);
		snprintf(lab, sizeof(lab), "%.*f", f->dec, v);
		text(cr, f->x0 - 8, y + 4, 12, false, &C_DIM, 1, lab);
	}
}

static void draw_band(cairo_t *cr, const struct chart *c, const struct frame *f)
{
	if (!isfinite(c->band_lo) || !isfinite(c->band_hi))
		return;
	double ya = fy(f, c->band_hi), yb = fy(f, c->band_lo);
	K.rectangle(cr, f->x0, ya, f->x1 - f->x0, yb - ya);
	K.set_source_rgba(cr, C_BEST.r, C_BEST.g, C_BEST.b, BAND_ALPHA);
	K.fill(cr);
}

/* The best so far: a step over each row's slot, rising or falling where a
 * keep changed it. */
static void draw_best_line(cairo_t *cr, const struct chart *c, const struct frame *f)
{
	double half = (f->x1 - f->x0) / (double)(f->n ? f->n : 1) / 2;
	bool pen = false;
	for (size_t i = 0; i < c->n; i++) {
		double b = c->v[i].best_ms;
		if (!isfinite(b)) {
			pen = false;
			continue;
		}
		double y = fy(f, b);
		if (pen)
			K.line_to(cr, fx(f, i) - half, y);
		else
			K.move_to(cr, fx(f, i) - half, y);
		K.line_to(cr, fx(f, i) + half, y);
		pen = true;
	}
	colour(cr, &C_BEST);
	K.set_line_width(cr, 2.5);
	K.set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	K.stroke(cr);
}

static void draw_axes(cairo_t *cr, const struct frame *f)
{
	colour(cr, &C_AXIS);
	K.set_line_width(cr, 1.5);
	K.move_to(cr, f->x0, f->y0);
	K.line_to(cr, f->x0, f->y1);
	K.line_to(cr, f->x1, f->y1);
	K.stroke(cr);
	text(cr, (f->x0 + f->x1) / 2, f->y1 + 46, 13, false, &C_TEXT, 0.5, "iteration");
	K.save(cr);
	K.translate(cr, 28, (f->y0 + f->y1) / 2);
	K.rotate(cr, -M_PI / 2);
	text(cr, 0, 0, 13, false, &C_TEXT, 0.5, "ms");
	K.restore(cr);
}

static void draw_rows(cairo_t *cr, const struct chart *c, const struct frame *f)
{
	char lab[16];
	double slot = (f->x1 - f->x0) / (double)(f->n ? f->n : 1);
	size_t every = (size_t)ceil(30 / slot);

	for (size_t i = 0; i < c->n; i++) {
		const struct chart_item *it = &c->v[i];
		double x = fx(f, i);
		if (it->point && f->has_y) {
			double y = fy(f, it->ms);
			if (it->kind == CHART_BASE)
				shape_square(cr, x, y, &C_POINT);
			else
				shape_circle(cr, x, y, &C_POINT, it->unconfirmed);
			if (c->has_best && it->iter == c->best_iter)
				shape_ring(cr, x, y, &C_BEST);
		} else if (it->kind == CHART_FAILED) {
			shape_cross(cr, x, f->y1, &C_FAIL);
		} else if (it->kind == CHART_DROPPED) {
			shape_triangle(cr, x, f->y1, &C_DROP);
		} else {
			shape_diamond(cr, x, f->y1, &C_POINT); /* a keep without a number */
		}
		if (i % (every ? every : 1) == 0 || i + 1 == c->n) {
			snprintf(lab, sizeof(lab), "%d", it->iter);
			text(cr, x, f->y1 + 24, 12, false, &C_DIM, 0.5, lab);
		}
	}
}

/* One legend entry: its symbol, then its words; returns the next x. */
static double legend_entry(cairo_t *cr, double x, double y, int sym, const char *words)
{
	switch (sym) {
	case 0:
		shape_square(cr, x + 6, y - 4, &C_POINT);
		break;
	case 1:
		shape_circle(cr, x + 6, y - 4, &C_POINT, false);
		break;
	case 2:
		shape_circle(cr, x + 6, y - 4, &C_POINT, true);
		break;
	case 3:
		shape_ring(cr, x + 6, y - 4, &C_BEST);
		break;
	case 4:
		K.move_to(cr, x - 4, y - 4);
		K.line_to(cr, x + 16, y - 4);
		colour(cr, &C_BEST);
		K.set_line_width(cr, 2.5);
		K.stroke(cr);
		break;
	case 5:
		K.rectangle(cr, x - 4, y - 11, 20, 14);
		K.set_source_rgba(cr, C_BEST.r, C_BEST.g, C_BEST.b, BAND_ALPHA);
		K.fill(cr);
		break;
	case 6:
		shape_triangle(cr, x + 6, y - 4, &C_DROP);
		break;
	case 7:
		shape_cross(cr, x + 6, y - 4, &C_FAIL);
		break;
	default:
		shape_diamond(cr, x + 6, y - 4, &C_POINT);
		break;
	}
	return x + 26 + text(cr, x + 22, y, 12, false, &C_TEXT, 0, words) + 18;
}

static void draw_legend(cairo_t *cr, const struct chart *c, double y)
{
	bool unconfirmed = false, bare_keep = false;
	for (size_t i = 0; i < c->n; i++) {
		unconfirmed |= c->v[i].point && c->v[i].unconfirmed;
		bare_keep |= !c->v[i].point && (c->v[i].kind == CHART_BASE || c->v[i].kind == CHART_KEEP);
	}
	double x = 24;
	x = legend_entry(cr, x, y, 0, "baseline");
	x = legend_entry(cr, x, y, 1, "keep");
	if (unconfirmed)
		x = legend_entry(cr, x, y, 2, "keep (unconfirmed)");
	x = legend_entry(cr, x, y, 3, "the best");
	x = legend_entry(cr, x, y, 4, "best so far");
	if (isfinite(c->band_lo))
		x = legend_entry(cr, x, y, 5, "noise band");
	x = legend_entry(cr, x, y, 6, "dropped / reverted");
	x = legend_entry(cr, x, y, 7, "failed gate");
	if (bare_keep)
		legend_entry(cr, x, y, 8, "kept, no number");
}

static void draw_all(cairo_t *cr, const struct chart *c, const char *title)
{
	struct frame f = {.x0 = 84, .x1 = CHART_WIDTH - 32, .y0 = 80, .y1 = CHART_HEIGHT - 104,
			  .n = c->n};

	colour(cr, &C_WHITE);
	K.paint(cr);
	draw_heading(cr, c, title);
	y_scale(c, &f);
	if (f.has_y) {
		draw_grid(cr, &f);
		K.save(cr);
		K.rectangle(cr, f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0);
		K.clip(cr);
		draw_band(cr, c, &f);
		draw_best_line(cr, c, &f);
		K.restore(cr);
	} else {
		text(cr, (f.x0 + f.x1) / 2, (f.y0 + f.y1) / 2, 14, false, &C_DIM, 0.5,
		     "no bench numbers to chart yet");
	}
	draw_axes(cr, &f);
	draw_rows(cr, c, &f);
	draw_legend(cr, c, CHART_HEIGHT - 24);
}

static cairo_status_t sink(void *closure, const unsigned char *data, unsigned int len)
{
	sb_add(closure, data, len);
	return CAIRO_STATUS_SUCCESS;
}

int chart_draw(const struct chart *c, const char *title, enum chart_format fmt, struct sb *out,
	       struct err *e)
{
	cairo_surface_t *sf;
	int rc = cairo_load(e);

	if (rc < 0)
		return rc;
	if (fmt == CHART_SVG) {
		sf = K.svg_surface_create_for_stream(sink, out, CHART_WIDTH, CHART_HEIGHT);
		K.svg_surface_set_document_unit(sf, CAIRO_SVG_UNIT_PX);
	} else {
		sf = K.image_surface_create(CAIRO_FORMAT_ARGB32, CHART_WIDTH, CHART_HEIGHT);
	}
	cairo_t *cr = K.create(sf);
	draw_all(cr, c, title);
	cairo_status_t st = K.status(cr);
	K.destroy(cr);
	if (st == CAIRO_STATUS_SUCCESS && fmt == CHART_PNG)
		st = K.surface_write_to_png_stream(sf, sink, out);
	K.surface_finish(sf);
	if (st == CAIRO_STATUS_SUCCESS)
		st = K.surface_status(sf);
	K.surface_destroy(sf);
	if (st != CAIRO_STATUS_SUCCESS)
		return err_set(e, ERR_IO, "chart: cairo could not draw the %s: %s",
			       fmt == CHART_SVG ? "SVG" : "PNG", K.status_to_string(st));
	return 0;
}

/* cairo's own caches, then fontconfig's (FcFini), which cairo's reset
 * leaves alone. */
void chart_draw_done(void)
{
	if (!lib)
		return;
	K.debug_reset_static_data();
	void *p = dlsym(lib, "FcFini");
	if (p) {
		void (*fini)(void);
		memcpy(&fini, &p, sizeof(p));
		fini();
	}
}
