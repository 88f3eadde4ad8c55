/* Unit tests for jsonw: a document written piece by piece reads byte for
 * byte as jansson dumps the same tree whole, and a failed write stops it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/jsonw.h"
#include "core/sb.h"

#include <stdlib.h>
#include <string.h>

static int to_sb(const char *buf, size_t len, void *data)
{
	sb_add(data, buf, len);
	return 0;
}

/* Writes a document of the shape the export writes, and builds the same
 * document as one tree beside it. */
static void both(size_t flags, struct sb *streamed, json_t **tree)
{
	struct jsonw w;
	json_t *root = json_object(), *tables = json_object(), *rows = json_array();
	char *big = malloc(40001);
	memset(big, 'x', 40000);
	big[40000] = '\0';
	json_t *r1 = json_pack("{s:i,s:f,s:s,s:o,s:s}", "id", 1, "ms", 0.1 + 0.2, "text",
			       "a \"quoted\"\nline, caf\xc3\xa9 \xe2\x9c\x93", "none", json_null(),
			       "tab", "\t");
	json_t *r2 = json_pack("{s:i,s:s,s:[i,{s:b}],s:{}}", "id", 2, "big", big, "nested", 3,
			       "deep", 1, "empty", "k");
	json_t *schema = json_integer(13), *op = json_string("op \xc3\xa9");
	free(big);

	jsonw_init(&w, flags, to_sb, streamed);
	assert_int_equal(jsonw_object(&w, NULL), 0);
	assert_int_equal(jsonw_value(&w, "schema", schema), 0);
	assert_int_equal(jsonw_object(&w, "tables"), 0);
	assert_int_equal(jsonw_array(&w, "aside"), 0);
	assert_int_equal(jsonw_close(&w), 0);
	assert_int_equal(jsonw_array(&w, "runs"), 0);
	assert_int_equal(jsonw_value(&w, NULL, r1), 0);
	assert_int_equal(jsonw_value(&w, NULL, r2), 0);
	assert_int_equal(jsonw_close(&w), 0);
	assert_int_equal(jsonw_object(&w, "meta"), 0);
	assert_int_equal(jsonw_close(&w), 0);
	assert_int_equal(jsonw_close(&w), 0);
	assert_int_equal(jsonw_value(&w, "op", op), 0);
	assert_int_equal(jsonw_close(&w), 0);
	assert_int_equal(w.depth, 0);

	json_array_append(rows, r1);
	json_array_append(rows, r2);
	json_object_set_new(root, "schema", schema);
	json_object_set_new(tables, "aside", json_array());
	json_object_set_new(tables, "runs", rows);
	json_object_set_new(tables, "meta", json_object());
	json_object_set_new(root, "tables", tables);
	json_object_set_new(root, "op", op);
	json_decref(r1);
	json_decref(r2);
	*tree = root;
}

static void streamed_text_is_what_jansson_dumps_of_the_whole_tree(void **state)
{
	static const size_t flags[] = {
		JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10),
		JSON_INDENT(4) | JSON_ENSURE_ASCII,
		JSON_INDENT(0),
		JSON_COMPACT,
		JSON_INDENT(1) | JSON_COMPACT,
	};
	(void)state;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct sb got = SB_INIT;
		json_t *tree;
		sb_init(&got);
		both(flags[i], &got, &tree);
		char *want = json_dumps(tree, flags[i]);
		assert_non_null(want);
		assert_true(got.len > 40000);
		assert_string_equal(got.buf, want);
		free(want);
		json_decref(tree);
		sb_release(&got);
	}
}

static void a_value_outside_any_container_is_the_whole_document(void **state)
{
	struct sb got = SB_INIT;
	struct jsonw w;
	json_t *v = json_pack("[i,s]", 1, "two");
	(void)state;
	sb_init(&got);
	jsonw_init(&w, JSON_INDENT(2), to_sb, &got);
	assert_int_equal(jsonw_value(&w, NULL, v), 0);
	/* written out at once: nothing left in the block */
	assert_string_equal(got.buf, "[\n  1,\n  \"two\"\n]");
	json_decref(v);
	sb_release(&got);
}

struct limited {
	size_t room, calls;
	struct sb text;
};

static int refuse_past_room(const char *buf, size_t len, void *data)
{
	struct limited *l = data;
	l->calls++;
	if (len > l->room)
		return -1;
	l->room -= len;
	sb_add(&l->text, buf, len);
	return 0;
}

static void a_refused_write_stops_the_document(void **state)
{
	struct limited l = {.room = 20000};
	struct jsonw w;
	json_t *row = json_pack("{s:s}", "text", "0123456789012345678901234567890123456789");
	int rc = 0, rows = 0;
	(void)state;
	sb_init(&l.text);
	jsonw_init(&w, JSON_INDENT(2), refuse_past_room, &l);
	rc = jsonw_array(&w, NULL);
	while (rc == 0 && rows < 100000) {
		rc = jsonw_value(&w, NULL, row);
		rows++;
	}
	assert_int_equal(rc, -1);
	assert_true(w.write_failed);
	assert_false(w.dump_failed);
	/* it stopped at the first refusal, not at the end of the rows */
	assert_true(rows < 2000);
	size_t calls = l.calls;
	assert_int_equal(jsonw_value(&w, NULL, row), -1);
	assert_int_equal(jsonw_close(&w), -1);
	assert_int_equal(l.calls, calls);
	/* what was written is whole blocks of the document */
	assert_int_equal(strncmp(l.text.buf, "[\n  {\n    \"text\": \"0123", 22), 0);
	json_decref(row);
	sb_release(&l.text);
}

static void text_jansson_cannot_dump_is_a_dump_failure(void **state)
{
	struct sb got = SB_INIT;
	struct jsonw w;
	json_t *bad = json_stringn_nocheck("caf\xe9", 4);
	(void)state;
	sb_init(&got);
	jsonw_init(&w, JSON_INDENT(2), to_sb, &got);
	assert_int_equal(jsonw_array(&w, NULL), 0);
	assert_int_equal(jsonw_value(&w, NULL, bad), -1);
	assert_true(w.dump_failed);
	assert_false(w.write_failed);
	assert_int_equal(jsonw_close(&w), -1);
	json_decref(bad);
	sb_release(&got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(streamed_text_is_what_jansson_dumps_of_the_whole_tree),
		cmocka_unit_test(a_value_outside_any_container_is_the_whole_document),
		cmocka_unit_test(a_refused_write_stops_the_document),
		cmocka_unit_test(text_jansson_cannot_dump_is_a_dump_failure),
	};
	return cmocka_run_group_tests_name("jsonw", tests, NULL, NULL);
}
