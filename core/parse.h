/*
 * parse — streaming reader of verify output, driven by a named PCRE2
 * pattern set (assets/patterns/<name>.pat, or a workspace's own).
 *
 * Feed any chunks in any sizes; the parser splits lines itself (a line may
 * be split anywhere), keeps a bounded amount of state, updates a
 * parse_result as it goes and reports each recognised line as an event.
 * parser_finish() combines the text with how the process ended into the
 * final gate verdict (DESIGN §4).
 */
#ifndef OPTLOOP_PARSE_H
#define OPTLOOP_PARSE_H

#include "core/model.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct patset;
struct parser;

/* struct parse_row and struct parse_env, what a run measured, are in
 * core/model.h: the store keeps them without the parser. */

/*
 * Memory bound.  Whatever it is fed (100 MB, a 10 MB line without newline,
 * NULs, invalid UTF-8, escape sequences), a parser holds at most:
 *   one line of PARSE_LINE_MAX bytes (the rest of a longer line is dropped),
 *   PARSE_MAX_ROWS rows of the current table, each string cut to PARSE_CELL_MAX,
 *   PARSE_MAX_WARNINGS warnings of at most PARSE_WARNING_MAX bytes,
 *   and a handful of single strings (env, labels, gate test) cut to PARSE_LINE_MAX;
 * PARSE_MEM_BOUND adds these up.  parser_mem() reports the current figure.
 */
#define PARSE_LINE_MAX 65536
#define PARSE_CELL_MAX 128
#define PARSE_MAX_ROWS 4096
#define PARSE_MAX_WARNINGS 64
#define PARSE_WARNING_MAX 512
#define PARSE_MEM_BOUND ((size_t)4 << 20)

typedef void (*parse_event_fn)(void *ctx, const struct parse_event *ev);

/* A parser reading with ps (which must outlive it); fn (may be NULL) is
 * called once per line, in order.  Caller frees with parser_free. */
struct parser *parser_new(const struct patset *ps, parse_event_fn fn, void *ctx);
/* Any bytes, any chunk size; a line may be split anywhere. */
void parser_feed(struct parser *p, const char *buf, size_t len);
/* The output ended: read a last unterminated line, then decide the verdict
 * from the text and how the process ended (exit_status -1 = unknown, judged
 * from the text alone; killed = timeout, cancel or signal).  Calling it again
 * only re-decides the verdict. */
void parser_finish(struct parser *p, int exit_status, bool killed);
/* The result so far (final after parser_finish); owned by the parser. */
const struct parse_result *parser_result(const struct parser *p);
/* Move the result out to *out (caller releases it with parse_result_release);
 * the parser is left with an empty result. */
void parser_take_result(struct parser *p, struct parse_result *out);
/* Bytes the parser holds now (line buffer, rows, strings). */
size_t parser_mem(const struct parser *p);
void parser_free(struct parser *p);

/* Parse a whole file ("-": standard input): the CLI's `optloop parse` and
 * re-reading trace logs.
 * *out is filled (release with parse_result_release).  ERR_NOTFOUND / ERR_IO
 * when the file cannot be read. */
int parse_file(const struct patset *ps, const char *path, int exit_status, bool killed,
	       struct parse_result *out, struct err *e);
/* A file that opens with '{' is tried as FLA's run.py --json results
 * (machine_info, results[] with median_ms): up to this size it is read as
 * a result table (new = median_ms) with its environment, no gate. */
#define PARSE_JSON_MAX ((size_t)64 << 20)
int parse_runpy_json(const char *text, size_t len, struct parse_result *out, struct err *e);

/* The run's bench number: the equal-weight geometric mean over its table
 * rows of each row's new time (its base time when it has no new one),
 * skipping times that are not finite and positive; NAN with no such row. */
double parse_bench_ms(const struct parse_result *r);


#endif
