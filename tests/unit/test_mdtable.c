/* Unit tests for the one Markdown table reader: cells, escapes, code spans,
 * delimiter rows, and the cell writer as its inverse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/mdtable.h"
#include "core/sb.h"

#include <stdlib.h>
#include <string.h>

static struct md_span S(const char *s)
{
	return (struct md_span){s, strlen(s)};
}

static char *cell(struct md_cells *c, size_t i)
{
	return md_unescape_cell(c->v[i]);
}

static void cells_are_trimmed_and_outer_pipes_optional(void **state)
{
	struct md_cells c = {0};
	assert_int_equal(md_split_row(S("| 1 |  baseline | pass |"), false, &c), 4);
	assert_int_equal(c.n, 3);
	char *t = cell(&c, 1);
	assert_string_equal(t, "baseline");
	free(t);
	md_split_row(S("a | b"), false, &c);
	assert_int_equal(c.n, 2);
	t = cell(&c, 1);
	assert_string_equal(t, "b");
	free(t);
	md_cells_release(&c);
}

static void escaped_pipes_and_code_spans_stay_in_their_cell(void **state)
{
	struct md_cells c = {0};
	md_split_row(S("| 2 | tile `BT|BK` = 64 \\| 32 | keep |"), true, &c);
	assert_int_equal(c.n, 3);
	char *t = cell(&c, 1);
	assert_string_equal(t, "tile `BT|BK` = 64 | 32");
	free(t);
	/* without code spans the pipe in backticks separates */
	md_split_row(S("| 2 | tile `BT|BK` | keep |"), false, &c);
	assert_int_equal(c.n, 4);
	md_cells_release(&c);
}

static void delimiter_rows_need_dashes_and_a_pipe(void **state)
{
	struct md_cells c = {0};
	assert_true(md_is_delim_row(S("|---|:---:|--:|"), &c));
	assert_true(md_is_delim_row(S(" --- | --- "), &c));
	assert_false(md_is_delim_row(S("---"), &c));
	assert_false(md_is_delim_row(S("| --- | x |"), &c));
	assert_false(md_is_delim_row(S("| : |"), &c));
	md_cells_release(&c);
}

static void the_writer_is_the_readers_inverse(void **state)
{
	static const char *const texts[] = {
		"plain", "a | b", "back\\slash", "ends with \\", "two\\\\ and \\|", "line\none",
		"crlf\r\nbreak", "", "`code|span`",
	};
	struct md_cells c = {0};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct sb row = SB_INIT;
		sb_adds(&row, "| x | ");
		md_escape_cell(texts[i], &row);
		sb_adds(&row, " |");
		md_split_row(S(row.buf), false, &c);
		assert_int_equal(c.n, 2);
		char *t = cell(&c, 1);
		const char *want = strcmp(texts[i], "crlf\r\nbreak") ? texts[i] : "crlf\nbreak";
		assert_string_equal(t, want);
		free(t);
		sb_release(&row);
	}
	md_cells_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cells_are_trimmed_and_outer_pipes_optional),
		cmocka_unit_test(escaped_pipes_and_code_spans_stay_in_their_cell),
		cmocka_unit_test(delimiter_rows_need_dashes_and_a_pipe),
		cmocka_unit_test(the_writer_is_the_readers_inverse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
