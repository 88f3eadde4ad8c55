/*
 * loop_contract — loop.h's contract calls that need no more than the file:
 * the field names --set takes, and setting fields in docs/draft.md (the
 * grammar is core/contract.c's; what the contract lacks, with draft.md's
 * hints, is loop.c's loop_contract_missing, which reads the loop's copy).
 */
#include "core/loop.h"
#include "core/loop_core.h"

#include "core/contract.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(CONTRACT_NFIELDS == CF_ALL, "loop.h counts every contract field");

bool loop_contract_field_known(const char *name)
{
	return contract_field_parse(name) >= 0;
}

int loop_contract_set(struct loop *l, const char *const *names, const char *const *values,
		      size_t n, struct err *e)
{
	struct sb text = SB_INIT, next = SB_INIT;
	const char *path = loop_contract_path(l);
	char *docs = xstrdup(path), *slash = strrchr(docs, '/');
	if (slash)
		*slash = '\0';
	int rc = fsutil_own_dir(docs, e);
	free(docs);
	if (rc < 0)
		return rc;
	rc = fsutil_read_file(path, &text, e);

	if (rc == ERR_NOTFOUND)
		rc = 0; /* set into an empty contract */
	for (size_t i = 0; rc == 0 && i < n; i++) {
		sb_reset(&next);
		rc = contract_set(text.buf, text.len, names[i], values[i], &next, e);
		if (rc == 0) {
			sb_reset(&text);
			sb_add(&text, next.buf, next.len);
		}
	}
	if (rc == 0)
		rc = fsutil_write_atomic(path, text.buf ? text.buf : "", text.len, e);
	sb_release(&text);
	sb_release(&next);
	return rc;
}
