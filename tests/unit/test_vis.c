/* Unit tests for vis: a command shown to the user spells out every byte a
 * terminal would act on, and leaves plain text, any script, as it is; text
 * the user chooses is refused with one; a name in a command to paste is
 * shell-quoted and shows none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "core/sb.h"
#include "core/vis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *in, const char *want, bool spelled)
{
	struct sb out = SB_INIT;
	assert_int_equal(vis_escape(in, &out), spelled);
	assert_string_equal(out.buf ? out.buf : "", want);
	sb_release(&out);
}

static void plain_text_stays(void **state)
{
	(void)state;
	check("python -m benchmarks.ops.verify --op chunk_gla", "python -m benchmarks.ops.verify --op chunk_gla", false);
	check("echo 'héllo' → ✓ 日本", "echo 'héllo' → ✓ 日本", false);
	check("", "", false);
	check(NULL, "", false);
}

static void controls_are_spelled_out(void **state)
{
	(void)state;
	/* the reported case: a carriage return and an erase hid a second command */
	check("./verify\r\033[2Ktouch /tmp/x", "./verify\\r\\e[2Ktouch /tmp/x", true);
	check("a\tb\nc\x01\x7f", "a\\tb\\nc\\x01\\x7f", true);
	/* C1 controls in their UTF-8 spelling: U+009B is a CSI */
	check("x\xc2\x9b" "31m", "x\\u009b31m", true);
}

static void bidi_and_broken_utf8_are_spelled_out(void **state)
{
	(void)state;
	check("ls \xe2\x80\xae" "txt.exe", "ls \\u202etxt.exe", true);
	check("\xe2\x81\xa6" "a" "\xe2\x81\xa9", "\\u2066a\\u2069", true);
	check("\xd8\x9c", "\\u061c", true);
	check("bad \xff byte", "bad \\xff byte", true);
	check("cut \xe2\x80", "cut \\xe2\\x80", true);
	check("overlong \xc0\xaf", "overlong \\xc0\\xaf", true);
	assert_int_equal(vis_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
	assert_int_equal(vis_utf8_len((const unsigned char *)"\xed\xa0\x80"), 0); /* a surrogate */
}

/* Text the user chooses is refused with what vis_escape would spell out
 * (but the controls the caller keeps), naming the character and its byte. */
static void check_names_the_character_and_where(void **state)
{
	(void)state;
	struct err e = {0};
	assert_int_equal(vis_check("--title", "cold cache \xe2\x86\x92 \xc3\xa9", "", "w", "f", &e), 0);
	assert_int_equal(vis_check("--title", "a\tb\nc", "\t\n", "w", "f", &e), 0);
	assert_int_equal(vis_check("--title", NULL, NULL, "w", "f", &e), 0);
	assert_int_equal(vis_check("--title", "ab\033]52;c;eA==\a", "\t", "which acts", "fix it", &e),
			 ERR_USAGE);
	assert_string_equal(e.msg, "--title holds a control character (ESC, at byte 3), which acts; fix it");
	assert_int_equal(vis_check("--title", "a\tb", "\n", "w", "f", &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "(0x09, at byte 2)"));
	assert_int_equal(vis_check("cmd", "ls \xe2\x80\xae" "cod", "", "w", "f", &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "cmd holds a bidirectional control character (U+202E, at byte 4)"));
	assert_int_equal(vis_check("cmd", "a\xe2\x81\xa6", "", "w", "f", &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "(U+2066, at byte 2)"));
	assert_int_equal(vis_check("cmd", "x\xc2\x9b" "2J", "", "w", "f", &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "control character (U+009B, at byte 2)"));
	assert_int_equal(vis_check("cmd", "x\x7f", "", "w", "f", &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "(DEL, at byte 2)"));
	assert_int_equal(vis_check("cmd", "bad \xff", "", "w", "f", &e), ERR_USAGE);
	assert_non_null(strstr(e.msg, "cmd is not valid UTF-8 (byte 0xff at byte 5)"));
}

/* What a shell-quoted word gives back when a shell reads it. */
static char *through_sh(const char *word)
{
	struct sb cmd = SB_INIT, out = SB_INIT;
	sb_addf(&cmd, "printf '%%s' %s", word);
	FILE *f = popen(cmd.buf, "r");
	assert_non_null(f);
	char buf[256];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(&out, buf, n);
	assert_int_equal(pclose(f), 0);
	sb_release(&cmd);
	return sb_detach(&out);
}

/* A name in a command to paste: /bin/sh gives it back byte for byte, and
 * the word holds nothing a terminal acts on. */
static void shell_word_round_trips_and_shows_no_control(void **state)
{
	(void)state;
	const char *names[] = {
		"ops/chunk.c",
		"name with $(touch PWNED) and `x` \"q\" \\ ;|&",
		"it's",
		"",
		"~home",
		"esc \033]52;c;aGk=\a and \xe2\x80\xae bidi, 100% \\n it's",
		"c1 \xc2\x9b, bad \xff, cr \r, nl \n in the middle",
		"r\xc3\xa9sum\xc3\xa9 \xe2\x86\x92",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		struct sb w = SB_INIT, seen = SB_INIT;
		vis_shell_word(names[i], &w);
		assert_false(vis_escape(w.buf, &seen));
		char *back = through_sh(w.buf);
		assert_string_equal(back, names[i]);
		free(back);
		sb_release(&w);
		sb_release(&seen);
	}
	struct sb w = SB_INIT;
	vis_shell_word("ops/chunk.c", &w);
	assert_string_equal(w.buf, "ops/chunk.c"); /* bare when it needs nothing */
	sb_reset(&w);
	vis_shell_word("a $(b)", &w);
	assert_string_equal(w.buf, "'a $(b)'");
	sb_reset(&w);
	vis_shell_word("\033x", &w);
	assert_string_equal(w.buf, "\"$(printf '\\033x')\"");
	sb_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_text_stays),
		cmocka_unit_test(controls_are_spelled_out),
		cmocka_unit_test(bidi_and_broken_utf8_are_spelled_out),
		cmocka_unit_test(check_names_the_character_and_where),
		cmocka_unit_test(shell_word_round_trips_and_shows_no_control),
	};
	return cmocka_run_group_tests_name("vis", tests, NULL, NULL);
}
