/*
 * demo — `optloop demo [DIR] [--json]`: make a fresh git repository
 * holding the embedded demo kernel project, then hand it to the loop.
 *
 * The steps, in order:
 *   1. the repository and its workspace with a complete contract
 *      (loop_demo), so the baseline verify is the next step;
 *   2. on a terminal, the interactive workbench on it.
 * Off a terminal nothing interactive is opened: it prints what it made and
 * the next step and exits 0, so scripts and tests can use it.
 */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"
#include "core/vis.h"

#include <stddef.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct demo_args {
	bool json;
};

static int demo_run(struct cmd_ctx *x)
{
	const struct demo_args *a = x->args;
	const char *dir = x->npos ? x->pos[0] : NULL;
	bool json = a->json, interactive;
	struct loop_demo r;
	struct err e = {0};
	struct sb next = SB_INIT, qdir = SB_INIT, self = SB_INIT;
	int rc;

	/* 1. and 2. The repository and its workspace, with a complete
	 * contract: the next step is the baseline verify. */
	if (loop_demo(dir, &r, &e) < 0)
		return cli_fail(&e);
	vis_shell_word(r.dir, &qdir); /* the "next" line is meant to be pasted */
	const char *workspace = r.workspace;
	cli_self_command(&self); /* ./optloop of a build tree is not on PATH */
	sb_addf(&next, "cd %s && %s verify", sb_str(&qdir), sb_str(&self));

	/* 3. On a terminal, the workbench on r.dir. */
	interactive = !json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);

	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "dir", json_string(r.dir));
		json_object_set_new(o, "branch", json_string("main"));
		json_object_set_new(o, "commit", json_string(r.commit));
		json_object_set_new(o, "identity", json_string(r.identity));
		json_object_set_new(o, "identity_set", json_boolean(r.identity_set));
		json_object_set_new(o, "op", json_string(r.op));
		json_object_set_new(o, "kernel", json_string(r.kernel));
		json_object_set_new(o, "verify", json_string(r.verify_cmd));
		json_object_set_new(o, "workspace", json_string(workspace));
		json_object_set_new(o, "next", json_string(sb_str(&next)));
		cli_print_json(o);
	} else {
		/* 3. The workbench, once the repository holds a workspace. */
		if (interactive && chdir(r.dir) == 0) {
			rc = tui_open_workspace(x->cli, true);
			if (rc >= 0) {
				/* the terminal is the shell's again: where the demo is,
				 * and how to come back to it */
				printf("the demo is in %s\n"
				       "next: cd %s && %s  (the workbench; %s status says "
				       "where the loop stands)\n",
				       r.dir, sb_str(&qdir), sb_str(&self), sb_str(&self));
				sb_release(&next);
				sb_release(&self);
				sb_release(&qdir);
				loop_demo_release(&r);
				return rc;
			}
			printf("optloop demo: no workspace in the demo repository yet, so the "
			       "workbench cannot open; here is the project to work on by hand.\n");
		}
		printf("%s\n", r.dir);
		printf("made: a git repository (branch main, one commit %.7s) holding the demo "
		       "kernel project\n"
		       "      op %s, kernel %s, frozen test %s\n",
		       r.commit, r.op, r.kernel, r.test_file);
		if (r.identity_set)
			printf("note: git has no user identity configured, so the demo repository "
			       "got a local one (%s);\n      set yours with git config --global "
			       "user.name/user.email\n",
			       r.identity);
		printf("      workspace %s (contract complete)\n", workspace);
		printf("next: %s\n", sb_str(&next));
	}
	sb_release(&next);
	sb_release(&qdir);
	sb_release(&self);
	loop_demo_release(&r);
	return 0;
}

static const struct cli_opt demo_opts[] = {
	CLI_FLAG("--json", offsetof(struct demo_args, json),
		 "print where the demo is as JSON (no workbench)"),
	CLI_END,
};

const struct command cmd_demo = {
	.name = "demo",
	.summary = "make a fresh git repository holding the demo kernel project",
	.opts = demo_opts,
	.args_size = sizeof(struct demo_args),
	.max_pos = 1,
	.pos_usage = "[DIR]",
	.pos_help = "  DIR  where to make it (default: a new directory under /tmp)",
	.examples = (const char *const[]){"demo", "demo /tmp/optloop-demo --json", NULL},
	.more = "On a terminal the workbench opens on it; the baseline verify is\n"
		"the next step.",
	.run = demo_run,
};
