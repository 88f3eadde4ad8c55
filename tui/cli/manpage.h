/*
 * manpage — optloop(1) made from the command reference
 * (assets/man/commands.md), the commands' option tables and the workbench's
 * key table, into the prose of assets/man/optloop.1.in (see manpage.c).
 */
#ifndef OPTLOOP_MANPAGE_H
#define OPTLOOP_MANPAGE_H

#include <stdio.h>

struct err;
struct sb;

/* Write the page to f.  missing receives the commands the reference's table
 * lacks (space-separated; they get the command table's line instead). */
int manpage_print(FILE *f, const char *reference, const char *tmpl, struct sb *missing,
		  struct err *e);

#endif
