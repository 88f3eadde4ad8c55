/*
 * chunk.c — chunked causal linear attention, forward pass.  This is the
 * kernel to optimize.
 *
 * The sequence is cut into chunks of CHUNK_SIZE tokens.  Inside a chunk the
 * causal part is computed directly; everything before the chunk is folded
 * into a D x D state S = sum of k_s v_s^T over earlier tokens, so
 *
 *   o_t = q_t S  +  sum over s in [chunk start, t] of (q_t . k_s) v_s
 *
 * and S is carried from chunk to chunk.  The last chunk may be ragged.
 *
 * This first version is written for clarity, not speed: the loop orders
 * walk memory with large strides and leave the compiler little it can
 * vectorize.
 */
#include "linear_attn.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Tokens per chunk.  A tuning knob: any value >= 1 is correct. */
#define CHUNK_SIZE 64

void chunk_linear_attn_fwd(const float *q, const float *k, const float *v, float *o,
			   int B, int T, int H, int D)
{
	size_t tok = (size_t)H * D; /* distance between consecutive tokens */
	float *S = malloc((size_t)D * D * sizeof *S); /* S[i*D + j] */

	if (!S)
		return;
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++) {
			size_t base = (size_t)b * T * tok + (size_t)h * D;
			const float *qb = q + base, *kb = k + base, *vb = v + base;
			float *ob = o + base;

			memset(S, 0, (size_t)D * D * sizeof *S);
			for (int t0 = 0; t0 < T; t0 += CHUNK_SIZE) {
				int t1 = t0 + CHUNK_SIZE < T ? t0 + CHUNK_SIZE : T;

				for (int t = t0; t < t1; t++) {
					const float *qt = qb + (size_t)t * tok;
					float *ot = ob + (size_t)t * tok;

					/* inter-chunk: o_t = q_t S, one output column at a time */
					for (int j = 0; j < D; j++) {
						float acc = 0.0f;
						for (int i = 0; i < D; i++)
							acc += qt[i] * S[(size_t)i * D + j];
						ot[j] = acc;
					}
					/* intra-chunk: the causal part inside this chunk */
					for (int s = t0; s <= t; s++) {
						const float *ks = kb + (size_t)s * tok;
						const float *vs = vb + (size_t)s * tok;
						float a = 0.0f;
						for (int i = 0; i < D; i++)
							a += qt[i] * ks[i];
						for (int j = 0; j < D; j++)
							ot[j] += a * vs[j];
					}
				}
				/* carry the state: S += sum over the chunk of k_s v_s^T */
				for (int i = 0; i < D; i++)
					for (int j = 0; j < D; j++) {
						float acc = 0.0f;
						for (int s = t0; s < t1; s++)
							acc += kb[(size_t)s * tok + i] * vb[(size_t)s * tok + j];
						S[(size_t)i * D + j] += acc;
					}
			}
		}
	free(S);
}
