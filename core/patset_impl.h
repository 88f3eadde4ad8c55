/*
 * patset_impl — the inside of a loaded pattern set, shared by patset.c (which
 * builds it) and parse.c (which runs it).  Nothing outside core/ includes this.
 */
#ifndef OPTLOOP_PATSET_IMPL_H
#define OPTLOOP_PATSET_IMPL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/model.h"

#include <stdbool.h>
#include <stddef.h>

/* What a matching line means.  The names in patset.c's role table are the
 * words used in .pat files. */
enum pat_role {
	ROLE_IGNORE,       /* an ordinary line; stops the search */
	ROLE_BANNER,       /* gate banner: test, k (subset when set) */
	ROLE_PASS,         /* explicit gate-passed line */
	ROLE_FAIL,         /* gate-failed line */
	ROLE_MISSING,      /* the gate's test could not be found: harness error */
	ROLE_NOGATE,       /* the gate was skipped on purpose */
	ROLE_CASE,         /* one test case: outcome, name, pct */
	ROLE_DOTS,         /* pytest -q progress: dots, pct */
	ROLE_PROGRESS,     /* progress only: pct */
	ROLE_SUMMARY,      /* pytest summary: counts */
	ROLE_ENV,          /* environment line: fields ("a | b | c") */
	ROLE_TABLE_HEADER, /* mode, L, cols */
	ROLE_TABLE_ROW,    /* dims, op, vals (only inside a table) */
	ROLE_TABLE_RULE,   /* ==== / ---- lines (only inside a table) */
	ROLE_FIELD,        /* one value of a key/value result: B T H D L op mode base_ms new_ms speedup */
	ROLE_WARNING,      /* harness warning: msg (else the whole line) */
	ROLE_TRACEBACK,    /* start of a Python traceback */
	ROLE_STAGE,        /* a phase of the run starts (benchmark warm-up): stage, pct */
	ROLE_LINE_N,
	/* Field roles: tried on each " | " field of an environment line. */
	ROLE_ENV_DEVICE = ROLE_LINE_N,
	ROLE_ENV_BACKEND,
	ROLE_ENV_PYTORCH,
	ROLE_ENV_TRITON,
	ROLE_ENV_LABEL, /* branch, sha */
	ROLE_N,
};

/* Named capture groups the parser reads. */
enum pat_group {
	G_TEST,
	G_K,
	G_NAME,
	G_OUTCOME,
	G_PCT,
	G_DOTS,
	G_COUNTS,
	G_FIELDS,
	G_MODE,
	G_L,
	G_COLS,
	G_DIMS,
	G_OP,
	G_VALS,
	G_MSG,
	G_V,
	G_BRANCH,
	G_SHA,
	G_B,
	G_T,
	G_H,
	G_D,
	G_BASE_MS,
	G_NEW_MS,
	G_SPEEDUP,
	G_STAGE,
	G_N,
};

struct pat {
	enum pat_role role;
	pcre2_code *re;
	bool jit;
	int grp[G_N]; /* capture group number, -1 when the pattern has none */
	int lineno;
	char *origin; /* file the pattern came from */
	char *src;    /* the regular expression as written (may hold NULs) */
	size_t src_len;
	bool anchored; /* can only match at the start of the line */
	uint32_t cbase[2]; /* its group k is group cbase[t] + k of combo[t] */
};

/* All line patterns in one anchored alternation, each alternative tagged
 * (*MARK:<index>): one JIT call finds which pattern matches first, in file
 * order, and only that pattern is run again for its groups.  One per table
 * state, since table rows and rules count only inside a table. */
struct patcombo {
	pcre2_code *re;
	bool jit;
	uint32_t pairs;
};

struct patset {
	char *name;
	char *description;
	enum gate_scope default_scope; /* scope of a verdict seen without banner */
	struct pat *pats;              /* line roles first-match order, then field roles */
	size_t npats;
	size_t nline; /* pats[0..nline) are line roles */
	uint32_t max_pairs; /* largest ovector any pattern needs */
	bool all_jit;
	bool combined;              /* combo[] is usable (no back-references anywhere) */
	struct patcombo combo[2];   /* [0] outside a table, [1] inside */
};

#endif
