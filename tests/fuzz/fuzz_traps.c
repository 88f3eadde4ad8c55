/* Fuzz target for the TRAPS.md reader and writer: any bytes parse without
 * a memory error, every entry has its strings, and writing back is stable
 * (render(parse(render(parse(x)))) == render(parse(x))). */
#include "core/sb.h"
#include "core/traps.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const struct traps_doc *d)
{
	if (!d->preamble)
		abort();
	for (size_t i = 0; i < d->n; i++)
		if (!d->v[i].id || !*d->v[i].id || !d->v[i].title || !d->v[i].fact ||
		    !d->v[i].why || !d->v[i].how)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct traps_doc a, b;
	struct problems p;
	struct sb r1 = SB_INIT, r2 = SB_INIT;

	traps_parse((const char *)data, size, &a, &p, NULL);
	check(&a);
	for (size_t i = 0; i < p.n; i++)
		if (!p.v[i].msg || p.v[i].lineno < 1)
			abort();
	traps_render(&a, &r1);
	traps_parse(r1.buf, r1.len, &b, NULL, NULL);
	check(&b);
	traps_render(&b, &r2);
	if (r1.len != r2.len || memcmp(r1.buf, r2.buf, r1.len)) {
		fprintf(stderr, "write-back not stable:\n--- first\n%s\n--- second\n%s\n", r1.buf,
			r2.buf);
		abort();
	}
	traps_doc_release(&a);
	traps_doc_release(&b);
	problems_release(&p);
	sb_release(&r1);
	sb_release(&r2);
	return 0;
}
