/*
 * vis — text as it is stored, made safe and visible on a terminal.
 *
 * A command, a direction or a probe read from a file or the environment can
 * hold an escape sequence, a carriage return or a bidirectional control
 * that makes a terminal show something other than what will run (`verify:
 * ./verify` while a hidden `touch` runs).  The views drop such bytes
 * (views/sanitize); where the exact text matters (a command the user is
 * asked to trust, a file name) vis_escape spells them out instead.  Text the
 * user chooses (a row's direction, a trap, a command optloop runs) is
 * refused with such a character in it (vis_check); a name the user did not
 * choose (a file in the repository) is shown spelled out, and shell-quoted
 * where a command to paste names it (vis_shell_word).
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

struct err;

/* Refuse text that vis_escape would spell out, but the C0 controls in keep
 * (may be NULL; "\t\n": the text keeps its tabs and lines): ERR_USAGE,
 * naming the character and its byte (1-based): "NAME holds a control
 * character (ESC, at byte 6), WHY; FIX", "NAME holds a bidirectional
 * control character (U+202E, at byte 6), which makes a terminal show the
 * text in another order than it is stored; FIX", "NAME is not valid UTF-8
 * (byte 0xff at byte 6); ...".  0 when there is none. */
int vis_check(const char *name, const char *s, const char *keep, const char *why,
	      const char *fix, struct err *e);

/* Append s as one word for /bin/sh, to be printed in a command the user may
 * paste: bare when it needs no quotes, in '...' when it holds nothing a
 * terminal acts on, else as "$(printf '...')" with those bytes in octal
 * (\033), so that neither the terminal nor the shell acts on any of them
 * and pasting gives the name back (but a trailing line break, which $(...)
 * drops). */
void vis_shell_word(const char *s, struct sb *out);

#endif
