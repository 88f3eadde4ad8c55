/*
 * linear_attn.h — causal linear attention, forward pass.
 *
 *   o_t = sum over s <= t of (q_t . k_s) v_s
 *
 * Tensors are float32 in [B, T, H, D] layout (batch, time, head, head dim),
 * contiguous: element (b, t, h, d) lives at ((b*T + t)*H + h)*D + d.
 * Offsets are computed in size_t: a big shape must not overflow an int.
 */
#ifndef DEMO_LINEAR_ATTN_H
#define DEMO_LINEAR_ATTN_H

/* The kernel under optimization (ops/linear_attn/chunk.c).  Writes every
 * element of o; q, k, v are read only.  Tensors never alias. */
void chunk_linear_attn_fwd(const float *q, const float *k, const float *v, float *o,
			   int B, int T, int H, int D);

/* The naive reference (ops/linear_attn/naive.c): the direct O(T^2) sum
 * accumulated in double.  Frozen: the gate compares the kernel against it. */
void naive_linear_attn_fwd(const float *q, const float *k, const float *v, double *o,
			   int B, int T, int H, int D);

#endif
