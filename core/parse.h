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

#include <stdbool.h>
#include <stddef.h>

struct err;
struct patset;
struct parser;

/* One result-table row.  Numbers are NAN, and L is -1, where absent. */
struct parse_row {
	char *mode; /* "fwd", "fwdbwd", ... */
	long B, T, H, D, L;
	char *op;
	double base_ms, new_ms, speedup;
};

struct parse_env {
	char *raw; /* the whole line after "Machine:" */
	char *device, *backend, *pytorch, *triton, *branch, *sha;
};

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
	int cases_failed;
	bool traceback;
	bool gate_line_pass, gate_line_fail, gate_not_found, no_gate;
	int exit_status;   /* as given to parser_finish, -1 unknown */
	bool killed;
};

#endif
