/*
 * fuzz_optlog — libFuzzer target for the two Markdown readers.
 *
 * OPT_LOG.md: whatever optlog_parse reads, rendering it and reading the
 * rendering back must give the same rows (render is the canonical form).
 * docs/draft.md: contract_set on any text must leave a file in which the
 * field reads back as the value that was set, and every other field as it
 * was.
 */
#include "core/contract.h"
#include "core/err.h"
#include "core/optlog.h"
#include "core/sb.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int close_enough(double a, double b, double tol)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return fabs(a - b) <= tol * (1 + fabs(a));
}

static void check_optlog(const char *text, size_t len)
{
	struct optlog_doc d, back;
	struct problems p = {0}, p2 = {0};
	struct sb out = SB_INIT;

	if (optlog_parse(text, len, &d, &p, NULL) == 0) {
		optlog_render(&d, &out);
		if (optlog_parse(out.buf, out.len, &back, &p2, NULL) != 0)
			abort();
		if (back.nrows != d.nrows)
			abort();
		for (size_t i = 0; i < d.nrows; i++) {
			const struct log_row *a = &d.rows[i], *b = &back.rows[i];
			if (a->iter != b->iter || !same_str(a->direction, b->direction) ||
			    a->status != b->status || a->gate_v != b->gate_v)
				abort();
			if (a->gate_v != GATE_NONE && a->scope != b->scope)
				abort();
			if (isfinite(a->bench_ms) && a->bench_ms < 1e12 &&
			    !close_enough(a->bench_ms, b->bench_ms, 1e-2))
				abort();
			if (isfinite(a->vs_best) && fabs(a->vs_best) < 1e6 &&
			    fabs(a->vs_best - b->vs_best) > 0.006 * (1 + fabs(a->vs_best)))
				abort();
		}
		optlog_doc_release(&back);
	}
	optlog_doc_release(&d);
	problems_release(&p);
	problems_release(&p2);
	sb_release(&out);
}

static void check_contract(const char *text, size_t len, unsigned sel)
{
	static const char *const vals[] = {"python -m verify --op x", "1.3x on T=4096",
					   "a\nb", "12", "4%", ""};
	struct contract before, after;
	struct sb out = SB_INIT;
	int f = (int)(sel % CF_ALL);
	const char *v = vals[(sel / CF_ALL) % (sizeof(vals) / sizeof(vals[0]))];

	int rc0 = contract_parse(text, len, &before, NULL);
	if (contract_set(text, len, contract_field_name((enum contract_field)f), v, &out, NULL) == 0 &&
	    rc0 == 0) {
		int rc1 = contract_parse(out.buf, out.len, &after, NULL);
		if (f < CF_NFIELDS) {
			if (rc1 != 0 || !same_str(after.v[f], *v ? v : NULL))
				abort();
		} else if (f == CF_CAP && rc1 == 0 && after.cap != (*v ? atoi(v) : 0)) {
			abort();
		}
		for (int g = 0; g < CF_NFIELDS && rc1 == 0; g++)
			if (g != f && !same_str(before.v[g], after.v[g]))
				abort();
		contract_release(&after);
	}
	contract_release(&before);
	sb_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	/* The first byte picks the contract field and value; the rest is the file. */
	unsigned sel = data[0];
	const char *text = (const char *)data + 1;
	size_t len = size - 1;

	check_optlog(text, len);
	check_contract(text, len, sel);
	return 0;
}
