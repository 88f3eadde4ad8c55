/* hash — see hash.h. */
#include "core/hash.h"

#include <string.h>

uint64_t hash64(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n, w;

	/* a word at a time: each step is a bijection of h for a given word,
	 * so a change to any one word always changes the hash */
	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}
