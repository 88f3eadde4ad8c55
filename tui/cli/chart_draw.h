/*
 * chart_draw — the bench-per-iteration chart as a picture: the series that
 * loop_chart builds (struct chart) drawn with cairo into an SVG or a PNG
 * image.  Nothing here decides which rows are points, what the best is or
 * how wide the noise band is; it only draws what the engine stated.
 */
#ifndef OPTLOOP_CHART_DRAW_H
#define OPTLOOP_CHART_DRAW_H

#include <stddef.h>

struct chart;
struct err;
struct sb;

enum chart_format { CHART_SVG, CHART_PNG };

#define CHART_WIDTH 960  /* pixels (the SVG's document unit is px) */
#define CHART_HEIGHT 540

/* Draw c as one image of CHART_WIDTH × CHART_HEIGHT pixels and append its
 * bytes (an SVG document, or a PNG file) to out.  title heads the picture
 * (the op, say; may be NULL).  0, or ERR_IO with cairo's reason in e. */
int chart_draw(const struct chart *c, const char *title, enum chart_format fmt, struct sb *out,
	       struct err *e);

/* Let go of the fonts cairo and fontconfig keep for drawing, once the last
 * chart of the process is drawn (a sanitizer build counts them as leaks). */
void chart_draw_done(void);

#endif
