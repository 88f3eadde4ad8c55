/* init — `optloop init`: create profile/<op>-opt/ for an op. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_init(struct cli *cli, int argc, char **argv)
{
	struct loop_init_opts o = {.op = cli->op};
	struct sb notes = SB_INIT;
	struct err e = {0};
	int rc = 0;

	struct cli_list kernel = {0}, frozen = {0};
	long workers = 0;
	const struct cli_opt opts[] = {
		CLI_PTEXT("--op", &o.op, "OP", "the op's name (FLA registry name; also the global --op)"),
		CLI_PTEXT("--test-file", &o.test_file, "PATH",
			 "the frozen test (default: the op's test in the FLA registry)"),
		CLI_PTEXT("--naive", &o.naive, "PATH",
			 "the naive reference, frozen (default: the files defining what the gate test's imports compare against)"),
		CLI_PLIST("--frozen", &frozen, "PATH",
			 "a further frozen file, repeatable: what the gate test compares against"),
		CLI_PLIST("--kernel", &kernel, "PATH",
			 "a kernel path, repeatable (default: in an FLA tree, every file the op's "
			 "function reaches that nothing freezes; else required)"),
		CLI_PTEXT("--verify", &o.verify_cmd, "CMD",
			 "the validation command (default: FLA's verify for the op)"),
		CLI_PINT("--gate-workers", &workers, "N", 1, 512,
			"run the gate's pytest on N workers (pytest-xdist's -n, through "
			"PYTEST_ADDOPTS in the validation command; its verdict is read the same way)"),
		CLI_PTEXT("--bench", &o.bench_cmd, "CMD",
			 "the benchmark command (default: the validation command with --base main)"),
		CLI_PTEXT("--target", &o.target, "TEXT", "the contract's Target, e.g. 'every shape >= 1.2x'"),
		CLI_PTEXT("--languages", &o.languages, "TEXT", "the contract's kernel languages"),
		CLI_PTEXT("--promotion", &o.promotion, "TEXT", "the contract's promotion bar"),
		CLI_END,
	};
	static const char *const examples[] = {
		"init --op chunk_gla",
		"init --op tiny --kernel kernel/compute.sh --test-file tests/test_compute.sh "
		"--naive ref/naive.sh --verify 'sh verify.sh'",
		NULL,
	};
	struct cli_cmd c = {
		.name = "init",
		.opts = opts,
		.examples = examples,
		.more = "Creates profile/<op>-opt/ (docs/draft.md, OPT_LOG.md, TRAPS.md,\n"
			"dispatch.md, trace/, optloop.db) and keeps profile/ out of git.",
	};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if (!o.op) {
		rc = cli_usage_error("init", "--op OP is required (the op's registry name)");
		goto out;
	}
	o.gate_workers = (int)workers;
	o.kernel = kernel.v;
	o.nkernel = (size_t)kernel.n;
	o.frozen = frozen.v;
	o.nfrozen = (size_t)frozen.n;
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
