/*
 * roofline — physics as evidence: what a run's time means against the
 * hardware's peaks (DESIGN §2, §6).
 *
 * Peaks come from assets/peaks.tsv (datasheet figures; the probe's GPU name
 * picks the row), from the contract's Peak: line, or, on a CPU, from a
 * STREAM-style copy loop and an FMA loop measured here.  Cost models
 * (assets/costs.tsv, or the contract's Cost: line) give per op family and
 * mode the least bytes moved and the FLOPs as formulas of the shape (core/
 * expr.c evaluates them).  From a shape's median time this module computes
 * the achieved bandwidth and FLOP rate, their share of each peak, the bound
 * the shape is nearest (memory, compute, or launch), and whether the time
 * is impossible: more than the peak bandwidth for the least bytes, or more
 * than the peak FLOP rate for the fewest FLOPs, beyond a margin.  Unlike an
 * implausible speedup, no explanation lifts that flag (core/rules.c).
 *
 * Pure arithmetic over plain values and two small text files; no store.
 */
#ifndef OPTLOOP_ROOFLINE_H
#define OPTLOOP_ROOFLINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct err;
struct parse_row;
struct sb;

/* A datasheet peak may be missed by no real run; 10 % covers boost clocks
 * above the datasheet's and rounding of the datasheet itself. */
#define ROOFLINE_MARGIN 1.10
/* A measured (CPU) peak is what optloop's own loops reached, a lower bound
 * of what the hardware can do (another compiler's vector width, a working
 * set that stays in L1): four times it is still far below what a run that
 * skips its work reads as. */
#define ROOFLINE_MARGIN_MEASURED 4.0
/* Below this a run is launch-bound: a handful of kernel launches (GPU, ~2-5
 * µs each) or one call with its allocation (CPU). */
#define ROOFLINE_LAUNCH_GPU_S 10e-6
#define ROOFLINE_LAUNCH_CPU_S 1e-6

/* A time printed as 0.000 ms was under half the table's last digit (FLA
 * and the demo print three decimals): it counts as this long. */
#define ROOFLINE_RESOLUTION_MS 0.0005

enum roofline_dtype { RD_FP32, RD_TF32, RD_BF16, RD_FP8, RD_N };
/* "fp32", "tf32", "bf16", "fp8". */
const char *roofline_dtype_name(enum roofline_dtype d);
/* fp16 reads as bf16 (same peak, same size); -1 when unknown. */
int roofline_dtype_parse(const char *w);

struct roofline_peaks {
	bool have;
	char *name;          /* "H200", "CPU (measured)", "contract" */
	char *source;        /* the datasheet, or how it was measured */
	double bw;           /* bytes/s; NAN when unknown */
	double flops[RD_N];  /* FLOP/s per dtype; NAN when unknown */
	bool measured;       /* measured here: ROOFLINE_MARGIN_MEASURED applies */
	double launch_s;     /* the launch floor */
};
void roofline_peaks_release(struct roofline_peaks *p);

/* The first row of the peaks file at path whose match names device (case-
 * insensitive substring).  0 with out filled; ERR_NOTFOUND when no row
 * matches (out->have false); ERR_USAGE naming the line of a malformed row;
 * ERR_IO when the file cannot be read.  out is overwritten (release what it
 * held first) and caller-owned; so for measure_cpu and from_json below. */
int roofline_peaks_find(const char *path, const char *device, struct roofline_peaks *out,
			struct err *e);
/* The contract's Peak: value over *p: a row name or match of the peaks file
 * ("H100 SXM"), or "key=value" words (bw, fp32, tf32, bf16, fp8, launch_us,
 * name), e.g. "bw=3.35e12 bf16=989.5e12".  ERR_USAGE says what was wrong. */
int roofline_peaks_override(const char *path, const char *text, struct roofline_peaks *p,
			    struct err *e);
/* Measure this CPU: a STREAM-style copy (bytes read + written per second,
 * over a 16 MiB and a cache-resident 128 KiB buffer: the faster counts) and
 * an FMA loop (8 independent vector accumulators), on one core, best of
 * three each, in about 20 ms.  Never fails. */
void roofline_peaks_measure_cpu(struct roofline_peaks *out);
/* JSON for the evidence, and back (caller owns / out caller-owned). */
json_t *roofline_peaks_json(const struct roofline_peaks *p);
int roofline_peaks_from_json(const json_t *j, struct roofline_peaks *out);

/* One op family's cost model (a row of assets/costs.tsv or the contract's). */
struct roofline_cost {
	bool have;
	char *family, *bytes, *flops, *flops_min, *source; /* formulas: NULL "-" */
	enum roofline_dtype dtype;
	int dtype_bytes;
	double chunk; /* C */
};
void roofline_cost_release(struct roofline_cost *c);

/* The contract's Cost: value, "key=value" parts separated by ";": family,
 * dtype, chunk, bytes, flops, flops_min.  Parsed into o (caller-owned);
 * formulas are checked here.  ERR_USAGE says what was wrong. */
struct roofline_cost_spec {
	char *family, *bytes, *flops, *flops_min;
	int dtype; /* -1: the row's */
	double chunk; /* 0: 64 */
};
int roofline_cost_spec_parse(const char *text, struct roofline_cost_spec *o, struct err *e);
void roofline_cost_spec_release(struct roofline_cost_spec *o);

/* The cost of op in mode from the costs file at path (NULL: no file),
 * overridden by spec (may be NULL): spec's family picks the row instead of
 * the op name, its formulas replace the row's.  ERR_NOTFOUND when neither
 * gives a bytes formula for op and mode; ERR_USAGE for a malformed row. */
int roofline_cost_find(const char *path, const char *op, const char *mode,
		       const struct roofline_cost_spec *spec, struct roofline_cost *out,
		       struct err *e);

enum roofline_bound { RB_NONE, RB_MEMORY, RB_COMPUTE, RB_LAUNCH };
const char *roofline_bound_name(enum roofline_bound b); /* "memory", ... ; "" NONE */

/* One shape of a run against the peaks. */
struct roofline_shape {
	char *key;         /* measure_shape_key */
	double ms;         /* the shape's median time */
	double bytes, flops, flops_min; /* NAN where not modelled */
	double bw, rate;   /* achieved bytes/s and FLOP/s (the chunked count) */
	double bw_share, flop_share; /* of the peaks; NAN when unknown */
	enum roofline_dtype dtype;   /* the cost model's: whose FLOP peak counts */
	double flop_peak;            /* that peak (fp32 data: TF32's when higher) */
	enum roofline_bound bound;
	bool impossible;
	char *why;         /* the arithmetic, when impossible */
};

/* Evaluate cost c at row r's shape (D sets K and V) and time ms against p;
 * key names the shape in words.  0 with out filled (caller-owned);
 * ERR_USAGE when a formula fails. */
int roofline_shape_eval(const struct roofline_cost *c, const struct parse_row *r,
			const char *key, double ms,
			const struct roofline_peaks *p, struct roofline_shape *out,
			struct err *e);
void roofline_shape_release(struct roofline_shape *s);

/* A run's roofline: its shapes, the peaks, what was left out and why. */
struct roofline {
	struct roofline_peaks peaks;
	struct roofline_shape *v;
	size_t n;
	int nimpossible;
	char *skipped; /* why shapes or the whole run have no roofline, or NULL */
};
void roofline_release(struct roofline *r);
/* Append one shape (taking ownership of s). */
void roofline_add(struct roofline *r, struct roofline_shape *s);

/* One line: "roofline (H200 datasheet): memory-bound at 31% of 4.8 TB/s
 * HBM, 2% of 989 TFLOP/s bf16 (fwd B=4 ...); 0 impossible", or why there
 * is none. */
void roofline_line(const struct roofline *r, struct sb *out);
/* {"peaks": ..., "shapes": [...], "impossible": n, "impossible_why": [..],
 *  "line": "..."} (caller owns). */
json_t *roofline_json(const struct roofline *r);

/* Bytes and rates in words: "64.0 MiB", "5.60 TB/s", "989 TFLOP/s". */
void roofline_fmt_bytes(double b, struct sb *out);
void roofline_fmt_rate(double v, const char *unit, struct sb *out);

#endif
