/*
 * sanitize — the one gate between untrusted text and the screen.
 *
 * Child output, file contents and commit messages pass through here before
 * any view draws them: escape sequences (CSI, OSC, DCS, SOS, PM, APC and the
 * short ESC forms, in both their 7-bit and C1 spellings) are removed, C0 and
 * C1 control characters dropped, invalid UTF-8 replaced, Unicode bidi
 * overrides removed, width measured with wcwidth and text cut to a cell
 * width.  When the locale is not UTF-8 everything outside printable ASCII
 * becomes '?', so the terminal never receives a byte it could misread.
 */
#ifndef OPTLOOP_SANITIZE_H
#define OPTLOOP_SANITIZE_H

#include <stdbool.h>
#include <stddef.h>

struct sb;

/* Decide UTF-8 or ASCII output from the current LC_CTYPE (call after
 * setlocale).  Returns true when output is UTF-8. */
bool sanitize_init(void);
/* Force a mode (tests, and the ASCII fallback). */
void sanitize_set_ascii(bool ascii);
bool sanitize_is_ascii(void);

/* Append the clean form of in[0..len) to out.  A carriage return discards
 * what came before it on the line (progress-bar redraws); a newline becomes
 * a space; a tab expands to the next multiple of 8 cells.  Returns the
 * width of the appended text in cells. */
int sanitize_line(const char *in, size_t len, struct sb *out);

/* Like sanitize_line, but at most `cells` columns wide: when the text is
 * longer it is cut and ends with an ellipsis ("…", or "~" in ASCII mode).
 * A double-width character that would straddle the edge is left out.
 * Returns the width used (never more than cells; 0 when cells <= 0). */
int sanitize_fit(const char *in, size_t len, int cells, struct sb *out);

/* Width in cells of text that is already clean (from sanitize_*). */
int sanitize_width(const char *clean, size_t len);
/* Width of the one clean character at clean[0..len); its byte length
 * (with nothing of the next character) in *n. */
int sanitize_char_width(const char *clean, size_t len, size_t *n);
/* Append clean text without its first `skip` cells (horizontal scroll); a
 * double-width character cut by that edge becomes a space.  Returns the
 * width appended. */
int sanitize_skip(const char *clean, size_t len, int skip, struct sb *out);

/* Append clean text padded with spaces (or cut) to exactly `cells` columns;
 * right-aligned when right is true.  Used for table cells. */
void sanitize_cell(const char *in, int cells, bool right, struct sb *out);

#endif
