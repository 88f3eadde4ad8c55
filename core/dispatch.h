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

#include <stddef.h>

struct err;
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


#endif
