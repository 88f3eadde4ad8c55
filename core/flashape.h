/*
 * flashape — the shapes an FLA op's benchmark runs, read from the text of
 * benchmarks/ops/registry.py, and the shape names a contract's Target uses.
 *
 * FLA's benchmark runs an op's own default_shapes when its OpConfig has
 * them (parallel_nsa's B1_T8K_H1_HQ32_D128_S16, fused_attnres's
 * L8_B1_T8K_D2K), else the global SHAPE_CONFIGS; each is a dict of named
 * dicts of dimensions.  A name is only a label (L32_B1_T8K_D2K runs L=64,
 * D=8192): the dimensions are the values, and the result table prints B,
 * T, H, D and L.
 */
#ifndef OPTLOOP_FLASHAPE_H
#define OPTLOOP_FLASHAPE_H

#include <stddef.h>

struct fla_shape {
	char *name;          /* the dict key, "B4_T4096_H64_D128" */
	long B, T, H, D, L;  /* -1: not given (or not a plain number) */
};

/* The entries of the dict named var in a registry text (var = { 'NAME':
 * {'B': 1, ...}, ... } at the start of a line), or of the dict literal var
 * itself when it starts with '{'.  *out malloc'd (NULL when none); free
 * with flashape_free.  Returns how many. */
size_t flashape_parse(const char *text, const char *var, struct fla_shape **out);
void flashape_free(struct fla_shape *v, size_t n);

/* The words of text shaped like a shape name: two parts or more joined by
 * '_', each letters and a number with an optional K or M
 * (B4_T4096_H64_D128, b4_t4096_h64_d128, L8_B1_T8K_D2K, ..._D128_X9), two
 * of them a dimension (B, T, H, D, L, any case).  *out malloc'd, each word
 * too (free each and it).  Returns how many. */
size_t flashape_names_in(const char *text, char ***out);

/* "B=1 T=8192 H=1 D=128 L=8": the shape's dimensions as a Target spells
 * them (caller frees). */
char *flashape_dims(const struct fla_shape *s);

#endif
