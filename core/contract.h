/*
 * contract — the task contract in docs/draft.md: read it, rewrite one
 * field, say what is missing, and write a new one from the template.
 *
 * The file is Markdown a person edits.  Each field is a section,
 *
 *   ## Validation command
 *
 *   ```sh
 *   python -m benchmarks.ops.verify --op chunk_gla
 *   ```
 *
 * or, anywhere outside a field's section, one line such as
 * `- **Validation command:** python -m ...` or `Validation: python -m ...`.
 * Headings and keys are matched by meaning, in any case ("Op and entry
 * point", "Entry point", "Verify command", "Frozen files", ...).  HTML
 * comments are hints, not values; a value that is only `TODO`, `TBD` or
 * `...` counts as empty; a value that is one fenced block or one `code`
 * span is unwrapped.
 */
#ifndef OPTLOOP_CONTRACT_H
#define OPTLOOP_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>

struct err;
struct sb;

enum contract_field {
	CF_OP,
	CF_TARGET,
	CF_LANGUAGES,
	CF_VALIDATION,
	CF_BENCHMARK,
	CF_PROMOTION,
	CF_FROZEN,
	CF_NFIELDS, /* the seven required fields come before this */
};

/* The optional fields, settable by name like the others. */
enum { CF_CAP = CF_NFIELDS, CF_THRESHOLD, CF_RUNNER, CF_PEAK, CF_COST, CF_ALL };

struct contract {
	char *v[CF_NFIELDS]; /* NULL when empty */
	int cap;             /* optional "Iteration cap", 0 when unset */
	double threshold;    /* optional win threshold fraction, 0.03 default */
	char *runner;        /* optional "Runner": where runs go (core/slurm.h);
			      * NULL: local */
	char *peak;          /* optional "Peak": the device's peaks, a row of
			      * assets/peaks.tsv or figures (core/roofline.h) */
	char *cost;          /* optional "Cost": the op's cost model (core/roofline.h) */
	char *target_shapes; /* the Target with the op's benchmark shape names
			      * spelled as their dimensions (loop_load_contract);
			      * NULL: read it as written */
};

/* The Target as its shapes are matched with measured ones: target_shapes
 * when set, else the Target as written (borrowed; NULL when empty). */
const char *contract_target_text(const struct contract *c);

/* "op", "target", "languages", "validation", "benchmark", "promotion",
 * "frozen", "cap", "threshold", "runner", "peak", "cost" (static strings). */
const char *contract_field_name(enum contract_field f);
/* The section heading optloop writes: "Op and entry point", ... */
const char *contract_field_heading(int f);
/* Field index (0..CF_ALL-1) for a name given on the command line; a few
 * synonyms are accepted ("verify", "bench", "iteration-cap").  -1 when unknown. */
int contract_field_parse(const char *name);

/* Read the contract.  *c is overwritten (release it afterwards, also on
 * error).  Returns 0, or ERR_USAGE with *e explaining when the iteration cap,
 * the win threshold, the Runner or the Cost is written but unreadable (every
 * other field is still filled). */
int contract_parse(const char *text, size_t len, struct contract *c, struct err *e);

/* Rewrite one field (name as for contract_field_parse) in text, keeping
 * everything else byte for byte, into out (appended).  A field that is not
 * there yet is added as a new section at the end.  An empty value clears the
 * field.  ERR_USAGE for an unknown field or an unreadable cap/threshold. */
int contract_set(const char *text, size_t len, const char *field, const char *value,
		 struct sb *out, struct err *e);

/* Number of required fields missing; each is explained on its own line in
 * why (may be NULL), with the command that sets it. */
int contract_missing(const struct contract *c, struct sb *why);

void contract_release(struct contract *c);

/* The hint the contract gives for a field (0..CF_ALL-1): the text of the
 * HTML comments in its section of text, white space collapsed ("required:
 * the op's name and the function the benchmark calls, e.g. chunk_gla —
 * fla.ops.gla.chunk_gla"), or the template's (assets/templates/draft.md)
 * when text has none for it.  Caller frees; NULL when neither has one. */
char *contract_hint(const char *text, size_t len, int field);

/* Template text for a new workspace: assets/templates/draft.md with the
 * fields of c that are set filled in (c may be NULL).  Appends to out. */
int contract_template(const struct contract *c, struct sb *out, struct err *e);

/* Split a list-like value (one item per line or comma separated, Markdown
 * list marks and `code` marks removed) into items.  *items is a malloc'd
 * array of malloc'd strings; free with contract_list_free.  Returns n. */
size_t contract_list_items(const char *value, char ***items);
void contract_list_free(char **items, size_t n);

/* Parse an iteration cap ("20", "20 iterations") or a win threshold ("3%",
 * "0.03", "3"); 0 when readable, ERR_USAGE when not.  Empty reads as unset
 * (0, or the default threshold). */
int contract_parse_cap(const char *s, int *cap);
int contract_parse_threshold(const char *s, double *frac);

/* ---- the shapes the Target names ----
 *
 * The Target is free text.  A shape in it is spelled "B8-T8192-H16-D64"
 * or the registry's way "B4_T4096_H64_D128"
 * (compact: upper-case letters, three dimensions or more, so GPU names
 * like H100 or B200 are never read as shapes), "B=8 T=4096 H=16 D=128"
 * (any case, one dimension is enough), or as optloop prints a measured
 * shape, "fwd B=4 T=2048 H=16 D=64 chunk_linear_attn".  Dimensions are
 * B, T, H, D and L, separated by spaces, commas or dashes; a dimension
 * that repeats starts the next shape.  A mode word (fwd, bwd, fwdbwd)
 * right before a shape belongs to that shape; mode words elsewhere apply
 * to every shape without its own, one target shape per mode. */
struct contract_shape {
	char *mode;          /* NULL: any mode */
	long B, T, H, D, L;  /* -1: any value */
};

/* The target shapes of a Target text (NULL reads as none), in the order
 * written, without repeats.  *out is malloc'd (NULL when there are none);
 * free with contract_shapes_free.  Returns how many. */
size_t contract_target_shapes(const char *target, struct contract_shape **out);
void contract_shapes_free(struct contract_shape *v, size_t n);
/* "fwd B=8 T=4096 H=16 D=128": the measured keys' spelling without an op
 * (caller frees). */
char *contract_shape_name(const struct contract_shape *s);
/* Does a measured shape key (measure_shape_key: mode first, "-" for none,
 * then B= T= H= D= L=, then the op) fall under the target shape? */
bool contract_shape_matches(const struct contract_shape *s, const char *key);

/* ---- the speedup the Target asks for ----
 *
 * "1.5x" / "1.5×" / "1.5 times" is a factor; "3 %" or "3% speedup" is a
 * factor of 1.03.  The scope: "geomean" / "geometric mean" asks it of the
 * equal-weight geomean; "every", "each", "all" or "per shape" of every
 * shape (the named ones when the Target names shapes); named shapes
 * without one of those words mean every named shape. */
enum target_scope { TARGET_EVERY, TARGET_GEOMEAN };
struct contract_target {
	double speedup;          /* factor over the baseline, e.g. 1.5 */
	enum target_scope scope;
};
/* 0 when the Target says both; ERR_FAIL (with why in e) when it cannot be
 * read, naming the form that can.  A factor of 1x or less is no speedup
 * (ERR_FAIL, t->speedup left at the factor read: 0 when none was). */
int contract_target_speedup(const char *target, struct contract_target *t, struct err *e);

#endif
