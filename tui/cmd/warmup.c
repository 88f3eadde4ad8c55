/* warmup — `optloop warmup`: run the gate test once outside the loop, so
 * the compile caches (Triton's) are full before the first timed gate: a
 * cold full gate of an FLA op can take longer than the iteration it
 * gates. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/loop.h"

#include <stdio.h>

int cmd_warmup(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct err e = {0};
	bool json = false;
	long workers = 1;
	int rc;
	const struct cli_opt opts[] = {
		CLI_PINT("--workers", &workers, "N", 1, 512,
			"run it on N pytest-xdist workers (-n N): compiling in parallel"),
		CLI_PFLAG("--json", &json, "print the result as JSON (pytest's output goes to stderr)"),
		CLI_END,
	};
	static const char *const examples[] = {"warmup --workers 16", NULL};
	struct cli_cmd c = {
		.name = "warmup",
		.opts = opts,
		.examples = examples,
		.more = "Runs the workspace's gate test (python3 -m pytest TEST -q; $OPTLOOP_PYTHON\n"
			"for another Python) once in the repository, not as a run of the loop:\n"
			"nothing is measured or judged, an event records its time.  exit: pytest's.",
	};
	if (!cli_parse(&c, argc, argv, &rc))
		return rc;
	if ((rc = loop_cli_open(cli, 0, &l)) != 0)
		return rc;
	int code = 0;
	double secs = 0;
	if (json)
		fflush(stdout);
	if (loop_warmup(l, (int)workers, &code, &secs, &e) < 0) {
		loop_close(l);
		return cli_fail(&e);
	}
	if (json) {
		json_t *j = json_object();
		json_object_set_new(j, "exit", json_integer(code));
		json_object_set_new(j, "seconds", json_real(secs));
		json_object_set_new(j, "workers", json_integer(workers));
		cli_print_json(j);
	} else {
		printf("warmup: the gate test %s in %.1f s on %ld worker%s (exit %d)%s\n",
		       code == 0 ? "passed" : "did not pass", secs, workers, workers == 1 ? "" : "s",
		       code, code == 0 ? "" : "; the gate proper is verify's, this only filled caches");
	}
	loop_close(l);
	return code > 255 ? 4 : code;
}
