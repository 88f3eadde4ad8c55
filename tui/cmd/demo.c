/*
 * demo — `optloop demo [DIR] [--json]`: make a fresh git repository
 * holding the embedded demo kernel project, then hand it to the loop.
 *
 * The steps, in order:
 *   1. the repository (core/demo.c): copy, git init, one commit;
 *   2. the optloop workspace with a complete contract (demo_spec() has the
 *      values), so the baseline verify is the next step;
 *   3. on a terminal, the interactive workbench on it.
 * Off a terminal nothing interactive is opened: it prints what it made and
 * the next step and exits 0, so scripts and tests can use it.
 */
#include "tui/cli_opts.h"
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "core/demo.h"
#include "core/contract.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Quote a path for the shell when it needs it (the "next" line is meant to
 * be pasted). */
static void shell_quote(const char *s, struct sb *out)
{
	if (!s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+,:@%")]) {
		sb_adds(out, s);
		return;
	}
	sb_addc(out, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_adds(out, "'\\''");
		else
			sb_addc(out, *s);
	}
	sb_addc(out, '\'');
}

/* init for the demo op in dir, then the frozen scope in full; *workspace
 * receives the workspace path (caller frees). */
static int demo_workspace(const struct demo_spec *ds, const char *dir, char **workspace,
			  struct err *e)
{
	const char *kernel[] = {ds->kernel};
	struct loop_init_opts o = {
		.op = ds->op, .test_file = ds->test_file, .naive = ds->naive,
		.kernel = kernel, .nkernel = 1, .verify_cmd = ds->verify_cmd,
		.bench_cmd = ds->bench_cmd, .target = ds->target,
		.languages = ds->languages, .promotion = ds->promotion,
	};
	struct sb notes = SB_INIT, text = SB_INIT, out = SB_INIT;
	int rc = loop_init(dir, &o, &notes, e);
	char *path = xasprintf("%s/profile/%s-opt/docs/draft.md", dir, ds->op);

	if (rc == 0 && ds->frozen)
		rc = fsutil_read_file(path, &text, e);
	if (rc == 0 && ds->frozen)
		rc = contract_set(text.buf, text.len, "frozen", ds->frozen, &out, e);
	if (rc == 0 && ds->frozen)
		rc = fsutil_write_atomic(path, out.buf, out.len, e);
	if (rc == 0)
		*workspace = xasprintf("%s/profile/%s-opt", dir, ds->op);
	free(path);
	sb_release(&notes);
	sb_release(&text);
	sb_release(&out);
	return rc;
}

int cmd_demo(struct cli *cli, int argc, char **argv)
{
	const struct demo_spec *ds = demo_spec();
	const char *dir = NULL;
	bool json = false, interactive;
	struct demo_result r;
	struct err e = {0};
	struct sb next = SB_INIT, qdir = SB_INIT;

	(void)cli;
	int rc;
	const struct cli_opt opts[] = {
		CLI_FLAG("--json", &json, "print where the demo is as JSON (no workbench)"),
		CLI_END,
	};
	static const char *const examples[] = {"demo", "demo /tmp/optloop-demo --json", NULL};
	struct cli_cmd c = {.name = "demo", .opts = opts, .max_pos = 1, .examples = examples,
			    .pos_help = "  DIR  where to make it (default: a new directory under /tmp)",
			    .more = "On a terminal the workbench opens on it; the baseline verify is\n"
				    "the next step."};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	dir = c.npos ? c.pos[0] : NULL;

	/* 1. The repository. */
	if (demo_create(dir, &r, &e) < 0)
		return cli_fail(&e);
	shell_quote(r.dir, &qdir);

	/* 2. The workspace, with a complete contract: the next step is the
	 * baseline verify. */
	char *workspace = NULL;
	if (demo_workspace(ds, r.dir, &workspace, &e) < 0) {
		demo_result_release(&r);
		sb_release(&qdir);
		return cli_fail(&e);
	}
	sb_addf(&next, "cd %s && optloop verify", sb_str(&qdir));

	/* 3. On a terminal, the workbench on r.dir. */
	interactive = !json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);

	if (json) {
		json_t *o = json_object();
		json_object_set_new(o, "dir", json_string(r.dir));
		json_object_set_new(o, "branch", json_string("main"));
		json_object_set_new(o, "commit", json_string(r.commit));
		json_object_set_new(o, "identity", json_string(r.identity));
		json_object_set_new(o, "identity_set", json_boolean(r.identity_set));
		json_object_set_new(o, "op", json_string(ds->op));
		json_object_set_new(o, "kernel", json_string(ds->kernel));
		json_object_set_new(o, "verify", json_string(ds->verify_cmd));
		json_object_set_new(o, "workspace", json_string(workspace));
		json_object_set_new(o, "next", json_string(sb_str(&next)));
		cli_print_json(o);
	} else {
		/* 3. The workbench, once the repository holds a workspace. */
		if (interactive && chdir(r.dir) == 0) {
			rc = tui_open_workspace(cli, true);
			if (rc >= 0) {
				free(workspace);
				sb_release(&next);
				sb_release(&qdir);
				demo_result_release(&r);
				return rc;
			}
			printf("optloop demo: no workspace in the demo repository yet, so the "
			       "workbench cannot open; here is the project to work on by hand.\n");
		}
		printf("%s\n", r.dir);
		printf("made: a git repository (branch main, one commit %.7s) holding the demo "
		       "kernel project\n"
		       "      op %s, kernel %s, frozen test %s\n",
		       r.commit, ds->op, ds->kernel, ds->test_file);
		if (r.identity_set)
			printf("note: git has no user identity configured, so the demo repository "
			       "got a local one (%s);\n      set yours with git config --global "
			       "user.name/user.email\n",
			       r.identity);
		printf("      workspace %s (contract complete)\n", workspace);
		printf("next: %s\n", sb_str(&next));
	}
	free(workspace);
	sb_release(&next);
	sb_release(&qdir);
	demo_result_release(&r);
	return 0;
}
