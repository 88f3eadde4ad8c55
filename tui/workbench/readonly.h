/*
 * readonly — the read-only backend over an OPT_LOG.md file (optloop view).
 */
#ifndef OPTLOOP_WORKBENCH_READONLY_H
#define OPTLOOP_WORKBENCH_READONLY_H

#include <stdbool.h>

struct app;
struct err;

/* Set up *a to show the log at path (read when the app runs).  The app
 * owns the backend data; app_release() frees it. */
/* path: an OPT_LOG.md, or a workspace folder holding one; follow: the
 * panes follow the files as they change (else a snapshot). */
int ws_view_open(struct app *a, const char *path, bool follow, struct err *e);

#endif
