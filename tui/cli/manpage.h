/*
 * manpage — optloop(1) made from the README's command reference, the
 * commands' option tables and the workbench's key table, into the prose of
 * assets/man/optloop.1.in (see manpage.c).
 */
#ifndef OPTLOOP_MANPAGE_H
#define OPTLOOP_MANPAGE_H

#include <stdio.h>

struct err;
struct sb;

/* Write the page to f.  missing receives the commands the README's table
 * lacks (space-separated; they get commands.h's line instead). */
int manpage_print(FILE *f, const char *readme, const char *tmpl, struct sb *missing,
		  struct err *e);

#endif
