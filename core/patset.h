/*
 * patset — named sets of PCRE2 patterns that tell the parser what a verify
 * harness prints.
 *
 * A set is a text file (assets/patterns/<name>.pat, or a workspace's own
 * patterns/<name>.pat; the format is documented in assets/patterns/README.md):
 * one "ROLE REGEX" per line, tried in file order, first match wins.  Every
 * pattern is compiled once, with the JIT where the platform allows it; a
 * loaded set is read-only and may be shared by any number of parsers.
 */
#ifndef OPTLOOP_PATSET_H
#define OPTLOOP_PATSET_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct patset;

/* Load a set.  name: "fla" (also when NULL), "kernelbench", another set's
 * name, or a path to a .pat file (anything with a '/').  A name is looked up
 * in extra_dir first (a workspace's own patterns/ folder; may be NULL), then
 * in the shipped assets/patterns/.  On success *out owns the set (free with
 * patset_free).  ERR_NOTFOUND when no such set exists, ERR_USAGE when the file
 * is malformed (the message names the line and what is wrong with it). */
int patset_load(const char *name, const char *extra_dir, struct patset **out, struct err *e);

/* Parse set text directly (what patset_load does after reading the file).
 * origin names the text in messages. */
int patset_load_text(const char *text, size_t len, const char *origin, const char *extra_dir,
		     struct patset **out, struct err *e);

void patset_free(struct patset *ps);

/* The set's @name (or the file's base name); owned by the set. */
const char *patset_name(const struct patset *ps);
/* Number of line patterns, and whether all of them got JIT code. */
size_t patset_count(const struct patset *ps);

#endif
