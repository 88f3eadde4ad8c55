/* roofline — peaks, cost models and the arithmetic of one run's roofline
 * (see roofline.h). */
#include "core/roofline.h"
#include "core/err.h"
#include "core/expr.h"
#include "core/fsutil.h"
#include "core/model.h"
#include "core/sb.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *const dtype_names[RD_N] = {"fp32", "tf32", "bf16", "fp8"};
static const int dtype_size[RD_N] = {4, 4, 2, 1};

const char *roofline_dtype_name(enum roofline_dtype d)
{
	return d < RD_N ? dtype_names[d] : "";
}

int roofline_dtype_parse(const char *w)
{
	if (!w)
		return -1;
	for (int i = 0; i < RD_N; i++)
		if (!strcasecmp(w, dtype_names[i]))
			return i;
	if (!strcasecmp(w, "fp16") || !strcasecmp(w, "float16") || !strcasecmp(w, "bfloat16"))
		return RD_BF16;
	if (!strcasecmp(w, "float32") || !strcasecmp(w, "float"))
		return RD_FP32;
	return -1;
}

void roofline_peaks_release(struct roofline_peaks *p)
{
	free(p->name);
	free(p->source);
	memset(p, 0, sizeof(*p));
}

/* p as having nothing (it owns nothing before: callers release first) */
static void peaks_clear(struct roofline_peaks *p)
{
	memset(p, 0, sizeof(*p));
	p->bw = NAN;
	for (int i = 0; i < RD_N; i++)
		p->flops[i] = NAN;
	p->launch_s = ROOFLINE_LAUNCH_GPU_S;
}

/* Split a line at runs of TABs into at most max fields; returns the count. */
static size_t fields(char *line, char **f, size_t max)
{
	size_t n = 0;
	char *p = line;
	while (*p && n < max) {
		f[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		while (*p == '\t')
			*p++ = '\0';
	}
	return n;
}

/* A figure of a data file: a number >= 0, or "-" for none (NAN). */
static int figure(const char *s, double *out)
{
	if (!strcmp(s, "-")) {
		*out = NAN;
		return 0;
	}
	char *end;
	double v = strtod(s, &end);
	while (*end == ' ')
		end++;
	if (end == s || *end || !isfinite(v) || v <= 0)
		return -1;
	*out = v;
	return 0;
}

static bool ci_contains(const char *hay, const char *needle, size_t n)
{
	if (!n)
		return false;
	for (const char *h = hay; *h; h++)
		if (!strncasecmp(h, needle, n))
			return true;
	return false;
}

/* Does one of match's "|" alternatives occur in device? */
static bool matches(const char *match, const char *device)
{
	const char *p = match;
	for (;;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (ci_contains(device, p, n))
			return true;
		if (!bar)
			return false;
		p = bar + 1;
	}
}

/* Each data line of a file, comments and blank lines skipped; fn returns
 * nonzero to stop (its value is returned). */
static int each_line(const char *path, int (*fn)(void *ctx, char *line, int lineno), void *ctx,
		     struct err *e)
{
	struct sb text = SB_INIT;
	int rc = fsutil_read_file(path, &text, e);
	if (rc < 0) {
		sb_release(&text);
		return rc;
	}
	int lineno = 0, out = 0;
	for (char *p = text.buf; p && *p && !out;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		size_t len = strlen(p);
		if (len && p[len - 1] == '\r')
			p[len - 1] = '\0';
		if (*p && *p != '#')
			out = fn(ctx, p, lineno);
		p = nl ? nl + 1 : NULL;
	}
	sb_release(&text);
	return out < 0 ? out : out > 0 ? 0 : 1;
}

struct peak_find {
	const char *device, *path, *by_name;
	struct roofline_peaks *out;
	struct err *e;
};

static int peak_row(void *ctx, char *line, int lineno)
{
	struct peak_find *pf = ctx;
	char *f[8];
	if (fields(line, f, 8) != 8)
		return err_set(pf->e, ERR_USAGE,
			       "%s:%d: a peaks row has 8 TAB-separated fields (name, match, hbm, "
			       "fp32, tf32, bf16, fp8, source)",
			       pf->path, lineno);
	double v[5];
	for (int i = 0; i < 5; i++)
		if (figure(f[2 + i], &v[i]) < 0)
			return err_set(pf->e, ERR_USAGE,
				       "%s:%d: \"%s\" is not a positive number or \"-\"", pf->path,
				       lineno, f[2 + i]);
	bool hit = pf->by_name ? !strcasecmp(f[0], pf->by_name) || matches(f[1], pf->by_name)
			       : matches(f[1], pf->device);
	if (!hit)
		return 0;
	peaks_clear(pf->out);
	pf->out->have = true;
	pf->out->name = xstrdup(f[0]);
	pf->out->source = xstrdup(f[7]);
	pf->out->bw = v[0];
	for (int i = 0; i < RD_N; i++)
		pf->out->flops[i] = v[1 + i];
	return 1;
}

int roofline_peaks_find(const char *path, const char *device, struct roofline_peaks *out,
			struct err *e)
{
	peaks_clear(out);
	if (!device || !*device)
		return err_set(e, ERR_NOTFOUND, "no device name");
	struct peak_find pf = {.device = device, .path = path, .out = out, .e = e};
	int rc = each_line(path, peak_row, &pf, e);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return err_set(e, ERR_NOTFOUND, "%s has no row for \"%s\"", path, device);
	return 0;
}

int roofline_peaks_override(const char *path, const char *text, struct roofline_peaks *p,
			    struct err *e)
{
	if (!text || !*text)
		return 0;
	if (!strchr(text, '=')) {
		struct roofline_peaks row;
		memset(&row, 0, sizeof(row));
		struct peak_find pf = {.by_name = text, .path = path, .out = &row, .e = e};
		int rc = path ? each_line(path, peak_row, &pf, e) : 1;
		if (rc < 0)
			return rc;
		if (rc == 1)
			return err_set(e, ERR_USAGE,
				       "Peak: \"%s\" names no row of %s; give a row's name (H200, "
				       "H100 SXM, ...) or figures: Peak: bw=4.8e12 bf16=989.5e12",
				       text, path ? path : "the peaks file");
		roofline_peaks_release(p);
		*p = row;
		return 0;
	}
	struct roofline_peaks q;
	memset(&q, 0, sizeof(q));
	if (p->have) {
		q = *p;
		q.name = xstrdup(p->name);
		q.source = xstrdup(p->source);
	} else {
		peaks_clear(&q);
	}
	char *copy = xstrdup(text), *save = NULL;
	int rc = 0;
	for (char *w = strtok_r(copy, " \t,;", &save); w && rc == 0; w = strtok_r(NULL, " \t,;", &save)) {
		char *eq = strchr(w, '=');
		double v;
		if (!eq) {
			rc = err_set(e, ERR_USAGE, "Peak: \"%s\" is not key=value (bw, fp32, tf32, "
						   "bf16, fp8, launch_us)", w);
			break;
		}
		*eq = '\0';
		if (figure(eq + 1, &v) < 0 || isnan(v)) {
			rc = err_set(e, ERR_USAGE, "Peak: %s=%s is not a positive number", w, eq + 1);
			break;
		}
		int d = roofline_dtype_parse(w);
		if (!strcasecmp(w, "bw") || !strcasecmp(w, "hbm"))
			q.bw = v;
		else if (d >= 0)
			q.flops[d] = v;
		else if (!strcasecmp(w, "launch_us"))
			q.launch_s = v * 1e-6;
		else
			rc = err_set(e, ERR_USAGE,
				     "Peak: unknown figure \"%s\" (bw, fp32, tf32, bf16, fp8, "
				     "launch_us)",
				     w);
	}
	free(copy);
	if (rc < 0) {
		roofline_peaks_release(&q);
		return rc;
	}
	free(q.name);
	q.name = xstrdup("contract");
	free(q.source);
	q.source = xasprintf("the contract's Peak: %s", text);
	q.have = true;
	q.measured = false;
	roofline_peaks_release(p);
	*p = q;
	return 0;
}

/* ---- the CPU's own peaks ---- */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* bytes read + written per second copying n bytes reps times; best of 3 */
static double copy_rate(size_t n, int reps)
{
	char *a = malloc(n), *b = malloc(n);
	double best = NAN;
	if (a && b) {
		memset(a, 1, n);
		memset(b, 2, n);
		for (int k = 0; k < 3; k++) {
			double t0 = now_s();
			for (int r = 0; r < reps; r++) {
				memcpy(r & 1 ? a : b, r & 1 ? b : a, n);
				__asm__ __volatile__("" ::"r"(a), "r"(b) : "memory");
			}
			double dt = now_s() - t0;
			double rate = 2.0 * (double)n * reps / dt;
			if (dt > 0 && !(rate <= best))
				best = rate;
		}
	}
	free(a);
	free(b);
	return best;
}

typedef float v4f __attribute__((vector_size(16)));

/* FLOP/s of 8 independent a = a*b + c chains of 4-float vectors; the
 * factors are read through volatile so nothing folds, the sums are kept
 * through a volatile sink so nothing is dropped */
static double fma_rate(long iters)
{
	static volatile float mv = 1.0000001f, cv = 1e-7f;
	volatile float sink;
	float mf = mv, cf = cv;
	v4f acc[8], m = {mf, mf, mf, mf}, c = {cf, cf, cf, cf};
	for (int i = 0; i < 8; i++)
		acc[i] = (v4f){(float)i, 1, 2, 3};
	double best = NAN;
	for (int k = 0; k < 3; k++) {
		double t0 = now_s();
		for (long i = 0; i < iters; i++)
			for (int j = 0; j < 8; j++)
				acc[j] = acc[j] * m + c;
		double dt = now_s() - t0;
		double rate = 8.0 * 4 * 2 * (double)iters / dt;
		if (dt > 0 && !(rate <= best))
			best = rate;
	}
	v4f t = acc[0];
	for (int i = 1; i < 8; i++)
		t += acc[i];
	sink = t[0] + t[1] + t[2] + t[3];
	(void)sink;
	return best;
}

void roofline_peaks_measure_cpu(struct roofline_peaks *out)
{
	peaks_clear(out);
	double dram = copy_rate((size_t)16 << 20, 1), cache = copy_rate((size_t)128 << 10, 64);
	double fl = fma_rate(1L << 18);
	out->have = true;
	out->measured = true;
	out->name = xstrdup("this CPU");
	out->bw = fmax(dram, cache);
	out->flops[RD_FP32] = fl;
	out->launch_s = ROOFLINE_LAUNCH_CPU_S;
	out->source = xasprintf("measured on one core: copy %.1f GB/s over 16 MiB, %.1f GB/s over "
				"128 KiB; FMA loop %.1f GFLOP/s fp32",
				dram / 1e9, cache / 1e9, fl / 1e9);
}

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static double jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

json_t *roofline_peaks_json(const struct roofline_peaks *p)
{
	if (!p->have)
		return json_null();
	json_t *j = json_object(), *f = json_object();
	json_object_set_new(j, "name", json_string(p->name ? p->name : ""));
	json_object_set_new(j, "source", json_string(p->source ? p->source : ""));
	json_object_set_new(j, "bw", num(p->bw));
	for (int i = 0; i < RD_N; i++)
		json_object_set_new(f, dtype_names[i], num(p->flops[i]));
	json_object_set_new(j, "flops", f);
	json_object_set_new(j, "measured", json_boolean(p->measured));
	json_object_set_new(j, "launch_s", num(p->launch_s));
	return j;
}

int roofline_peaks_from_json(const json_t *j, struct roofline_peaks *out)
{
	peaks_clear(out);
	if (!json_is_object(j))
		return ERR_NOTFOUND;
	const char *n = json_string_value(json_object_get(j, "name"));
	const char *s = json_string_value(json_object_get(j, "source"));
	out->have = true;
	out->name = xstrdup(n ? n : "");
	out->source = xstrdup(s ? s : "");
	out->bw = jnum(j, "bw");
	const json_t *f = json_object_get(j, "flops");
	for (int i = 0; i < RD_N; i++)
		out->flops[i] = jnum(f, dtype_names[i]);
	out->measured = json_is_true(json_object_get(j, "measured"));
	double l = jnum(j, "launch_s");
	if (isfinite(l))
		out->launch_s = l;
	return 0;
}

/* ---- cost models ---- */

static const char *const cost_vars[] = {"B", "T", "H", "K", "V", "D", "C", "E", "L", NULL};

void roofline_cost_release(struct roofline_cost *c)
{
	free(c->family);
	free(c->bytes);
	free(c->flops);
	free(c->flops_min);
	free(c->source);
	memset(c, 0, sizeof(*c));
}

void roofline_cost_spec_release(struct roofline_cost_spec *o)
{
	free(o->family);
	free(o->bytes);
	free(o->flops);
	free(o->flops_min);
	memset(o, 0, sizeof(*o));
	o->dtype = -1;
}

static char *trimmed(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char *o = malloc(n + 1);
	if (!o)
		abort();
	memcpy(o, s, n);
	o[n] = '\0';
	return o;
}

int roofline_cost_spec_parse(const char *text, struct roofline_cost_spec *o, struct err *e)
{
	memset(o, 0, sizeof(*o));
	o->dtype = -1;
	const char *p = text ? text : "";
	int rc = 0;
	while (*p && rc == 0) {
		const char *semi = strchr(p, ';');
		size_t n = semi ? (size_t)(semi - p) : strlen(p);
		char *part = trimmed(p, n);
		char *eq = strchr(part, '=');
		if (*part && !eq) {
			rc = err_set(e, ERR_USAGE,
				     "Cost: \"%s\" is not key=value (family, dtype, chunk, bytes, "
				     "flops, flops_min; parts separated by \";\")",
				     part);
		} else if (*part) {
			*eq = '\0';
			char *k = trimmed(part, strlen(part)), *v = trimmed(eq + 1, strlen(eq + 1));
			char **slot = !strcmp(k, "family")      ? &o->family
				      : !strcmp(k, "bytes")     ? &o->bytes
				      : !strcmp(k, "flops")     ? &o->flops
				      : !strcmp(k, "flops_min") ? &o->flops_min
								: NULL;
			if (slot) {
				if (slot != &o->family && (rc = expr_check(v, cost_vars, e)) < 0) {
					char m[ERR_MSG_MAX];
					snprintf(m, sizeof(m), "%s", e ? e->msg : "");
					rc = err_set(e, ERR_USAGE, "Cost: %s: %s (variables: B T H K V "
								   "D C E L)", k, m);
				} else {
					free(*slot);
					*slot = v;
					v = NULL;
				}
			} else if (!strcmp(k, "dtype")) {
				o->dtype = roofline_dtype_parse(v);
				if (o->dtype < 0)
					rc = err_set(e, ERR_USAGE, "Cost: dtype \"%s\" is not fp32, tf32, "
								   "bf16, fp16 or fp8", v);
			} else if (!strcmp(k, "chunk")) {
				char *end;
				o->chunk = strtod(v, &end);
				if (end == v || *end || !(o->chunk >= 1))
					rc = err_set(e, ERR_USAGE, "Cost: chunk \"%s\" is not a number "
								   ">= 1", v);
			} else {
				rc = err_set(e, ERR_USAGE,
					     "Cost: unknown key \"%s\" (family, dtype, chunk, bytes, "
					     "flops, flops_min)",
					     k);
			}
			free(k);
			free(v);
		}
		free(part);
		p = semi ? semi + 1 : p + n;
	}
	if (rc < 0)
		roofline_cost_spec_release(o);
	return rc;
}

struct cost_find {
	const char *op, *mode, *family, *path;
	struct roofline_cost *out;
	struct err *e;
};

/* Is op w in the ","-list?  A variant suffix (":graph", the harness's
 * timing mode) is not part of the op's name. */
static bool in_list(const char *list, const char *w)
{
	const char *colon = strchr(w, ':');
	size_t n = colon ? (size_t)(colon - w) : strlen(w);
	for (const char *p = list; p;) {
		const char *c = strchr(p, ',');
		size_t m = c ? (size_t)(c - p) : strlen(p);
		if (m == n && !strncmp(p, w, n))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

static char *formula(const char *f)
{
	return strcmp(f, "-") ? xstrdup(f) : NULL;
}

static int cost_row(void *ctx, char *line, int lineno)
{
	struct cost_find *cf = ctx;
	char *f[8];
	if (fields(line, f, 8) != 8)
		return err_set(cf->e, ERR_USAGE,
			       "%s:%d: a costs row has 8 TAB-separated fields (family, ops, mode, "
			       "dtype, bytes, flops, flops_min, source)",
			       cf->path, lineno);
	bool hit = cf->family ? !strcmp(f[0], cf->family) : in_list(f[1], cf->op);
	if (!hit || strcmp(f[2], cf->mode))
		return 0;
	int d = roofline_dtype_parse(f[3]);
	if (d < 0)
		return err_set(cf->e, ERR_USAGE, "%s:%d: dtype \"%s\" is not fp32, tf32, bf16, "
						 "fp16 or fp8", cf->path, lineno, f[3]);
	for (int i = 4; i < 7; i++)
		if (strcmp(f[i], "-") && expr_check(f[i], cost_vars, cf->e) < 0) {
			char m[ERR_MSG_MAX];
			snprintf(m, sizeof(m), "%s", cf->e ? cf->e->msg : "");
			return err_set(cf->e, ERR_USAGE, "%s:%d: %s", cf->path, lineno, m);
		}
	struct roofline_cost *c = cf->out;
	c->have = true;
	c->family = xstrdup(f[0]);
	c->dtype = (enum roofline_dtype)d;
	c->bytes = formula(f[4]);
	c->flops = formula(f[5]);
	c->flops_min = formula(f[6]);
	c->source = xasprintf("%s (%s)", cf->path, f[7]);
	return 1;
}

int roofline_cost_find(const char *path, const char *op, const char *mode,
		       const struct roofline_cost_spec *spec, struct roofline_cost *out,
		       struct err *e)
{
	memset(out, 0, sizeof(*out));
	const char *family = spec && spec->family ? spec->family : NULL;
	if (path && (op || family) && mode) {
		struct cost_find cf = {.op = op, .mode = mode, .family = family, .path = path,
				       .out = out, .e = e};
		int rc = each_line(path, cost_row, &cf, e);
		if (rc < 0) {
			roofline_cost_release(out);
			return rc;
		}
		if (family && rc == 1 && !(spec->bytes))
			return err_set(e, ERR_NOTFOUND, "the contract's Cost: family=%s has no %s "
							"row in %s", family, mode, path);
	}
	if (spec) {
		char **slots[3] = {&out->bytes, &out->flops, &out->flops_min};
		const char *given[3] = {spec->bytes, spec->flops, spec->flops_min};
		for (int i = 0; i < 3; i++)
			if (given[i]) {
				free(*slots[i]);
				*slots[i] = xstrdup(given[i]);
			}
		if (spec->bytes || spec->flops || spec->flops_min) {
			free(out->source);
			out->source = xstrdup("the contract's Cost: line");
			if (!out->family)
				out->family = xstrdup("contract");
			if (!out->have)
				out->dtype = RD_BF16;
			out->have = true;
		}
		if (spec->dtype >= 0)
			out->dtype = (enum roofline_dtype)spec->dtype;
		out->chunk = spec->chunk;
	}
	if (!out->have || !out->bytes) {
		roofline_cost_release(out);
		return err_set(e, ERR_NOTFOUND, "no cost model for %s %s", mode ? mode : "?",
			       op ? op : "?");
	}
	if (!(out->chunk >= 1))
		out->chunk = 64;
	out->dtype_bytes = dtype_size[out->dtype];
	return 0;
}

/* ---- one shape ---- */

const char *roofline_bound_name(enum roofline_bound b)
{
	switch (b) {
	case RB_MEMORY:
		return "memory";
	case RB_COMPUTE:
		return "compute";
	case RB_LAUNCH:
		return "launch";
	default:
		return "";
	}
}

void roofline_shape_release(struct roofline_shape *s)
{
	free(s->key);
	free(s->why);
	memset(s, 0, sizeof(*s));
}

static double eval_or_nan(const char *f, const struct expr_var *v, size_t n, int *rc,
			  struct err *e)
{
	double x = NAN;
	if (f && *rc == 0)
		*rc = expr_eval(f, v, n, &x, e);
	return x;
}

void roofline_fmt_bytes(double b, struct sb *out)
{
	if (b >= 1024.0 * 1024 * 1024)
		sb_addf(out, "%.2f GiB", b / (1024.0 * 1024 * 1024));
	else if (b >= 1024.0 * 1024)
		sb_addf(out, "%.1f MiB", b / (1024.0 * 1024));
	else if (b >= 1024.0)
		sb_addf(out, "%.1f KiB", b / 1024.0);
	else
		sb_addf(out, "%.0f B", b);
}

void roofline_fmt_rate(double v, const char *unit, struct sb *out)
{
	static const char *const pre[] = {"", "K", "M", "G", "T", "P", "E"};
	int i = 0;
	while (fabs(v) >= 1000 && i < 6)
		v /= 1000, i++;
	sb_addf(out, fabs(v) >= 100 ? "%.0f %s%s" : fabs(v) >= 10 ? "%.1f %s%s" : "%.2f %s%s", v,
		pre[i], unit);
}

/* the compute peak a dtype's work may reach: fp32 data may run on TF32
 * tensor cores, so the higher of the two counts */
static double flop_peak(const struct roofline_peaks *p, enum roofline_dtype d)
{
	double v = p->flops[d];
	if (d == RD_FP32 && isfinite(p->flops[RD_TF32]))
		v = isfinite(v) ? fmax(v, p->flops[RD_TF32]) : p->flops[RD_TF32];
	return v;
}

static void impossible_why(struct roofline_shape *s, const struct roofline_peaks *p,
			   bool by_bw, double t, double peak, double margin)
{
	struct sb w = SB_INIT, a = SB_INIT, b = SB_INIT, when = SB_INIT, whose = SB_INIT;
	double rate = (by_bw ? s->bytes : s->flops_min) / t;
	if (by_bw)
		roofline_fmt_bytes(s->bytes, &w);
	else
		roofline_fmt_rate(s->flops_min, "FLOP", &w);
	roofline_fmt_rate(rate, by_bw ? "B/s" : "FLOP/s", &a);
	roofline_fmt_rate(peak, by_bw ? "B/s" : "FLOP/s", &b);
	if (s->ms > 0)
		sb_addf(&when, "%.4g ms", s->ms);
	else
		sb_addf(&when, "%.3f ms (under the table's %g ms)", s->ms, t * 1e3);
	if (p->measured)
		sb_addf(&whose, "%s's measured", p->name);
	else
		sb_addf(&whose, "the %s's", p->name);
	s->why = xasprintf("%s: %s for %s%s is %s%s, above %s %s%s (%.2fx, beyond the %.2fx "
			   "margin)",
			   s->key, when.buf, w.buf, by_bw ? "" : " (the fewest any known form needs)",
			   s->ms > 0 ? "" : "over ", a.buf, whose.buf, b.buf, by_bw ? "" : " peak",
			   rate / peak, margin);
	sb_release(&w);
	sb_release(&a);
	sb_release(&b);
	sb_release(&when);
	sb_release(&whose);
}

int roofline_shape_eval(const struct roofline_cost *c, const struct parse_row *r,
			const char *key, double ms, const struct roofline_peaks *p,
			struct roofline_shape *out, struct err *e)
{
	memset(out, 0, sizeof(*out));
	out->key = xstrdup(key ? key : "");
	out->ms = ms;
	out->bytes = out->flops = out->flops_min = out->bw = out->rate = NAN;
	out->bw_share = out->flop_share = NAN;
	double K = r->D > 0 ? (double)r->D : NAN;
	struct expr_var v[] = {
		{"B", r->B > 0 ? (double)r->B : 1}, {"T", (double)r->T}, {"H", r->H > 0 ? (double)r->H : 1},
		{"K", K}, {"V", K}, {"D", K}, {"C", c->chunk}, {"E", c->dtype_bytes},
		{"L", r->L > 0 ? (double)r->L : NAN},
	};
	int rc = 0;
	size_t nv = sizeof(v) / sizeof(v[0]);
	out->bytes = eval_or_nan(c->bytes, v, nv, &rc, e);
	out->flops = eval_or_nan(c->flops, v, nv, &rc, e);
	out->flops_min = eval_or_nan(c->flops_min, v, nv, &rc, e);
	if (rc < 0)
		return rc;
	if (!(ms >= 0) || !isfinite(ms))
		return 0;
	/* a time printed as 0 was under the table's last digit: the bound
	 * holds at that resolution */
	double t = (ms > 0 ? ms : ROOFLINE_RESOLUTION_MS) * 1e-3;
	out->bw = out->bytes / t;
	out->rate = out->flops / t;
	if (!p || !p->have)
		return 0;
	double fpk = flop_peak(p, c->dtype);
	out->dtype = c->dtype;
	out->flop_peak = fpk;
	out->bw_share = out->bw / p->bw;
	out->flop_share = out->rate / fpk;
	if (t < p->launch_s)
		out->bound = RB_LAUNCH;
	else if (isfinite(out->bw_share) || isfinite(out->flop_share))
		out->bound = !(out->flop_share > out->bw_share) ? RB_MEMORY : RB_COMPUTE;
	double margin = p->measured ? ROOFLINE_MARGIN_MEASURED : ROOFLINE_MARGIN;
	if (out->bw > p->bw * margin) {
		out->impossible = true;
		impossible_why(out, p, true, t, p->bw, margin);
	} else if (!p->measured && out->flops_min / t > fpk * margin) {
		/* the compute side only against a datasheet: a measured FMA loop
		 * is one compiler's vector width, not the CPU's */
		out->impossible = true;
		impossible_why(out, p, false, t, fpk, margin);
	}
	return 0;
}

/* ---- a run ---- */

void roofline_release(struct roofline *r)
{
	roofline_peaks_release(&r->peaks);
	for (size_t i = 0; i < r->n; i++)
		roofline_shape_release(&r->v[i]);
	free(r->v);
	free(r->skipped);
	memset(r, 0, sizeof(*r));
}

void roofline_add(struct roofline *r, struct roofline_shape *s)
{
	struct roofline_shape *v = realloc(r->v, (r->n + 1) * sizeof(*v));
	if (!v)
		abort();
	r->v = v;
	r->v[r->n++] = *s;
	if (s->impossible)
		r->nimpossible++;
	memset(s, 0, sizeof(*s));
}

/* the shape whose share of its nearest bound is highest */
static const struct roofline_shape *nearest(const struct roofline *r)
{
	const struct roofline_shape *best = NULL;
	double top = -1;
	for (size_t i = 0; i < r->n; i++) {
		const struct roofline_shape *s = &r->v[i];
		double sh = fmax(isfinite(s->bw_share) ? s->bw_share : -1,
				 isfinite(s->flop_share) ? s->flop_share : -1);
		if (s->bound == RB_LAUNCH)
			sh = 2;
		if (s->bound != RB_NONE && sh > top)
			top = sh, best = s;
	}
	return best;
}

void roofline_line(const struct roofline *r, struct sb *out)
{
	const struct roofline_peaks *p = &r->peaks;
	const struct roofline_shape *s = nearest(r);
	if (!p->have || !s) {
		sb_addf(out, "none (%s)", r->skipped ? r->skipped : "no shape with a cost model");
		return;
	}
	struct sb bw = SB_INIT, fl = SB_INIT;
	roofline_fmt_rate(p->bw, "B/s", &bw);
	if (isfinite(s->flop_peak))
		roofline_fmt_rate(s->flop_peak, "FLOP/s", &fl);
	sb_addf(out, "%s (%s): ", p->name,
		p->measured ? "measured here" : strncmp(p->name, "contract", 8) ? "datasheet"
									 : "the contract's Peak:");
	if (s->bound == RB_LAUNCH)
		sb_addf(out, "launch-bound at %.1f us per call (floor %.1f us)", s->ms * 1e3,
			p->launch_s * 1e6);
	else
		sb_addf(out, "%s-bound", roofline_bound_name(s->bound));
	if (isfinite(s->bw_share))
		sb_addf(out, ", %.0f%% of %s", 100 * s->bw_share, bw.buf);
	if (isfinite(s->flop_share))
		sb_addf(out, ", %.0f%% of %s %s", 100 * s->flop_share, fl.buf,
			roofline_dtype_name(s->dtype));
	sb_addf(out, " at %s", s->key);
	if (r->n > 1)
		sb_addf(out, " (nearest of %zu shapes)", r->n);
	sb_addf(out, "; %d impossible", r->nimpossible);
	sb_release(&bw);
	sb_release(&fl);
}

json_t *roofline_json(const struct roofline *r)
{
	json_t *j = json_object(), *a = json_array(), *why = json_array();
	json_object_set_new(j, "peaks", roofline_peaks_json(&r->peaks));
	for (size_t i = 0; i < r->n; i++) {
		const struct roofline_shape *s = &r->v[i];
		json_t *o = json_object();
		json_object_set_new(o, "shape", json_string(s->key));
		json_object_set_new(o, "ms", num(s->ms));
		json_object_set_new(o, "bytes", num(s->bytes));
		json_object_set_new(o, "flops", num(s->flops));
		json_object_set_new(o, "flops_min", num(s->flops_min));
		json_object_set_new(o, "bw", num(s->bw));
		json_object_set_new(o, "flop_rate", num(s->rate));
		json_object_set_new(o, "bw_share", num(s->bw_share));
		json_object_set_new(o, "flop_share", num(s->flop_share));
		json_object_set_new(o, "dtype", json_string(roofline_dtype_name(s->dtype)));
		json_object_set_new(o, "bound", s->bound ? json_string(roofline_bound_name(s->bound))
							 : json_null());
		json_object_set_new(o, "impossible", json_boolean(s->impossible));
		json_array_append_new(a, o);
		if (s->why)
			json_array_append_new(why, json_string(s->why));
	}
	json_object_set_new(j, "shapes", a);
	json_object_set_new(j, "impossible", json_integer(r->nimpossible));
	json_object_set_new(j, "impossible_why", why);
	json_object_set_new(j, "skipped", r->skipped ? json_string(r->skipped) : json_null());
	struct sb line = SB_INIT;
	roofline_line(r, &line);
	json_object_set_new(j, "line", json_string(line.buf));
	sb_release(&line);
	return j;
}
