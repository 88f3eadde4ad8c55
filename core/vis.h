/*
 * vis — text as it is stored, made safe and visible on a terminal.
 *
 * A command, a direction or a probe read from a file or the environment can
 * hold an escape sequence, a carriage return or a bidirectional control
 * that makes a terminal show something other than what will run (`verify:
 * ./verify` while a hidden `touch` runs).  The views drop such bytes
 * (views/sanitize); where the exact text matters (a command the user is
 * asked to trust) vis_escape spells them out instead.
 */
#ifndef OPTLOOP_VIS_H
#define OPTLOOP_VIS_H

#include <stdbool.h>
#include <stddef.h>

struct sb;

/* The length of the valid UTF-8 sequence at p (1..4), 0 when there is none
 * (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF,
 * or a sequence cut short by the terminating NUL). */
size_t vis_utf8_len(const unsigned char *p);

/* Is the n-byte sequence at p a bidirectional control (U+061C, U+200E/F,
 * U+202A..U+202E, U+2066..U+2069)? */
bool vis_is_bidi(const unsigned char *p, size_t n);

/* Append s to out with every byte a terminal would act on spelled out:
 * \t \r \n and \e, other C0 controls and DEL as \xNN, C1 controls and
 * bidirectional controls as \uNNNN, bytes that are not UTF-8 as \xNN.
 * Plain text (any printable UTF-8) is appended as it is.  Returns true
 * when something was spelled out. */
bool vis_escape(const char *s, struct sb *out);

#endif
