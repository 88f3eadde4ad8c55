/*
 * fault — named crash points for the crash-safety tests.
 *
 * fault_point("log.after_db") kills the process with SIGKILL when the
 * environment variable OPTLOOP_FAULT names that point.  Every write step of
 * log and commit calls one, so the tests can stop optloop between any two
 * writes and check that a restart loses nothing.  "NAME:stop" stops the
 * process there instead (SIGSTOP), so a test can look at a live writer in
 * the middle of a move and then let it go on (SIGCONT).
 */
#ifndef OPTLOOP_FAULT_H
#define OPTLOOP_FAULT_H

void fault_point(const char *name);

#endif
