/* Unit tests for traps: the TRAPS.md reader over well-formed, hand-written
 * and malformed input, the writer's round trip, and trap add. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "core/traps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void parse(const char *text, struct traps_doc *d, struct problems *p)
{
	assert_int_equal(traps_parse(text, strlen(text), d, p, NULL), 0);
}

static bool has_problem(const struct problems *p, int line, const char *sub)
{
	for (size_t i = 0; i < p->n; i++)
		if ((line == 0 || p->v[i].lineno == line) && strstr(p->v[i].msg, sub))
			return true;
	return false;
}

/* render(parse(text)) must read back to the same entries, and a second
 * round trip must give the same bytes. */
static void assert_round_trip(const char *text)
{
	struct traps_doc a, b, c;
	struct sb r1 = SB_INIT, r2 = SB_INIT;
	parse(text, &a, NULL);
	traps_render(&a, &r1);
	parse(r1.buf, &b, NULL);
	assert_int_equal(a.n, b.n);
	for (size_t i = 0; i < a.n; i++) {
		assert_string_equal(a.v[i].id, b.v[i].id);
		assert_string_equal(a.v[i].title, b.v[i].title);
		assert_string_equal(a.v[i].fact, b.v[i].fact);
		assert_string_equal(a.v[i].why, b.v[i].why);
		assert_string_equal(a.v[i].how, b.v[i].how);
	}
	traps_render(&b, &r2);
	assert_string_equal(r1.buf, r2.buf);
	parse(r2.buf, &c, NULL);
	assert_int_equal(c.n, b.n);
	traps_doc_release(&a);
	traps_doc_release(&b);
	traps_doc_release(&c);
	sb_release(&r1);
	sb_release(&r2);
}

static void seed_catalogue_covers_the_required_traps(void **state)
{
	const char *root = getenv("OPTLOOP_ROOT");
	char *p = fsutil_join(root ? root : ".", "assets/TRAPS.md");
	struct sb t = SB_INIT;
	assert_int_equal(fsutil_read_file(p, &t, NULL), 0);
	struct traps_doc d;
	struct problems pr;
	parse(t.buf, &d, &pr);
	assert_int_equal(pr.n, 0);
	const char *need[] = {"nan-partial-writes", "tf32-reference",	   "relative-tolerance",
			      "symmetric-flags",    "int64-addressing",	   "implausible-speedup",
			      "stale-autotune-cache", "clock-drift",	   "shrunken-gate",
			      "tensor-cache",	    "vendor-delegation",   "side-stream",
			      "patched-timer",	    "lazy-tensor",	   "input-downcast",
			      "output-alias"};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		struct trap *tr = traps_find(&d, need[i]);
		if (!tr)
			fail_msg("seed lacks trap %s", need[i]);
		assert_true(strlen(tr->fact) > 40 && strlen(tr->why) > 40 && strlen(tr->how) > 40);
	}
	assert_string_equal(traps_find(&d, "int64-addressing")->title, "Int64 address arithmetic");
	assert_round_trip(t.buf);
	traps_doc_release(&d);
	problems_release(&pr);
	sb_release(&t);
	free(p);
}

static void entry_right_after_the_title_gets_its_own_entry(void **state)
{
	const char *text = "# Traps\n"
			   "\n"
			   "**Fact:** Stale caches pin old configs. More text here.\n"
			   "**Why:** The key does not include the kernel.\n"
			   "**How to apply:** Clear the cache.\n"
			   "\n"
			   "## Second trap\n"
			   "**Fact:** f2\n**Why:** w2\n**How to apply:** h2\n";
	struct traps_doc d;
	struct problems p;
	parse(text, &d, &p);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.v[0].title, "Stale caches pin old configs");
	assert_string_equal(d.v[0].id, "stale-caches-pin-old-configs");
	assert_string_equal(d.v[0].why, "The key does not include the kernel.");
	assert_int_equal(d.v[0].lineno, 3);
	assert_true(has_problem(&p, 3, "without its own heading"));
	assert_string_equal(d.v[1].title, "Second trap");
	assert_string_equal(d.v[1].fact, "f2");
	assert_string_equal(d.preamble, "# Traps");
	assert_round_trip(text);
	traps_doc_release(&d);
	problems_release(&p);
}

static void second_fact_in_a_section_starts_a_new_entry(void **state)
{
	const char *text = "## One\n**Fact:** a\n**Why:** b\n**How to apply:** c\n\n"
			   "**Fact:** d is another trap\n**Why:** e\n**How to apply:** f\n";
	struct traps_doc d;
	struct problems p;
	parse(text, &d, &p);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.v[0].how, "c");
	assert_string_equal(d.v[1].title, "d is another trap");
	assert_string_equal(d.v[1].fact, "d is another trap");
	assert_int_equal(d.v[1].lineno, 6);
	assert_round_trip(text);
	traps_doc_release(&d);
	problems_release(&p);
}

static void field_spellings_and_multiline_values_are_read(void **state)
{
	const char *text = "---\nname: traps\n---\n\n"
			   "# Known traps\r\n\r\n"
			   "## Clock drift\r\n"
			   "The GPU clock ramps under load.\r\n"
			   "\r\n"
			   "- **Why**: idle clocks are low\r\n"
			   "  and rise in seconds.\r\n"
			   "\r\n"
			   "**how**:\r\n"
			   "- warm up first\r\n"
			   "- record the SM clock\r\n"
			   "\r\n"
			   "---\r\n";
	struct traps_doc d;
	struct problems p;
	parse(text, &d, &p);
	assert_int_equal(d.n, 1);
	assert_int_equal(p.n, 0);
	assert_string_equal(d.v[0].fact, "The GPU clock ramps under load.");
	assert_string_equal(d.v[0].why, "idle clocks are low\n  and rise in seconds.");
	assert_string_equal(d.v[0].how, "- warm up first\n- record the SM clock");
	assert_string_equal(d.preamble, "---\nname: traps\n---\n\n# Known traps");
	struct sb r = SB_INIT;
	traps_render(&d, &r);
	assert_non_null(strstr(r.buf, "**How to apply:**\n- warm up first\n- record the SM clock"));
	sb_release(&r);
	assert_round_trip(text);
	traps_doc_release(&d);
	problems_release(&p);
}

static void missing_fields_are_reported_with_line_numbers(void **state)
{
	const char *text = "# T\n\n## Only a fact\n**Fact:** x\n\n## Empty heading\n\n"
			   "## Why only\n**Why:** because\n";
	struct traps_doc d;
	struct problems p;
	parse(text, &d, &p);
	assert_int_equal(d.n, 2);
	assert_true(has_problem(&p, 3, "has no **Why:**"));
	assert_true(has_problem(&p, 3, "has no **How to apply:**"));
	assert_true(has_problem(&p, 6, "heading 'Empty heading' has no Fact"));
	assert_true(has_problem(&p, 8, "has no **Fact:**"));
	assert_string_equal(d.v[1].fact, "");
	assert_round_trip(text);
	traps_doc_release(&d);
	problems_release(&p);
}

static void code_fences_keep_structure_inside_values(void **state)
{
	const char *text = "## Fenced\n**Fact:** f\n**Why:** w\n**How to apply:**\n```python\n"
			   "# a comment, not a heading\n**Why:** not a field\n```\nafter\n";
	struct traps_doc d;
	parse(text, &d, NULL);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].why, "w");
	assert_string_equal(d.v[0].how, "```python\n# a comment, not a heading\n**Why:** not a "
					 "field\n```\nafter");
	assert_round_trip(text);
	traps_doc_release(&d);
	/* An unterminated fence swallows the rest but never crashes. */
	parse("## A\n**Fact:** x\n```\n## B\n**Why:** y\n", &d, NULL);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].why, "");
	traps_doc_release(&d);
	assert_round_trip("## A\n**Fact:** x\n```\n## B\n**Why:** y\n");
}

static void values_that_look_like_structure_survive_write_back(void **state)
{
	struct traps_doc d = {0};
	const char *id;
	d.preamble = xstrdup("");
	assert_int_equal(traps_add(&d, "Odd text", "## not a heading\n**Why:** not a field",
				   "\\backslash first", "- **How:** still text", &id, NULL),
			 0);
	assert_string_equal(id, "odd-text");
	struct sb r = SB_INIT;
	traps_render(&d, &r);
	struct traps_doc b;
	parse(r.buf, &b, NULL);
	assert_int_equal(b.n, 1);
	assert_string_equal(b.v[0].fact, "## not a heading\n**Why:** not a field");
	assert_string_equal(b.v[0].why, "\\backslash first");
	assert_string_equal(b.v[0].how, "- **How:** still text");
	traps_doc_release(&b);
	traps_doc_release(&d);
	sb_release(&r);
}

static void ids_come_from_suffix_or_title_and_stay_unique(void **state)
{
	const char *text = "## Int64 address arithmetic {#int64-addressing}\n**Fact:** a\n**Why:** b\n"
			   "**How to apply:** c\n## Same\n**Fact:** a\n**Why:** b\n**How to apply:** c\n"
			   "## Same\n**Id:** Custom Id\n**Fact:** a\n**Why:** b\n**How to apply:** c\n"
			   "## Same\n**Fact:** a\n**Why:** b\n**How to apply:** c\n";
	struct traps_doc d;
	parse(text, &d, NULL);
	assert_int_equal(d.n, 4);
	assert_string_equal(d.v[0].id, "int64-addressing");
	assert_string_equal(d.v[0].title, "Int64 address arithmetic");
	assert_string_equal(d.v[1].id, "same");
	assert_string_equal(d.v[2].id, "custom-id");
	assert_string_equal(d.v[3].id, "same-2");
	assert_non_null(traps_find(&d, "same-2"));
	assert_null(traps_find(&d, "nope"));
	assert_round_trip(text);
	traps_doc_release(&d);
	char *s = traps_slug("  TF32 -- in the Reference!  ");
	assert_string_equal(s, "tf32-in-the-reference");
	free(s);
	s = traps_slug("!!!");
	assert_string_equal(s, "trap");
	free(s);
}

static void add_requires_all_three_parts(void **state)
{
	struct traps_doc d = {0};
	struct err e = {0};
	assert_int_equal(traps_add(&d, "T", "fact", "", NULL, NULL, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "Why, How to apply missing"));
	assert_int_equal(traps_add(&d, " ", "f", "w", "h", NULL, &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "title missing"));
	assert_int_equal(d.n, 0);
	assert_int_equal(traps_add(&d, "New\ntrap", "f", "w", "h", NULL, &e), 0);
	assert_int_equal(traps_add(&d, "New trap", "f", "w", "h", NULL, &e), 0);
	assert_string_equal(d.v[0].title, "New trap");
	assert_string_equal(d.v[1].id, "new-trap-2");
	traps_doc_release(&d);
}

static void malformed_inputs_never_break_the_reader(void **state)
{
	const char *cases[] = {
		"",
		"\n\n\n",
		"**",
		"****",
		"** **: x",
		"**Fact",
		"#\n##\n###### \n####### seven\n",
		"## {#}\n**Fact:** x\n",
		"## {#a}{#b}\n**Why:** y\n",
		"---\n**Fact:** inside unterminated front matter\n",
		"\n---\n**Fact:** after a blank first line\n**Why:** w\n**How:** h\n",
		"**Fact:**\n**Fact:**\n**Fact:**\n",
		"\\\n\\\\\n\\## x\n",
		"~~~\n## not\n",
		"## A\n**Why:** w\n---\n***\n___\n",
		"# Only a title",
		"- **Fact:** - **Why:** - **How:**",
		"\n**\n**\n##\v",
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct traps_doc d;
		struct problems p;
		parse(cases[i], &d, &p);
		for (size_t k = 0; k < d.n; k++) {
			assert_non_null(d.v[k].id);
			assert_true(d.v[k].id[0] != '\0');
			assert_non_null(d.v[k].title);
			assert_non_null(d.v[k].fact);
			assert_non_null(d.v[k].why);
			assert_non_null(d.v[k].how);
		}
		assert_non_null(d.preamble);
		traps_doc_release(&d);
		problems_release(&p);
		assert_round_trip(cases[i]);
	}
	/* Embedded NUL bytes and invalid UTF-8 are read as bytes. */
	const char bin[] = "## A\xff\xfe\n**Fact:** x\0y\n**Why:** \x80\n";
	struct traps_doc d;
	assert_int_equal(traps_parse(bin, sizeof(bin) - 1, &d, NULL, NULL), 0);
	assert_int_equal(d.n, 1);
	traps_doc_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(seed_catalogue_covers_the_required_traps),
		cmocka_unit_test(entry_right_after_the_title_gets_its_own_entry),
		cmocka_unit_test(second_fact_in_a_section_starts_a_new_entry),
		cmocka_unit_test(field_spellings_and_multiline_values_are_read),
		cmocka_unit_test(missing_fields_are_reported_with_line_numbers),
		cmocka_unit_test(code_fences_keep_structure_inside_values),
		cmocka_unit_test(values_that_look_like_structure_survive_write_back),
		cmocka_unit_test(ids_come_from_suffix_or_title_and_stay_unique),
		cmocka_unit_test(add_requires_all_three_parts),
		cmocka_unit_test(malformed_inputs_never_break_the_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
