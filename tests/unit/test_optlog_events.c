/* Unit tests for the re-assessments and stops under OPT_LOG.md's table:
 * rendered after the rows, read back as optloop's own (never rows, header
 * lines or a person's text), compared exactly, and merged with a file a
 * person edited (their text after the table kept, an older file without
 * the section given it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/optlog.h"
#include "core/sb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void add_row(struct optlog_doc *d, int iter, const char *dir, double ms,
		    enum row_status st)
{
	struct log_row r = {.iter = iter, .direction = xstrdup(dir), .gate_v = GATE_PASS,
			    .scope = SCOPE_FULL, .bench_ms = ms, .vs_best = NAN, .status = st};
	optlog_doc_add_row(d, &r);
}

static void add_event(struct optlog_doc *d, int iter, bool stop, const char *what,
		      const char *detail)
{
	d->events = xrealloc(d->events, (d->nevents + 1) * sizeof(*d->events));
	d->events[d->nevents++] = (struct optlog_event){
		.iter = iter, .stop = stop, .what = what ? xstrdup(what) : NULL,
		.detail = detail ? xstrdup(detail) : NULL};
}

/* Four rows, no win after the baseline. */
static void rows_doc(struct optlog_doc *d)
{
	memset(d, 0, sizeof(*d));
	d->op = xstrdup("chunk_gla");
	d->target = xstrdup("2x");
	add_row(d, 0, "baseline", 1.0, RS_BASE);
	add_row(d, 1, "BT=32", 1.1, RS_REVERT);
	add_row(d, 2, "BT=128", 1.2, RS_DROP);
	add_row(d, 3, "fuse the gate", 1.05, RS_REVERT);
}

/* The rows, a re-assessment after 3 (its next direction on two lines),
 * then stops of each kind after 3. */
static void sample_doc(struct optlog_doc *d)
{
	rows_doc(d);
	add_event(d, 3, false, "block the state\nupdate 4x4", "tiling, fusion");
	add_event(d, 3, true, "directions", NULL);
	add_event(d, 3, true, "floor", "HBM bandwidth: 4.1 of 4.8 TB/s");
	add_event(d, 3, true, NULL, NULL);
}

static const char events_text[] =
	"| 3 | fuse the gate | pass | 1.050 | \xe2\x80\x94 | revert |\n"
	"\n"
	"### Re-assessments and stops\n"
	"\n"
	"- After iteration 3: **re-assessed**; axes tried: tiling, fusion; next direction: block "
	"the state update 4x4\n"
	"- After iteration 3: **stopped**, three or more directions tried\n"
	"- After iteration 3: **stopped**, at a floor: HBM bandwidth: 4.1 of 4.8 TB/s\n"
	"- After iteration 3: **stopped**\n";

static void events_are_rendered_after_the_rows(void **state)
{
	struct optlog_doc d;
	struct sb out = SB_INIT;
	(void)state;

	sample_doc(&d);
	optlog_render(&d, &out);
	const char *tail = strstr(out.buf, "| 3 |");
	assert_non_null(tail);
	assert_string_equal(tail, events_text);
	/* none: the file ends with the last row, as it always did */
	sb_reset(&out);
	for (size_t i = 0; i < d.nevents; i++)
		optlog_event_release(&d.events[i]);
	d.nevents = 0;
	optlog_render(&d, &out);
	assert_true(out.len > 0 && !strstr(out.buf, "Re-assessments"));
	assert_string_equal(strstr(out.buf, "| 3 |"),
			    "| 3 | fuse the gate | pass | 1.050 | \xe2\x80\x94 | revert |\n");
	sb_release(&out);
	optlog_doc_release(&d);
}

static void events_read_back_and_are_no_rows(void **state)
{
	struct optlog_doc d, p;
	struct sb out = SB_INIT;
	struct problems probs = {0};
	struct err e = {0};
	(void)state;

	sample_doc(&d);
	optlog_render(&d, &out);
	assert_int_equal(optlog_parse(out.buf, out.len, &p, &probs, &e), 0);
	assert_int_equal(probs.n, 0);
	assert_int_equal(p.nrows, 4);
	assert_int_equal(p.nevents, 4);
	assert_int_equal(p.events[0].iter, 3);
	assert_false(p.events[0].stop);
	assert_string_equal(p.events[0].what, "block the state update 4x4");
	assert_string_equal(p.events[0].detail, "tiling, fusion");
	assert_true(p.events[1].stop);
	assert_string_equal(p.events[1].what, "directions");
	assert_null(p.events[1].detail);
	assert_string_equal(p.events[2].what, "floor");
	assert_string_equal(p.events[2].detail, "HBM bandwidth: 4.1 of 4.8 TB/s");
	assert_true(p.events[3].stop);
	assert_null(p.events[3].what);
	/* nor header lines: the Target stays the file's */
	assert_string_equal(p.target, "2x");
	/* and what it read renders the same text again */
	assert_true(optlog_render_same(&p, out.buf, out.len));
	optlog_doc_release(&p);
	problems_release(&probs);
	sb_release(&out);
	optlog_doc_release(&d);
}

static void render_same_compares_the_events(void **state)
{
	struct optlog_doc d;
	struct sb out = SB_INIT;
	(void)state;

	sample_doc(&d);
	optlog_render(&d, &out);
	assert_true(optlog_render_same(&d, out.buf, out.len));
	/* a file without them (an older optloop's) is not current */
	size_t rows_end = (size_t)(strstr(out.buf, "\n### ") - out.buf) + 1;
	assert_false(optlog_render_same(&d, out.buf, rows_end));
	/* one event fewer in the database than in the file */
	d.nevents--;
	assert_false(optlog_render_same(&d, out.buf, out.len));
	d.nevents++;
	sb_release(&out);
	optlog_doc_release(&d);
}

static void lines_that_are_not_optloops_are_not_events(void **state)
{
	static const char *const not_ours[] = {
		"- After iteration three: **re-assessed**",
		"- After iteration 3: re-assessed",
		"- after iteration 3: **stopped**",
		"- After iteration 3: **stopped** for lunch",
		"- After iteration 3: **re-assessed**, and more",
		"After iteration 3: **stopped**",
	};
	struct optlog_event ev;
	(void)state;
	for (size_t i = 0; i < sizeof(not_ours) / sizeof(not_ours[0]); i++)
		assert_false(optlog_event_parse(not_ours[i], strlen(not_ours[i]), &ev));
	assert_true(optlog_event_parse("- After iteration 12: **re-assessed**\r", 38, &ev));
	assert_int_equal(ev.iter, 12);
	assert_null(ev.what);
	optlog_event_release(&ev);
}

/* A person's text after the table, with a section an older optloop did
 * not write: the section goes right under the table, their text after
 * it as it was; merging the result again changes nothing. */
static void merge_adds_the_events_and_keeps_text_after_the_table(void **state)
{
	struct optlog_doc d, old;
	struct sb file = SB_INIT, out = SB_INIT, kept = SB_INIT, repl = SB_INIT, again = SB_INIT;
	struct err e = {0};
	(void)state;

	rows_doc(&old);
	optlog_render(&old, &file);
	sb_adds(&file, "\n## Notes\n\nthe L2 hit rate is the question\n");
	sample_doc(&d);
	assert_int_equal(optlog_merge(&d, file.buf, file.len, &out, &kept, &repl, &e), 0);
	assert_non_null(strstr(kept.buf, "a section after the table"));
	assert_non_null(strstr(repl.buf, "the re-assessments and stops are not in the file"));
	const char *ev = strstr(out.buf, "| 3 |");
	assert_non_null(ev);
	assert_memory_equal(ev, events_text, strlen(events_text));
	assert_string_equal(ev + strlen(events_text), "\n## Notes\n\nthe L2 hit rate is the question\n");

	sb_reset(&kept);
	sb_reset(&repl);
	assert_int_equal(optlog_merge(&d, out.buf, out.len, &again, &kept, &repl, &e), 0);
	assert_string_equal(again.buf, out.buf);
	assert_true(repl.len == 0);
	assert_string_equal(kept.buf, "a section after the table");

	/* a person's text right under the section: kept, apart from the list */
	sb_reset(&file);
	optlog_render(&d, &file);
	sb_adds(&file, "my note\n");
	sb_reset(&again);
	sb_reset(&kept);
	sb_reset(&repl);
	assert_int_equal(optlog_merge(&d, file.buf, file.len, &again, &kept, &repl, &e), 0);
	assert_string_equal(kept.buf, "text after the table");
	assert_true(repl.len == 0);
	assert_non_null(strstr(again.buf, "**stopped**\n\nmy note\n"));

	/* an event edited by hand: the database's replaces it, said */
	sb_reset(&file);
	optlog_render(&d, &file);
	char *at = strstr(file.buf, "three or more");
	memcpy(at, "THREE", 5);
	sb_reset(&again);
	sb_reset(&kept);
	sb_reset(&repl);
	assert_int_equal(optlog_merge(&d, file.buf, file.len, &again, &kept, &repl, &e), 0);
	assert_string_equal(repl.buf, "the re-assessments and stops under the table");
	assert_true(kept.len == 0);
	assert_non_null(strstr(again.buf, "**stopped**, three or more"));

	sb_release(&file);
	sb_release(&out);
	sb_release(&kept);
	sb_release(&repl);
	sb_release(&again);
	optlog_doc_release(&d);
	optlog_doc_release(&old);
}

/* An event in words, as the view's detail shows it: no prefix, no bold,
 * a stop's reason in words; a line break in a person's text is a space. */
static void event_text_is_words_without_markdown(void **state)
{
	(void)state;
	struct optlog_doc d = {0};
	add_event(&d, 3, false, "block the state 4x4", "chunk size, loop\norder");
	add_event(&d, 4, true, "floor", "HBM: 4.1 of 4.8 TB/s");
	add_event(&d, 4, true, "cap", NULL);
	add_event(&d, 5, false, NULL, NULL);
	const char *want[] = {
		"re-assessed; axes tried: chunk size, loop order; next direction: block the state 4x4",
		"stopped, at a floor: HBM: 4.1 of 4.8 TB/s",
		"stopped, the iteration cap reached",
		"re-assessed",
	};
	for (size_t i = 0; i < d.nevents; i++) {
		struct sb s = SB_INIT;
		sb_init(&s);
		sb_adds(&s, "x ");
		optlog_event_text(&d.events[i], &s);
		assert_string_equal(s.buf + 2, want[i]);
		sb_release(&s);
	}
	optlog_doc_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events_are_rendered_after_the_rows),
		cmocka_unit_test(events_read_back_and_are_no_rows),
		cmocka_unit_test(render_same_compares_the_events),
		cmocka_unit_test(lines_that_are_not_optloops_are_not_events),
		cmocka_unit_test(merge_adds_the_events_and_keeps_text_after_the_table),
		cmocka_unit_test(event_text_is_words_without_markdown),
	};
	return cmocka_run_group_tests_name("optlog_events", tests, NULL, NULL);
}
