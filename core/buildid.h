/*
 * buildid — which build of optloop this process is: the GNU build id the
 * linker wrote into the program (-Wl,--build-id), as hex.  What optloop
 * keeps of its own judgments is keyed by it, so a build that judges
 * differently never reads another's.
 */
#ifndef OPTLOOP_BUILDID_H
#define OPTLOOP_BUILDID_H

/* The running program's build id ("64a7…"), or NULL when it has none. */
const char *build_id(void);

#endif
