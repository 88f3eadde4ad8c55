/*
 * live — the tail of a verify run's output, kept in bounded memory.
 *
 * Bytes are split into lines as they arrive; only the last max_lines lines
 * (each at most max_line bytes) are kept, raw: they are sanitised when
 * drawn, so a child printing at full speed costs a memchr and a copy per
 * line.  A carriage return not followed by a newline restarts the line (a
 * progress bar redrawing itself).
 */
#ifndef OPTLOOP_LIVE_H
#define OPTLOOP_LIVE_H

#include <stdbool.h>
#include <stddef.h>

struct live_line {
	char *text;
	unsigned short len;
	bool cut; /* longer than max_line; the rest was dropped */
};

struct live_buf {
	struct live_line *ring;
	size_t cap, head, count; /* ring of kept lines, head = oldest */
	size_t max_line;
	char *part;              /* the line being received */
	size_t part_len;
	bool part_cut, pending_cr;
	unsigned long long lines, bytes; /* totals since reset */
	/* What the pane shows around the text; set by the program. */
	char *title;     /* "verify · iter 4" */
	int progress;    /* 0..100, -1 unknown */
	char *stage;     /* the phase the harness announced ("Warming up 3 shape(s)"), or NULL */
	bool running;
	double t_start, t_end, now; /* unix seconds; t_end 0 while running */
	char *verdict;   /* "GATE PASSED", "incomplete: cancelled", ... or NULL */
	bool verdict_bad;
	char *note;      /* what the finished run's verdict flagged, with the rule and
			  * its number, shown at the pane's foot; NULL when nothing */
};

/* Owned by the caller: live_free(). */
struct live_buf *live_new(size_t max_lines, size_t max_line);
void live_free(struct live_buf *b);
/* Forget all lines and the run's fields; title copied. */
void live_reset(struct live_buf *b, const char *title);
void live_feed(struct live_buf *b, const char *data, size_t len);
/* Keep a final line that had no newline. */
void live_flush(struct live_buf *b);
/* Lines kept, oldest first; the partial line (if any) counts as the last. */
size_t live_count(const struct live_buf *b);
const char *live_line(const struct live_buf *b, size_t i, size_t *len);
void live_set_verdict(struct live_buf *b, const char *text, bool bad);
/* The note under the output (text copied; NULL clears it). */
void live_set_note(struct live_buf *b, const char *text);
/* The parser's progress events: a percent (-1 leaves it) and a phase name
 * (n bytes, copied; NULL leaves it). */
void live_set_progress(struct live_buf *b, int pct, const char *stage, size_t n);

#endif
