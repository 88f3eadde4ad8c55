/* roofline_cost — a helper of b_roofline.sh: the cost of one run's roofline
 * arithmetic as a verify pays it (the peaks row for an H200, the cost row
 * and the arithmetic of each of three shapes, the JSON kept with the
 * verdict), averaged over many runs.  Prints "US_PER_RUN". */
#include "core/err.h"
#include "core/model.h"
#include "core/roofline.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int one_run(const char *peaks, const char *costs)
{
	static const long shapes[3][4] = {{4, 2048, 16, 64}, {8, 1024, 8, 64}, {16, 4096, 32, 64}};
	struct roofline r;
	struct err e = {0};
	memset(&r, 0, sizeof(r));
	if (roofline_peaks_find(peaks, "NVIDIA H200", &r.peaks, &e) < 0)
		return fprintf(stderr, "%s\n", e.msg), -1;
	for (int i = 0; i < 3; i++) {
		struct parse_row row = {.mode = "fwd", .B = shapes[i][0], .T = shapes[i][1],
					.H = shapes[i][2], .D = shapes[i][3], .op = "chunk_linear_attn"};
		struct roofline_cost c;
		struct roofline_shape s;
		if (roofline_cost_find(costs, row.op, row.mode, NULL, &c, &e) < 0 ||
		    roofline_shape_eval(&c, &row, "fwd B=4 T=2048 H=16 D=64 chunk_linear_attn", 0.97,
					&r.peaks, &s, &e) < 0)
			return fprintf(stderr, "%s\n", e.msg), -1;
		roofline_add(&r, &s);
		roofline_cost_release(&c);
	}
	json_t *j = roofline_json(&r);
	char *txt = json_dumps(j, JSON_COMPACT);
	int ok = txt && strstr(txt, "\"impossible\":0") ? 0 : -1;
	free(txt);
	json_decref(j);
	roofline_release(&r);
	return ok;
}

int main(int argc, char **argv)
{
	const char *root = getenv("OPTLOOP_ROOT");
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	char peaks[4096], costs[4096];
	snprintf(peaks, sizeof(peaks), "%s/assets/peaks.tsv", root ? root : ".");
	snprintf(costs, sizeof(costs), "%s/assets/costs.tsv", root ? root : ".");
	if (one_run(peaks, costs) < 0)
		return 1;
	double best = 1e9;
	for (int k = 0; k < 5; k++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			if (one_run(peaks, costs) < 0)
				return 1;
		double us = (now_s() - t0) * 1e6 / n;
		if (us < best)
			best = us;
	}
	printf("%.1f\n", best);
	return 0;
}
