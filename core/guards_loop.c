/*
 * guards_loop — a guards context built from an open loop, for the
 * subcommands and the TUI: the loop's own repository handle and a reference
 * to the contract it read, through loop.h's public accessors.
 */
#include "core/guards.h"

#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdlib.h>
#include <string.h>

static char **dup_list(char *const *v, size_t n)
{
	char **out = xcalloc(n ? n : 1, sizeof(*out));
	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i]);
	return out;
}

int guards_from_loop(struct loop *l, struct guards_owned *o, struct err *e)
{
	struct loop_status st;
	int rc;

	if ((rc = loop_status(l, &st, e)) < 0) {
		memset(o, 0, sizeof(*o));
		return rc;
	}
	rc = guards_from_loop_status(l, &st, o, e);
	loop_status_release(&st);
	return rc;
}

int guards_from_loop_status(struct loop *l, const struct loop_status *st, struct guards_owned *o,
			    struct err *e)
{
	memset(o, 0, sizeof(*o));
	o->iteration = st->iteration;
	o->state = st->state;
	o->kernel = dup_list(st->kernel, st->nkernel);
	o->g.nkernel = st->nkernel;
	o->frozen = dup_list(st->frozen, st->nfrozen);
	o->g.nfrozen = st->nfrozen;

	o->contract = loop_contract_get(l);
	o->g.store = loop_store(l);
	o->g.vcs = loop_vcs(l);
	o->g.ws = loop_workspace(l);
	o->g.kernel = (const char *const *)o->kernel;
	o->g.frozen = (const char *const *)o->frozen;
	o->g.contract = o->contract;
	return 0;
}

void guards_owned_release(struct guards_owned *o)
{
	for (size_t i = 0; i < o->g.nkernel; i++)
		free(o->kernel[i]);
	free(o->kernel);
	for (size_t i = 0; i < o->g.nfrozen; i++)
		free(o->frozen[i]);
	free(o->frozen);
	if (o->contract)
		loop_contract_put(o->contract);
	memset(o, 0, sizeof(*o));
}
