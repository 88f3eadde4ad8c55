/*
 * lint — trap patterns applied to an iteration's diff.
 *
 * A lint set is a list of rules read from *.lint files (assets/lints/ and a
 * workspace's own lints/ folder; the format is described in
 * assets/lints/README.md).  Each rule is a PCRE2 pattern (compiled once,
 * with JIT) matched against the added or removed lines of a unified diff,
 * with the file each line belongs to as context.  Every finding names the
 * trap it points at, so the log step can show it and ask for an
 * acknowledgement.
 */
#ifndef OPTLOOP_LINT_H
#define OPTLOOP_LINT_H

#include "core/model.h"

#include <stddef.h>

struct err;
struct lint_set;

/* Load every *.lint file of assets/lints/ (sorted by name), then those of
 * extra_dir when it is not NULL and exists.  A later rule with the same id
 * replaces the earlier one, so a workspace can override a shipped rule.
 * *out is owned by the caller (lint_set_free).  ERR_USAGE with the file and
 * line when a rule is malformed or its pattern does not compile. */
int lint_load(const char *extra_dir, struct lint_set **out, struct err *e);

/* An empty set, then rules added from text (origin names it in messages). */
struct lint_set *lint_set_new(void);
int lint_set_add_text(struct lint_set *ls, const char *text, size_t len, const char *origin,
		      struct err *e);
size_t lint_set_count(const struct lint_set *ls);
void lint_set_free(struct lint_set *ls);

/* Apply the set to a unified diff (git diff output; several files).  The
 * findings are appended to *out in diff order (caller releases with
 * lint_findings_release).  Text that is not a diff yields no findings. */
int lint_diff(const struct lint_set *ls, const char *diff, size_t len, struct lint_findings *out,
	      struct err *e);


#endif
