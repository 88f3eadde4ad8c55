/*
 * slurm — what optloop reads and writes of Slurm, as pure functions: the
 * contract's Runner field, the command lines of salloc, srun, squeue and
 * scancel, the lines those print, and how a step ended.  Nothing here runs
 * a process; core/alloc.c does, with these.
 *
 * A Runner value is `local` (the default) or `slurm` followed by salloc's
 * own options (every word that starts with '-') and optloop's options for
 * the allocation as name=value words:
 *
 *   slurm --partition=gpu --gres=gpu:1 --time=02:00:00 idle=30m
 *
 * idle=DURATION releases the allocation after that long without a run
 * (s, m, h or d; a bare number is minutes; 0 or off: held until optloop
 * stop or its time limit).  Words may be quoted ('...' or "...").
 */
#ifndef OPTLOOP_SLURM_H
#define OPTLOOP_SLURM_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;

#define SLURM_IDLE_DEFAULT_S (30 * 60.0)
/* How a step names its job, step, node and GPUs on its first output line:
 * "optloop-slurm: job 12 step 3 node gpu07 gpus 0" (the GPU ids Slurm gave
 * the step, "none" without a GPU). */
#define SLURM_MARK "optloop-slurm:"

struct slurm_runner {
	bool slurm;     /* false: local */
	char **args;    /* salloc's options, as written (words, unquoted) */
	size_t nargs;
	double idle_s;  /* 0: never released for idleness */
	char *canon;    /* the value re-spelled, one space between words: what
			 * decides whether a recorded allocation still fits */
};

/* Read a Runner value (NULL or empty: local).  ERR_USAGE naming the word
 * that is wrong and what would be right.  out is caller-owned
 * (slurm_runner_release), also after an error. */
int slurm_runner_parse(const char *value, struct slurm_runner *out, struct err *e);
void slurm_runner_release(struct slurm_runner *r);

/* "90s", "30m", "2h", "1d", "45" (minutes), "0"/"off" -> seconds; -1 when
 * unreadable. */
double slurm_duration(const char *s);
/* The time limit salloc is given (--time / -t, in Slurm's forms), in
 * seconds; -1 when there is none or it cannot be read. */
double slurm_time_limit(const struct slurm_runner *r);

/* Append s to out quoted for /bin/sh (single quotes). */
void slurm_shell_quote(struct sb *out, const char *s);

/* salloc --no-shell with the runner's options (the whole shell line). */
void slurm_salloc_command(const struct slurm_runner *r, struct sb *out);
/* The whole shell line that runs cmd as one task of a step in job, on
 * node (NULL: where Slurm puts it), streaming its output unbuffered, the
 * step killed as a whole when it fails, its first line SLURM_MARK. */
void slurm_step_command(const char *job, const char *node, const char *cmd, struct sb *out);
/* The prefix that runs a short command (the GPU probe) as a step in job
 * on node; the shell-quoted command is appended after it. */
void slurm_probe_prefix(const char *job, const char *node, struct sb *out);

/* One line of salloc's output. */
enum slurm_salloc_event {
	SALLOC_OTHER,
	SALLOC_PENDING, /* "Pending job allocation 12", "job 12 queued and waiting" */
	SALLOC_GRANTED, /* "Granted job allocation 12" */
	SALLOC_REVOKED, /* "Job allocation 12 has been revoked", "aborted" */
	SALLOC_ERROR,   /* "salloc: error: ..." */
};
/* What line says; job (size >= 24) receives the job id when it names one. */
enum slurm_salloc_event slurm_salloc_line(const char *line, char *job, size_t jobsz);

/* A job as squeue -h -j ID -o '%T|%r|%N' prints it. */
enum slurm_job_phase {
	SJ_GONE,    /* not in the queue any more (or never was) */
	SJ_PENDING, /* waiting: reason says why */
	SJ_RUNNING, /* running (or configuring its nodes) */
	SJ_ENDING,  /* completing, cancelled, timed out, failed: not usable */
	SJ_UNKNOWN, /* squeue could not say (the controller did not answer), or
		     * said a state optloop does not know: never taken for gone */
	SJ_HELD,    /* suspended or stopped: it keeps its nodes (its GPUs) but runs
		     * nothing until it is resumed */
};
struct slurm_job {
	enum slurm_job_phase phase;
	char state[32];   /* "PENDING", "RUNNING", "TIMEOUT", ... ("" when gone) */
	char reason[128]; /* "Resources", "Priority", "None", ... */
	char nodes[256];  /* the node list ("gpu[01-02]") */
};
#define SLURM_SQUEUE_FORMAT "%T|%r|%N"
/* Read squeue's output for one job; empty text reads as gone.  With a
 * non-zero exit status, squeue's "Invalid job id" reads as gone and
 * anything else as unknown (the reason then holds squeue's message). */
void slurm_squeue_parse(const char *text, int exit_status, struct slurm_job *out);
/* The first node of a node list: "gpu[01-02],x" -> "gpu01" (out >= 256). */
void slurm_first_node(const char *list, char *out, size_t outsz);

/* What optloop watches in a step's output, line by line in bounded memory:
 * its SLURM_MARK line and srun's and slurmstepd's messages. */
struct slurm_scan {
	char job[24], step[24], node[128], gpus[64];
	bool marked;         /* the SLURM_MARK line was seen */
	bool aborted;        /* "Job step aborted" */
	bool cancelled;      /* "CANCELLED" by slurmstepd */
	bool time_limit;     /* "DUE TO TIME LIMIT" */
	bool node_fail;      /* "DUE TO NODE FAILURE", "Node failure" */
	bool preempted;      /* "DUE TO PREEMPTION" */
	bool no_job;         /* the job is not there: "Invalid job id", "expired",
			      * "Unable to confirm allocation" */
	bool launch_failed;  /* "Unable to create step", "Unable to launch" */
	bool killed_task;    /* "task N: Killed/Terminated/Exited with exit code" */
	char last[256];      /* the last srun/slurmstepd message */
	char line[512];      /* the line being assembled */
	size_t len;
	bool skip;           /* the rest of an over-long line */
};
void slurm_scan_init(struct slurm_scan *s);
void slurm_scan_feed(struct slurm_scan *s, const char *buf, size_t len);
void slurm_scan_finish(struct slurm_scan *s);

/* How a step ended and why, for the run's record. */
enum slurm_cause {
	SC_OK,          /* finished on its own: its exit status is the harness's */
	SC_CANCELLED,   /* optloop cancelled it (Ctrl-C, a cancel) */
	SC_TIMEOUT,     /* optloop's run timeout */
	SC_TIME_LIMIT,  /* the allocation reached its time limit */
	SC_REVOKED,     /* the allocation was cancelled from outside (scancel) */
	SC_NODE_FAIL,   /* the node failed */
	SC_PREEMPTED,
	SC_GONE,        /* the job was not there when the step started */
	SC_LAUNCH,      /* srun could not create or launch the step */
	SC_SIGNAL,      /* the step's task was killed by a signal, cause unknown */
};
struct slurm_step_end {
	const struct slurm_scan *scan;
	int exit_status;        /* srun's; -1 when killed */
	int signal;             /* the signal that ended srun, 0 if none */
	bool we_cancelled, we_timed_out;
	const struct slurm_job *job_after; /* squeue after the step; NULL: not asked */
	/* the allocation's step before this one ended by a signal while its job
	 * still seemed to run: a job gone now was ended from outside (revoked),
	 * not expired (an expiry says DUE TO TIME LIMIT on the step it kills) */
	bool after_signal;
	/* the job had time left: its --time limit had not run out by the end of
	 * the step (a job gone then was ended from outside, not expired) */
	bool time_left;
};
/* The cause; why (may be NULL) receives it in words naming the job and
 * step.  Everything but SC_OK makes the run incomplete. */
enum slurm_cause slurm_step_cause(const struct slurm_step_end *in, struct sb *why);
const char *slurm_cause_name(enum slurm_cause c); /* "time_limit", ... */

#endif
