/* Unit tests for vis: a command shown to the user spells out every byte a
 * terminal would act on, and leaves plain text, any script, as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/sb.h"
#include "core/vis.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_text_stays),
		cmocka_unit_test(controls_are_spelled_out),
		cmocka_unit_test(bidi_and_broken_utf8_are_spelled_out),
	};
	return cmocka_run_group_tests_name("vis", tests, NULL, NULL);
}
