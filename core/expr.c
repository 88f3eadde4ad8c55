/* expr — the cost formulas' evaluator (see expr.h): recursive descent over
 * the text, no tree kept. */
#include "core/expr.h"
#include "core/err.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct px {
	const char *s, *p;
	const struct expr_var *vars;
	size_t nvars;
	const char *const *names; /* check mode: the allowed names */
	int depth;
	struct err *e;
	int rc;
};

static double fail(struct px *x, const char *what)
{
	if (x->rc == 0)
		x->rc = err_set(x->e, ERR_USAGE, "formula \"%s\": %s at character %d", x->s, what,
				(int)(x->p - x->s) + 1);
	return NAN;
}

static void blanks(struct px *x)
{
	while (*x->p == ' ' || *x->p == '\t')
		x->p++;
}

static double sum(struct px *x);

static bool lookup(struct px *x, const char *name, size_t n, double *v)
{
	if (x->names) {
		for (const char *const *k = x->names; *k; k++)
			if (strlen(*k) == n && !strncmp(*k, name, n)) {
				*v = 1;
				return true;
			}
		return false;
	}
	for (size_t i = 0; i < x->nvars; i++)
		if (strlen(x->vars[i].name) == n && !strncmp(x->vars[i].name, name, n)) {
			*v = x->vars[i].value;
			return true;
		}
	return false;
}

/* name(arg, ...) for the four functions */
static double call(struct px *x, const char *name, size_t n)
{
	double args[16];
	int na = 0;
	x->p++; /* ( */
	blanks(x);
	if (*x->p != ')')
		for (;;) {
			double v = sum(x);
			if (x->rc)
				return NAN;
			if (na == 16)
				return fail(x, "more than 16 arguments");
			args[na++] = v;
			blanks(x);
			if (*x->p == ',') {
				x->p++;
				continue;
			}
			break;
		}
	if (*x->p != ')')
		return fail(x, "')' expected");
	x->p++;
	bool mn = n == 3 && !strncmp(name, "min", 3), mx = n == 3 && !strncmp(name, "max", 3);
	if (mn || mx) {
		if (na == 0)
			return fail(x, "min/max need at least one argument");
		double r = args[0];
		for (int i = 1; i < na; i++)
			r = mn ? fmin(r, args[i]) : fmax(r, args[i]);
		return r;
	}
	bool ce = n == 4 && !strncmp(name, "ceil", 4), fl = n == 5 && !strncmp(name, "floor", 5);
	if (ce || fl) {
		if (na != 1)
			return fail(x, "ceil/floor take one argument");
		return ce ? ceil(args[0]) : floor(args[0]);
	}
	return fail(x, "unknown function (min, max, ceil and floor are known)");
}

static double unary(struct px *x);

static double primary(struct px *x)
{
	blanks(x);
	const char *start = x->p;
	if (*x->p == '(') {
		x->p++;
		double v = sum(x);
		blanks(x);
		if (x->rc)
			return NAN;
		if (*x->p != ')')
			return fail(x, "')' expected");
		x->p++;
		return v;
	}
	if (isdigit((unsigned char)*x->p) || *x->p == '.') {
		char *end;
		double v = strtod(x->p, &end);
		if (end == x->p)
			return fail(x, "a number expected");
		x->p = end;
		return v;
	}
	if (isalpha((unsigned char)*x->p) || *x->p == '_') {
		while (isalnum((unsigned char)*x->p) || *x->p == '_')
			x->p++;
		size_t n = (size_t)(x->p - start);
		blanks(x);
		if (*x->p == '(')
			return call(x, start, n);
		double v;
		if (lookup(x, start, n, &v))
			return v;
		x->p = start;
		if (x->rc == 0)
			x->rc = err_set(x->e, ERR_USAGE,
					"formula \"%s\": unknown variable \"%.*s\" at character %d",
					x->s, (int)n, start, (int)(start - x->s) + 1);
		return NAN;
	}
	return fail(x, *x->p ? "a number, a name or '(' expected" : "the formula ends early");
}

static double power(struct px *x)
{
	double b = primary(x);
	blanks(x);
	if (!x->rc && *x->p == '^') {
		x->p++;
		return pow(b, unary(x));
	}
	return b;
}

static double unary(struct px *x)
{
	blanks(x);
	if (++x->depth > EXPR_MAX_DEPTH)
		return fail(x, "nested too deep");
	double v;
	if (*x->p == '-') {
		x->p++;
		v = -unary(x);
	} else if (*x->p == '+') {
		x->p++;
		v = unary(x);
	} else {
		v = power(x);
	}
	x->depth--;
	return v;
}

static double product(struct px *x)
{
	double v = unary(x);
	for (;;) {
		blanks(x);
		if (x->rc || (*x->p != '*' && *x->p != '/'))
			return v;
		char op = *x->p++;
		double r = unary(x);
		v = op == '*' ? v * r : v / r;
	}
}

static double sum(struct px *x)
{
	double v = product(x);
	for (;;) {
		blanks(x);
		if (x->rc || (*x->p != '+' && *x->p != '-'))
			return v;
		char op = *x->p++;
		double r = product(x);
		v = op == '+' ? v + r : v - r;
	}
}

static int run(struct px *x, double *out)
{
	if (!x->s || !*x->s)
		return err_set(x->e, ERR_USAGE, "formula is empty");
	if (strlen(x->s) > EXPR_MAX_LEN)
		return err_set(x->e, ERR_USAGE, "formula is longer than %d characters",
			       EXPR_MAX_LEN);
	double v = sum(x);
	blanks(x);
	if (!x->rc && *x->p)
		fail(x, "an operator or the end expected");
	if (x->rc)
		return x->rc;
	if (out)
		*out = v;
	return 0;
}

int expr_eval(const char *text, const struct expr_var *vars, size_t nvars, double *out,
	      struct err *e)
{
	struct px x = {.s = text, .p = text, .vars = vars, .nvars = nvars, .e = e};
	return run(&x, out);
}

int expr_check(const char *text, const char *const *names, struct err *e)
{
	static const char *const none[] = {NULL};
	struct px x = {.s = text, .p = text, .names = names ? names : none, .e = e};
	return run(&x, NULL);
}
