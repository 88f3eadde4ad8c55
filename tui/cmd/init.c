/* init — `optloop init`: create profile/<op>-opt/ for an op. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct init_args {
	struct loop_init_opts o;
	struct cli_list kernel, frozen;
	long workers;
};

static int init_run(struct cmd_ctx *x)
{
	struct init_args *a = x->args;
	struct loop_init_opts o = a->o;
	struct sb notes = SB_INIT;
	struct err e = {0};
	int rc = 0;

	if (!o.op)
		o.op = x->cli->op;
	if (!o.op) {
		rc = cli_usage_error("init", "--op OP is required (the op's registry name)");
		goto out;
	}
	o.gate_workers = (int)a->workers;
	o.kernel = a->kernel.v;
	o.nkernel = (size_t)a->kernel.n;
	o.frozen = a->frozen.v;
	o.nfrozen = (size_t)a->frozen.n;
	if (loop_init(NULL, &o, &notes, &e) < 0) {
		rc = cli_fail(&e);
		goto out;
	}
	fputs(notes.buf ? notes.buf : "", stdout);
	printf("next: fill the task contract (optloop contract --check lists what is missing), "
	       "then run optloop verify for the baseline\n");
out:
	sb_release(&notes);
	return rc;
}

static const struct cli_opt init_opts[] = {
	CLI_NEED("--op", offsetof(struct init_args, o.op), "OP",
		 "the op's name (FLA registry name; also the global --op)"),
	CLI_TEXT("--test-file", offsetof(struct init_args, o.test_file), "PATH",
		 "the frozen test (default: the op's test in the FLA registry)"),
	CLI_TEXT("--naive", offsetof(struct init_args, o.naive), "PATH",
		 "the naive reference, frozen (default: the files defining what the gate test's imports compare against)"),
	CLI_LIST("--frozen", offsetof(struct init_args, frozen), "PATH",
		 "a further frozen file, repeatable: what the gate test compares against"),
	CLI_LIST("--kernel", offsetof(struct init_args, kernel), "PATH",
		 "a kernel path, repeatable (default: in an FLA tree, every file the op's "
		 "function reaches that nothing freezes; else required)"),
	CLI_TEXT("--verify", offsetof(struct init_args, o.verify_cmd), "CMD",
		 "the validation command (default: FLA's verify for the op)"),
	CLI_INT("--gate-workers", offsetof(struct init_args, workers), "N", 1, 512,
		"run the gate's pytest on N workers (pytest-xdist's -n, through "
		"PYTEST_ADDOPTS in the validation command; its verdict is read the same way)"),
	CLI_TEXT("--bench", offsetof(struct init_args, o.bench_cmd), "CMD",
		 "the benchmark command (default: in an FLA checkout the validation "
		 "command with --base main, elsewhere the validation command); one that "
		 "adds --base REF to the validation command makes confirm pair"),
	CLI_TEXT("--target", offsetof(struct init_args, o.target), "TEXT",
		 "the contract's Target, e.g. 'every shape >= 1.2x'"),
	CLI_TEXT("--languages", offsetof(struct init_args, o.languages), "TEXT",
		 "the contract's kernel languages"),
	CLI_TEXT("--promotion", offsetof(struct init_args, o.promotion), "TEXT",
		 "the contract's promotion bar"),
	CLI_END,
};

const struct command cmd_init = {
	.name = "init",
	.summary = "create the workspace profile/<op>-opt/ for an op",
	.opts = init_opts,
	.args_size = sizeof(struct init_args),
	.examples = (const char *const[]){"init --op chunk_gla",
					  "init --op tiny --kernel kernel/compute.sh --test-file "
					  "tests/test_compute.sh --naive ref/naive.sh --verify 'sh verify.sh'",
					  NULL},
	.more = "Creates profile/<op>-opt/ (docs/draft.md, OPT_LOG.md, TRAPS.md,\n"
		"dispatch.md, trace/, optloop.db) and keeps profile/ out of git.",
	.own_op = true,
	.run = init_run,
};
