/*
 * fuzz_contract — libFuzzer target for the task contract reader
 * (docs/draft.md, a file a person edits) and everything that reads the
 * fields it returns.
 *
 * On any bytes: contract_parse never fails but for an unreadable cap,
 * threshold or runner, and then says why; a field is NULL or a non-empty string;
 * contract_missing counts exactly the required fields that are NULL; the
 * list items of every field are non-empty single lines; the cap and the
 * threshold are in range; every target shape spelled back by
 * contract_shape_name reads back as the same shape, and matches a measured
 * shape key built from it; a target speedup that reads is a factor > 1.
 */
#include "core/contract.h"
#include "core/err.h"
#include "core/sb.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char dims[] = "BTHDL";

static void check_lists(const char *v)
{
	char **items;
	size_t n = contract_list_items(v, &items);
	for (size_t i = 0; i < n; i++)
		if (!items[i] || !*items[i] || strchr(items[i], '\n'))
			abort();
	contract_list_free(items, n);
}

static bool same_shape(const struct contract_shape *a, const struct contract_shape *b)
{
	if ((!a->mode) != (!b->mode) || (a->mode && strcasecmp(a->mode, b->mode)))
		return false;
	return a->B == b->B && a->T == b->T && a->H == b->H && a->D == b->D && a->L == b->L;
}

static void check_shapes(const char *target)
{
	struct contract_shape *v;
	size_t n = contract_target_shapes(target, &v);
	if (n && !v)
		abort();
	for (size_t i = 0; i < n; i++) {
		const struct contract_shape *s = &v[i];
		const long d[5] = {s->B, s->T, s->H, s->D, s->L};
		char *name = contract_shape_name(s);
		struct contract_shape *back;
		size_t m = contract_target_shapes(name, &back);
		if (m != 1 || !same_shape(s, &back[0])) {
			fprintf(stderr, "shape '%s' reads back as %zu shape(s)\n", name, m);
			abort();
		}
		contract_shapes_free(back, m);
		/* a measured key of this shape (any dimension: some value) matches it */
		struct sb key = SB_INIT;
		sb_adds(&key, s->mode ? s->mode : "-");
		for (int k = 0; k < 5; k++)
			sb_addf(&key, " %c=%ld", dims[k], d[k] >= 0 ? d[k] : 7);
		sb_adds(&key, " op");
		if (!contract_shape_matches(s, key.buf)) {
			fprintf(stderr, "shape '%s' does not match its own key '%s'\n", name, key.buf);
			abort();
		}
		sb_release(&key);
		free(name);
	}
	contract_shapes_free(v, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct contract c;
	struct err e = {0};
	struct sb why = SB_INIT;
	int rc = contract_parse((const char *)data, size, &c, &e);

	if (rc != 0 && (rc != ERR_USAGE || !e.msg[0]))
		abort();
	int nulls = 0;
	for (int f = 0; f < CF_NFIELDS; f++) {
		if (!c.v[f]) {
			nulls++;
			continue;
		}
		if (!*c.v[f])
			abort();
		check_lists(c.v[f]);
	}
	if (contract_missing(&c, &why) != nulls || (nulls && !why.len))
		abort();
	if (rc == 0 && (c.cap < 0 || !(c.threshold > 0 && c.threshold < 1)))
		abort();
	check_shapes(c.v[CF_TARGET]);
	struct contract_target t;
	struct err te = {0};
	if (contract_target_speedup(c.v[CF_TARGET], &t, &te) == 0) {
		if (!(t.speedup > 1) || !isfinite(t.speedup))
			abort();
	} else if (!te.msg[0]) {
		abort();
	}
	contract_release(&c);
	sb_release(&why);
	return 0;
}
