/*
 * loop_core — what core's own modules outside the loop see of an open
 * loop: its workspace.  The front-ends never include this; they have
 * core/loop.h.
 */
#ifndef OPTLOOP_LOOP_CORE_H
#define OPTLOOP_LOOP_CORE_H

#include "core/loop.h"

/* The open loop's workspace (core/workspace.h): its paths, store,
 * repository, scopes and contract snapshot, borrowed until loop_close.  The
 * one door into an open loop for the core modules that follow it from
 * outside (watch.c). */
struct workspace;
const struct workspace *loop_workspace(const struct loop *l);

#endif
