/*
 * probe — GPU-state evidence taken before and after every verify.
 *
 * A configurable command (nvidia-smi by default) prints one CSV line per
 * GPU; the reading keeps the raw text, the parsed fields, how many other
 * compute processes were on the GPU, and whether the GPU looked busy.  A
 * probe that cannot run (no nvidia-smi on a CPU machine, CI, the demo) gives
 * a reading with available = false and the reason: "no probe" is a fact to
 * record, not an error.
 */
#ifndef OPTLOOP_PROBE_H
#define OPTLOOP_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct err;
struct sb;

#define PROBE_DEFAULT_COMMAND                                                               \
	"nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,clocks.mem,"        \
	"clocks.max.sm,temperature.gpu,power.draw,pstate,utilization.gpu --format=csv"
#define PROBE_DEFAULT_APPS_COMMAND "nvidia-smi --query-compute-apps=pid --format=csv,noheader"
#define PROBE_BUSY_UTIL 10.0 /* percent */
/* nvidia-smi's utilisation is averaged over the last sample period (1/6 s to
 * 1 s): a reading taken right after our own run ends still shows that run.
 * A pre-run reading that is busy by utilisation alone is taken again after
 * this long, and the second reading is the one that counts. */
#define PROBE_SETTLE_S 2.0

/* Run cmd somewhere other than a process of its own (the allocation's
 * probe step, core/probestep.h): its stdout into out, *status a wait
 * status, *timed_out past timeout_s; a negative ERR_* when it could not be
 * started. */
typedef int (*probe_capture_fn)(void *ctx, const char *cmd, double timeout_s, struct sb *out,
				int *status, bool *timed_out, struct err *e);

struct probe_opts {
	const char *command;      /* NULL: PROBE_DEFAULT_COMMAND */
	const char *apps_command; /* NULL: the default; "" skips the process check */
	double busy_util;         /* 0: PROBE_BUSY_UTIL */
	double timeout_s;         /* 0: 10 s */
	double settle_s;          /* > 0: re-read a utilisation-only busy reading
				     after this long (pre-run readings); 0: never */
	const char *wrap;         /* run each command through this prefix (a Slurm
				     step: "srun ... /bin/sh -c"), the command
				     shell-quoted after it; NULL: run it here */
	const char *node;         /* where the wrapped commands run (recorded) */
	probe_capture_fn capture; /* with wrap: run each command through this
				     (wrap and the command only name it) */
	void *capture_ctx;
};

/* Numbers are NAN, strings NULL, where the probe did not report them. */
struct probe_gpu {
	int index; /* -1 unknown */
	char *name, *uuid, *driver, *pstate;
	double sm_mhz, mem_mhz, max_sm_mhz, temp_c, power_w, util_pct;
};

struct probe_reading {
	bool available; /* false: "no probe" (why says so) */
	char *why;      /* why not available, or NULL */
	char *command;
	char *node;     /* the node it was taken on, when not here (Slurm) */
	char *raw;      /* the probe's output as printed */
	double t;       /* unix seconds when taken */
	struct probe_gpu *gpus;
	size_t ngpus;
	int compute_procs; /* other compute processes seen; -1 unknown */
	bool busy;
	char *busy_why;    /* what made it busy, or NULL */
	double settled_s;  /* > 0: this is the second reading, taken this long
			      after a first one that looked busy */
	char *settled_from; /* why that first reading looked busy */
};

/* Parse nvidia-smi --format=csv output (header line, then one line per
 * GPU).  Columns are found by header name, so any subset and order works;
 * units in headers ("clocks.current.sm [MHz]") and values ("345 MHz") are
 * understood, "[N/A]" reads as absent.  ERR_FAIL when there is no header
 * or no GPU line.  out is caller-owned (probe_reading_release). */
int probe_parse_csv(const char *text, size_t len, struct probe_reading *out, struct err *e);

/* Decide busy from the parsed fields: utilisation above busy_util on any GPU,
 * or compute_procs > 0. */
void probe_judge(struct probe_reading *r, double busy_util);

/* Run the probe (and the compute-process query) and fill out; with
 * o->settle_s, a reading busy only by utilisation (no other compute process)
 * is taken once more after settle_s and the second one is kept.  Returns 0
 * with available = false when the command is missing or fails; a negative
 * ERR_* only when optloop itself could not start a process. */
int probe_run(const struct probe_opts *o, struct probe_reading *out, struct err *e);

void probe_reading_release(struct probe_reading *r);

/* JSON for the store and --json output (caller owns), and back. */
json_t *probe_reading_json(const struct probe_reading *r);
int probe_reading_from_json(const json_t *j, struct probe_reading *out, struct err *e);

/* One line per GPU of evidence, after "on node N: " when taken on a
 * Slurm node ("GPU 0 NVIDIA H200 GPU-…: SM 345/1980 MHz,
 * mem 3201 MHz, 38 C, 105.85 W, P0, util 0 %"), or "no probe: <why>". */
void probe_describe(const struct probe_reading *r, struct sb *out);

#endif
