/*
 * mcp_resources — what `optloop mcp` offers an agent client to read: the
 * workspace's OPT_LOG.md, TRAPS.md and docs/draft.md, and its status (the
 * JSON of `optloop status --json`, which the server gets from a child, as
 * it does a tool's result).
 */
#ifndef OPTLOOP_CLI_MCP_RESOURCES_H
#define OPTLOOP_CLI_MCP_RESOURCES_H

#include <jansson.h>
#include <stdbool.h>

struct sb;

#define MCP_STATUS_URI "optloop://status"

/* resources/list's array: a new JSON array. */
json_t *mcp_resources_json(void);
/* The workspace file uri names ("OPT_LOG.md"), or NULL when uri is none
 * of them (the status is not a file: MCP_STATUS_URI). */
const char *mcp_resource_file(const char *uri);
/* resources/read of a file resource: a new {"contents": [...]} object, or
 * NULL with the reason in *why (the workspace or the file is not there). */
json_t *mcp_resource_read(const char *op, const char *uri, struct sb *why);
/* The workspace directory, allocated; NULL with the reason in *why. */
char *mcp_workspace_dir(const char *op, struct sb *why);

#endif
