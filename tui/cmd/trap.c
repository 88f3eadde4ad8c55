/* trap — `optloop trap list|add|mark`: the TRAPS.md catalogue and the
 * checklist of the iteration in progress. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trap_list_args {
	long iter;
	bool json;
};

static int trap_list(struct cmd_ctx *x)
{
	const struct trap_list_args *args = x->args;
	struct loop *l = x->l;
	struct traps_doc d;
	struct problems p;
	struct err e = {0};
	bool json = args->json;
	int iter = (int)args->iter, rc;

	if (iter < 0 && (rc = loop_cli_iteration(l, &iter)) != 0)
		return rc;
	if (loop_traps(l, iter, &d, &p, &e) < 0)
		return cli_fail(&e);
	if (json) {
		json_t *j = json_object(), *a = json_array(), *pa = json_array();
		json_object_set_new(j, "iteration", json_integer(iter));
		for (size_t i = 0; i < d.n; i++) {
			json_t *t = json_object();
			json_object_set_new(t, "id", json_string(d.v[i].id));
			json_object_set_new(t, "title", json_string(d.v[i].title));
			json_object_set_new(t, "state", json_string(trap_state_name(d.v[i].state)));
			json_object_set_new(t, "fact", json_string(d.v[i].fact));
			json_object_set_new(t, "why", json_string(d.v[i].why));
			json_object_set_new(t, "how", json_string(d.v[i].how));
			json_array_append_new(a, t);
		}
		for (size_t i = 0; i < p.n; i++) {
			json_t *t = json_object();
			json_object_set_new(t, "line", json_integer(p.v[i].lineno));
			json_object_set_new(t, "message", json_string(p.v[i].msg));
			json_array_append_new(pa, t);
		}
		json_object_set_new(j, "traps", a);
		json_object_set_new(j, "problems", pa);
		cli_print_json(j);
	} else {
		/* TRAPS.md may be written by hand: what it holds is spelled out */
		struct sb v1 = SB_INIT, v2 = SB_INIT;
		printf("trap checklist, iteration %d ([ ] unchecked, [x] checked, [!] hit):\n", iter);
		for (size_t i = 0; i < d.n; i++) {
			const char *box = d.v[i].state == TRAP_HIT ? "[!]"
					  : d.v[i].state == TRAP_CHECKED ? "[x]" : "[ ]";
			printf("%s %-24s %s\n", box, cli_vis(d.v[i].id, &v1), cli_vis(d.v[i].title, &v2));
		}
		for (size_t i = 0; i < p.n; i++)
			fprintf(stderr, "optloop: TRAPS.md:%d: %s\n", p.v[i].lineno,
				cli_vis(p.v[i].msg, &v1));
		sb_release(&v1);
		sb_release(&v2);
	}
	traps_doc_release(&d);
	problems_release(&p);
	return 0;
}

struct trap_add_args {
	const char *title, *fact, *why, *how;
	bool json;
};

static int trap_add(struct cmd_ctx *x)
{
	const struct trap_add_args *a = x->args;
	struct loop *l = x->l;
	struct err e = {0};
	char *id = NULL;

	if (loop_trap_add(l, a->title, a->fact, a->why, a->how, &id, &e) < 0)
		return e.code == ERR_USAGE ? cli_usage_error("trap", "%s", e.msg) : cli_fail(&e);
	if (a->json) {
		json_t *j = json_object();
		json_object_set_new(j, "id", json_string(id));
		cli_print_json(j);
	} else {
		printf("added trap %s to TRAPS.md\n", id);
	}
	free(id);
	return 0;
}

struct trap_mark_args {
	long iter;
	enum trap_state state; /* from the second argument */
};

/* the trap id and the state, before anything is opened */
static int trap_mark_check(struct cmd_ctx *x)
{
	struct trap_mark_args *a = x->args;
	const char *id = x->npos > 0 ? x->pos[0] : NULL;
	const char *state = x->npos > 1 ? x->pos[1] : NULL;
	if (!id || !state)
		return cli_usage_error("trap", "mark needs a trap id and a state (checked, hit or "
					       "unchecked)");
	if (!strcmp(state, "checked"))
		a->state = TRAP_CHECKED;
	else if (!strcmp(state, "hit"))
		a->state = TRAP_HIT;
	else if (!strcmp(state, "unchecked"))
		a->state = TRAP_UNCHECKED;
	else
		return cli_usage_error("trap", "state must be checked, hit or unchecked, got '%s'",
				       state);
	return CMD_GO;
}

static int trap_mark(struct cmd_ctx *x)
{
	const struct trap_mark_args *a = x->args;
	struct loop *l = x->l;
	struct traps_doc d = {0};
	struct err e = {0};
	int iter = (int)a->iter, rc;
	const char *id = x->pos[0];
	enum trap_state ts = a->state;

	if (iter < 0 && (rc = loop_cli_iteration(l, &iter)) != 0)
		return rc;
	rc = loop_traps(l, iter, &d, NULL, &e);
	if (rc == 0 && !traps_find(&d, id))
		rc = err_set(&e, ERR_USAGE, "no trap '%s' in TRAPS.md (optloop trap list shows the ids)",
			     id);
	if (rc == 0)
		rc = loop_trap_mark(l, iter, id, ts, "user", &e);
	if (rc == 0)
		printf("iteration %d: trap %s %s\n", iter, id, trap_state_name(ts));
	traps_doc_release(&d);
	if (rc < 0)
		return e.code == ERR_USAGE ? cli_usage_error("trap", "%s", e.msg) : cli_fail(&e);
	return 0;
}

static const struct cli_opt trap_list_opts[] = {
	CLI_INT("--iter", offsetof(struct trap_list_args, iter), "N", 0, INT_MAX,
		"the iteration's checklist (default: the current one)"),
	CLI_FLAG("--json", offsetof(struct trap_list_args, json), "print the checklist as JSON"),
	CLI_END,
};

static const struct command trap_list_verb = {
	.name = "list",
	.summary = "the iteration's trap checklist: each trap checked, hit or unchecked",
	.open = OPEN_READ,
	.opts = trap_list_opts,
	.args_size = sizeof(struct trap_list_args),
	.defaults = &(const struct trap_list_args){.iter = -1},
	.examples = (const char *const[]){"trap list", "trap list --iter 3 --json", NULL},
	.run = trap_list,
};

static const struct cli_opt trap_add_opts[] = {
	CLI_NEED("--title", offsetof(struct trap_add_args, title), "T", "the trap in a few words"),
	CLI_NEED("--fact", offsetof(struct trap_add_args, fact), "F",
		 "what happened (numbers, the iteration)"),
	CLI_NEED("--why", offsetof(struct trap_add_args, why), "W", "why it misleads"),
	CLI_NEED("--how", offsetof(struct trap_add_args, how), "H",
		 "how to check for it next time"),
	CLI_FLAG("--json", offsetof(struct trap_add_args, json), "print the new trap as JSON"),
	CLI_END,
};

static const struct command trap_add_verb = {
	.name = "add",
	.summary = "add a trap to TRAPS.md (the catalogue every checklist comes from)",
	.open = OPEN_WRITE,
	.opts = trap_add_opts,
	.args_size = sizeof(struct trap_add_args),
	.examples = (const char *const[]){
		"trap add --title 'cold cache' --fact 'iter 4 ran 30% fast on a cold Triton cache' "
		"--why 'the first run compiles' --how 'verify twice, compare the second'",
		NULL,
	},
	.run = trap_add,
};

static const struct cli_opt trap_mark_opts[] = {
	CLI_INT("--iter", offsetof(struct trap_mark_args, iter), "N", 0, INT_MAX,
		"the iteration (default: the current one)"),
	CLI_END,
};

static const struct command trap_mark_verb = {
	.name = "mark",
	.summary = "mark a trap on the iteration's checklist",
	.open = OPEN_WRITE,
	.opts = trap_mark_opts,
	.args_size = sizeof(struct trap_mark_args),
	.defaults = &(const struct trap_mark_args){.iter = -1},
	.max_pos = 2,
	.pos_usage = "ID checked|hit|unchecked",
	.pos_help = "  ID     the trap's id (optloop trap list shows them)\n"
		    "  STATE  checked, hit or unchecked",
	.examples = (const char *const[]){"trap mark relative-tolerance checked", NULL},
	.before = trap_mark_check,
	.run = trap_mark,
};

const struct command cmd_trap = {
	.name = "trap",
	.summary = "the TRAPS.md catalogue and the iteration's trap checklist",
	.verbs = (const struct command *const[]){&trap_list_verb, &trap_add_verb, &trap_mark_verb,
						 NULL},
	.pos_help = "  list   the iteration's trap checklist\n"
		    "  add    add a trap to TRAPS.md\n"
		    "  mark   mark a trap checked, hit or unchecked for the iteration",
	.examples = (const char *const[]){"trap list", "trap mark relative-tolerance checked",
					  "trap list --help", NULL},
	.more = "optloop trap VERB --help lists a verb's options.",
};
