/* contract — `optloop contract [--check] [--set FIELD=VALUE]...`: show,
 * check or set the task contract in docs/draft.md. */
#include "tui/cli/opts.h"
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_fields(struct loop *l, char **sets, int nsets)
{
	const char **names = xcalloc((size_t)nsets, sizeof(*names));
	const char **values = xcalloc((size_t)nsets, sizeof(*values));
	struct err e = {0};

	for (int k = 0; k < nsets; k++) {
		char *eq = strchr(sets[k], '=');
		names[k] = xstrndup(sets[k], (size_t)(eq - sets[k]));
		values[k] = eq + 1;
	}
	int rc = loop_contract_set(l, names, values, (size_t)nsets, &e);
	for (int k = 0; k < nsets; k++)
		free((char *)names[k]);
	free(names);
	free(values);
	if (rc < 0)
		return e.code == ERR_USAGE ? cli_usage_error("contract", "%s", e.msg) : cli_fail(&e);
	return 0;
}

int cmd_contract(struct cli *cli, int argc, char **argv)
{
	struct loop *l;
	struct loop_status st;
	struct err e = {0};
	char **sets = xcalloc((size_t)argc, sizeof(char *));
	int nsets = 0, rc = 0;
	bool check = false;

	struct cli_list set = {0};
	const struct cli_opt opts[] = {
		CLI_PLIST("--set", &set, "FIELD=VALUE",
			 "set a field, repeatable (op, target, languages, validation, benchmark, "
			 "promotion, frozen, cap, threshold); an empty VALUE clears it"),
		CLI_PFLAG("--check", &check, "exit 1 and list what is missing unless complete"),
		CLI_END,
	};
	static const char *const examples[] = {
		"contract --check",
		"contract --set 'target=every shape >= 1.2x' --set cap=20",
		NULL,
	};
	struct cli_cmd c = {.name = "contract", .opts = opts, .examples = examples,
			    .more = "The contract is docs/draft.md in the workspace; --set rewrites one\n"
				    "field and keeps the rest of the file byte for byte."};
	if (!cli_parse(&c, argc, argv, &rc)) {
		free(sets);
		return rc;
	}
	for (int k = 0; k < set.n; k++) {
		if (!strchr(set.v[k], '=')) {
			free(sets);
			return cli_usage_error("contract", "--set needs FIELD=VALUE, got '%s'",
					       set.v[k]);
		}
		sets[nsets++] = (char *)set.v[k];
	}
	for (int k = 0; k < nsets; k++) {
		char *name = xstrndup(sets[k], (size_t)(strchr(sets[k], '=') - sets[k]));
		bool known = loop_contract_field_known(name);
		if (!known) {
			rc = cli_usage_error("contract",
					     "no contract field '%s' (fields: op, target, languages, "
					     "validation, benchmark, promotion, frozen, cap, threshold)",
					     name);
			free(name);
			free(sets);
			return rc;
		}
		free(name);
	}
	if ((rc = loop_cli_open(cli, nsets ? 0 : LOOP_TRY_WRITE, &l)) != 0) {
		free(sets);
		return rc;
	}
	if (nsets && (rc = set_fields(l, sets, nsets)) != 0)
		goto out;
	if (loop_status(l, &st, &e) < 0) {
		rc = cli_fail(&e);
		goto out;
	}
	if (check || nsets) {
		if (st.missing) {
			printf("contract incomplete (%s/docs/draft.md):\n%s\n", st.workspace, st.missing);
			rc = check ? 1 : 0;
		} else {
			printf("contract complete\n");
		}
	} else {
		struct sb text = SB_INIT;
		int r = fsutil_read_file(loop_contract_path(l), &text, &e);
		if (r == 0)
			fputs(text.buf, stdout);
		else if (r != ERR_NOTFOUND)
			rc = cli_fail(&e);
		if (st.missing)
			printf("\n-- incomplete:\n%s\n", st.missing);
		sb_release(&text);
	}
	loop_status_release(&st);
out:
	loop_close(l);
	free(sets);
	return rc;
}
