/*
 * probestep — the GPU probe's commands run on an allocation's node through
 * one Slurm step that lives as long as its handle.
 *
 * A run through Slurm takes a probe before and after it, each one or two
 * commands (the readings, then the compute processes).  As steps of their
 * own they cost srun's step set-up every time: three to five steps a run,
 * about a tenth of a second each on a quiet controller.  Here the first
 * probe command starts one step (srun --overlap, the probe's own job name),
 * a shell that reads a command a line from srun's standard input and
 * answers with the command's standard output and a line
 *
 *   optloop-probe-done STATUS
 *
 * and every later command of the same job and node goes through it.
 *
 * A command that does not answer within its timeout ends the step (the next
 * command starts a new one).  A step that ends before it answers (the job
 * is gone, srun could not start it) answers with srun's own exit status, as
 * a step of its own would have.  Closing stdin ends the step: the
 * handle's end, or this process's.
 */
#ifndef OPTLOOP_PROBESTEP_H
#define OPTLOOP_PROBESTEP_H

#include <stdbool.h>

struct err;
struct sb;
struct probestep;

struct probestep *probestep_new(void);
/* Ends the step (stdin closed; srun stopped if it has not ended within a
 * second). */
void probestep_free(struct probestep *p);

/* Run cmd (one line) on job's node through the step, starting it if it is
 * not there or serves another job or node.  out gets the command's
 * standard output, *status a wait status (its exit status, or srun's when
 * the step ended first), *timed_out whether it ran past timeout_s.  0, or a
 * negative ERR_* when no process could be started. */
int probestep_capture(struct probestep *p, const char *job, const char *node, const char *cmd,
		      double timeout_s, struct sb *out, int *status, bool *timed_out,
		      struct err *e);

#endif
