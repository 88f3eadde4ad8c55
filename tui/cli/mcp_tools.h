/*
 * mcp_tools — the tools `optloop mcp` offers an agent client: which
 * commands, each tool's input schema read from its command's option table
 * (tui/cli/command.h), and the argv a call's arguments become.  A tool
 * call runs the command as a child optloop with --json where it has it,
 * so the tool's rules are the command's, word for word.
 */
#ifndef OPTLOOP_CLI_MCP_TOOLS_H
#define OPTLOOP_CLI_MCP_TOOLS_H

#include <jansson.h>
#include <stdbool.h>

struct sb;

/* A positional argument a tool takes as a named property. */
struct mcp_pos {
	const char *name;    /* the property ("report") */
	const char *type;    /* "string" or "integer" */
	const char *choices; /* "final|header|pr|nogo", or NULL */
	const char *help;
	bool required;
};

struct mcp_tool {
	const char *name;          /* the tool ("promote_check") */
	const char *command;       /* the row it runs ("promote") */
	const char *summary;       /* NULL: the row's summary */
	const char *fixed;         /* an option always given ("--check"), or NULL */
	const char *need;          /* an option of the row this tool requires, or NULL */
	const char *const *take;   /* NULL: every option of the row but --json and drop;
				    * else only these */
	const char *const *drop;   /* options of the row the tool does not take */
	const struct mcp_pos *pos; /* ended by a NULL name; NULL: none */
	bool read_only, destructive, idempotent;
	bool long_work; /* reports progress; SIGINT cancels it as Ctrl-C does */
};

/* The tool called name, or NULL. */
const struct mcp_tool *mcp_tool_find(const char *name);
/* The tools as tools/list answers them: a new JSON array. */
json_t *mcp_tools_json(void);
/* Whether t's command prints JSON with --json (given on every call). */
bool mcp_tool_json(const struct mcp_tool *t);

/* The words of a call (argv[0] and the global options not included):
 * the command, its positionals and options, --json.  NULL-ended, each
 * word and the array allocated (mcp_argv_free).  A wrong argument (unknown,
 * of the wrong type, out of range, a required one missing): NULL, and what
 * is wrong in *why. */
char **mcp_tool_argv(const struct mcp_tool *t, json_t *args, struct sb *why);
void mcp_argv_free(char **argv);

#endif
