/*
 * jsonw — a JSON document written as it is produced, laid out as jansson
 * lays out a whole tree.  See jsonw.h.
 */
#include "core/jsonw.h"
#include "core/err.h"

#include <string.h>

void jsonw_init(struct jsonw *w, size_t flags, json_dump_callback_t write, void *data)
{
	memset(w, 0, sizeof(*w));
	w->flags = flags;
	w->write = write;
	w->data = data;
}

static bool failed(const struct jsonw *w)
{
	return w->write_failed || w->dump_failed;
}

static int flush(struct jsonw *w)
{
	if (failed(w))
		return -1;
	if (w->len && w->write(w->buf, w->len, w->data) != 0) {
		w->write_failed = true;
		return -1;
	}
	w->len = 0;
	return 0;
}

static int put(struct jsonw *w, const char *buf, size_t len)
{
	if (failed(w))
		return -1;
	if (w->len + len > sizeof(w->buf) && flush(w) < 0)
		return -1;
	if (len > sizeof(w->buf)) {
		if (w->write(buf, len, w->data) != 0) {
			w->write_failed = true;
			return -1;
		}
		return 0;
	}
	memcpy(w->buf + w->len, buf, len);
	w->len += len;
	return 0;
}

static int spaces(struct jsonw *w, size_t n)
{
	static const char blank[] = "                                ";
	while (n > 0) {
		size_t k = n < sizeof(blank) - 1 ? n : sizeof(blank) - 1;
		if (put(w, blank, k) < 0)
			return -1;
		n -= k;
	}
	return 0;
}

/* jansson's dump_indent: a new line indented to depth, or with space set
 * and no indentation, one blank unless compact. */
static int indent(struct jsonw *w, int depth, bool space)
{
	size_t n = w->flags & JSON_MAX_INDENT;
	if (n > 0)
		return put(w, "\n", 1) < 0 ? -1 : spaces(w, n * (size_t)depth);
	if (space && !(w->flags & JSON_COMPACT))
		return put(w, " ", 1);
	return 0;
}

/* A value jansson dumps on its own, as if at the current depth: every line
 * it starts is indented further by the containers open around it. */
static int reindent(const char *buf, size_t len, void *data)
{
	struct jsonw *w = data;
	size_t extra = (w->flags & JSON_MAX_INDENT) * (size_t)w->depth;
	while (len > 0) {
		const char *nl = extra ? memchr(buf, '\n', len) : NULL;
		size_t k = nl ? (size_t)(nl - buf) + 1 : len;
		if (put(w, buf, k) < 0 || (nl && spaces(w, extra) < 0))
			return -1;
		buf += k;
		len -= k;
	}
	return 0;
}

static int dump(struct jsonw *w, json_t *v)
{
	if (failed(w))
		return -1;
	if (json_dump_callback(v, reindent, w, w->flags | JSON_ENCODE_ANY) != 0) {
		if (!w->write_failed)
			w->dump_failed = true;
		return -1;
	}
	return 0;
}

/* What goes before a member or an element: the comma and the line after
 * the one before, the key. */
static int member(struct jsonw *w, const char *key)
{
	if (w->depth > 0) {
		bool *any = &w->any[w->depth - 1];
		if ((*any && put(w, ",", 1) < 0) || indent(w, w->depth, *any) < 0)
			return -1;
		*any = true;
	}
	if (!key)
		return failed(w) ? -1 : 0;
	json_t *k = json_string(key);
	int rc = k ? dump(w, k) : -1;
	json_decref(k);
	if (!k)
		w->dump_failed = true;
	if (rc < 0)
		return -1;
	return w->flags & JSON_COMPACT ? put(w, ":", 1) : put(w, ": ", 2);
}

static int open_container(struct jsonw *w, const char *key, const char *braces)
{
	if (w->depth >= JSONW_MAX_DEPTH)
		BUG("jsonw: more than %d containers open", JSONW_MAX_DEPTH);
	if (member(w, key) < 0 || put(w, braces, 1) < 0)
		return -1;
	w->closer[w->depth] = braces[1];
	w->any[w->depth++] = false;
	return 0;
}

int jsonw_object(struct jsonw *w, const char *key)
{
	return open_container(w, key, "{}");
}

int jsonw_array(struct jsonw *w, const char *key)
{
	return open_container(w, key, "[]");
}

int jsonw_close(struct jsonw *w)
{
	if (w->depth <= 0)
		BUG("jsonw: nothing open to close");
	/* an empty one closes on the same line: "[]", "{}" */
	bool any = w->any[--w->depth];
	if ((any && indent(w, w->depth, false) < 0) || put(w, &w->closer[w->depth], 1) < 0)
		return -1;
	return w->depth ? 0 : flush(w);
}

int jsonw_value(struct jsonw *w, const char *key, json_t *v)
{
	if (member(w, key) < 0 || dump(w, v) < 0)
		return -1;
	return w->depth ? 0 : flush(w);
}
