/*
 * closest — the did-you-mean of the command line and of op names: the word
 * among a list that a mistyped word was most likely meant to be.
 */
#ifndef OPTLOOP_CLOSEST_H
#define OPTLOOP_CLOSEST_H

#include <stddef.h>

/* Edit distance (insertions, deletions, substitutions) between a and b;
 * (size_t)-1 for words longer than 63 bytes. */
size_t closest_distance(const char *a, const char *b);

/* The closest of names (ended by NULL) to word, when it is close enough to
 * be what was meant: an edit distance of at most a third of word's length,
 * at least 1.  NULL otherwise. */
const char *closest_word(const char *word, const char *const *names);

#endif
