/*
 * passlog — what the workbench measured of itself (see passlog.h).
 */
#include "tui/workbench/passlog.h"

#include "core/sb.h"
#include "core/hash.h"

#include <curses.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <wchar.h>

static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}


/* A hash of what the terminal shows: every cell's characters, attributes
 * and colour pair. */
static uint64_t screen_hash(void)
{
	uint64_t h = 0;
	for (int y = 0; y < LINES; y++)
		for (int x = 0; x < COLS; x++) {
			cchar_t cc;
			wchar_t wc[CCHARW_MAX + 1] = {0};
			attr_t at = 0;
			short pair = 0;
			if (mvwin_wch(curscr, y, x, &cc) == ERR)
				continue;
			getcchar(&cc, wc, &at, &pair, NULL);
			uint64_t cell[3] = {h, (uint64_t)at, (uint64_t)pair};
			h = hash64(cell, sizeof(cell)) ^ hash64(wc, sizeof(wc));
		}
	return h;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

void pass_log_write(struct pass_log *pl)
{
	struct rusage ru;

	if (!pl->f)
		return;
	qsort(pl->v, pl->n, sizeof(double), cmp_double);
	getrusage(RUSAGE_SELF, &ru);
	double p50 = pl->n ? pl->v[pl->n / 2] : 0, p99 = pl->n ? pl->v[pl->n * 99 / 100] : 0;
	double mx = pl->n ? pl->v[pl->n - 1] : 0;
	fprintf(pl->f, "first_frame_ms %.3f\nfirst_frame_cpu_ms %.3f\n", pl->first_frame * 1e3,
		pl->first_frame_cpu * 1e3);
	if (pl->rows_whole > 0)
		fprintf(pl->f, "rows_whole_ms %.3f\nfirst_screen %016llx\nwhole_screen %016llx\n",
			pl->rows_whole * 1e3, (unsigned long long)pl->first_screen,
			(unsigned long long)pl->whole_screen);
	fprintf(pl->f, "passes %zu p50_ms %.3f p99_ms %.3f max_ms %.3f maxrss_kb %ld\n", pl->n,
		p50 * 1e3, p99 * 1e3, mx * 1e3, ru.ru_maxrss);
	fclose(pl->f);
	free(pl->v);
}

void pass_log_open(struct pass_log *pl)
{
	const char *path = getenv("OPTLOOP_PASS_LOG");
	if (path && *path)
		pl->f = fopen(path, "w");
}

void pass_log_frame(struct pass_log *pl, double at)
{
	if (pl->first_frame == 0) {
		pl->first_frame = at;
		pl->first_frame_cpu = cpu_now();
		if (pl->f)
			pl->first_screen = screen_hash();
	} else if (pl->f && pl->rows_whole > 0 && !pl->whole_screen) {
		pl->whole_screen = screen_hash();
	}
}

void pass_log_pass(struct pass_log *pl, double secs)
{
	if (!pl->f)
		return;
	if (pl->n == pl->cap) {
		pl->cap = pl->cap ? pl->cap * 2 : 4096;
		pl->v = xrealloc(pl->v, pl->cap * sizeof(double));
	}
	pl->v[pl->n++] = secs;
}
