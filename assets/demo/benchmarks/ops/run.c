/*
 * run.c — the benchmark for chunk_linear_attn_fwd, and the results table.
 *
 *   run bench --out FILE            time every shape, write one TSV row per
 *                                   shape: mode B T H D op median p20 p80 (ms)
 *   run table --machine LINE --new FILE --new-label LABEL
 *             [--base FILE --base-label LABEL] [--json FILE --git-label LABEL]
 *                                   print the table the way FLA's run.py does
 *
 * Timing follows FLA's run.py: every shape is warmed up before any is timed;
 * then each shape runs for about DEMO_BENCH_REP_MS milliseconds (CPU time of
 * the calling thread, see now_ms) of samples
 * (100 by default, at least 5 and at most 200 calls), one call per sample,
 * and the median with the 20th and 80th percentiles is reported.
 *
 * The verify script compiles this file with whichever kernel it measures
 * (the working tree, or a git worktree of --base), so the driver stays the
 * same on both sides of a comparison.
 */
#define _POSIX_C_SOURCE 200809L
#include "../../ops/linear_attn/linear_attn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define OP_NAME "chunk_linear_attn"

struct shape {
	int B, T, H, D;
};

/* The benchmark shapes: a typical head dim, a wide one, many small heads. */
static const struct shape shapes[] = {
	{2, 512, 4, 64},
	{1, 1024, 2, 128},
	{4, 512, 4, 32},
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

struct result {
	char mode[16];
	int B, T, H, D;
	char op[64];
	double median, p20, p80;
};

/* The calling thread's CPU time.  The kernel runs on this one thread, so
 * its CPU time is the kernel's cost without the time other processes held
 * the core (a GPU harness times the device with events for the same
 * reason: the host's scheduling is not the kernel's cost).  Wall-clock time
 * on a shared two-core machine reads whatever else runs there. */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double env_ms(const char *name, double dflt)
{
	const char *s = getenv(name);
	double v = s && *s ? atof(s) : dflt;
	return v > 0 ? v : dflt;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Quantile with linear interpolation (torch.quantile's default). */
static double quantile(const double *sorted, int n, double p)
{
	double pos = p * (n - 1);
	int lo = (int)pos;
	if (lo >= n - 1)
		return sorted[n - 1];
	return sorted[lo] + (pos - lo) * (sorted[lo + 1] - sorted[lo]);
}

struct buffers {
	float *q, *k, *v, *o;
};

static void buffers_init(struct buffers *b, const struct shape *s)
{
	size_t n = (size_t)s->B * s->T * s->H * s->D;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	b->q = malloc(n * sizeof(float));
	b->k = malloc(n * sizeof(float));
	b->v = malloc(n * sizeof(float));
	b->o = malloc(n * sizeof(float));
	if (!b->q || !b->k || !b->v || !b->o) {
		fprintf(stderr, "run: out of memory for B=%d T=%d H=%d D=%d\n", s->B, s->T, s->H,
			s->D);
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b->q[i] = (float)((x >> 40) / 16777216.0 - 0.5);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b->k[i] = (float)((x >> 40) / 16777216.0 - 0.5);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b->v[i] = (float)((x >> 40) / 16777216.0 - 0.5);
	}
}

static void buffers_release(struct buffers *b)
{
	free(b->q);
	free(b->k);
	free(b->v);
	free(b->o);
}

static double call(const struct buffers *b, const struct shape *s)
{
	double t0 = now_ms();
	chunk_linear_attn_fwd(b->q, b->k, b->v, b->o, s->B, s->T, s->H, s->D);
	return now_ms() - t0;
}

static int cmd_bench(const char *out_path)
{
	double warm_ms = env_ms("DEMO_BENCH_WARMUP_MS", 25), rep_ms = env_ms("DEMO_BENCH_REP_MS", 100);
	struct buffers bufs[NSHAPES];
	FILE *out = fopen(out_path, "w");

	if (!out) {
		perror(out_path);
		return 1;
	}
	printf("\n  [%s] Warming up %zu shape(s)...\n", OP_NAME, NSHAPES);
	fflush(stdout);
	for (size_t i = 0; i < NSHAPES; i++) {
		buffers_init(&bufs[i], &shapes[i]);
		double spent = 0;
		for (int n = 0; n < 2 || spent < warm_ms; n++)
			spent += call(&bufs[i], &shapes[i]);
	}
	printf("  [%s] Warmup done.\n", OP_NAME);
	fflush(stdout);

	for (size_t i = 0; i < NSHAPES; i++) {
		const struct shape *s = &shapes[i];
		double est = call(&bufs[i], s);
		int n = est > 0 ? (int)(rep_ms / est) : 200;
		n = n < 5 ? 5 : n > 200 ? 200 : n;
		double *t = malloc((size_t)n * sizeof *t);
		if (!t)
			return 1;
		for (int j = 0; j < n; j++)
			t[j] = call(&bufs[i], s);
		qsort(t, (size_t)n, sizeof *t, cmp_double);
		fprintf(out, "fwd\t%d\t%d\t%d\t%d\t%s\t%.6f\t%.6f\t%.6f\n", s->B, s->T, s->H, s->D,
			OP_NAME, quantile(t, n, 0.5), quantile(t, n, 0.2), quantile(t, n, 0.8));
		free(t);
		buffers_release(&bufs[i]);
	}
	return fclose(out) ? 1 : 0;
}

/* ---- the table ---------------------------------------------------------- */

static int read_results(const char *path, struct result **out, int *n)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int cap = 0;

	*out = NULL;
	*n = 0;
	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof line, f)) {
		struct result r;
		if (sscanf(line, "%15s %d %d %d %d %63s %lf %lf %lf", r.mode, &r.B, &r.T, &r.H, &r.D,
			   r.op, &r.median, &r.p20, &r.p80) != 9)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			*out = realloc(*out, (size_t)cap * sizeof **out);
			if (!*out)
				exit(1);
		}
		(*out)[(*n)++] = r;
	}
	fclose(f);
	return 0;
}

/* "opt-branch-name[abc1234]" -> "opt-bran...[abc1234](ms)"; branch names
 * longer than 8 characters are cut, and both headers are padded to the
 * same branch width so the [sha] parts line up (as run.py does). */
static void split_label(const char *label, char *branch, size_t bn, char *suffix, size_t sn)
{
	const char *br = strchr(label, '[');
	size_t len = br ? (size_t)(br - label) : strlen(label);

	if (len > 8)
		snprintf(branch, bn, "%.8s...", label);
	else
		snprintf(branch, bn, "%.*s", (int)len, label);
	snprintf(suffix, sn, "%s(ms)", br ? br : "");
}

static void repeat(char c, int n)
{
	for (int i = 0; i < n; i++)
		putchar(c);
}

static const struct result *find(const struct result *v, int n, const struct result *r)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].mode, r->mode) && !strcmp(v[i].op, r->op) && v[i].B == r->B &&
		    v[i].T == r->T && v[i].H == r->H && v[i].D == r->D)
			return &v[i];
	return NULL;
}

static void print_table(const char *machine, const struct result *nw, int nn, const char *new_label,
			const struct result *old, int no, const char *old_label)
{
	char nb[64], ns[128], ob[64], os[128], new_hdr[256], old_hdr[256];
	int col_w, inner_w;

	if (nn == 0) {
		printf("\n  No results to display.\n");
		return;
	}
	split_label(new_label, nb, sizeof nb, ns, sizeof ns);
	if (old) {
		split_label(old_label, ob, sizeof ob, os, sizeof os);
		int bw = (int)(strlen(ob) > strlen(nb) ? strlen(ob) : strlen(nb));
		snprintf(old_hdr, sizeof old_hdr, "%*s%s", bw, ob, os);
		snprintf(new_hdr, sizeof new_hdr, "%*s%s", bw, nb, ns);
		col_w = (int)strlen(old_hdr);
		if ((int)strlen(new_hdr) > col_w)
			col_w = (int)strlen(new_hdr);
		if (col_w < 10)
			col_w = 10;
		inner_w = 4 + 1 + 6 + 1 + 4 + 1 + 4 + 2 + 28 + 2 + col_w + 1 + col_w + 1 + 8;
	} else {
		snprintf(new_hdr, sizeof new_hdr, "%s%s", nb, ns);
		col_w = (int)strlen(new_hdr) > 10 ? (int)strlen(new_hdr) : 10;
		inner_w = 4 + 1 + 6 + 1 + 4 + 1 + 4 + 2 + 28 + 2 + col_w;
	}
	int width = 10 + inner_w;

	putchar('\n');
	repeat('=', width);
	putchar('\n');
	if (machine)
		printf("  %s\n", machine);
	const char *prev_mode = NULL;
	for (int i = 0; i < nn; i++) {
		const struct result *r = &nw[i];
		if (!prev_mode || strcmp(prev_mode, r->mode)) {
			repeat('=', width);
			printf("\n  %-7s %4s %6s %4s %4s  %-28s  %*s", r->mode, "B", "T", "H", "D", "op",
			       col_w, old ? old_hdr : new_hdr);
			if (old)
				printf(" %*s %8s", col_w, new_hdr, "speedup");
			printf("\n%10s", "");
			repeat('-', inner_w);
			putchar('\n');
		} else {
			printf("%10s", "");
			repeat('-', inner_w);
			putchar('\n');
		}
		prev_mode = r->mode;
		printf("%10s%4d %6d %4d %4d  %-28s", "", r->B, r->T, r->H, r->D, r->op);
		if (old) {
			const struct result *o = find(old, no, r);
			if (o)
				printf("  %*.3f %*.3f %7.2fx\n", col_w, o->median, col_w, r->median,
				       r->median > 0 ? o->median / r->median : INFINITY);
			else
				printf("  %*s %*.3f %8s\n", col_w, "-", col_w, r->median, "-");
		} else {
			printf("  %*.3f\n", col_w, r->median);
		}
	}
	repeat('=', width);
	putchar('\n');
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void json_results(FILE *f, const struct result *v, int n)
{
	fprintf(f, "[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s\n    {\"op\": ", i ? "," : "");
		json_str(f, v[i].op);
		fprintf(f, ", \"mode\": ");
		json_str(f, v[i].mode);
		fprintf(f,
			", \"B\": %d, \"T\": %d, \"H\": %d, \"D\": %d, \"median_ms\": %.6f, "
			"\"p20_ms\": %.6f, \"p80_ms\": %.6f}",
			v[i].B, v[i].T, v[i].H, v[i].D, v[i].median, v[i].p20, v[i].p80);
	}
	fprintf(f, "%s]", n ? "\n  " : "");
}

static int write_json(const char *path, const char *machine, const char *git_label,
		      const struct result *nw, int nn, const struct result *old, int no,
		      const char *old_label)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "{\n  \"machine_info\": {\"machine\": ");
	json_str(f, machine ? machine : "");
	fprintf(f, ", \"git_label\": ");
	json_str(f, git_label ? git_label : "unknown");
	fprintf(f, ", \"device_platform\": \"cpu\"},\n  \"results\": ");
	json_results(f, nw, nn);
	if (old) {
		fprintf(f, ",\n  \"baseline_label\": ");
		json_str(f, old_label);
		fprintf(f, ",\n  \"baseline\": ");
		json_results(f, old, no);
	}
	fprintf(f, "\n}\n");
	return fclose(f) ? 1 : 0;
}

static int cmd_table(int argc, char **argv)
{
	const char *machine = NULL, *new_path = NULL, *new_label = "new", *base_path = NULL;
	const char *base_label = "main", *json_path = NULL, *git_label = NULL;
	struct result *nw = NULL, *old = NULL;
	int nn = 0, no = 0, rc = 0;

	for (int i = 2; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--machine"))
			machine = v;
		else if (!strcmp(k, "--new"))
			new_path = v;
		else if (!strcmp(k, "--new-label"))
			new_label = v;
		else if (!strcmp(k, "--base"))
			base_path = v;
		else if (!strcmp(k, "--base-label"))
			base_label = v;
		else if (!strcmp(k, "--json"))
			json_path = v;
		else if (!strcmp(k, "--git-label"))
			git_label = v;
		else {
			fprintf(stderr, "run table: unknown option %s\n", k);
			return 2;
		}
	}
	if (!new_path || read_results(new_path, &nw, &nn) < 0)
		return 1;
	if (base_path && read_results(base_path, &old, &no) < 0)
		return 1;
	print_table(machine, nw, nn, new_label, base_path ? old : NULL, no, base_label);
	if (json_path) {
		rc = write_json(json_path, machine, git_label, nw, nn, base_path ? old : NULL, no,
				base_label);
		if (!rc)
			printf("\nResults saved to %s\n", json_path);
	}
	free(nw);
	free(old);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "bench") && !strcmp(argv[2], "--out"))
		return cmd_bench(argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "table"))
		return cmd_table(argc, argv);
	fprintf(stderr, "usage: run bench --out FILE | run table --machine LINE --new FILE ...\n");
	return 2;
}
