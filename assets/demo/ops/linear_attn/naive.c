/*
 * naive.c — the reference for chunk_linear_attn_fwd: the causal sum taken
 * literally, one output token at a time, accumulated in double.
 *
 * Frozen scope: the correctness gate trusts this file.  Optimize chunk.c,
 * never this one.
 */
#include "linear_attn.h"

#include <stddef.h>
#include <stdlib.h>

void naive_linear_attn_fwd(const float *q, const float *k, const float *v, double *o,
			   int B, int T, int H, int D)
{
	size_t tok = (size_t)H * D; /* distance between consecutive tokens */
	double *acc = malloc((size_t)D * sizeof *acc);

	if (!acc)
		abort();
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++) {
			size_t base = (size_t)b * T * tok + (size_t)h * D;
			for (int t = 0; t < T; t++) {
				const float *qt = q + base + (size_t)t * tok;
				for (int d = 0; d < D; d++)
					acc[d] = 0.0;
				for (int s = 0; s <= t; s++) {
					const float *ks = k + base + (size_t)s * tok;
					const float *vs = v + base + (size_t)s * tok;
					double a = 0.0;
					for (int i = 0; i < D; i++)
						a += (double)qt[i] * (double)ks[i];
					for (int d = 0; d < D; d++)
						acc[d] += a * (double)vs[d];
				}
				double *ot = o + base + (size_t)t * tok;
				for (int d = 0; d < D; d++)
					ot[d] = acc[d];
			}
		}
	free(acc);
}
