/* cmd_trap — `optloop trap list|add|mark`: the TRAPS.md catalogue and the
 * checklist of the iteration in progress. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/guards_cli.h"
#include "tui/loop_cli.h"
#include "core/err.h"
#include "core/guards.h"
#include "core/loop.h"
#include "core/traps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_iter(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end || v < 0 || v > 1000000)
		return -1;
	*out = (int)v;
	return 0;
}

static int trap_list(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct guards_owned o;
	struct traps_doc d;
	struct traps_problems p;
	struct err e = {0};
	int json = 0, iter = -1, rc;
	const char *v;

	for (int i = 2; i < argc;) {
		int k = loop_cli_optarg(argc, argv, &i, "--iter", &v);
		if (k == 1) {
			if (parse_iter(v, &iter) < 0)
				return cli_usage_error("trap", "--iter needs an iteration number");
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--json")) {
			json = 1;
			i++;
			continue;
		}
		return cli_usage_error("trap", "unknown argument %s", argv[i]);
	}
	if ((rc = guards_cli_open(cli, LOOP_READONLY, &l, &o)) != 0)
		return rc;
	if (iter < 0)
		iter = o.iteration;
	if (guards_traps(&o.g, iter, &d, &p, &e) < 0) {
		guards_cli_close(l, &o);
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
	traps_problems_release(&p);
	guards_cli_close(l, &o);
	return 0;
}

static int trap_add(struct cli *cli, int argc, char **argv)
{
	const char *title = NULL, *fact = NULL, *why = NULL, *how = NULL, *v;
	struct loop *l;
	struct guards_owned o;
	struct err e = {0};
	char *id = NULL;
	int json = 0, rc;

	for (int i = 2; i < argc;) {
		int k;
		if ((k = loop_cli_optarg(argc, argv, &i, "--title", &v)) == 1) {
			title = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--fact", &v)) == 1) {
			fact = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--why", &v)) == 1) {
			why = v;
			continue;
		}
		if (k == 0 && (k = loop_cli_optarg(argc, argv, &i, "--how", &v)) == 1) {
			how = v;
			continue;
		}
		if (k == 0 && !strcmp(argv[i], "--json")) {
			json = 1;
			i++;
			continue;
		}
		return k < 0 ? cli_usage_error("trap", "%s needs a value", argv[i])
			     : cli_usage_error("trap", "unknown argument %s", argv[i]);
	}
	if ((rc = guards_cli_open(cli, 0, &l, &o)) != 0)
		return rc;
	if (guards_trap_add(&o.g, title, fact, why, how, &id, &e) < 0) {
		guards_cli_close(l, &o);
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
	guards_cli_close(l, &o);
	return 0;
}

static int trap_mark(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct guards_owned o;
	struct traps_doc d = {0};
	struct err e = {0};
	int iter = -1, rc;
	const char *id = NULL, *state = NULL, *v;

	for (int i = 2; i < argc;) {
		int k = loop_cli_optarg(argc, argv, &i, "--iter", &v);
		if (k == 1) {
			if (parse_iter(v, &iter) < 0)
				return cli_usage_error("trap", "--iter needs an iteration number");
			continue;
		}
		if (k < 0 || argv[i][0] == '-')
			return cli_usage_error("trap", "unknown argument %s", argv[i]);
		if (!id)
			id = argv[i];
		else if (!state)
			state = argv[i];
		else
			return cli_usage_error("trap", "unexpected argument %s", argv[i]);
		i++;
	}
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
	if ((rc = guards_cli_open(cli, 0, &l, &o)) != 0)
		return rc;
	if (iter < 0)
		iter = o.iteration;
	rc = guards_traps(&o.g, iter, &d, NULL, &e);
	if (rc == 0 && !traps_find(&d, id))
		rc = err_set(&e, ERR_USAGE, "no trap '%s' in TRAPS.md (optloop trap list shows the ids)",
			     id);
	if (rc == 0)
		rc = guards_trap_mark(o.g.store, iter, id, ts, "user", &e);
	if (rc == 0)
		printf("iteration %d: trap %s %s\n", iter, id, trap_state_name(ts));
	traps_doc_release(&d);
	guards_cli_close(l, &o);
	if (rc < 0)
		return e.code == ERR_USAGE ? cli_usage_error("trap", "%s", e.msg) : cli_fail(&e);
	return 0;
}

int cmd_trap(struct cli *cli, int argc, char **argv)
{
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
