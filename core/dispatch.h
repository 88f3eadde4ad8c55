/*
 * dispatch — dispatch.md: which entry point serves which bucket of shapes,
 * with the measurements that justify each choice.
 *
 * The table is `Bucket condition | Entry point chosen | Baseline ms |
 * Candidate ms | Speedup | Why this path`.  Every row cites the iterations
 * that measured its bucket; the citation is written at the end of the Why
 * cell as "(iters 3, 5)" (an extra `Evidence` column is read too).  Text
 * before and after the table is kept as written.
 */
#ifndef OPTLOOP_DISPATCH_H
#define OPTLOOP_DISPATCH_H

#include "core/model.h"

#include <stdbool.h>
#include <stddef.h>

struct contract_shape;
struct err;
struct parse_row;
struct sb;

/* Read an iteration list: "3,5", "3, 5", "iters 3 and 5", "#3 #5", "3-5".
 * *iters is malloc'd, sorted, without duplicates (caller frees).  ERR_USAGE
 * when nothing or something other than iteration numbers is given. */
int dispatch_evidence_parse(const char *s, int **iters, size_t *n, struct err *e);

/* Checks that need no database: bucket and entry present, evidence cited
 * and readable, candidate and baseline numbers positive when given.
 * ERR_USAGE with what is missing. */
int dispatch_row_check(const struct dispatch_row *r, struct err *e);

/* Append a copy of r (speedup filled from the two timings when NAN). */
void dispatch_doc_add(struct dispatch_doc *d, const struct dispatch_row *r);

/* A bucket condition read as a test on measured shapes: comparisons
 * ("T <= 1024", "D = 64 and T > 512", "T ≥ 4096"), all of which must hold,
 * or else the shapes it names ("B4_T2048_H16_D128", "T=2048 H=16", as a
 * Target names them), any of which may match. */
#define DISPATCH_CMP_MAX 8
struct dispatch_bucket {
	struct {
		int dim;  /* 0..4: B T H D L */
		int op;   /* '<', '>', 'l' (<=), 'g' (>=), '=' */
		long v;
	} cmp[DISPATCH_CMP_MAX];
	size_t ncmp;
	struct contract_shape *shapes;
	size_t nshapes;
};
/* ERR_USAGE when the text holds neither comparisons nor shapes. */
int dispatch_bucket_parse(const char *text, struct dispatch_bucket *b, struct err *e);
bool dispatch_bucket_matches(const struct dispatch_bucket *b, const struct parse_row *r);
void dispatch_bucket_release(struct dispatch_bucket *b);


#endif
