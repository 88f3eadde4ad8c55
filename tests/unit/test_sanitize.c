/* Unit tests for the screen sanitiser: nothing a child prints may move the
 * cursor, retitle the window or change colours; widths are measured right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sb.h"
#include "views/sanitize.h"

#include <locale.h>
#include <stdio.h>
#include <wchar.h>
#include <stdlib.h>
#include <string.h>

static int setup(void **state)
{
	if (!setlocale(LC_ALL, "C.UTF-8"))
		return -1;
	sanitize_init();
	return 0;
}

/* Clean a NUL-free literal (or with explicit length) into a static buffer. */
static struct sb out;

static const char *clean_n(const char *s, size_t n)
{
	sb_reset(&out);
	sanitize_line(s, n, &out);
	return out.buf;
}

static const char *clean(const char *s)
{
	return clean_n(s, strlen(s));
}

static const char *fit(const char *s, int cells)
{
	sb_reset(&out);
	sanitize_fit(s, strlen(s), cells, &out);
	return out.buf;
}

static void plain_text_passes_unchanged(void **state)
{
	sanitize_set_ascii(false);
	assert_string_equal(clean("GATE PASSED."), "GATE PASSED.");
	sb_reset(&out);
	assert_int_equal(sanitize_line("abc", 3, &out), 3);
}

static void csi_sequences_are_removed(void **state)
{
	assert_string_equal(clean("\x1b[31mred\x1b[0m"), "red");
	assert_string_equal(clean("a\x1b[?1049hb"), "ab");          /* alternate screen */
	assert_string_equal(clean("\x1b[2J\x1b[10;20Hx"), "x");      /* clear, move */
	assert_string_equal(clean("\x1b[38;2;255;0;0mtc"), "tc");     /* truecolour */
	assert_string_equal(clean("\x1b[>0;1c!"), "!");              /* intermediates */
	assert_string_equal(clean("tail\x1b["), "tail");             /* cut short */
}

static void osc_and_string_sequences_are_removed(void **state)
{
	assert_string_equal(clean("\x1b]0;evil title\x07text"), "text");
	assert_string_equal(clean("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "link");
	assert_string_equal(clean("\x1bPq#0;2;0;0;0\x1b\\ok"), "ok");  /* DCS sixel */
	assert_string_equal(clean("\x1b_apc\x1b\\a\x1b^pm\x1b\\b\x1bXsos\x1b\\c"), "abc");
	/* An OSC left open swallows the rest of the line, never shows it. */
	assert_string_equal(clean("x\x1b]52;c;aGVsbG8="), "x");
}

static void short_escapes_are_removed(void **state)
{
	assert_string_equal(clean("\x1b" "cA"), "A");         /* full reset */
	assert_string_equal(clean("\x1b(B\x1b)0x"), "x");     /* charsets */
	assert_string_equal(clean("\x1b" "7s\x1b" "8"), "s"); /* save/restore */
	assert_string_equal(clean("\x1bOPf1"), "f1");         /* SS3 */
	assert_string_equal(clean("end\x1b"), "end");
}

static void c1_controls_are_removed_with_their_sequences(void **state)
{
	assert_string_equal(clean("a\xc2\x9b" "31mb"), "ab");             /* CSI */
	assert_string_equal(clean("a\xc2\x9d" "0;t\xc2\x9c" "b"), "ab");  /* OSC .. ST */
	assert_string_equal(clean("a\xc2\x90" "dcs\x1b\\b"), "ab");       /* DCS */
	assert_string_equal(clean("a\xc2\x85" "b"), "ab");                /* NEL */
	/* A raw 8-bit CSI is not UTF-8: it becomes a replacement mark. */
	assert_string_equal(clean("a\x9b" "b"), "a\xef\xbf\xbd" "b");
}

static void c0_controls_are_dropped(void **state)
{
	assert_string_equal(clean_n("a\0b\x07" "c\x08" "d\x7f" "e\x0e" "f", 11), "abcdef");
	assert_string_equal(clean("a\nb"), "a b");
}

static void tabs_expand_to_stops(void **state)
{
	sb_reset(&out);
	assert_int_equal(sanitize_line("ab\tc", 4, &out), 9);
	assert_string_equal(out.buf, "ab      c");
}

static void carriage_return_keeps_the_last_redraw(void **state)
{
	assert_string_equal(clean("10%\r20%\r30%"), "30%");
	assert_string_equal(clean("line\r"), "line");
	assert_string_equal(clean("line\r\n"), "line ");
}

static void invalid_utf8_is_replaced(void **state)
{
	const char *r = "\xef\xbf\xbd";
	char want[64];

	snprintf(want, sizeof(want), "%s%s", r, r);
	assert_string_equal(clean("\xc0\xaf"), want);               /* overlong '/' */
	snprintf(want, sizeof(want), "%s%s%s", r, r, r);
	assert_string_equal(clean("\xed\xa0\x80"), want);           /* surrogate */
	snprintf(want, sizeof(want), "x%s%sy", r, r);
	assert_string_equal(clean("x\xe2\x82y"), want);             /* truncated */
	snprintf(want, sizeof(want), "%s%s%s%s", r, r, r, r);
	assert_string_equal(clean("\xf4\x90\x80\x80"), want);       /* > U+10FFFF */
	assert_string_equal(clean("\xe2\x82\xac"), "\xe2\x82\xac"); /* valid euro */
}

static void bidi_overrides_are_removed(void **state)
{
	assert_string_equal(clean("a\xe2\x80\xae" "cba\xe2\x80\xac" "z"), "acbaz");
	assert_string_equal(clean("\xe2\x81\xa6x\xe2\x81\xa9"), "x");
}

static void widths_follow_wcwidth(void **state)
{
	const char *wide = "\xe6\xbc\xa2\xe5\xad\x97"; /* two CJK, 2 cells each */
	const char *comb = "e\xcc\x81";                /* e + combining acute */

	sb_reset(&out);
	assert_int_equal(sanitize_line(wide, strlen(wide), &out), 4);
	assert_int_equal(sanitize_width(out.buf, out.len), 4);
	sb_reset(&out);
	assert_int_equal(sanitize_line(comb, strlen(comb), &out), 1);
	assert_int_equal(sanitize_width(out.buf, out.len), 1);
}

static void fit_cuts_with_an_ellipsis(void **state)
{
	const char *wide = "\xe6\xbc\xa2\xe5\xad\x97";

	assert_string_equal(fit("abcdef", 6), "abcdef");
	assert_string_equal(fit("abcdefg", 6), "abcde\xe2\x80\xa6");
	assert_string_equal(fit(wide, 4), wide);
	/* The second wide character would straddle: cut before it. */
	assert_string_equal(fit(wide, 3), "\xe6\xbc\xa2\xe2\x80\xa6");
	assert_string_equal(fit(wide, 2), "\xe2\x80\xa6");
	assert_string_equal(fit("abc", 0), "");
	/* Width is counted after cleaning: escapes take no room. */
	assert_string_equal(fit("\x1b[1mabc\x1b[0m", 3), "abc");
}

static void cell_pads_and_aligns(void **state)
{
	sb_reset(&out);
	sanitize_cell("ab", 5, false, &out);
	assert_string_equal(out.buf, "ab   ");
	sb_reset(&out);
	sanitize_cell("0.973", 7, true, &out);
	assert_string_equal(out.buf, "  0.973");
	sb_reset(&out);
	sanitize_cell("a long direction", 6, false, &out);
	assert_string_equal(out.buf, "a lon\xe2\x80\xa6");
	sb_reset(&out);
	sanitize_cell(NULL, 2, false, &out);
	assert_string_equal(out.buf, "  ");
}

static void ascii_mode_never_emits_high_bytes(void **state)
{
	sanitize_set_ascii(true);
	assert_string_equal(clean("GATE FAILED \xe2\x80\x94 2 failed"), "GATE FAILED - 2 failed");
	assert_string_equal(clean("\xe6\xbc\xa2x"), "?x");
	assert_string_equal(clean("\xff" "a"), "?a");
	assert_string_equal(fit("abcdefg", 4), "abc~");
	assert_string_equal(clean("iter 4 \xc2\xb7 ready"), "iter 4 . ready");
	sanitize_set_ascii(false);
}

/* Every output byte is printable: no C0, DEL, ESC, C1 code point, and the
 * whole string is valid UTF-8 (checked with mbrtowc). */
static void assert_screen_safe(const char *s, size_t n)
{
	mbstate_t st;
	size_t i = 0;

	memset(&st, 0, sizeof(st));
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		assert_false(c < 0x20 || c == 0x7f);
		wchar_t wc;
		size_t k = mbrtowc(&wc, s + i, n - i, &st);
		assert_true(k != (size_t)-1 && k != (size_t)-2 && k != 0);
		assert_false(wc >= 0x80 && wc <= 0x9f);
		i += k;
	}
}

static void random_input_always_comes_out_screen_safe(void **state)
{
	/* An alphabet heavy in the bytes that start trouble. */
	static const unsigned char alpha[] = {0x1b, '[', ']', 'P', '\\', 0x07, 0x9b, 0xc2, 0x9d,
					      0x9c, 0x80, 0xe2, 0x80, 0xae, 0xff, 0xf0, 0x9f,
					      '\r', '\n', '\t', 'a', '1', ';', 'm', 0x00, 0x7f};
	unsigned seed = 12345;
	char buf[64];

	for (int round = 0; round < 4; round++) {
		sanitize_set_ascii(round % 2 == 1);
		for (int iter = 0; iter < 20000; iter++) {
			size_t n = (size_t)(iter % 63) + 1;
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				buf[i] = (char)((round < 2) ? alpha[(seed >> 16) % sizeof(alpha)]
							    : (seed >> 16) & 0xff);
			}
			sb_reset(&out);
			sanitize_line(buf, n, &out);
			assert_screen_safe(out.buf, out.len);
			if (sanitize_is_ascii())
				for (size_t i = 0; i < out.len; i++)
					assert_true((unsigned char)out.buf[i] < 0x80);
			int cells = (int)(iter % 20);
			sb_reset(&out);
			int w = sanitize_fit(buf, n, cells, &out);
			assert_true(w <= cells);
			assert_int_equal(sanitize_width(out.buf, out.len), w);
			assert_screen_safe(out.buf, out.len);
		}
	}
	sanitize_set_ascii(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_text_passes_unchanged),
		cmocka_unit_test(csi_sequences_are_removed),
		cmocka_unit_test(osc_and_string_sequences_are_removed),
		cmocka_unit_test(short_escapes_are_removed),
		cmocka_unit_test(c1_controls_are_removed_with_their_sequences),
		cmocka_unit_test(c0_controls_are_dropped),
		cmocka_unit_test(tabs_expand_to_stops),
		cmocka_unit_test(carriage_return_keeps_the_last_redraw),
		cmocka_unit_test(invalid_utf8_is_replaced),
		cmocka_unit_test(bidi_overrides_are_removed),
		cmocka_unit_test(widths_follow_wcwidth),
		cmocka_unit_test(fit_cuts_with_an_ellipsis),
		cmocka_unit_test(cell_pads_and_aligns),
		cmocka_unit_test(ascii_mode_never_emits_high_bytes),
		cmocka_unit_test(random_input_always_comes_out_screen_safe),
	};
	int rc = cmocka_run_group_tests_name("sanitize", tests, setup, NULL);
	sb_release(&out);
	return rc;
}
