/*
 * passlog — what the workbench measured of itself, written where
 * OPTLOOP_PASS_LOG names a file (the benchmarks and the TUI tests read it):
 * the first frame's time and CPU, each pass of the main loop, and for a
 * long log (its first frame from the newest rows) when every row was read
 * and a hash of the terminal in both frames.
 */
#ifndef OPTLOOP_PASSLOG_H
#define OPTLOOP_PASSLOG_H

#include <stdint.h>
#include <stdio.h>

struct pass_log {
	double first_frame, first_frame_cpu;
	double rows_whole; /* when a long log's older rows were read (0: none left out) */
	/* what the terminal showed in the first frame and in the frame after
	 * the older rows were read: the same, where the first frame is right */
	uint64_t first_screen, whole_screen;
	FILE *f;
	double *v;
	size_t n, cap;
};

/* Open the file OPTLOOP_PASS_LOG names, if it names one. */
void pass_log_open(struct pass_log *pl);
/* A frame is on the terminal, `at` seconds after the start: the first
 * one's time, CPU and screen; the first after the older rows were read,
 * its screen. */
void pass_log_frame(struct pass_log *pl, double at);
/* One more pass of the main loop, of secs seconds. */
void pass_log_pass(struct pass_log *pl, double secs);
/* Write the figures and close (nothing when no file was opened). */
void pass_log_write(struct pass_log *pl);

#endif
