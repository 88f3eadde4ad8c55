/*
 * watch — `optloop watch [--json] [--until STATE]`: one line per event as the
 * workspace changes, for agents and dashboards (core/watch.c does the
 * watching).  Exits 0 on SIGINT or SIGTERM, and once the state is reached
 * with --until.
 */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct watcher {
	bool json;
	const char *until;
	bool reached;
};

static void add_num(json_t *j, const char *key, double v)
{
	json_object_set_new(j, key, isfinite(v) ? json_real(v) : json_null());
}

static void add_str(json_t *j, const char *key, const char *v)
{
	if (v)
		json_object_set_new(j, key, json_string(v));
}

/* The JSON line of an event: the keys every event has, then its own. */
static void print_json(const struct loop_watch_event *ev)
{
	json_t *j = json_object();
	json_object_set_new(j, "t", json_real(ev->t));
	json_object_set_new(j, "event", json_string(loop_watch_kind_name(ev->kind)));
	add_str(j, "op", ev->op);
	json_object_set_new(j, "iteration", json_integer(ev->iteration));
	switch (ev->kind) {
	case LOOP_WATCH_STATE:
		add_str(j, "state", ev->state);
		add_str(j, "next", ev->text);
		json_object_set_new(j, "stall", json_integer(ev->stall));
		break;
	case LOOP_WATCH_RUN_START:
		json_object_set_new(j, "run", json_integer(ev->run_id));
		add_str(j, "kind", ev->run_kind);
		json_object_set_new(j, "pid", json_integer(ev->pid));
		add_str(j, "command", ev->text);
		add_str(j, "log", ev->log_path);
		break;
	case LOOP_WATCH_PROGRESS:
		json_object_set_new(j, "run", json_integer(ev->run_id));
		json_object_set_new(j, "progress", json_integer(ev->progress));
		break;
	case LOOP_WATCH_STAGE:
		json_object_set_new(j, "run", json_integer(ev->run_id));
		add_str(j, "stage", ev->text);
		break;
	case LOOP_WATCH_GATE:
		json_object_set_new(j, "run", json_integer(ev->run_id));
		add_str(j, "gate", ev->gate);
		break;
	case LOOP_WATCH_RUN_END:
		json_object_set_new(j, "run", json_integer(ev->run_id));
		add_str(j, "kind", ev->run_kind);
		add_str(j, "gate", ev->gate);
		add_num(j, "bench_ms", ev->bench_ms);
		add_num(j, "vs_best", ev->vs_best);
		add_str(j, "log", ev->log_path);
		break;
	case LOOP_WATCH_ROW:
		add_str(j, "status", ev->status);
		json_object_set_new(j, "unconfirmed",
				    ev->unconfirmed ? json_string(ev->unconfirmed) : json_null());
		add_str(j, "direction", ev->text);
		add_str(j, "gate", ev->gate);
		add_num(j, "bench_ms", ev->bench_ms);
		add_num(j, "vs_best", ev->vs_best);
		break;
	case LOOP_WATCH_COMMIT:
		add_str(j, "commit", ev->commit);
		add_str(j, "status", ev->status);
		break;
	case LOOP_WATCH_CONFIRM:
		add_str(j, "verdict", ev->verdict);
		json_object_set_new(j, "promoted", json_boolean(ev->promoted));
		break;
	case LOOP_WATCH_STALL:
		json_object_set_new(j, "stall", json_integer(ev->stall));
		json_object_set_new(j, "stall_limit", json_integer(ev->stall_limit));
		break;
	case LOOP_WATCH_STOP:
		add_str(j, "reason", ev->reason);
		json_object_set_new(j, "bound", ev->bound ? json_string(ev->bound) : json_null());
		break;
	case LOOP_WATCH_REASSESS:
		add_str(j, "next", ev->text);
		break;
	case LOOP_WATCH_PROBLEM:
		add_str(j, "problems", ev->text);
		break;
	case LOOP_WATCH_EXPLAIN:
		add_str(j, "note", ev->text);
		break;
	case LOOP_WATCH_OUTPUT: /* not asked for */
		break;
	}
	char *s = json_dumps(j, JSON_COMPACT);
	printf("%s\n", s);
	free(s);
	json_decref(j);
}

static void print_text(const struct loop_watch_event *ev)
{
	char when[16];
	time_t t = (time_t)ev->t;
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	printf("%s %s iteration %d: ", when, ev->op ? ev->op : "", ev->iteration);
	switch (ev->kind) {
	case LOOP_WATCH_STATE:
		printf("%s; next: %s\n", ev->state, ev->text ? ev->text : "");
		break;
	case LOOP_WATCH_RUN_START:
		printf("%s run %d started by pid %d: %s\n", ev->run_kind, ev->run_id, ev->pid,
		       ev->text ? ev->text : "");
		break;
	case LOOP_WATCH_PROGRESS:
		printf("run %d at %d%%\n", ev->run_id, ev->progress);
		break;
	case LOOP_WATCH_STAGE:
		printf("run %d: %s\n", ev->run_id, ev->text);
		break;
	case LOOP_WATCH_GATE:
		printf("run %d: gate %s\n", ev->run_id, ev->gate);
		break;
	case LOOP_WATCH_RUN_END:
		printf("%s run %d ended: gate %s, bench %.4g ms\n", ev->run_kind, ev->run_id, ev->gate,
		       ev->bench_ms);
		break;
	case LOOP_WATCH_ROW:
		printf("row logged: %s%s%s (%s)\n", ev->status, ev->unconfirmed ? ", unconfirmed: " : "",
		       ev->unconfirmed ? ev->unconfirmed : "", ev->text ? ev->text : "");
		break;
	case LOOP_WATCH_COMMIT:
		printf("committed %.12s (%s)\n", ev->commit, ev->status);
		break;
	case LOOP_WATCH_CONFIRM:
		printf("confirm %s, %s\n", ev->verdict, ev->promoted ? "promoted" : "not promoted");
		break;
	case LOOP_WATCH_STALL:
		printf("stalled: %d/%d iterations without a win\n", ev->stall, ev->stall_limit);
		break;
	case LOOP_WATCH_STOP:
		printf("a stop is recorded: %s%s%s\n", ev->reason ? ev->reason : "(no reason)",
		       ev->bound ? ", bound: " : "", ev->bound ? ev->bound : "");
		break;
	case LOOP_WATCH_REASSESS:
		printf("the stall was re-assessed; next: %s\n", ev->text ? ev->text : "");
		break;
	case LOOP_WATCH_PROBLEM:
		printf("problems:\n%s", ev->text);
		break;
	case LOOP_WATCH_EXPLAIN:
		printf("explanation recorded: %s\n", ev->text ? ev->text : "");
		break;
	case LOOP_WATCH_OUTPUT: /* not asked for */
		break;
	}
}

static void on_event(void *ctx, const struct loop_watch_event *ev)
{
	struct watcher *w = ctx;
	if (w->json)
		print_json(ev);
	else
		print_text(ev);
	fflush(stdout);
	if (w->until && ev->kind == LOOP_WATCH_STATE && ev->state && !strcmp(ev->state, w->until))
		w->reached = true;
}

static const char *const states[] = {"no_contract", "need_baseline", "ready",    "editing",
				     "verifying",   "measured",      "logged",   "stalled",
				     "stopping",    NULL};

/* --until names a state, before anything is opened */
static int watch_before(struct cmd_ctx *x)
{
	const struct watcher *w = x->args;
	if (w->until) {
		size_t i = 0;
		while (states[i] && strcmp(states[i], w->until))
			i++;
		if (!states[i])
			return cli_usage_error("watch",
					       "--until takes a state: no_contract, need_baseline, "
					       "ready, editing, verifying, measured, logged, stalled "
					       "or stopping, got '%s'",
					       w->until);
	}
	return CMD_GO;
}

/* read-only through its own watcher: never the writer lock */
static int watch_run(struct cmd_ctx *x)
{
	struct watcher *wp = x->args, w = *wp;
	struct loop_watch *lw;
	struct err e = {0};
	int rc;

	const volatile sig_atomic_t *stop = cli_stop_on_signals();
	if (loop_watch_open(NULL, x->cli->op, 0, on_event, &w, &lw, &e) < 0)
		return cli_fail(&e);
	rc = 0;
	while (!*stop && !w.reached) {
		struct pollfd p = {.fd = loop_watch_fd(lw), .events = POLLIN};
		int n = poll(&p, 1, -1);
		if (n < 0 && errno != EINTR) {
			rc = cli_fail(&(struct err){.code = ERR_IO, .msg = "poll failed"});
			break;
		}
		if (n > 0 && loop_watch_pump(lw, &e) < 0) {
			/* a workspace read in the middle of a write, or gone: say so, go on */
			fprintf(stderr, "optloop watch: %s\n", e.msg);
			err_clear(&e);
		}
	}
	loop_watch_close(lw);
	return rc;
}

static const struct cli_opt watch_opts[] = {
	CLI_FLAG("--json", offsetof(struct watcher, json),
		 "one JSON object per line (each event's fields: optloop help commands, "
		 "under \"Watching a workspace\")"),
	CLI_STR("--until", offsetof(struct watcher, until), "STATE",
		"exit 0 once the workspace reaches STATE (ready, measured, logged, ...)"),
	CLI_END,
};

const struct command cmd_watch = {
	.name = "watch",
	.summary = "one line per event as the workspace changes (runs, progress, gate, rows, commits)",
	.opts = watch_opts,
	.args_size = sizeof(struct watcher),
	.examples = (const char *const[]){"watch", "watch --json",
					  "watch --until measured  # wait for a verify to end", NULL},
	.more = "Read-only: it never takes the writer lock, so any number can\n"
		"watch while one optloop (an agent's, a workbench's) writes.\n"
		"Ctrl-C or SIGTERM ends it with exit 0.",
	.before = watch_before,
	.run = watch_run,
};
