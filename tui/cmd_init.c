/* cmd_init — `optloop init`: create profile/<op>-opt/ for an op. */
#include "tui/cli_util.h"
#include "tui/commands.h"
#include "tui/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_init(struct cli *cli, int argc, char **argv)
{
	struct loop_init_opts o = {.op = cli->op};
	const char **kernel = xcalloc((size_t)argc, sizeof(char *));
	struct sb notes = SB_INIT;
	struct err e = {0};
	int i = 1, rc = 0;
	const char *v;

	while (i < argc) {
		int m;
		if ((m = loop_cli_optarg(argc, argv, &i, "--op", &v)) == 1)
			o.op = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--test-file", &v)) == 1)
			o.test_file = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--naive", &v)) == 1)
			o.naive = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--kernel", &v)) == 1)
			kernel[o.nkernel++] = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--verify", &v)) == 1)
			o.verify_cmd = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--bench", &v)) == 1)
			o.bench_cmd = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--target", &v)) == 1)
			o.target = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--languages", &v)) == 1)
			o.languages = v;
		else if (m == 0 && (m = loop_cli_optarg(argc, argv, &i, "--promotion", &v)) == 1)
			o.promotion = v;
		if (m == 1)
			continue;
		rc = m < 0 ? cli_usage_error("init", "%s needs a value", argv[i])
			   : cli_usage_error("init", "unknown argument %s", argv[i]);
		goto out;
	}
	if (!o.op) {
		rc = cli_usage_error("init", "--op OP is required (the op's registry name)");
		goto out;
	}
	o.kernel = kernel;
	if (loop_init(NULL, &o, &notes, &e) < 0) {
		rc = cli_fail(&e);
		goto out;
	}
	fputs(notes.buf ? notes.buf : "", stdout);
	printf("next: fill the task contract (optloop contract --check lists what is missing), "
	       "then run optloop verify for the baseline\n");
out:
	sb_release(&notes);
	free(kernel);
	return rc;
}
