/*
 * loop_contract — loop.h's contract calls: the fields of docs/draft.md with
 * whether the contract the loop read has them, and setting fields in the
 * file.  The grammar is core/contract.c's.
 */
#include "core/loop.h"
#include "core/loop_core.h"

#include "core/contract.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"

void loop_contract_fields(struct loop *l, struct loop_contract_field out[LOOP_CONTRACT_FIELDS])
{
	_Static_assert(LOOP_CONTRACT_FIELDS == CF_ALL, "one entry per contract field");
	const struct contract *c = loop_contract_get(l);
	for (int f = 0; f < CF_ALL; f++)
		out[f] = (struct loop_contract_field){
			.name = contract_field_name((enum contract_field)f),
			.heading = contract_field_heading(f),
			.required = f < CF_NFIELDS,
			.filled = f >= CF_NFIELDS || c->v[f] != NULL,
		};
	loop_contract_put(c);
}

bool loop_contract_field_known(const char *name)
{
	return contract_field_parse(name) >= 0;
}

int loop_contract_set(struct loop *l, const char *const *names, const char *const *values,
		      size_t n, struct err *e)
{
	struct sb text = SB_INIT, next = SB_INIT;
	const char *path = loop_contract_path(l);
	int rc = fsutil_read_file(path, &text, e);

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
