/*
 * live_impl — the live backend as its own files see it: struct ws_loop and
 * the helpers they share (live.c: open, reload, the status line, actions,
 * the watcher; live_run.c, live_wizards.c, live_detail.c).
 */
#ifndef OPTLOOP_WORKBENCH_LIVE_IMPL_H
#define OPTLOOP_WORKBENCH_LIVE_IMPL_H

#include "core/loop.h"
#include "tui/workbench/files.h"

#include <stdbool.h>
#include <time.h>

struct app;
struct err;

enum { WZ_LOG = 1, WZ_CONTRACT, WZ_STALL, WZ_STOP };

struct ws_loop {
	struct loop *l;
	struct loop_status st;
	bool have_st;
	struct log_rows *rows; /* shared with the store; the panes borrow rows->v */
	bool rows_read;        /* a reload read the rows once: the next reads them all */
	struct ws_files files;
	char *title;
	int run_iter;
	/* Contract wizard: which field each text box sets. */
	const char *contract_fields[CONTRACT_NFIELDS]; /* names, static */
	int ncontract;
	struct traps_doc traps; /* with this iteration's checklist states */
	/* The job going (verify, noise or confirm; NULL when none), the run of
	 * it the live pane announced last, and whether x cancelled it. */
	struct loop_job *job;
	int job_shown;
	bool job_cancelled;
	struct lint_findings lint; /* findings the log wizard asks to acknowledge */
	char *band_text;           /* the noise band in words, for the best pane */
	char *due, *due_brief;     /* the due step in words, for the timeline */
	/* Other optloops writing (an agent's CLI calls, a second workbench):
	 * the watcher wakes the workbench, ext_run is their run going (0 none)
	 * and driver names who drives it. */
	struct loop_watch *watch;
	bool changed;
	int ext_run;
	char *driver;
	char *ext_desc; /* their run going, once it ended: "optloop verify (iteration 2) of pid N" */
	/* Runner: slurm: the allocation in a few words, read at most every
	 * ALLOC_REFRESH_S (squeue is asked), and whether it is still waiting */
	char *alloc_text;
	bool alloc_waiting;
	time_t alloc_at;
};

#define ALLOC_REFRESH_S 5
/* The rows a long log's first frame reads: more than a pane of the widest
 * terminal shows (the timeline's height, the chart's width). */
#define LIVE_FIRST_ROWS 1024

struct log_row;
struct loop_run;
struct sb;
struct wb_line;
struct wb_verdict;
struct wizard;

/* ---- live.c --------------------------------------------------------------- */

/* The backend's data of the app. */
struct ws_loop *live_of(struct app *a);
/* Reload the panes from the engine (the status, the rows, the best, the
 * band, the traps, dispatch.md). */
int live_reload(struct app *a, struct err *e);
/* Let go of the writer's lock after an action (while no run is going). */
void live_give_lock(struct app *a);
/* "MEASURED", "READY", ...: a state as the status line spells it. */
const char *live_state_upper(enum loop_state s);
/* The due step in the status line's words (appended). */
void live_next_words(struct ws_loop *w, struct sb *out);
/* A run's verdict in the detail pane's and the best pane's form;
 * offer_iter: the iteration whose log wizard offers it, -1 none. */
void live_run_verdict(const struct loop_run *r, int offer_iter, struct wb_verdict *out);
/* Each implausible rule a run's comparison fired, with its number, as the
 * CLI's why: lines say it ("implausible_aggregate: the aggregate speedup
 * 4.01x is above 1.5x"), "; "-joined; NULL when none.  Caller frees. */
char *live_implausible_words(const struct loop_run *r);
void live_clear_lines(struct wb_line **v, size_t *n);
/* Drop the per-shape numbers (a reload makes them stale). */
void live_free_shapes(struct app *a);

/* ---- live_run.c: the job the workbench runs (verify, noise, confirm) ------- */

int live_start_job(struct app *a, enum loop_job_kind kind, struct err *e);
int live_run_fds(struct app *a, int fds[2]);
int live_run_pump(struct app *a, struct err *e);
void live_run_cancel(struct app *a);
int live_run_end(struct app *a, struct err *e);

/* ---- live_wizards.c ------------------------------------------------------- */

int live_open_log_wizard(struct app *a, struct err *e);
int live_open_contract_wizard(struct app *a, struct err *e);
int live_open_stall_wizard(struct app *a, struct err *e);
int live_open_stop_wizard(struct app *a, struct err *e);
int live_submit_log(struct app *a, struct wizard *wz, struct err *e);
int live_submit_contract(struct app *a, struct wizard *wz, struct err *e);
int live_submit_stall(struct app *a, struct wizard *wz, struct err *e);
int live_submit_stop(struct app *a, struct wizard *wz, struct err *e);

/* ---- live_detail.c -------------------------------------------------------- */

/* The detail pane of row i; the per-shape numbers of the best. */
int live_detail(struct app *a, int i, struct err *e);
int live_shapes(struct app *a, struct err *e);

#endif
