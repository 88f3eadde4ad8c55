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

struct parse_result {
	enum gate_verdict gate;
	enum gate_scope scope;
	char *gate_test; /* file named in the banner */
	char *gate_k;    /* the -k expression, NULL when full */
	bool complete;   /* the run reached its natural end */
	struct {
		int passed, failed, errors, skipped, deselected; /* -1 when unknown */
	} pytest;
	struct parse_env env;
	char *col_base, *col_new; /* table column labels, e.g. "main[ce250a9]" */
	struct parse_row *rows;   /* the last table printed */
	size_t nrows;
	char **warnings;
	size_t nwarnings;
	int progress;      /* last [ NN%] seen, -1 before any */
	int cases_passed;  /* test-case lines seen, by outcome */
	int cases_failed;  /* failed or error */
	int cases_skipped; /* skipped or xfail */
	bool traceback;
	bool gate_line_pass, gate_line_fail, gate_not_found, no_gate;
	int exit_status;   /* as given to parser_finish, -1 unknown */
	bool killed;
	bool has_L;        /* the result table has an L column */
	bool truncated;    /* the output ended inside a line */
	size_t lines;      /* lines read */
	bool runpy_json;   /* read from run.py --json results, not from a log */
	size_t rows_dropped; /* table rows beyond PARSE_MAX_ROWS */
	char *exception;   /* last line of the last traceback ("RuntimeError: ..."), or NULL */
	char *stage;       /* the phase the run is in ("Warming up 6 shape(s)"), or NULL */
};

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

enum parse_event_kind {
	PEV_LINE,
	PEV_GATE_BANNER,
	PEV_TEST_CASE,
	PEV_PROGRESS,
	PEV_PYTEST_SUMMARY,
	PEV_GATE_VERDICT,
	PEV_ENV,
	PEV_TABLE_HEADER,
	PEV_TABLE_ROW,
	PEV_WARNING,
	PEV_TRACEBACK,
	PEV_STAGE,
};

/* One line as the parser saw it: escape sequences, carriage returns and
 * control bytes removed, NUL-terminated (len excludes the NUL).  Valid only
 * during the callback. progress is the percent the line showed, -1 if none,
 * whatever its kind (a pytest case line is a test_case event with progress).
 * For PEV_STAGE, stage/stage_len name the phase (not NUL-terminated). */
struct parse_event {
	enum parse_event_kind kind;
	const char *line;
	size_t len;
	int progress;
	const char *stage;
	size_t stage_len;
};

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
/* Whether anything of a verify or benchmark run was seen: a gate, pytest
 * counts or test cases, progress, an environment line, a result table, a
 * traceback.  parse_file reads any text; this says whether it was one. */
bool parse_recognised(const struct parse_result *r);

/* The run's bench number: the equal-weight geometric mean over its table
 * rows of each row's new time (its base time when it has no new one),
 * skipping times that are not finite and positive; NAN with no such row. */
double parse_bench_ms(const struct parse_result *r);

/* The result as JSON with the documented keys (gate, gate_scope, gate_k,
 * complete, pytest, env, columns, rows, warnings, ...); caller owns it. */
json_t *parse_result_json(const struct parse_result *r);
/* The inverse, for results stored as JSON.  *out is filled (release it);
 * ERR_USAGE when j is not such an object. */
int parse_result_from_json(const json_t *j, struct parse_result *out, struct err *e);
void parse_result_init(struct parse_result *r);
void parse_result_release(struct parse_result *r);

/* "full", "subset", or NULL for unknown. */
const char *parse_scope_name(enum gate_scope s);
const char *parse_event_kind_name(enum parse_event_kind k);

#endif
