/*
 * import — `optloop import FILE [--json] [--strict]`: read any
 * OPT_LOG.md (hand-written ones too) and show what optloop understood: the
 * header lines, every row, and each thing it could not read with its line
 * number.
 *
 * Exit status: 0 when a summary table was read, problems or not (they are
 * listed); 1 when the file has no summary table or cannot be read, and with
 * --strict also when any problem was found; 2 usage, or no such file.
 */
#include "tui/cli/util.h"
#include "tui/cli/commands.h"
#include "core/err.h"
#include "core/model.h"
#include "core/fsutil.h"
#include "core/sb.h"
#include "views/sanitize.h"

#include <stddef.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* JSON string with escapes; invalid UTF-8 becomes U+FFFD, so a log with
 * stray bytes still gives valid JSON. */
static void json_str(struct sb *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		sb_adds(o, "null");
		return;
	}
	sb_addc(o, '"');
	while (*p) {
		const unsigned char *q = p;
		while (*q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
			q++;
		sb_add(o, p, (size_t)(q - p));
		p = q;
		if (!*p)
			break;
		if (*p == '"' || *p == '\\') {
			sb_addc(o, '\\');
			sb_addc(o, (char)*p++);
		} else if (*p == '\n') {
			sb_adds(o, "\\n"), p++;
		} else if (*p == '\t') {
			sb_adds(o, "\\t"), p++;
		} else if (*p < 0x20) {
			sb_addf(o, "\\u%04x", *p++);
		} else {
			/* A UTF-8 sequence: copy it when well formed. */
			int n = *p >= 0xf0 && *p < 0xf5 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;
			bool ok = n > 0 && *p < 0xf5;
			for (int i = 1; ok && i < n; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (ok && n == 3)
				ok = !(*p == 0xe0 && p[1] < 0xa0) && !(*p == 0xed && p[1] >= 0xa0);
			if (ok && n == 4)
				ok = !(*p == 0xf0 && p[1] < 0x90) && !(*p == 0xf4 && p[1] >= 0x90);
			if (ok) {
				sb_add(o, p, (size_t)n);
				p += n;
			} else {
				sb_adds(o, "\xef\xbf\xbd");
				p++;
			}
		}
	}
	sb_addc(o, '"');
}

/* Ten significant digits, as cli_print_json writes reals (LC_NUMERIC stays
 * "C": main sets only LC_CTYPE from the environment). */
static void json_num(struct sb *o, double v)
{
	if (!isfinite(v))
		sb_adds(o, "null");
	else
		sb_addf(o, "%.10g", v);
}

/* Write out what has been built once it is large: output streams, memory
 * stays flat however long the log is. */
static void spill(struct sb *o, bool force)
{
	if (o->len >= (1u << 16) || (force && o->len)) {
		fwrite(o->buf, 1, o->len, stdout);
		sb_reset(o);
	}
}

/* Clean text for the terminal; plain printable ASCII (nearly every cell)
 * is copied as it is. */
static void put_clean(struct sb *o, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f)
		i++;
	if (i == n)
		sb_add(o, s, n);
	else
		sanitize_line(s, n, o);
}

static const char *scope_name(enum gate_scope s)
{
	return s == SCOPE_SUBSET ? "subset" : s == SCOPE_FULL ? "full" : "unknown";
}

/* Built as text and streamed: a jansson tree of 100,000 rows would cost
 * several times the memory of the rows. */
static void print_json(const char *file, const struct optlog_doc *d,
		       const struct problems *probs, struct sb *o)
{
	sb_adds(o, "{\"file\": ");
	json_str(o, file);
	sb_adds(o, ", \"op\": ");
	json_str(o, d->op);
	sb_adds(o, ", \"env\": ");
	json_str(o, d->env);
	sb_adds(o, ", \"baseline\": ");
	json_str(o, d->baseline);
	sb_adds(o, ", \"target\": ");
	json_str(o, d->target);
	sb_addf(o, ", \"table_line\": %d,\n\"rows\": [", d->table_lineno);
	for (size_t i = 0; i < d->nrows; i++) {
		const struct log_row *r = &d->rows[i];
		sb_adds(o, i ? ",\n  " : "\n  ");
		sb_addf(o, "{\"iter\": %d, \"direction\": ", r->iter);
		json_str(o, r->direction);
		sb_adds(o, ", \"gate\": ");
		json_str(o, r->gate);
		sb_addf(o, ", \"gate_verdict\": \"%s\", \"gate_scope\": \"%s\", \"bench_ms\": ",
			gate_verdict_name(r->gate_v), scope_name(r->scope));
		json_num(o, r->bench_ms);
		sb_adds(o, ", \"vs_best\": ");
		json_num(o, r->vs_best);
		sb_adds(o, ", \"status\": ");
		json_str(o, r->status == RS_NONE ? NULL : row_status_name(r->status));
		sb_adds(o, ", \"axis\": ");
		json_str(o, r->axis);
		sb_adds(o, ", \"commit\": ");
		json_str(o, r->commit);
		sb_adds(o, ", \"notes\": ");
		json_str(o, r->notes);
		sb_addf(o, ", \"line\": %d}", r->lineno);
		spill(o, false);
	}
	sb_adds(o, d->nrows ? "\n],\n\"events\": [" : "],\n\"events\": [");
	for (size_t i = 0; i < d->nevents; i++) {
		const struct optlog_event *ev = &d->events[i];
		sb_addf(o, "%s{\"after_iter\": %d, \"kind\": \"%s\", \"%s\": ", i ? ",\n  " : "\n  ",
			ev->iter, ev->stop ? "stop" : "reassess", ev->stop ? "reason" : "next");
		json_str(o, ev->what);
		sb_addf(o, ", \"%s\": ", ev->stop ? "bound" : "axes");
		json_str(o, ev->detail);
		sb_addc(o, '}');
	}
	sb_adds(o, d->nevents ? "\n],\n\"problems\": [" : "],\n\"problems\": [");
	for (size_t i = 0; probs && i < probs->n; i++) {
		sb_addf(o, "%s{\"line\": %d, \"message\": ", i ? ",\n  " : "\n  ", probs->v[i].lineno);
		json_str(o, probs->v[i].msg);
		sb_addc(o, '}');
	}
	sb_adds(o, probs && probs->n ? "\n]}\n" : "]}\n");
}

/* Right-align already clean text in w columns. */
static void pad_left(struct sb *o, const struct sb *cell, int w)
{
	int used = sanitize_width(cell->buf, cell->len);
	for (int i = used; i < w; i++)
		sb_addc(o, ' ');
	sb_add(o, cell->buf, cell->len);
}

static void print_text(const char *file, const struct optlog_doc *d,
		       const struct problems *probs, struct sb *o)
{
	struct sb c = SB_INIT;
	static const char *const dash = "\xe2\x80\x94";

	sanitize_line(file, strlen(file), o);
	sb_addf(o, ": op ");
	sanitize_line(d->op ? d->op : "(none)", strlen(d->op ? d->op : "(none)"), o);
	sb_addf(o, ", %zu row%s, summary table at line %d\nEnv: ", d->nrows, d->nrows == 1 ? "" : "s",
		d->table_lineno);
	sanitize_line(d->env ? d->env : dash, strlen(d->env ? d->env : dash), o);
	sb_adds(o, "\nBaseline (main): ");
	sanitize_line(d->baseline ? d->baseline : dash, strlen(d->baseline ? d->baseline : dash), o);
	sb_adds(o, "\nTarget: ");
	sanitize_line(d->target ? d->target : dash, strlen(d->target ? d->target : dash), o);
	sb_addf(o, "\n\n%5s  %-12s %10s %8s  %-6s  %s\n", "iter", "gate", "bench ms", "vs best",
		"status", "direction");
	for (size_t i = 0; i < d->nrows; i++) {
		const struct log_row *r = &d->rows[i];
		char num[16];
		int nn = 0;
		/* right-aligned in five columns, without a printf per row */
		unsigned v = r->iter < 0 ? 0u - (unsigned)r->iter : (unsigned)r->iter;
		do
			num[sizeof(num) - 1 - nn++] = (char)('0' + v % 10);
		while ((v /= 10) && nn < 15);
		if (r->iter < 0)
			num[sizeof(num) - 1 - nn++] = '-';
		for (int k = nn; k < 5; k++)
			sb_addc(o, ' ');
		sb_add(o, num + sizeof(num) - nn, (size_t)nn);
		sb_adds(o, "  ");
		sb_reset(&c);
		if (r->gate_v == GATE_NONE && r->gate && *r->gate)
			sanitize_fit(r->gate, strlen(r->gate), 12, &c);
		else
			optlog_fmt_gate(r->gate_v, r->scope, &c);
		sb_add(o, c.buf, c.len);
		for (int k = sanitize_width(c.buf, c.len); k < 13; k++)
			sb_addc(o, ' ');
		sb_reset(&c);
		optlog_fmt_bench(r->bench_ms, &c);
		pad_left(o, &c, 10);
		sb_addc(o, ' ');
		sb_reset(&c);
		optlog_fmt_vs_best(r->vs_best, &c);
		pad_left(o, &c, 8);
		const char *st = r->status == RS_NONE ? "?" : row_status_name(r->status);
		sb_adds(o, "  ");
		sb_adds(o, st);
		for (size_t k = strlen(st); k < 8; k++)
			sb_addc(o, ' ');
		/* Line breaks in a direction shown as " / ". */
		for (const char *p = r->direction ? r->direction : ""; *p;) {
			size_t n = strcspn(p, "\n");
			put_clean(o, p, n);
			p += n;
			if (*p) {
				sb_adds(o, " / ");
				p++;
			}
		}
		sb_addc(o, '\n');
		/* a Notes cell on lines of its own under the row, breaks kept */
		for (const char *p = r->notes; p && *p;) {
			size_t n = strcspn(p, "\n");
			sb_adds(o, "        notes: ");
			put_clean(o, p, n);
			sb_addc(o, '\n');
			p += n;
			if (*p)
				p++;
		}
		spill(o, false);
	}
	for (size_t i = 0; i < d->nevents; i++) {
		const struct optlog_event *ev = &d->events[i];
		sb_addf(o, "%safter iteration %d: %s", i ? "" : "\n", ev->iter,
			ev->stop ? "stopped" : "re-assessed");
		if (ev->what) {
			sb_adds(o, ev->stop ? " (" : "; next direction: ");
			sanitize_line(ev->what, strlen(ev->what), o);
			if (ev->stop)
				sb_addc(o, ')');
		}
		if (ev->detail) {
			sb_adds(o, ev->stop ? ": " : "; axes tried: ");
			sanitize_line(ev->detail, strlen(ev->detail), o);
		}
		sb_addc(o, '\n');
	}
	if (probs && probs->n) {
		sb_addf(o, "\n%zu problem%s (rows above are what could be read):\n", probs->n,
			probs->n == 1 ? "" : "s");
		for (size_t i = 0; i < probs->n; i++) {
			sanitize_line(file, strlen(file), o);
			sb_addf(o, ":%d: ", probs->v[i].lineno);
			sanitize_line(probs->v[i].msg, strlen(probs->v[i].msg), o);
			sb_addc(o, '\n');
			spill(o, false);
		}
	}
	sb_release(&c);
}

/* The whole file, checked as every file optloop reads (fsutil_open_read:
 * a regular file up to the size cap; standard input, "-" or /dev/stdin,
 * whatever it is).  A regular file is mapped with its pages read in one go
 * (MAP_POPULATE): a 9 MB log is neither copied nor faulted in page by page.
 * Standard input is read into buf.  *map_len is what to munmap afterwards,
 * 0 when buf holds the text. */
static int load(const char *file, struct sb *buf, const char **text, size_t *len,
		size_t *map_len, struct err *e)
{
	struct stat st;
	int fd, rc = fsutil_open_read(file, FSUTIL_STDIN, &fd, e);

	*map_len = 0;
	*text = "";
	*len = 0;
	if (rc < 0)
		return rc;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (p != MAP_FAILED) {
			close(fd);
			*text = p;
			*len = *map_len = (size_t)st.st_size;
			return 0;
		}
	}
	rc = fsutil_read_fd(fd, strcmp(file, "-") ? file : "standard input", buf, e);
	close(fd);
	*text = sb_str(buf);
	*len = buf->len;
	return rc;
}

/* The rows of a long log take about twice its size in heap, and faulting
 * those pages in one by one was a fifth of an import's time (more on a
 * virtual machine).  Grow the heap once, pre-fault it with one madvise, and
 * keep it: the parser's allocations then land on pages already there.
 * Where the kernel or the C library cannot, this does nothing. */
static void heap_prefault(size_t bytes)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD) && defined(MADV_POPULATE_WRITE)
	const size_t page = 4096;
	if (bytes < (4u << 20))
		return;
	if (bytes > (256u << 20))
		bytes = 256u << 20;
	/* from the heap (not a mapping of its own), and not given back on free */
	mallopt(M_MMAP_THRESHOLD, 512 << 20);
	mallopt(M_TRIM_THRESHOLD, 1024 << 20);
	char *p = malloc(bytes);
	if (!p)
		return;
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
	madvise((void *)a, bytes - 2 * page, MADV_POPULATE_WRITE);
	free(p);
#else
	(void)bytes;
#endif
}

struct import_args {
	bool strict, json;
};

static int import_run(struct cmd_ctx *x)
{
	const struct import_args *a = x->args;
	const char *file = x->npos ? x->pos[0] : NULL;
	bool json = a->json, strict = a->strict;
	struct sb text = SB_INIT;
	struct optlog_doc d = {0};
	struct problems probs = {0};
	struct err e = {0};
	int rc;

	if (!file)
		return cli_usage_error("import", "which OPT_LOG.md? give its path");

	const char *data;
	size_t len, map_len;
	rc = load(file, &text, &data, &len, &map_len, &e);
	if (rc < 0) {
		sb_release(&text);
		err_prefix(&e, "import: ");
		return cli_fail(&e);
	}
	heap_prefault(len * 2);
	rc = optlog_parse(data, len, &d, &probs, &e);
	if (map_len)
		munmap((void *)data, map_len);
	sb_release(&text);
	if (rc < 0) {
		err_prefix(&e, "import: %s: ", file);
		optlog_doc_release(&d);
		problems_release(&probs);
		return cli_fail(&e);
	}
	struct sb o = SB_INIT;
	if (json) {
		print_json(file, &d, &probs, &o);
	} else {
		sanitize_init();
		print_text(file, &d, &probs, &o);
	}
	spill(&o, true);
	sb_release(&o);
	rc = strict && probs.n ? 1 : 0;
	optlog_doc_release(&d);
	problems_release(&probs);
	return rc;
}

static const struct cli_opt import_opts[] = {
	CLI_FLAG("--strict", offsetof(struct import_args, strict),
		 "exit 1 when any line could not be read"),
	CLI_FLAG("--json", offsetof(struct import_args, json),
		 "print the rows and the problems as JSON"),
	CLI_END,
};

const struct command cmd_import = {
	.name = "import",
	.summary = "read an OPT_LOG.md and show its rows and what could not be read",
	.opts = import_opts,
	.args_size = sizeof(struct import_args),
	.max_pos = 1,
	.pos_usage = "FILE",
	.pos_help = "  FILE  an OPT_LOG.md, written by optloop or by hand",
	.examples = (const char *const[]){"import profile/chunk_gla-opt/OPT_LOG.md",
					  "import --json --strict OPT_LOG.md", NULL},
	.run = import_run,
};
