/*
 * manpage — optloop(1), made from the one source of each of its parts:
 *
 *   COMMANDS        each row of the command reference (assets/man/commands.md,
 *                   the table under "## Subcommands"): its usage and what it does,
 *                   then the command's own --help, printed from its row of
 *                   the command table (tui/cli/commands.c);
 *   WORKBENCH KEYS  the workbench's key table (views/actions.h);
 *   the rest        assets/man/optloop.1.in, the prose only the man page
 *                   has (FILES, EXIT STATUS, ENVIRONMENT, EXAMPLES, ...),
 *                   with the two generated sections in place of its
 *                   `.\" @COMMANDS@` and `.\" @KEYS@` lines.
 *
 * `make docs` writes assets/man/optloop.1 with it; a test checks that the
 * committed page is what it makes.
 */
#include "tui/cli/manpage.h"

#include "tui/cli/commands.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "views/actions.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Characters troff spells by name; the rest of UTF-8 passes through. */
static const struct {
	const char *utf8, *troff;
} glyphs[] = {
	{"\xe2\x80\x94", "\\(em"}, {"\xe2\x80\x93", "\\(en"}, {"\xc3\x97", "\\(mu"},
	{"\xe2\x89\xa5", "\\(>="}, {"\xe2\x89\xa4", "\\(<="}, {"\xc2\xb1", "\\(+-"},
	{"\xe2\x86\x92", "\\(->"}, {"\xc2\xb7", "\\(pc"},      {"\xe2\x80\xa6", "..."},
	{"\xcf\x83", "\\(*s"},     {"\xe2\x80\x9c", "\\(lq"}, {"\xe2\x80\x9d", "\\(rq"},
	{"\xe2\x80\x99", "'"},
};

/* Plain text into troff: backslashes, a leading dot or quote, glyphs. */
static void put_text(struct sb *out, const char *s, size_t n, bool line_start)
{
	for (size_t i = 0; i < n;) {
		if (line_start && (s[i] == '.' || s[i] == '\''))
			sb_adds(out, "\\&");
		line_start = false;
		if (s[i] == '\\') {
			sb_adds(out, "\\e");
			i++;
			continue;
		}
		if (s[i] == '-') {
			sb_adds(out, "\\-");
			i++;
			continue;
		}
		bool named = false;
		for (size_t g = 0; g < sizeof(glyphs) / sizeof(glyphs[0]) && !named; g++) {
			size_t gl = strlen(glyphs[g].utf8);
			if (i + gl <= n && !memcmp(s + i, glyphs[g].utf8, gl)) {
				sb_adds(out, glyphs[g].troff);
				i += gl;
				named = true;
			}
		}
		if (!named)
			sb_addc(out, s[i++]);
	}
}

/* A Markdown cell into troff: `code` and **bold** in bold, *words* in
 * italics, \| a pipe. */
static void put_md(struct sb *out, const char *s, size_t n)
{
	bool start = true;
	for (size_t i = 0; i < n;) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == '|') {
			sb_addc(out, '|');
			i += 2;
		} else if (s[i] == '`') {
			const char *end = memchr(s + i + 1, '`', n - i - 1);
			size_t len = end ? (size_t)(end - (s + i + 1)) : n - i - 1;
			sb_adds(out, "\\fB");
			put_text(out, s + i + 1, len, start);
			sb_adds(out, "\\fR");
			i += len + (end ? 2 : 1);
		} else if (s[i] == '*' && i + 1 < n && s[i + 1] == '*') {
			const char *end = strstr(s + i + 2, "**");
			size_t len = end && end < s + n ? (size_t)(end - (s + i + 2)) : n - i - 2;
			sb_adds(out, "\\fB");
			put_text(out, s + i + 2, len, start);
			sb_adds(out, "\\fR");
			i += len + 4;
		} else if (s[i] == '*' && i + 1 < n && isalpha((unsigned char)s[i + 1])) {
			const char *end = memchr(s + i + 1, '*', n - i - 1);
			size_t len = end ? (size_t)(end - (s + i + 1)) : n - i - 1;
			sb_adds(out, "\\fI");
			put_text(out, s + i + 1, len, start);
			sb_adds(out, "\\fR");
			i += len + (end ? 2 : 1);
		} else {
			size_t j = i;
			while (j < n && s[j] != '`' && s[j] != '*' && !(s[j] == '\\' && j + 1 < n && s[j + 1] == '|'))
				j++;
			if (j == i)
				j++;
			put_text(out, s + i, j - i, start);
			i = j;
		}
		start = false;
	}
}

/* The command's --help text (a verb's own with verb), from its row. */
static void help_section(const char *name, const char *verb, struct sb *out)
{
	const struct command *c = cli_find_command(name);
	const struct command *v = verb ? command_verb(c, verb) : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	command_help(v ? v : c, v ? c : NULL, f);
	fclose(f);
	/* no "usage:" line and summary: the heading above says them */
	const char *p = buf;
	const char *opts = strstr(p, "\narguments:\n");
	if (!opts)
		opts = strstr(p, "\noptions:\n");
	if (opts)
		p = opts + 1;
	sb_adds(out, ".PP\n.RS 4\n.nf\n");
	while (*p) {
		size_t n = strcspn(p, "\n");
		put_text(out, p, n, true);
		sb_addc(out, '\n');
		p += n + (p[n] ? 1 : 0);
	}
	sb_adds(out, ".fi\n.RE\n");
	free(buf);
}

/* Split a table row into its cells (an escaped \| stays in its cell). */
static size_t cells(const char *line, const char **start, size_t *len, size_t max)
{
	size_t n = 0;
	const char *p = strchr(line, '|');
	if (!p)
		return 0;
	p++;
	while (*p && *p != '\n' && n < max) {
		const char *q = p;
		while (*q && *q != '\n' && !(*q == '|' && q[-1] != '\\'))
			q++;
		if (*q != '|')
			break;
		const char *a = p, *b = q;
		while (a < b && *a == ' ')
			a++;
		while (b > a && b[-1] == ' ')
			b--;
		start[n] = a;
		len[n++] = (size_t)(b - a);
		p = q + 1;
	}
	return n;
}

/* The reference's rows for the commands section; commands it lacks get
 * their line from the command table, and are said in *missing. */
static int commands_section(const char *reference, struct sb *out, struct sb *missing,
			    struct err *e)
{
	struct sb md = SB_INIT;
	int rc = fsutil_read_file(reference, &md, e);
	if (rc < 0)
		return rc;
	const char *sec = strstr(md.buf, "\n## Subcommands\n");
	if (!sec) {
		sb_release(&md);
		return err_set(e, ERR_USAGE, "%s has no \"## Subcommands\" section", reference);
	}
	const char *end = strstr(sec + 1, "\n## ");
	char seen[64][24];
	size_t nseen = 0;
	sb_adds(out, ".SH COMMANDS\n");
	for (const char *p = sec + 1; *p && (!end || p < end);) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *cs[4];
		size_t cl[4];
		if (!strncmp(p, "| `optloop ", 11) && cells(p, cs, cl, 4) >= 2) {
			/* `optloop NAME [VERB] ...` */
			char name[24] = "", verb[24] = "";
			sscanf(cs[0] + 9, "%23[a-z] %23[a-z]", name, verb);
			if (!cli_find_command(name))
				verb[0] = '\0';
			bool verb_ok = verb[0] && strncmp(cs[0] + 9 + strlen(name), " [", 2);
			sb_adds(out, ".SS \"");
			put_md(out, cs[0], cl[0]);
			sb_adds(out, "\"\n");
			put_md(out, cs[1], cl[1]);
			sb_addc(out, '\n');
			help_section(name, verb_ok ? verb : NULL, out);
			if (nseen < 64)
				snprintf(seen[nseen++], sizeof(seen[0]), "%s", name);
		}
		p += n + (nl ? 1 : 0);
	}
	/* every command, the reference's or not */
	for (const char *const *c = cli_command_names(); *c; c++) {
		bool have = false;
		for (size_t i = 0; i < nseen && !have; i++)
			have = !strcmp(seen[i], *c);
		if (have)
			continue;
		sb_addf(missing, "%s ", *c);
		sb_adds(out, ".SS \"optloop ");
		put_text(out, cli_usage(*c), strlen(cli_usage(*c)), false);
		sb_adds(out, "\"\n");
		put_text(out, cli_summary(*c), strlen(cli_summary(*c)), true);
		sb_addc(out, '\n');
		help_section(*c, NULL, out);
	}
	sb_release(&md);
	return 0;
}

static void keys_section(struct sb *out)
{
	sb_adds(out, ".SH WORKBENCH KEYS\n");
	for (int a = 0; a < ACT_COUNT - 1; a++) {
		const struct action_info *ai = &action_table[a];
		sb_adds(out, ".TP\n.B \"");
		for (int k = 0; ai->keys[k]; k++) {
			const char *kn = action_key_name(ai->keys[k]);
			if (k)
				sb_adds(out, ", ");
			put_text(out, kn, strlen(kn), false);
		}
		sb_adds(out, "\"\n");
		put_text(out, ai->help, strlen(ai->help), true);
		sb_addc(out, '\n');
	}
}

int manpage_print(FILE *f, const char *reference, const char *tmpl, struct sb *missing,
		  struct err *e)
{
	struct sb in = SB_INIT, out = SB_INIT;
	int rc = fsutil_read_file(tmpl, &in, e);
	if (rc < 0)
		return rc;
	const char *cmd = strstr(in.buf, ".\\\" @COMMANDS@\n");
	const char *keys = strstr(in.buf, ".\\\" @KEYS@\n");
	if (!cmd || !keys || keys < cmd) {
		sb_release(&in);
		return err_set(e, ERR_USAGE,
			       "%s needs a .\\\" @COMMANDS@ line and, after it, a .\\\" @KEYS@ line",
			       tmpl);
	}
	sb_add(&out, in.buf, (size_t)(cmd - in.buf));
	if ((rc = commands_section(reference, &out, missing, e)) == 0) {
		const char *mid = cmd + strlen(".\\\" @COMMANDS@\n");
		sb_add(&out, mid, (size_t)(keys - mid));
		keys_section(&out);
		sb_adds(&out, keys + strlen(".\\\" @KEYS@\n"));
		fwrite(out.buf, 1, out.len, f);
	}
	sb_release(&in);
	sb_release(&out);
	return rc;
}
