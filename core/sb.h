/*
 * sb — a growable, always NUL-terminated byte string.
 *
 * The struct owns its buffer; sb_release() frees it and leaves an empty
 * string.  Allocation failure aborts through BUG(): optloop's buffers are
 * small and bounded, and a half-built message is worse than a clean stop.
 */
#ifndef OPTLOOP_SB_H
#define OPTLOOP_SB_H

#include <stdarg.h>
#include <stddef.h>

struct sb {
	char *buf; /* never NULL after sb_init; "" when empty */
	size_t len;
	size_t cap;
};

#define SB_INIT {0}

void sb_init(struct sb *s);
void sb_release(struct sb *s);
void sb_reset(struct sb *s); /* length 0, keeps the allocation */
void sb_grow(struct sb *s, size_t extra);
void sb_add(struct sb *s, const void *data, size_t n);
void sb_adds(struct sb *s, const char *str);
void sb_addc(struct sb *s, char c);
void sb_addf(struct sb *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(struct sb *s, const char *fmt, va_list ap);
void sb_trim(struct sb *s); /* strip leading and trailing white space */
/* Hand the buffer to the caller (free() it); s becomes empty. */
char *sb_detach(struct sb *s);
const char *sb_str(const struct sb *s); /* "" for an untouched SB_INIT */

/* qsort / bsearch comparator for an array of strings (char *). */
int strp_cmp(const void *a, const void *b);

/* strdup that aborts on allocation failure; NULL in, NULL out. */
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
