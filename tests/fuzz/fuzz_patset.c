/*
 * libFuzzer target for pattern-set files (a workspace may bring its own):
 * any text is either refused with a message or loads into a set that then
 * parses a small verify log without trouble.
 */
#include "core/err.h"
#include "core/parse.h"
#include "core/patset.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sample[] =
	"  Correctness gate: tests/ops/t.py (-k T63)\n"
	"t.py::test[a] PASSED    [ 50%]\n"
	"==== 1 passed, 1 deselected in 0.50s ====\n"
	"  GATE PASSED.\n"
	"  Machine: H200 | CUDA 13.0 | PyTorch 2 | Triton 3 | b[abcdef1]\n"
	"  fwd  L  B  T  H  D  op  a[1234567](ms) b[abcdef1](ms)  speedup\n"
	"     1  1  2  3  4  k  0.5 0.25 2.00x\n"
	"               k2  - 0.30 -\n"
	"RUNTIME: 0.4 ms\nSPEEDUP: 2x\nTraceback (most recent call last):\nValueError: x\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patset *ps = NULL;
	struct err e = {0};

	if (patset_load_text((const char *)data, size, "fuzz.pat", NULL, &ps, &e)) {
		if (ps || !e.msg[0])
			abort(); /* a refusal always explains itself and returns nothing */
		return 0;
	}
	struct parser *p = parser_new(ps, NULL, NULL);
	for (size_t i = 0; i < sizeof(sample) - 1; i += 7)
		parser_feed(p, sample + i, sizeof(sample) - 1 - i < 7 ? sizeof(sample) - 1 - i : 7);
	parser_finish(p, 0, false);
	json_t *j = parse_result_json(parser_result(p));
	char *s = json_dumps(j, 0);
	if (!s)
		abort();
	free(s);
	json_decref(j);
	parser_free(p);
	patset_free(ps);
	return 0;
}
