/*
 * ws_view — the read-only backend over an OPT_LOG.md file (optloop view).
 */
#ifndef OPTLOOP_WS_VIEW_H
#define OPTLOOP_WS_VIEW_H

struct app;
struct err;

/* Set up *a to show the log at path (read when the app runs).  The app
 * owns the backend data; app_release() frees it. */
int ws_view_open(struct app *a, const char *path, struct err *e);

#endif
