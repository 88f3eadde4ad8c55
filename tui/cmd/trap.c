/* trap — `optloop trap list|add|mark`: the TRAPS.md catalogue and the
 * checklist of the iteration in progress. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/guards_cli.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int trap_list(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct traps_doc d;
	struct problems p;
	struct err e = {0};
	bool json = false;
	int iter, rc;

	long it = -1;
	const struct cli_opt opts[] = {
		CLI_PINT("--iter", &it, "N", 0, INT_MAX, "the iteration's checklist (default: the current one)"),
		CLI_PFLAG("--json", &json, "print the checklist as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {"trap list", "trap list --iter 3 --json", NULL};
	struct cli_cmd c = {.name = "trap", .opts = opts, .examples = examples,
			    .usage = "trap list [--iter N] [--json]",
			    .summary = "the iteration's trap checklist: each trap checked, hit or "
				       "unchecked"};
	if (!cli_parse(&c, argc - 1, argv + 1, &rc))
		return rc;
	iter = (int)it;
	if ((rc = loop_cli_open(cli, LOOP_READONLY, &l)) != 0)
		return rc;
	if (iter < 0 && (rc = loop_cli_iteration(l, &iter)) != 0) {
		loop_close(l);
		return rc;
	}
	if (loop_traps(l, iter, &d, &p, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
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
		printf("trap checklist, iteration %d ([ ] unchecked, [x] checked, [!] hit):\n", iter);
		for (size_t i = 0; i < d.n; i++) {
			const char *box = d.v[i].state == TRAP_HIT ? "[!]"
					  : d.v[i].state == TRAP_CHECKED ? "[x]" : "[ ]";
			printf("%s %-24s %s\n", box, d.v[i].id, d.v[i].title);
		}
		for (size_t i = 0; i < p.n; i++)
			fprintf(stderr, "optloop: TRAPS.md:%d: %s\n", p.v[i].lineno, p.v[i].msg);
	}
	traps_doc_release(&d);
	problems_release(&p);
	loop_close(l);
	return 0;
}

static int trap_add(struct cli *cli, int argc, char **argv)
{
	const char *title = NULL, *fact = NULL, *why = NULL, *how = NULL;
	struct loop *l;
	struct err e = {0};
	char *id = NULL;
	bool json = false;
	int rc;

	const struct cli_opt opts[] = {
		CLI_PTEXT("--title", &title, "T", "the trap in a few words"),
		CLI_PTEXT("--fact", &fact, "F", "what happened (numbers, the iteration)"),
		CLI_PTEXT("--why", &why, "W", "why it misleads"),
		CLI_PTEXT("--how", &how, "H", "how to check for it next time"),
		CLI_PFLAG("--json", &json, "print the new trap as JSON"),
		CLI_END,
	};
	static const char *const examples[] = {
		"trap add --title 'cold cache' --fact 'iter 4 ran 30% fast on a cold Triton cache' "
		"--why 'the first run compiles' --how 'verify twice, compare the second'",
		NULL,
	};
	struct cli_cmd c = {.name = "trap", .opts = opts, .examples = examples,
			    .usage = "trap add --title T --fact F --why W --how H [--json]",
			    .summary = "add a trap to TRAPS.md (the catalogue every checklist comes from)"};
	if (!cli_parse(&c, argc - 1, argv + 1, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (loop_trap_add(l, title, fact, why, how, &id, &e) < 0) {
		loop_close(l);
		return e.code == ERR_USAGE ? cli_usage_error("trap", "%s", e.msg) : cli_fail(&e);
	}
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "id", json_string(id));
		cli_print_json(j);
	} else {
		printf("added trap %s to TRAPS.md\n", id);
	}
	free(id);
	loop_close(l);
	return 0;
}

static int trap_mark(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct traps_doc d = {0};
	struct err e = {0};
	int iter = -1, rc;
	const char *id = NULL, *state = NULL;

	long it = -1;
	const struct cli_opt opts[] = {
		CLI_PINT("--iter", &it, "N", 0, INT_MAX, "the iteration (default: the current one)"),
		CLI_END,
	};
	static const char *const examples[] = {"trap mark relative-tolerance checked", NULL};
	struct cli_cmd c = {.name = "trap", .opts = opts, .max_pos = 2, .examples = examples,
			    .usage = "trap mark ID checked|hit|unchecked [--iter N]",
			    .summary = "mark a trap on the iteration's checklist",
			    .pos_help = "  ID     the trap's id (optloop trap list shows them)\n"
					"  STATE  checked, hit or unchecked"};
	if (!cli_parse(&c, argc - 1, argv + 1, &rc))
		return rc;
	iter = (int)it;
	id = c.npos > 0 ? c.pos[0] : NULL;
	state = c.npos > 1 ? c.pos[1] : NULL;
	enum trap_state ts;
	if (!id || !state)
		return cli_usage_error("trap", "mark needs a trap id and a state (checked, hit or "
					       "unchecked)");
	if (!strcmp(state, "checked"))
		ts = TRAP_CHECKED;
	else if (!strcmp(state, "hit"))
		ts = TRAP_HIT;
	else if (!strcmp(state, "unchecked"))
		ts = TRAP_UNCHECKED;
	else
		return cli_usage_error("trap", "state must be checked, hit or unchecked, got '%s'",
				       state);
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	if (iter < 0 && (rc = loop_cli_iteration(l, &iter)) != 0) {
		loop_close(l);
		return rc;
	}
	rc = loop_traps(l, iter, &d, NULL, &e);
	if (rc == 0 && !traps_find(&d, id))
		rc = err_set(&e, ERR_USAGE, "no trap '%s' in TRAPS.md (optloop trap list shows the ids)",
			     id);
	if (rc == 0)
		rc = loop_trap_mark(l, iter, id, ts, "user", &e);
	if (rc == 0)
		printf("iteration %d: trap %s %s\n", iter, id, trap_state_name(ts));
	traps_doc_release(&d);
	loop_close(l);
	if (rc < 0)
		return e.code == ERR_USAGE ? cli_usage_error("trap", "%s", e.msg) : cli_fail(&e);
	return 0;
}

int cmd_trap(struct cli *cli, int argc, char **argv)
{
	static const char *const examples[] = {"trap list", "trap mark relative-tolerance checked",
					       "trap list --help", NULL};
	struct cli_cmd c = {
		.name = "trap",
		.examples = examples,
		.pos_help = "  list   the iteration's trap checklist\n"
			    "  add    add a trap to TRAPS.md\n"
			    "  mark   mark a trap checked, hit or unchecked for the iteration",
		.more = "optloop trap VERB --help lists a verb's options.",
	};
	int rc;
	if (argc > 1 && !strcmp(argv[1], CLI_LIST_OPTIONS)) {
		static const char *const verbs[] = {"list", "add", "mark", "--help"};
		for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
			printf("%s\n", verbs[i]);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		cli_parse(&c, argc, argv, &rc);
		/* and each verb's own */
		static char *const verbs[][3] = {{"trap", "list", "--help"},
						 {"trap", "add", "--help"},
						 {"trap", "mark", "--help"}};
		int (*const fn[])(struct cli *, int, char **) = {trap_list, trap_add, trap_mark};
		for (size_t i = 0; i < 3; i++) {
			printf("\n");
			fn[i](cli, 3, (char **)verbs[i]);
		}
		return rc;
	}
	if (argc < 2)
		return cli_usage_error("trap", "which: list, add or mark");
	if (!strcmp(argv[1], "list"))
		return trap_list(cli, argc, argv);
	if (!strcmp(argv[1], "add"))
		return trap_add(cli, argc, argv);
	if (!strcmp(argv[1], "mark"))
		return trap_mark(cli, argc, argv);
	return cli_usage_error("trap", "unknown subcommand %s (list, add or mark)", argv[1]);
}
