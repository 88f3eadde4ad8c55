/*
 * expr — a small arithmetic evaluator for the cost formulas of
 * assets/costs.tsv and the contract's Cost: line.  Numbers (1e12, 0.5),
 * named variables, + - * / ^ (power, right-associative), unary minus,
 * parentheses and min(a, b, ...), max(...), ceil(x), floor(x).  Nothing
 * else: no assignment, no calls out of the process, bounded depth and
 * length, so a formula from a file can never do more than compute.
 */
#ifndef OPTLOOP_EXPR_H
#define OPTLOOP_EXPR_H

#include <stddef.h>

struct err;

/* One named value a formula may use. */
struct expr_var {
	const char *name;
	double value;
};

#define EXPR_MAX_LEN 1024 /* characters of one formula */
#define EXPR_MAX_DEPTH 64 /* nested parentheses, calls and unary signs */

/* Evaluate text with vars[0..nvars).  0 with *out set (it may be NAN or
 * infinite when the arithmetic says so: 1/0); ERR_USAGE with a message
 * naming the position and what was expected, or the unknown variable. */
int expr_eval(const char *text, const struct expr_var *vars, size_t nvars, double *out,
	      struct err *e);

/* Check a formula's syntax and that it names only variables in names
 * (NULL-terminated): 0, or ERR_USAGE as expr_eval says it. */
int expr_check(const char *text, const char *const *names, struct err *e);

#endif
