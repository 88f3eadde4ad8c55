/* vis — see vis.h. */
#include "core/vis.h"

#include "core/sb.h"

size_t vis_utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (n <= 1)
		return n;
	unsigned cp = c & (0x7f >> n);
	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[k] & 0x3f);
	}
	static const unsigned min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

bool vis_is_bidi(const unsigned char *p, size_t n)
{
	if (n == 2)
		return p[0] == 0xd8 && p[1] == 0x9c;
	if (n != 3 || p[0] != 0xe2)
		return false;
	return (p[1] == 0x80 && (p[2] == 0x8e || p[2] == 0x8f || (p[2] >= 0xaa && p[2] <= 0xae))) ||
	       (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9);
}

/* The code point of the valid n-byte sequence at p. */
static unsigned code_point(const unsigned char *p, size_t n)
{
	if (n == 1)
		return p[0];
	unsigned cp = p[0] & (0x7f >> n);
	for (size_t k = 1; k < n; k++)
		cp = cp << 6 | (p[k] & 0x3f);
	return cp;
}

bool vis_escape(const char *s, struct sb *out)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	bool spelled = false;
	for (size_t i = 0; p[i];) {
		size_t n = vis_utf8_len(p + i);
		if (n == 0) {
			sb_addf(out, "\\x%02x", p[i]);
			spelled = true;
			i++;
			continue;
		}
		unsigned cp = code_point(p + i, n);
		if (n == 1 && (cp < 0x20 || cp == 0x7f)) {
			switch (cp) {
			case '\t': sb_adds(out, "\\t"); break;
			case '\r': sb_adds(out, "\\r"); break;
			case '\n': sb_adds(out, "\\n"); break;
			case 0x1b: sb_adds(out, "\\e"); break;
			default: sb_addf(out, "\\x%02x", cp); break;
			}
			spelled = true;
		} else if ((cp >= 0x80 && cp <= 0x9f) || vis_is_bidi(p + i, n)) {
			sb_addf(out, "\\u%04x", cp);
			spelled = true;
		} else {
			sb_add(out, p + i, n);
		}
		i += n;
	}
	return spelled;
}
