/*
 * assets — where optloop's shipped files (pattern sets, templates, the
 * demo project, themes) live.
 *
 * Looked up once: $OPTLOOP_ASSETS, then <exe>/../share/optloop/assets (an
 * installed tree), then an assets/ folder beside the executable or up to two
 * levels above it (a build tree).
 */
#ifndef OPTLOOP_ASSETS_H
#define OPTLOOP_ASSETS_H

struct err;

/* The assets directory; static storage, valid for the process lifetime.
 * NULL with *e filled when none is found. */
const char *assets_dir(struct err *e);

/* assets_dir()/rel, caller frees; NULL with *e filled when no assets dir. */
char *assets_path(const char *rel, struct err *e);

#endif
