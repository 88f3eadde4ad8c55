/* chart — `optloop chart [--svg FILE] [--png FILE] [--shape SHAPE] [--json]`:
 * the bench-per-iteration chart of the workbench as a standalone picture,
 * or its series as JSON. */
#include "tui/cli/chart_draw.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Draw c in fmt to path ("-": standard output); 0 or the exit status. */
static int write_one(const struct chart *c, enum chart_format fmt, const char *path)
{
	struct sb img = SB_INIT;
	struct err e = {0};
	int rc = chart_draw(c, c->op, fmt, &img, &e);

	if (rc == 0 && !strcmp(path, "-")) {
		if (fwrite(img.buf, 1, img.len, stdout) != img.len || fflush(stdout) != 0)
			rc = err_set(&e, ERR_IO, "chart: cannot write the image to standard output");
	} else if (rc == 0) {
		rc = fsutil_write_atomic(path, img.buf, img.len, &e);
		if (rc == 0)
			fprintf(stderr, "optloop: wrote %s (%s, %dx%d)\n", path,
				fmt == CHART_SVG ? "SVG" : "PNG", CHART_WIDTH, CHART_HEIGHT);
	}
	sb_release(&img);
	return rc < 0 ? cli_fail(&e) : 0;
}

struct chart_args {
	const char *svg, *png, *shape;
	bool json;
};

/* where it goes, before anything is opened */
static int chart_before(struct cmd_ctx *x)
{
	const struct chart_args *a = x->args;
	const char *svg = a->svg, *png = a->png;
	int to_stdout = (svg && !strcmp(svg, "-")) + (png && !strcmp(png, "-")) + a->json;
	if (!svg && !png && !a->json)
		return cli_usage_error("chart", "say where to draw it: --svg FILE or --png FILE "
						"(- for standard output), or --json for the series");
	if (to_stdout > 1)
		return cli_usage_error("chart", "only one output can go to standard output: give "
						"--svg or --png a FILE");
	return CMD_GO;
}

static int chart_run(struct cmd_ctx *x)
{
	const struct chart_args *a = x->args;
	const char *svg = a->svg, *png = a->png, *shape = a->shape;
	bool json = a->json;
	struct loop *l = x->l;
	int rc = 0;
	struct chart ch;
	struct err e = {0};
	if (loop_chart(l, shape, &ch, &e) < 0) {
		rc = cli_fail(&e);
	} else if (!ch.n) {
		fprintf(stderr, "optloop chart: nothing to chart yet: %s/OPT_LOG.md has no rows (measure "
				"the baseline first: optloop verify, then optloop log --direction baseline)\n",
			loop_dir(l));
		rc = 3;
	} else {
		if (svg)
			rc = write_one(&ch, CHART_SVG, svg);
		if (png && rc == 0)
			rc = write_one(&ch, CHART_PNG, png);
		if (json && rc == 0)
			cli_print_json(loop_chart_json(&ch));
		chart_draw_done();
	}
	loop_chart_release(&ch);
	return rc;
}

static const struct cli_opt chart_opts[] = {
	CLI_TEXT("--svg", offsetof(struct chart_args, svg), "FILE",
		 "write the chart as an SVG image to FILE (- for standard output)"),
	CLI_TEXT("--png", offsetof(struct chart_args, png), "FILE",
		 "write the chart as a PNG image to FILE (- for standard output)"),
	CLI_TEXT("--shape", offsetof(struct chart_args, shape), "SHAPE",
		 "chart one measured shape's time instead of the bench column: "
		 "\"fwd B=2 T=512 H=4 D=64\", B2-T512-H4-D64 or B=2 T=512"),
	CLI_FLAG("--json", offsetof(struct chart_args, json),
		 "print the series as JSON: each row's kind, point or mark, "
		 "ms and best so far; the best and the band"),
	CLI_END,
};

const struct command cmd_chart = {
	.name = "chart",
	.summary = "the bench-per-iteration chart as an SVG or PNG picture: best line, noise band, "
		   "dropped and failed marks",
	.open = OPEN_READ,
	.opts = chart_opts,
	.args_size = sizeof(struct chart_args),
	.examples = (const char *const[]){
		"chart --svg chart.svg",
		"chart --png chart.png --shape B2-T512-H4-D64",
		"chart --svg - | rsvg-convert -z 2 -o chart@2x.png",
		"--op chunk_gla chart --svg gla.svg --png gla.png",
		"chart --json | jq '.rows[] | select(.point) | .ms'",
		NULL,
	},
	.more = "The workbench's chart as a picture of 960x540 pixels: a point per row that\n"
		"may be the best (the baseline, a keep with a passing gate and a number), the\n"
		"best so far as a line, the noise band around the best, and a mark on the x\n"
		"axis for every other row: a triangle for a dropped or reverted change, a\n"
		"cross for a failed gate.  Give --svg, --png or --json (or several); --op OP\n"
		"picks the workspace when there are several.  Exit 2 when --shape names no\n"
		"measured shape (the message lists them), 3 when the log has no row yet.",
	.before = chart_before,
	.run = chart_run,
};
