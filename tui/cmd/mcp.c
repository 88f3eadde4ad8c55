/* mcp — `optloop mcp`: the loop's commands as Model Context Protocol tools
 * over stdio (JSON-RPC 2.0, one message per line) for an agent client.
 *
 * Each tool call runs the command as a child optloop (--json where it has
 * it) in the workspace directory, so every rule, refusal and the one-writer
 * lock are the command's own: this process holds no lock and writes
 * nothing itself.  One poll() loop reads stdin and every child's pipes, so
 * a cancel is read while a tool runs; the child's stderr lines are the
 * progress of a long run, and a cancel sends it SIGINT, exactly as Ctrl-C
 * does (the run is recorded as an attempt, the candidate stays in the
 * tree).  When the client goes away (stdin closed, or a signal), long runs
 * are stopped the same way and the server exits once every child has. */
#define _GNU_SOURCE /* pipe2 */
#include "tui/cli/commands.h"
#include "tui/cli/mcp_resources.h"
#include "tui/cli/mcp_tools.h"
#include "tui/cli/util.h"
#include "core/err.h"
#include "core/sb.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Newest first: the answer when a client asks for one not here. */
static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05", NULL};

enum {
	RPC_PARSE = -32700,
	RPC_INVALID = -32600,
	RPC_METHOD = -32601,
	RPC_PARAMS = -32602,
	RPC_INTERNAL = -32603,
	RPC_NO_RESOURCE = -32002,
};

#define LINE_MAX_BYTES (64u << 20)

/* A request a child answers: a tool call, or a read of the status. */
struct call {
	json_t *id;
	const struct mcp_tool *tool; /* NULL: resources/read of the status */
	json_t *token;               /* the client's progressToken, or NULL */
	pid_t pid;
	int out, err;                /* the child's stdout and stderr; -1 at EOF */
	int pi_out, pi_err;          /* their places in this pass's pollfds, or -1 */
	struct sb obuf, ebuf;
	size_t eline;                /* where the stderr line not yet reported starts */
	long progress;
	bool cancelled, stopped;     /* the client cancelled it; SIGINT was sent */
	int sig;                     /* the signal that ended it, or 0 */
	struct call *next;
};

struct server {
	struct cli *cli;
	const char *exe;
	struct sb in;
	bool in_eof;
	const volatile sig_atomic_t *signalled;
	struct call *calls;
	/* resources/subscribe: inotify on the workspace directory */
	int ino, wd_ws, wd_docs;
	bool sub[3]; /* OPT_LOG.md, TRAPS.md, docs/draft.md */
};

static const char *const sub_files[] = {"OPT_LOG.md", "TRAPS.md", "docs/draft.md"};

/* ---- writing messages ---------------------------------------------------- */

static void send_msg(json_t *m)
{
	char *s = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (!s)
		return;
	size_t n = strlen(s);
	s[n] = '\n'; /* replaces the NUL: written with its length */
	for (size_t off = 0; off < n + 1;) {
		ssize_t w = write(STDOUT_FILENO, s + off, n + 1 - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break; /* the client is gone: what it missed is in the workspace */
		off += (size_t)w;
	}
	free(s);
}

static void send_result(json_t *id, json_t *result)
{
	send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

static void send_error(json_t *id, int code, const char *msg)
{
	send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			   id ? id : json_null(), "error", "code", code, "message", msg));
}

static void send_note(const char *method, json_t *params)
{
	send_msg(json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", method, "params", params));
}

/* ---- children ---------------------------------------------------------- */

static int spawn(struct server *s, char **words, struct call *c, struct sb *why)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0) {
		sb_addf(why, "cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe2(pe, O_CLOEXEC) < 0) {
		sb_addf(why, "cannot make a pipe: %s", strerror(errno));
		close(po[0]);
		close(po[1]);
		return -1;
	}
	/* argv: optloop [--op OP] WORDS... */
	size_t n = 0;
	while (words[n])
		n++;
	char **argv = xcalloc(n + 3, sizeof(*argv));
	size_t k = 0;
	argv[k++] = (char *)(s->cli->argv0 ? s->cli->argv0 : "optloop");
	char *op = s->cli->op ? xasprintf("--op=%s", s->cli->op) : NULL;
	if (op)
		argv[k++] = op;
	for (size_t i = 0; i < n; i++)
		argv[k++] = words[i];

	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t dfl, none;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, pe[1], STDERR_FILENO);
	posix_spawnattr_init(&at);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	int rc = posix_spawn(&c->pid, s->exe, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(op);
	free(argv);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		sb_addf(why, "cannot run %s: %s", s->exe, strerror(rc));
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	c->out = po[0];
	c->err = pe[0];
	fcntl(c->out, F_SETFL, O_NONBLOCK);
	fcntl(c->err, F_SETFL, O_NONBLOCK);
	return 0;
}

/* SIGINT, as Ctrl-C: the run is stopped, recorded, the candidate put back. */
static void stop_call(struct call *c)
{
	if (c->stopped || c->pid <= 0)
		return;
	c->stopped = true;
	kill(c->pid, SIGINT);
}

static void call_free(struct call *c)
{
	json_decref(c->id);
	json_decref(c->token);
	sb_release(&c->obuf);
	sb_release(&c->ebuf);
	free(c);
}

/* Where a run's line says it is, as the message's lead: "[gate 45%] " for a
 * gate case line (pytest's "[ 45%]" at its end), "[gate] " for the gate's
 * banner and verdict, "[pair 3] " for a confirm's or noise's pair, "" else. */
static void stage_of(const char *line, struct sb *out)
{
	size_t n = strlen(line);
	int pct, pair;
	const char *open = n && line[n - 1] == ']' ? strrchr(line, '[') : NULL;
	if (open && sscanf(open, "[%d%%]", &pct) == 1 && pct >= 0 && pct <= 100)
		sb_addf(out, "[gate %d%%] ", pct);
	else if (!strncmp(line, "Correctness gate", 16) || !strncmp(line, "GATE ", 5))
		sb_adds(out, "[gate] ");
	else if (sscanf(line, "after pair %d", &pair) == 1)
		sb_addf(out, "[pair %d] ", pair);
}

/* One stderr line of a run with a progress token: a progress notification,
 * its message the line led by its stage (stage_of). */
static void report_line(struct call *c, const char *p, size_t n)
{
	struct sb raw = SB_INIT, line = SB_INIT;
	for (size_t i = 0; i < n && raw.len < 400; i++)
		if ((unsigned char)p[i] >= 0x20 || p[i] == '\t')
			sb_addc(&raw, p[i] == '\t' ? ' ' : p[i]);
	sb_trim(&raw);
	if (raw.len) {
		stage_of(sb_str(&raw), &line);
		sb_adds(&line, sb_str(&raw));
	}
	sb_release(&raw);
	json_t *msg = line.len ? json_string(sb_str(&line)) : NULL;
	if (msg) /* a line cut inside a UTF-8 sequence is not said */
		send_note("notifications/progress",
			  json_pack("{s:O, s:I, s:o}", "progressToken", c->token, "progress",
				    (json_int_t)++c->progress, "message", msg));
	sb_release(&line);
}

static void report_progress(struct call *c, bool at_eof)
{
	if (!c->token || !c->ebuf.len || c->cancelled)
		return; /* after a cancel the request is over for the client */
	for (;;) {
		const char *start = c->ebuf.buf + c->eline;
		size_t left = c->ebuf.len - c->eline;
		size_t n = strcspn(start, "\r\n");
		if (n == left && !(at_eof && n))
			return;
		report_line(c, start, n);
		c->eline += n + (n < left);
	}
}

/* Read what the child wrote on fd; -1 once at EOF. */
static int drain(int fd, struct sb *buf)
{
	char tmp[65536];
	for (;;) {
		ssize_t r = read(fd, tmp, sizeof(tmp));
		if (r > 0) {
			if (buf->len < LINE_MAX_BYTES)
				sb_add(buf, tmp, (size_t)r);
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return fd;
		close(fd);
		return -1;
	}
}

#define MESSAGE_MAX 4000

/* The last lines of buf, at most MESSAGE_MAX bytes, appended to out. */
static void tail_lines(const struct sb *buf, struct sb *out)
{
	const char *s = sb_str(buf), *from = s;
	if (buf->len > MESSAGE_MAX) {
		from = s + buf->len - MESSAGE_MAX;
		const char *nl = strchr(from, '\n');
		from = nl ? nl + 1 : from;
	}
	sb_adds(out, from);
	sb_trim(out);
}

/* The message of a refusal: the JSON error's when there is one, else
 * optloop's own lines on stderr (the harness's output is in the trace; the
 * line that announces the run says nothing of how it ended) with the gate
 * and the due step of the command's JSON, else the end of what the child
 * printed. */
static char *failure_message(const struct call *c, json_t *out)
{
	json_t *m = json_object_get(json_object_get(out, "error"), "message");
	if (json_is_string(m))
		return xstrdup(json_string_value(m));
	struct sb t = SB_INIT;
	for (const char *p = sb_str(&c->ebuf); *p && t.len < MESSAGE_MAX;) {
		size_t n = strcspn(p, "\n");
		if (!strncmp(p, "optloop", 7) && strncmp(p, "optloop: running ", 17))
			sb_addf(&t, "%s%.*s", t.len ? "\n" : "", (int)n, p);
		p += n + (p[n] == '\n');
	}
	const char *gate = json_string_value(json_object_get(out, "gate"));
	const char *next = json_string_value(json_object_get(out, "next"));
	if (gate)
		sb_addf(&t, "%sgate: %s", t.len ? "\n" : "", gate);
	if (next)
		sb_addf(&t, "%snext: %s", t.len ? "\n" : "", next);
	if (!t.len)
		tail_lines(&c->ebuf, &t);
	if (!t.len)
		tail_lines(&c->obuf, &t);
	if (!t.len && c->sig) /* e.g. SIGINT before it could say anything */
		sb_addf(&t, "ended by signal %d (%s) before it said anything", c->sig,
			strsignal(c->sig));
	else if (!t.len)
		sb_adds(&t, "(it printed nothing)");
	return sb_detach(&t);
}

static json_t *text_content(const char *text)
{
	json_t *s = json_string(text);
	if (!s)
		s = json_string("(output that is not UTF-8; see the workspace's trace/)");
	return json_pack("[{s:s, s:o}]", "type", "text", "text", s);
}

static void answer_tool(struct call *c, int status)
{
	json_t *out = json_loadb(sb_str(&c->obuf), c->obuf.len, 0, NULL);
	json_t *r;
	if (status == 0) {
		const char *text = c->obuf.len ? sb_str(&c->obuf) : sb_str(&c->ebuf);
		r = json_pack("{s:o, s:b}", "content", text_content(text), "isError", 0);
		if (json_is_object(out))
			json_object_set(r, "structuredContent", out);
	} else {
		char *msg = failure_message(c, out);
		char *text = xasprintf("optloop %s exited %d: %s", c->tool->command, status, msg);
		json_t *sc = json_pack("{s:i, s:s}", "exit", status, "message", msg);
		if (!sc)
			sc = json_pack("{s:i, s:s}", "exit", status, "message", text);
		if (json_is_object(out) && !json_object_get(out, "error"))
			json_object_set(sc, "result", out);
		r = json_pack("{s:o, s:o, s:b}", "content", text_content(text), "structuredContent",
			      sc, "isError", 1);
		free(text);
		free(msg);
	}
	json_decref(out);
	send_result(c->id, r);
}

static void answer_status(struct call *c, int status)
{
	if (status != 0) {
		json_t *out = json_loadb(sb_str(&c->obuf), c->obuf.len, 0, NULL);
		char *msg = failure_message(c, out);
		send_error(c->id, RPC_NO_RESOURCE, msg);
		json_decref(out);
		free(msg);
		return;
	}
	json_t *text = json_string(sb_str(&c->obuf));
	send_result(c->id, json_pack("{s:[{s:s, s:s, s:o}]}", "contents", "uri", MCP_STATUS_URI,
				     "mimeType", "application/json", "text",
				     text ? text : json_string("")));
}

/* Both pipes at EOF: reap the child and answer (a cancelled request gets
 * no answer, as the protocol says). */
static void finish(struct call *c)
{
	int st = 0;
	while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
		;
	c->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	int status = WIFEXITED(st) ? WEXITSTATUS(st) : c->sig ? 128 + c->sig : 4;
	report_progress(c, true);
	if (c->cancelled)
		return;
	if (c->tool)
		answer_tool(c, status);
	else
		answer_status(c, status);
}

static struct call *start_call(struct server *s, json_t *id, const struct mcp_tool *t,
			       json_t *token, char **words, struct sb *why)
{
	struct call *c = xcalloc(1, sizeof(*c));
	c->tool = t;
	c->pi_out = c->pi_err = -1;
	if (spawn(s, words, c, why) < 0) {
		free(c);
		return NULL;
	}
	c->id = json_incref(id);
	c->token = json_incref(token);
	c->next = s->calls;
	s->calls = c;
	return c;
}

/* ---- methods ----------------------------------------------------------- */

static json_t *do_initialize(json_t *params)
{
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = versions[0];
	for (size_t i = 0; want && versions[i]; i++)
		if (!strcmp(versions[i], want))
			v = versions[i];
	return json_pack(
		"{s:s, s:{s:{s:b}, s:{s:b, s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", v,
		"capabilities", "tools", "listChanged", 0, "resources", "subscribe", 1,
		"listChanged", 0, "serverInfo", "name", "optloop", "title",
		"optloop: the disciplined kernel optimization loop", "version", OPTLOOP_VERSION,
		"instructions",
		"One change to the kernel, one gated verify, one log row and one commit per "
		"iteration. Call status first: its 'next' says the one step that is due; a tool "
		"refused by the protocol answers an error result (exit 3) naming the step. verify, "
		"confirm and noise report progress when given a progressToken; cancelling one "
		"stops it as Ctrl-C does (an attempt is recorded, the candidate stays).");
}

static void do_tool_call(struct server *s, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	if (!name) {
		send_error(id, RPC_PARAMS, "tools/call needs params.name, the tool's name");
		return;
	}
	const struct mcp_tool *t = mcp_tool_find(name);
	if (!t) {
		char *m = xasprintf("unknown tool '%s' (tools/list lists them)", name);
		send_error(id, RPC_PARAMS, m);
		free(m);
		return;
	}
	json_t *args = json_object_get(params, "arguments");
	if (json_is_null(args))
		args = NULL;
	json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
	if (token && !json_is_string(token) && !json_is_integer(token)) {
		send_error(id, RPC_PARAMS, "_meta.progressToken must be a string or an integer");
		return;
	}
	struct sb why = SB_INIT;
	char **words = mcp_tool_argv(t, args, &why);
	if (!words) {
		send_error(id, RPC_PARAMS, sb_str(&why));
	} else if (!start_call(s, id, t, token, words, &why)) {
		send_error(id, RPC_INTERNAL, sb_str(&why));
	}
	mcp_argv_free(words);
	sb_release(&why);
}

static void do_resource_read(struct server *s, json_t *id, json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	if (!uri) {
		send_error(id, RPC_PARAMS, "resources/read needs params.uri");
		return;
	}
	struct sb why = SB_INIT;
	if (!strcmp(uri, MCP_STATUS_URI)) {
		char *words[] = {(char *)"status", (char *)"--json", NULL};
		if (!start_call(s, id, NULL, NULL, words, &why))
			send_error(id, RPC_INTERNAL, sb_str(&why));
	} else {
		json_t *r = mcp_resource_read(s->cli->op, uri, &why);
		if (r)
			send_result(id, r);
		else
			send_error(id, RPC_NO_RESOURCE, sb_str(&why));
	}
	sb_release(&why);
}

/* Watch the workspace directory (and docs/) for the files subscribed to. */
static int watch_files(struct server *s, struct sb *why)
{
	if (s->ino >= 0)
		return 0;
	char *dir = mcp_workspace_dir(s->cli->op, why);
	if (!dir)
		return -1;
	s->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	char *docs = xasprintf("%s/docs", dir);
	uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE;
	if (s->ino >= 0) {
		s->wd_ws = inotify_add_watch(s->ino, dir, mask);
		s->wd_docs = inotify_add_watch(s->ino, docs, mask);
	}
	int rc = s->ino >= 0 && s->wd_ws >= 0 ? 0 : -1;
	if (rc < 0) {
		sb_addf(why, "cannot watch %s: %s", dir, strerror(errno));
		if (s->ino >= 0)
			close(s->ino);
		s->ino = -1;
	}
	free(docs);
	free(dir);
	return rc;
}

static void do_subscribe(struct server *s, json_t *id, json_t *params, bool on)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	const char *file = uri ? mcp_resource_file(uri) : NULL;
	if (!file) {
		send_error(id, RPC_PARAMS,
			   uri && !strcmp(uri, MCP_STATUS_URI)
				   ? "the status is read, not subscribed to; subscribe to "
				     "optloop://workspace/OPT_LOG.md to hear of each row"
				   : "no such resource to subscribe to (resources/list lists them)");
		return;
	}
	struct sb why = SB_INIT;
	if (on && watch_files(s, &why) < 0) {
		send_error(id, RPC_NO_RESOURCE, sb_str(&why));
		sb_release(&why);
		return;
	}
	sb_release(&why);
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(sub_files[i], file))
			s->sub[i] = on;
	send_result(id, json_object());
}

static void do_cancelled(struct server *s, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	for (struct call *c = s->calls; rid && c; c = c->next)
		if (json_equal(c->id, rid) && c->tool && c->tool->long_work && !c->cancelled) {
			c->cancelled = true;
			stop_call(c);
		}
	/* anything else runs to its end: a log or commit is never cut half-way */
}

static void dispatch(struct server *s, const char *method, json_t *id, json_t *params)
{
	if (!strcmp(method, "initialize"))
		send_result(id, do_initialize(params));
	else if (!strcmp(method, "ping"))
		send_result(id, json_object());
	else if (!strcmp(method, "tools/list"))
		send_result(id, json_pack("{s:o}", "tools", mcp_tools_json()));
	else if (!strcmp(method, "tools/call"))
		do_tool_call(s, id, params);
	else if (!strcmp(method, "resources/list"))
		send_result(id, json_pack("{s:o}", "resources", mcp_resources_json()));
	else if (!strcmp(method, "resources/templates/list"))
		send_result(id, json_pack("{s:[]}", "resourceTemplates"));
	else if (!strcmp(method, "resources/read"))
		do_resource_read(s, id, params);
	else if (!strcmp(method, "resources/subscribe") || !strcmp(method, "resources/unsubscribe"))
		do_subscribe(s, id, params, !strcmp(method, "resources/subscribe"));
	else {
		char *m = xasprintf("method not found: %s", method);
		send_error(id, RPC_METHOD, m);
		free(m);
	}
}

static void handle_line(struct server *s, const char *line, size_t len)
{
	json_error_t je;
	size_t i = 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
		i++;
	if (i == len)
		return;
	json_t *m = json_loadb(line, len, 0, &je);
	if (!m) {
		char *msg = xasprintf("parse error: %s (line %d, column %d)", je.text, je.line,
				      je.column);
		send_error(NULL, RPC_PARSE, msg);
		free(msg);
		return;
	}
	json_t *id = json_object_get(m, "id");
	json_t *method = json_object_get(m, "method");
	json_t *params = json_object_get(m, "params");
	const char *bad = NULL;
	if (!json_is_object(m))
		bad = json_is_array(m) ? "batches are not supported: send one message per line"
				       : "a message is a JSON object";
	else if (!json_is_string(json_object_get(m, "jsonrpc")) ||
		 strcmp(json_string_value(json_object_get(m, "jsonrpc")), "2.0"))
		bad = "\"jsonrpc\" must be \"2.0\"";
	else if (id && !json_is_string(id) && !json_is_integer(id))
		bad = "\"id\" must be a string or an integer";
	else if (!method && (json_object_get(m, "result") || json_object_get(m, "error")))
		goto done; /* a response: this server sends no requests */
	else if (!json_is_string(method))
		bad = "\"method\" must be a string";
	else if (params && !json_is_object(params))
		bad = "\"params\" must be an object";
	if (bad) { /* answered with the id only when it is one */
		bool id_ok = json_is_string(id) || json_is_integer(id);
		send_error(json_is_object(m) && id_ok ? id : NULL, RPC_INVALID, bad);
	} else if (!id) { /* a notification: never answered */
		if (!strcmp(json_string_value(method), "notifications/cancelled"))
			do_cancelled(s, params);
	} else {
		dispatch(s, json_string_value(method), id, params);
	}
done:
	json_decref(m);
}

/* ---- the loop ------------------------------------------------------------ */

static void read_stdin(struct server *s)
{
	char buf[65536];
	ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r <= 0) {
		s->in_eof = true;
		if (s->in.len) /* a last message without its newline */
			handle_line(s, s->in.buf, s->in.len);
		sb_reset(&s->in);
		return;
	}
	sb_add(&s->in, buf, (size_t)r);
	size_t start = 0;
	for (char *nl; (nl = memchr(s->in.buf + start, '\n', s->in.len - start));) {
		size_t end = (size_t)(nl - s->in.buf);
		handle_line(s, s->in.buf + start, end - start);
		start = end + 1;
	}
	if (start) {
		memmove(s->in.buf, s->in.buf + start, s->in.len - start);
		s->in.len -= start;
		s->in.buf[s->in.len] = 0;
	}
	if (s->in.len > LINE_MAX_BYTES) {
		send_error(NULL, RPC_PARSE, "a message longer than 64 MiB without a newline");
		sb_reset(&s->in);
	}
}

static void read_files(struct server *s)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t r;
	while ((r = read(s->ino, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + r;) {
			const struct inotify_event *ev = (const void *)p;
			p += sizeof(*ev) + ev->len;
			if (!ev->len)
				continue;
			char *rel = ev->wd == s->wd_docs ? xasprintf("docs/%s", ev->name)
							 : xstrdup(ev->name);
			for (size_t i = 0; i < 3; i++)
				if (s->sub[i] && !strcmp(rel, sub_files[i]))
					send_note("notifications/resources/updated",
						  json_pack("{s:s+}", "uri", "optloop://workspace/",
							    sub_files[i]));
			free(rel);
		}
}

/* The client is gone (or a signal came): long runs stop as on Ctrl-C. */
static void stop_all(struct server *s)
{
	for (struct call *c = s->calls; c; c = c->next)
		if (c->tool && c->tool->long_work)
			stop_call(c);
}

static void pump_calls(struct server *s, const struct pollfd *fds)
{
	for (struct call **pc = &s->calls; *pc;) {
		struct call *c = *pc;
		if (c->pi_out >= 0 && fds[c->pi_out].revents)
			c->out = drain(c->out, &c->obuf);
		if (c->pi_err >= 0 && fds[c->pi_err].revents) {
			c->err = drain(c->err, &c->ebuf);
			report_progress(c, false);
		}
		if (c->out < 0 && c->err < 0) {
			finish(c);
			*pc = c->next;
			call_free(c);
		} else {
			pc = &c->next;
		}
	}
}

static int serve(struct server *s)
{
	struct pollfd *fds = NULL;
	size_t cap = 0;
	bool stopping = false;
	for (;;) {
		if ((*s->signalled || s->in_eof) && !stopping) {
			stopping = true;
			stop_all(s);
		}
		if (stopping && !s->calls)
			break;
		size_t n = 0, want = 2;
		for (struct call *c = s->calls; c; c = c->next)
			want += 2;
		if (want > cap)
			fds = xrealloc(fds, (cap = want) * sizeof(*fds));
		int pi_in = -1, pi_ino = -1;
		if (!stopping) {
			pi_in = (int)n;
			fds[n++] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
		}
		if (s->ino >= 0) {
			pi_ino = (int)n;
			fds[n++] = (struct pollfd){.fd = s->ino, .events = POLLIN};
		}
		for (struct call *c = s->calls; c; c = c->next) {
			c->pi_out = c->out < 0 ? -1 : (int)n;
			if (c->out >= 0)
				fds[n++] = (struct pollfd){.fd = c->out, .events = POLLIN};
			c->pi_err = c->err < 0 ? -1 : (int)n;
			if (c->err >= 0)
				fds[n++] = (struct pollfd){.fd = c->err, .events = POLLIN};
		}
		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			free(fds);
			return cli_error(ERR_IO, "mcp: poll failed: %s", strerror(errno));
		}
		pump_calls(s, fds);
		if (pi_ino >= 0 && fds[pi_ino].revents)
			read_files(s);
		if (pi_in >= 0 && fds[pi_in].revents)
			read_stdin(s);
	}
	free(fds);
	return 0;
}

static int mcp_run(struct cmd_ctx *x)
{
	struct server s = {.cli = x->cli, .ino = -1, .wd_ws = -1, .wd_docs = -1};
	/* the child is this very program, even when its file was replaced */
	s.exe = access("/proc/self/exe", X_OK) == 0 ? "/proc/self/exe" : x->cli->argv0;
	signal(SIGPIPE, SIG_IGN);
	s.signalled = cli_stop_on_signals();
	int rc = serve(&s);
	if (s.ino >= 0)
		close(s.ino);
	sb_release(&s.in);
	return rc;
}

const struct command cmd_mcp = {
	.name = "mcp",
	.summary = "serve the loop's commands to an agent client (Model Context Protocol, stdio)",
	.open = OPEN_NONE,
	.examples = (const char *const[]){"mcp", "-C ~/src/flash-linear-attention mcp", NULL},
	.more = "JSON-RPC 2.0 on stdin and stdout, one message per line, for agent\n"
		"clients that take MCP tools.  The tools are status, contract, verify, log,\n"
		"commit, confirm, noise, promote_check, promote_explain, promote_attach,\n"
		"report, reassess, stop, dependents and export; each call runs that command\n"
		"(with --json) as a child optloop, so its rules, refusals and the one-writer\n"
		"lock are the command's.  A refusal is an error result with the exit status\n"
		"and the message.  verify, confirm, noise and dependents report their output\n"
		"lines as progress when the client sends a progressToken; a cancelled one is\n"
		"stopped as Ctrl-C stops it.  Resources: OPT_LOG.md, TRAPS.md, docs/draft.md\n"
		"and the status.  Closing stdin stops the runs going the same way and exits.",
	.run = mcp_run,
};
