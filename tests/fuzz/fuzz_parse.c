/*
 * libFuzzer target for the streaming parser.
 *
 * Input: byte 0 picks the chunk size (and the pattern set), byte 1 how the
 * process ended, the rest is verify output.  Checks, beyond the sanitizers:
 * feeding in chunks gives the same result as feeding it whole; the JSON is
 * valid and survives a round trip; the parser stays within PARSE_MEM_BOUND.
 */
#include "core/err.h"
#include "core/parse.h"
#include "core/patset.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct patset *sets[2];

static void die(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_parse: %s\n%s\n----\n%s\n", what, a ? a : "", b ? b : "");
	abort();
}

static char *run(const struct patset *ps, const char *text, size_t len, size_t chunk, int status,
		 bool killed, struct parse_result *keep)
{
	struct parser *p = parser_new(ps, NULL, NULL);
	struct parse_result r;
	char *s;

	for (size_t i = 0; i < len; i += chunk) {
		parser_feed(p, text + i, len - i < chunk ? len - i : chunk);
		if (parser_mem(p) > PARSE_MEM_BOUND)
			die("memory bound exceeded", NULL, NULL);
	}
	parser_finish(p, status, killed);
	parser_take_result(p, &r);
	parser_free(p);
	json_t *j = parse_result_json(&r);
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	if (!s)
		die("result does not serialise", NULL, NULL);
	json_decref(j);
	if (keep)
		*keep = r;
	else
		parse_result_release(&r);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = {0};
	struct parse_result r, back;
	size_t chunk;
	int status;
	bool killed;

	if (!sets[0]) {
		if (patset_load("fla", NULL, &sets[0], &e) || patset_load("kernelbench", NULL, &sets[1], &e))
			die("cannot load the pattern sets", e.msg, NULL);
	}
	if (size < 2)
		return 0;
	chunk = (size_t)(data[0] & 0x3f) + 1;
	const struct patset *ps = sets[data[0] >> 7];
	killed = (data[1] & 0x80) != 0;
	status = killed ? -1 : (data[1] & 0x7f) == 0x7f ? -1 : (data[1] & 0x7f) % 4;
	const char *text = (const char *)data + 2;
	size -= 2;

	char *whole = run(ps, text, size, size ? size : 1, status, killed, &r);
	char *chunked = run(ps, text, size, chunk, status, killed, NULL);
	if (strcmp(whole, chunked))
		die("chunked feeding changed the result", whole, chunked);

	json_t *j = parse_result_json(&r);
	if (parse_result_from_json(j, &back, &e))
		die("own JSON refused", e.msg, whole);
	json_decref(j);
	j = parse_result_json(&back);
	char *again = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	if (!again || strcmp(whole, again))
		die("JSON round trip changed the result", whole, again);

	free(again);
	free(whole);
	free(chunked);
	parse_result_release(&r);
	parse_result_release(&back);
	return 0;
}
