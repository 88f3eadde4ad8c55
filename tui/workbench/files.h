/*
 * files — TRAPS.md and dispatch.md read from a directory for the panes,
 * shared by the read-only viewer and the live workspace.  What cannot be
 * read is added to the notes with file and line.
 */
#ifndef OPTLOOP_WORKBENCH_FILES_H
#define OPTLOOP_WORKBENCH_FILES_H

#include "core/model.h"

struct wb_data;

struct ws_files {
	struct traps_doc traps;
	struct dispatch_doc disp;
};

/* Read dir/TRAPS.md and dir/dispatch.md when present (absent files leave
 * the panes empty), point d's traps and dispatch at them, and append
 * problems to d->notes.  Release with ws_files_release. */
void ws_files_load(struct ws_files *f, const char *dir, struct wb_data *d);
void ws_files_release(struct ws_files *f);
/* Append a note line to d. */
void ws_note(struct wb_data *d, int role, const char *text);

#endif
