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

struct dispatch_doc {
	char *preamble;  /* text before the table, "" when none */
	char *after;     /* text after the table, "" when none */
	struct dispatch_row *v;
	size_t n;
};

struct dispatch_problem {
	int lineno;
	char *msg;
};

struct dispatch_problems {
	struct dispatch_problem *v;
	size_t n;
};

/* Parse dispatch.md (caller releases d with dispatch_doc_release).  A file
 * without a table is an empty document, not an error; rows it cannot read
 * are listed in probs (may be NULL) with line numbers.  Rows keep their
 * evidence normalised ("3,5"), NULL when none is cited. */
int dispatch_parse(const char *text, size_t len, struct dispatch_doc *d,
		   struct dispatch_problems *probs, struct err *e);

/* Append the whole file text (preamble, table, after) to out. */
void dispatch_render(const struct dispatch_doc *d, struct sb *out);

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

void dispatch_doc_release(struct dispatch_doc *d);
void dispatch_problems_release(struct dispatch_problems *p);

#endif
