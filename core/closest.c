/*
 * closest — the did-you-mean of words.  See closest.h.
 */
#include "core/closest.h"

#include <string.h>

size_t closest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return (size_t)-1;
	size_t row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

const char *closest_word(const char *word, const char *const *names)
{
	const char *best = NULL;
	size_t bd = (size_t)-1;
	for (size_t i = 0; names[i]; i++) {
		size_t d = closest_distance(word, names[i]);
		if (d < bd) {
			bd = d;
			best = names[i];
		}
	}
	size_t len = strlen(word), room = len / 3 ? len / 3 : 1;
	return best && bd <= room ? best : NULL;
}
