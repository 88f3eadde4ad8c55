/*
 * term — the terminal while curses owns it: setup and teardown, stderr
 * parked in a temporary file and replayed on exit (so a library's message
 * never scribbles over the screen), and the signals that end a session
 * (hang-up, terminate) and a resize (after curses has noted it) turned into
 * readable events on a self-pipe, so a busy main loop never misses one.
 */
#ifndef OPTLOOP_TERM_H
#define OPTLOOP_TERM_H

#include <stdbool.h>
#include <stddef.h>

struct err;

enum term_signal { TSIG_NONE, TSIG_HUP, TSIG_TERM, TSIG_WINCH };

/* Start curses on the process's terminal.  Fails (ERR_USAGE) when stdin or
 * stdout is not a terminal.  colour follows NO_COLOR and the terminal. */
int term_start(struct err *e);
/* Restore the terminal and replay parked stderr; safe to call twice. */
void term_stop(void);
/* Descriptor to poll for signal events; term_take_signal() reads one. */
int term_signal_fd(void);
enum term_signal term_take_signal(void);
/* Hand the terminal to a program (an editor) until it exits, as tig and
 * lazygit do: curses is suspended (def_prog_mode, endwin), /bin/sh -c
 * runs `cmd "$@"` with the nargs args as "$@" in dir, stderr its own again, SIGINT
 * and SIGQUIT left to it; then the screen is restored (the caller redraws
 * everything).  *status gets its exit status (128+N when a signal ended
 * it); <0 with e when it could not be started. */
int term_run_child(const char *cmd, const char *dir, char *const *args, size_t nargs, int *status,
		   struct err *e);
/* The terminal is gone: never touch it again (endwin would block or fail). */
void term_lost(void);

#endif
