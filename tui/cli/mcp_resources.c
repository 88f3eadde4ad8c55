/* mcp_resources — the workspace's files and status as MCP resources.  See
 * mcp_resources.h. */
#include "tui/cli/mcp_resources.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILE_MAX (16u << 20) /* a resource read in one piece */

static const struct {
	const char *uri, *file, *name, *description, *mime;
} resources[] = {
	{"optloop://workspace/OPT_LOG.md", "OPT_LOG.md", "OPT_LOG.md",
	 "the optimization log: one row per iteration (gate, bench, vs best, status)",
	 "text/markdown"},
	{"optloop://workspace/TRAPS.md", "TRAPS.md", "TRAPS.md",
	 "known traps of kernel optimization: fact, why, how to apply", "text/markdown"},
	{"optloop://workspace/docs/draft.md", "docs/draft.md", "docs/draft.md",
	 "the task contract: op, target, validation and benchmark commands, frozen scope",
	 "text/markdown"},
	{MCP_STATUS_URI, NULL, "status",
	 "where the loop stands and the due step (optloop status --json)", "application/json"},
};

#define NRES (sizeof(resources) / sizeof(resources[0]))

json_t *mcp_resources_json(void)
{
	json_t *a = json_array();
	for (size_t i = 0; i < NRES; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}", "uri", resources[i].uri,
						   "name", resources[i].name, "description",
						   resources[i].description, "mimeType",
						   resources[i].mime));
	return a;
}

static int find(const char *uri)
{
	for (size_t i = 0; i < NRES; i++)
		if (!strcmp(resources[i].uri, uri))
			return (int)i;
	return -1;
}

const char *mcp_resource_file(const char *uri)
{
	int i = find(uri);
	return i < 0 ? NULL : resources[i].file;
}

char *mcp_workspace_dir(const char *op, struct sb *why)
{
	struct loop *l;
	struct err e = {0};
	if (loop_open(NULL, op, LOOP_READONLY | LOOP_ANY_CONTRACT, &l, &e) < 0) {
		sb_adds(why, e.msg);
		return NULL;
	}
	char *dir = xstrdup(loop_dir(l));
	loop_close(l);
	return dir;
}

static char *base64(const unsigned char *p, size_t n)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = xmalloc(4 * ((n + 2) / 3) + 1), *o = out;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = i + 1 < n ? b64[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? b64[v & 63] : '=';
	}
	*o = 0;
	return out;
}

json_t *mcp_resource_read(const char *op, const char *uri, struct sb *why)
{
	int i = find(uri);
	if (i < 0 || !resources[i].file) {
		sb_addf(why, "no resource %s (resources/list lists them)", uri);
		return NULL;
	}
	char *dir = mcp_workspace_dir(op, why);
	if (!dir)
		return NULL;
	char *path = xasprintf("%s/%s", dir, resources[i].file);
	free(dir);
	FILE *f = fopen(path, "rb");
	if (!f) {
		sb_addf(why, "cannot read %s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	struct sb text = SB_INIT;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && text.len <= FILE_MAX)
		sb_add(&text, buf, n);
	bool bad = ferror(f) || text.len > FILE_MAX;
	fclose(f);
	if (bad) {
		sb_addf(why, "cannot read %s: %s", path,
			text.len > FILE_MAX ? "larger than 16 MiB" : "read error");
		free(path);
		sb_release(&text);
		return NULL;
	}
	free(path);
	json_t *c = json_pack("{s:s, s:s}", "uri", uri, "mimeType", resources[i].mime);
	json_t *s = json_stringn(sb_str(&text), text.len);
	if (s) {
		json_object_set_new(c, "text", s);
	} else { /* not UTF-8: the bytes as they are */
		char *b = base64((const unsigned char *)sb_str(&text), text.len);
		json_object_set_new(c, "blob", json_string(b));
		free(b);
	}
	sb_release(&text);
	return json_pack("{s:[o]}", "contents", c);
}
