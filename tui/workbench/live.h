/*
 * live — the live backend: the workspace found from the current
 * directory, through the engine (optloop tui).
 */
#ifndef OPTLOOP_WORKBENCH_LIVE_H
#define OPTLOOP_WORKBENCH_LIVE_H

struct app;
struct err;

/* Open the workspace (op picks one when there are several) and set up *a
 * around it.  The app owns it; app_release() closes it. */
int ws_loop_open(struct app *a, const char *op, struct err *e);

#endif
