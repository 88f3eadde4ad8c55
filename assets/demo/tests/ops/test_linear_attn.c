/*
 * test_linear_attn.c — the frozen correctness gate for chunk_linear_attn_fwd.
 *
 * Each case fills q, k, v from a fixed seed, poisons the output with NaN,
 * runs the kernel, and compares it with the naive double-precision
 * reference: the output must contain no NaN (an element the kernel never
 * wrote stays NaN) and its relative RMS error must stay under 1e-3.
 *
 * The output imitates pytest with live logging, as FLA's gate prints it,
 * so the same tools read both.  Case ids look like pytest's
 * (test_chunk[B1-T63-H1-D64]) and `-k EXPR` selects them the same way:
 * case-insensitive substrings joined with and / or / not and parentheses.
 *
 * Usage: test_linear_attn [-k EXPR]
 * Exit:  0 all selected cases passed, 1 a case failed, 4 bad -k expression,
 *        5 no case selected (pytest's codes).
 *
 * Frozen scope: the gate is only as good as this file.  Do not edit it as
 * part of an optimization; a test change is a separate, reviewed change.
 */
#define _POSIX_C_SOURCE 200809L
#include "../../ops/linear_attn/linear_attn.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATIO_LIMIT 0.001
#define ABS_OK 1e-6
#define WIDTH 80

struct tcase {
	int B, T, H, D;
};

/* Ragged last chunks, a single token, a head dim that is not a multiple of
 * any vector width, and more than one chunk with the default chunk size. */
static const struct tcase cases[] = {
	{1, 1, 1, 64},  {1, 63, 1, 64}, {2, 64, 2, 32},
	{2, 100, 3, 60}, {1, 257, 2, 128}, {3, 200, 4, 16},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const char *test_path = __FILE__;

/* ---- pytest-shaped printing ------------------------------------------ */

static void sep(char c, const char *title)
{
	int n = (WIDTH - (int)strlen(title) - 2) / 2;
	if (n < 1)
		n = 1;
	int len = 2 * n + (int)strlen(title) + 2;
	for (int i = 0; i < n; i++)
		putchar(c);
	printf(" %s ", title);
	for (int i = 0; i < n; i++)
		putchar(c);
	if (len + 1 <= WIDTH)
		putchar(c);
	putchar('\n');
}

static void case_id(const struct tcase *c, char *buf, size_t n)
{
	snprintf(buf, n, "test_chunk[B%d-T%d-H%d-D%d]", c->B, c->T, c->H, c->D);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- -k expressions ---------------------------------------------------- */

struct kexpr {
	const char *s;
	size_t pos;
	const char *err;
	char *const *names;
	int nnames;
};

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || strchr("_:+-.[]\\/", c);
}

/* Next token without consuming it: '(' ')' or an identifier; 0 at the end. */
static size_t peek(struct kexpr *x, size_t *start)
{
	while (x->s[x->pos] == ' ' || x->s[x->pos] == '\t')
		x->pos++;
	*start = x->pos;
	char c = x->s[x->pos];
	if (!c)
		return 0;
	if (c == '(' || c == ')')
		return 1;
	size_t n = 0;
	while (x->s[x->pos + n] && ident_char(x->s[x->pos + n]))
		n++;
	if (!n)
		x->err = "unexpected character";
	return n;
}

static bool is_word(struct kexpr *x, const char *w)
{
	size_t st, n = peek(x, &st);
	return n == strlen(w) && !strncmp(x->s + st, w, n);
}

static bool match_name(struct kexpr *x, const char *word, size_t n)
{
	for (int i = 0; i < x->nnames; i++) {
		const char *name = x->names[i];
		size_t len = strlen(name);
		for (size_t off = 0; off + n <= len; off++) {
			size_t j = 0;
			while (j < n && tolower((unsigned char)name[off + j]) ==
						 tolower((unsigned char)word[j]))
				j++;
			if (j == n)
				return true;
		}
	}
	return false;
}

static bool k_or(struct kexpr *x);

static bool k_not(struct kexpr *x)
{
	size_t st, n;

	if (x->err)
		return false;
	if (is_word(x, "not")) {
		x->pos += 3;
		return !k_not(x);
	}
	n = peek(x, &st);
	if (n == 0 && !x->err) {
		x->err = "expected not, ( or identifier; got end of input";
		return false;
	}
	if (x->s[st] == '(') {
		x->pos++;
		bool v = k_or(x);
		if (x->err)
			return false;
		peek(x, &st);
		if (x->s[st] != ')') {
			x->err = "expected )";
			return false;
		}
		x->pos++;
		return v;
	}
	if (x->s[st] == ')' || is_word(x, "and") || is_word(x, "or")) {
		x->err = "expected not, ( or identifier";
		return false;
	}
	x->pos += n;
	return match_name(x, x->s + st, n);
}

static bool k_and(struct kexpr *x)
{
	bool v = k_not(x);
	while (!x->err && is_word(x, "and")) {
		x->pos += 3;
		bool r = k_not(x);
		v = v && r;
	}
	return v;
}

static bool k_or(struct kexpr *x)
{
	bool v = k_and(x);
	while (!x->err && is_word(x, "or")) {
		x->pos += 2;
		bool r = k_and(x);
		v = v || r;
	}
	return v;
}

/* 1 selected, 0 not, -1 a malformed expression (message in *err). */
static int k_select(const char *expr, const char *id, const char **err, size_t *col)
{
	char *names[] = {(char *)id, (char *)"test_linear_attn.c"};
	struct kexpr x = {.s = expr, .names = names, .nnames = 2};
	size_t st;
	bool v = k_or(&x);

	if (!x.err && peek(&x, &st) != 0)
		x.err = "expected end of input";
	if (x.err) {
		*err = x.err;
		*col = x.pos + 1;
		return -1;
	}
	return v;
}

/* ---- inputs and the check --------------------------------------------- */

static uint64_t rng_state;

static double uniform(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((rng_state >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller), like torch.randn. */
static float randn(void)
{
	double u = uniform(), w = uniform();
	return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * w));
}

struct outcome {
	bool ok;
	char why[256];   /* the assertion message when not ok */
	char where[256]; /* the first element that disagrees */
	char log[256];   /* the live log record, repeated in the failure report */
	int line;        /* line of the failing assertion */
};

static void assert_close(const char *prefix, const double *ref, const float *tri, size_t n,
			 const struct tcase *c, struct outcome *out, int line)
{
	double max_abs = 0.0, err2 = 0.0, base2 = 0.0;
	size_t first_nan = n, first_bad = n;
	bool ref_nan = false;

	for (size_t i = 0; i < n; i++) {
		double d = fabs(ref[i] - (double)tri[i]);
		if (isnan(ref[i]))
			ref_nan = true;
		if (isnan(tri[i]) && first_nan == n)
			first_nan = i;
		if (d > max_abs || isnan(d))
			max_abs = isnan(d) || isnan(max_abs) ? NAN : d;
		if (first_bad == n && !(d <= RATIO_LIMIT * (1.0 + fabs(ref[i]))))
			first_bad = i;
		err2 += d * d;
		base2 += ref[i] * ref[i];
	}
	double ratio = sqrt(err2 / (double)n) / sqrt(base2 / (double)n);
	char msg[128];
	snprintf(msg, sizeof msg, "%16s diff: %.6f ratio: %.6f", prefix, max_abs, ratio);
	snprintf(out->log, sizeof out->log, "INFO     test_linear_attn:test_linear_attn.c:%d %s",
		 line, msg);
	printf("%s\n", out->log);

	out->line = line;
	if (max_abs <= ABS_OK) {
		out->ok = true;
		return;
	}
	if (ref_nan)
		snprintf(out->why, sizeof out->why, "%s: NaN detected in ref", prefix);
	else if (first_nan < n)
		snprintf(out->why, sizeof out->why, "%s: NaN detected in tri", prefix);
	else if (!(ratio < RATIO_LIMIT))
		snprintf(out->why, sizeof out->why, "%s", msg);
	else {
		out->ok = true;
		return;
	}
	out->ok = false;
	size_t at = first_nan < n ? first_nan : first_bad < n ? first_bad : 0;
	size_t d = at % (size_t)c->D, h = at / c->D % (size_t)c->H;
	size_t t = at / ((size_t)c->D * c->H) % (size_t)c->T;
	size_t b = at / ((size_t)c->D * c->H * c->T);
	snprintf(out->where, sizeof out->where,
		 "first mismatch at b=%zu t=%zu h=%zu d=%zu: ref=%.6f tri=%.6f", b, t, h, d,
		 ref[at], (double)tri[at]);
}

static void run_case(const struct tcase *c, struct outcome *out)
{
	size_t n = (size_t)c->B * c->T * c->H * c->D;
	float *q = malloc(n * sizeof *q), *k = malloc(n * sizeof *k);
	float *v = malloc(n * sizeof *v), *o = malloc(n * sizeof *o);
	double *ref = malloc(n * sizeof *ref);

	if (!q || !k || !v || !o || !ref) {
		fprintf(stderr, "test_linear_attn: out of memory\n");
		exit(3);
	}
	rng_state = 42;
	for (size_t i = 0; i < n; i++)
		q[i] = randn();
	for (size_t i = 0; i < n; i++)
		k[i] = randn();
	for (size_t i = 0; i < n; i++)
		v[i] = randn();
	for (size_t i = 0; i < n; i++)
		o[i] = NAN; /* an element the kernel never writes stays NaN */

	naive_linear_attn_fwd(q, k, v, ref, c->B, c->T, c->H, c->D);
	chunk_linear_attn_fwd(q, k, v, o, c->B, c->T, c->H, c->D);
	assert_close("o", ref, o, n, c, out, __LINE__);
	free(q);
	free(k);
	free(v);
	free(o);
	free(ref);
}

/* ---- the session ------------------------------------------------------- */

int main(int argc, char **argv)
{
	const char *kexpr = NULL;
	struct outcome res[NCASES];
	bool selected[NCASES];
	char id[128];
	int nsel = 0, nfail = 0, done = 0;
	double t_start = now();

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-k") && i + 1 < argc)
			kexpr = argv[++i];
		else if (!strcmp(argv[i], "-q"))
			continue;
		else {
			fprintf(stderr, "ERROR: usage: test_linear_attn [-k EXPR]\n");
			return 4;
		}
	}
	for (size_t i = 0; i < NCASES; i++) {
		selected[i] = true;
		if (kexpr) {
			const char *err = NULL;
			size_t col = 0;
			case_id(&cases[i], id, sizeof id);
			int r = k_select(kexpr, id, &err, &col);
			if (r < 0) {
				fprintf(stderr,
					"ERROR: Wrong expression passed to '-k': %s: at column %zu: %s\n",
					kexpr, col, err);
				return 4;
			}
			selected[i] = r;
		}
		nsel += selected[i];
	}

	putchar('\n');
	for (size_t i = 0; i < NCASES; i++) {
		if (!selected[i])
			continue;
		case_id(&cases[i], id, sizeof id);
		printf("%s::%s \n", test_path, id);
		sep('-', "live log call");
		fflush(stdout);
		memset(&res[i], 0, sizeof res[i]);
		run_case(&cases[i], &res[i]);
		done++;
		nfail += !res[i].ok;
		const char *word = res[i].ok ? "PASSED" : "FAILED";
		printf("%s%*s[%3d%%]\n", word, WIDTH - 1 - 6 - 6, "", done * 100 / nsel);
		fflush(stdout);
	}

	if (nfail) {
		putchar('\n');
		sep('=', "FAILURES");
		for (size_t i = 0; i < NCASES; i++) {
			if (!selected[i] || res[i].ok)
				continue;
			const struct tcase *c = &cases[i];
			case_id(c, id, sizeof id);
			sep('_', id);
			printf("\nB = %d, T = %d, H = %d, D = %d\n\n", c->B, c->T, c->H, c->D);
			printf("    chunk_linear_attn_fwd(q, k, v, o, B, T, H, D);\n");
			printf(">   assert_close(\"o\", ref, o, RATIO_LIMIT);\n");
			printf("E   AssertionError: %s\n", res[i].why);
			printf("E   %s\n\n", res[i].where);
			printf("%s:%d: AssertionError\n", test_path, res[i].line);
			sep('-', "Captured log call");
			printf("%s\n", res[i].log);
		}
		sep('=', "short test summary info");
		for (size_t i = 0; i < NCASES; i++)
			if (selected[i] && !res[i].ok) {
				case_id(&cases[i], id, sizeof id);
				printf("FAILED %s::%s\n", test_path, id);
			}
	} else {
		putchar('\n');
	}

	char summary[160];
	int len = 0, desel = (int)NCASES - nsel;
	if (nfail)
		len += snprintf(summary + len, sizeof summary - len, "%d failed", nfail);
	if (nsel - nfail)
		len += snprintf(summary + len, sizeof summary - len, "%s%d passed", len ? ", " : "",
				nsel - nfail);
	if (desel)
		len += snprintf(summary + len, sizeof summary - len, "%s%d deselected",
				len ? ", " : "", desel);
	if (!len)
		len += snprintf(summary, sizeof summary, "no tests ran");
	snprintf(summary + len, sizeof summary - len, " in %.2fs", now() - t_start);
	sep('=', summary);
	if (nsel == 0)
		return 5;
	return nfail ? 1 : 0;
}
