/* contract — `optloop contract [--check] [--set FIELD=VALUE]...`: show,
 * check or set the task contract in docs/draft.md. */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "tui/cli/loop_cli.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/loop.h"
#include "core/sb.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int set_fields(struct loop *l, const char *const *sets, int nsets)
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

struct contract_args {
	struct cli_list set;
	bool check;
};

/* every --set names a field, before anything is opened */
static int contract_before(struct cmd_ctx *x)
{
	const struct contract_args *a = x->args;
	for (int k = 0; k < a->set.n; k++)
		if (!strchr(a->set.v[k], '='))
			return cli_usage_error("contract", "--set needs FIELD=VALUE, got '%s'",
					       a->set.v[k]);
	for (int k = 0; k < a->set.n; k++) {
		const char *eq = strchr(a->set.v[k], '=');
		char *name = xstrndup(a->set.v[k], (size_t)(eq - a->set.v[k]));
		bool known = loop_contract_field_known(name);
		int rc = 0;
		if (!known)
			rc = cli_usage_error("contract",
					     "no contract field '%s' (fields: op, target, languages, "
					     "validation, benchmark, promotion, frozen, cap, threshold)",
					     name);
		free(name);
		if (!known)
			return rc;
	}
	return CMD_GO;
}

static int contract_run(struct cmd_ctx *x)
{
	const struct contract_args *a = x->args;
	struct loop *l = x->l;
	struct loop_status st;
	struct err e = {0};
	int nsets = a->set.n, rc = 0;
	bool check = a->check;

	if (nsets && (rc = set_fields(l, a->set.v, nsets)) != 0)
		return rc;
	if (loop_status(l, &st, &e) < 0)
		return cli_fail(&e);
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
	return rc;
}

static const struct cli_opt contract_opts[] = {
	{.name = "--set", .kind = CO_LIST, .off = offsetof(struct contract_args, set),
	 .arg = "FIELD=VALUE", .opens = OPEN_WRITE,
	 .help = "set a field, repeatable (op, target, languages, validation, benchmark, "
		 "promotion, frozen, cap, threshold); an empty VALUE clears it"},
	CLI_FLAG("--check", offsetof(struct contract_args, check),
		 "exit 1 and list what is missing unless complete"),
	CLI_END,
};

/* shown and checked as any reader may (the writer when free, so start-up
 * repairs are made); --set needs the writer */
const struct command cmd_contract = {
	.name = "contract",
	.summary = "show, check or set the task contract",
	.open = OPEN_TRY,
	.opts = contract_opts,
	.args_size = sizeof(struct contract_args),
	.examples = (const char *const[]){"contract --check",
					  "contract --set 'target=every shape >= 1.2x' --set cap=20",
					  NULL},
	.more = "The contract is docs/draft.md in the workspace; --set rewrites one\n"
		"field and keeps the rest of the file byte for byte.",
	.any_contract = true,
	.before = contract_before,
	.run = contract_run,
};
