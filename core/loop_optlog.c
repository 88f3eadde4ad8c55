/* loop_optlog — OPT_LOG.md from the database: rendered whole, known to be
 * current from what optloop recorded of its last write, or written with one
 * row more.
 *
 * Every write of the file records (meta 'optlog_written') its size, a hash
 * of its text and the key of what it was rendered from: the rows'
 * generation (store_rows_gen: every change to a rendered column of a row
 * moves it, through any connection, plain SQL included) and a hash of the
 * rest of the input (the op, the Env line, the Target, the re-assessments
 * and stops listed under the table), and a hash of the
 * renderer's own output on a fixed sample (so a new optloop that renders
 * differently does not take an old file for current).  A file whose size, hash and key
 * match is what the database renders: the rows are neither read nor
 * rendered.  Anything else (a hand edit, a lost or cut file, a row changed
 * by another program, a Target edited in the contract) takes the full
 * comparison of loop_reconcile_optlog.  Once a read found the file so, its
 * stat (device, inode, size, modification and change times; meta
 * 'optlog_stat') is kept too, and while the file's stat and the key stay
 * the same the file is not even read: a long log is 1.5 MB at 20,000 rows. */
#include "core/loop_impl.h"
#include "core/flabackend.h"
#include "core/hash.h"
#include "core/alloc.h"
#include "core/fsutil.h"
#include "core/optlog.h"
#include "core/sb.h"
#include "core/store.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RECORD_KEY "optlog_written"
/* the file's stat when its text was last found to match the record: the
 * same stat again is the same text, not read again (loop_optlog_unchanged) */
#define RECORD_STAT "optlog_stat"
#define MERGED_KEY "optlog_merged" /* "1": the last full write kept a hand edit */

/* env, and when the machine would dispatch to the backends init found
 * (flabackend_env_note, from the GPU env names first); env is taken. */
static char *optlog_env_backends(struct loop *l, char *env)
{
	char *text = NULL;
	if (store_meta_get(l->ws.store, "backends", &text, NULL) < 0 || !text || !*text) {
		free(text);
		return env;
	}
	struct fla_backend *b = NULL;
	size_t n = flabackend_read(text, &b);
	size_t dl = strcspn(env, "|");
	while (dl && env[dl - 1] == ' ')
		dl--;
	char *device = dl ? xstrndup(env, dl) : NULL;
	struct sb note = SB_INIT;
	flabackend_env_note(b, n, device, &note);
	if (note.len) {
		char *with = xasprintf("%s | %s", env, note.buf);
		free(env);
		env = with;
	}
	sb_release(&note);
	free(device);
	free(text);
	flabackend_free(b, n);
	return env;
}

/* The Env line: the environment of the latest logged row whose run printed
 * one (unlogged runs do not change the file, so it only moves on log).
 * Caller frees; NULL when there is none. */
static char *optlog_env(struct loop *l)
{
	char *v[4], *env = NULL;
	const char *raw, *node;

	if (store_env_line(l->ws.store, v, NULL) < 0)
		return NULL;
	raw = v[0];
	node = v[1];
	if (raw && *raw && node && *node) /* where it ran, when not here */
		env = xasprintf("%s | node %s, GPU %s (Slurm job %s)", raw, node,
				v[2] ? v[2] : "?", v[3] ? v[3] : "?");
	else if (raw && *raw)
		env = xstrdup(raw);
	for (int i = 0; i < 4; i++)
		free(v[i]);
	return env ? optlog_env_backends(l, env) : NULL;
}

/* What the renderer writes for a fixed sample of rows, hashed once: part
 * of every key, so that text an optloop with other rendering rules wrote
 * is never taken for current. */
static uint64_t render_fingerprint(void)
{
	static uint64_t fp;
	if (fp)
		return fp;
	struct log_row rows[] = {
		{.iter = 0, .direction = "baseline", .gate_v = GATE_PASS, .scope = SCOPE_FULL,
		 .bench_ms = 0.973, .vs_best = NAN, .status = RS_BASE},
		{.iter = 1, .direction = "a | b\\c\nd", .gate_v = GATE_PASS, .scope = SCOPE_SUBSET,
		 .bench_ms = 0.5, .vs_best = 0.486, .vs_confirm = true, .status = RS_KEEP,
		 .unconfirmed = "why"},
		{.iter = 2, .direction = "x", .gate = "odd", .gate_v = GATE_NONE, .bench_ms = NAN,
		 .vs_best = -0.031, .status = RS_REVERT},
		{.iter = -3, .direction = "", .gate_v = GATE_FAIL, .bench_ms = 12345.678,
		 .vs_best = NAN, .status = RS_DROP},
	};
	struct optlog_event events[] = {
		{.iter = 2, .what = "a\nb", .detail = "tiling"},
		{.iter = 2, .stop = true, .what = "floor", .detail = "HBM: 4 of 5 TB/s"},
		{.iter = 2, .stop = true, .what = "cap"},
	};
	struct optlog_doc d;
	struct sb text = SB_INIT;
	memset(&d, 0, sizeof(d));
	d.op = "op";
	d.env = "env";
	d.baseline = "0.973 ms (iter 0)";
	d.target = "2x";
	d.rows = rows;
	d.nrows = sizeof(rows) / sizeof(rows[0]);
	d.events = events;
	d.nevents = sizeof(events) / sizeof(events[0]);
	optlog_render(&d, &text);
	fp = hash64(text.buf, text.len) | 1;
	sb_release(&text);
	return fp;
}

static void hash_field(struct sb *in, const char *v)
{
	/* NULL and "" apart, each field ended so that no two inputs join alike */
	sb_adds(in, v ? "+" : "-");
	if (v)
		sb_add(in, v, strlen(v) + 1);
}

char *loop_optlog_key(const char *op, const char *env, const char *target, const char *events,
		      long long gen)
{
	struct sb in = SB_INIT;
	if (gen < 0)
		return NULL;
	sb_init(&in);
	hash_field(&in, op);
	hash_field(&in, env);
	hash_field(&in, target);
	if (events && *events) /* none: the key a log without them always had */
		hash_field(&in, events);
	uint64_t h = hash64(in.buf, in.len);
	sb_release(&in);
	return xasprintf("%lld %016llx %016llx", gen, (unsigned long long)h,
			 (unsigned long long)render_fingerprint());
}

/* The record of text rendered from key (NULL: not known; no record). */
static char *record_text(const char *text, size_t len, const char *key)
{
	if (!key)
		return NULL;
	return xasprintf("%zu %016llx %s", len, (unsigned long long)hash64(text, len), key);
}

static bool record(struct store *s, const char *text, size_t len, const char *key)
{
	if (store_readonly(s))
		return false;
	char *rec = record_text(text ? text : "", len, key);
	/* a failed write leaves an older record, which no file matches any
	 * more than it did: the next open compares in full */
	bool ok = store_meta_set(s, RECORD_KEY, rec ? rec : "", NULL) == 0 && rec;
	free(rec);
	return ok;
}

void loop_optlog_record(struct store *s, const char *text, size_t len, const char *key)
{
	record(s, text, len, key);
}

static char *stat_text(const struct stat *st);

/* Write text as OPT_LOG.md (crash-safe) and record it, rendered from key;
 * with the stat of the file as it was put in place (the inode written,
 * nothing else renamed over it), so that the next command, a reader
 * included, need not read it again to know it current
 * (loop_optlog_unchanged). */
static int write_recorded(struct loop *l, const struct sb *text, const char *key, struct err *e)
{
	struct stat now;
	bool known;
	int rc = fsutil_write_atomic_placed(l->ws.optlog_path, text->buf, text->len, &now, &known, e);
	if (rc < 0)
		return rc;
	if (record(l->ws.store, text->buf, text->len, key) && known) {
		char *st = stat_text(&now);
		store_meta_set(l->ws.store, RECORD_STAT, st, NULL);
		free(st);
	}
	return 0;
}

/* The re-assessments and stops into d (optlog_doc's events, owned here:
 * events_done releases them). */
static void events_load(struct loop *l, struct optlog_doc *d)
{
	store_optlog_events(l->ws.store, &d->events, &d->nevents);
}

static void events_done(struct optlog_doc *d)
{
	for (size_t i = 0; i < d->nevents; i++)
		optlog_event_release(&d->events[i]);
	free(d->events);
	d->events = NULL;
	d->nevents = 0;
}

/* The key of what the database renders now; gen read by the caller before
 * the rows it renders (a change after that makes the key older, never
 * newer, than the text). */
static char *key_now(struct loop *l, const char *env, const struct optlog_doc *d, long long gen)
{
	struct sb ev = SB_INIT;
	optlog_render_events(d, &ev);
	char *key = loop_optlog_key(l->ws.op, env, l->contract ? l->contract->c.v[CF_TARGET] : NULL,
				    ev.buf, gen);
	sb_release(&ev);
	return key;
}

/* The file's identity as stat gives it: device, inode, size, and the
 * modification and change times to the nanosecond.  Any write to the file
 * moves its change time (which no tool can set back), so the same text
 * means the same bytes as when it was last read. */
static char *stat_text(const struct stat *st)
{
	return xasprintf("%ju:%ju:%jd:%lld.%09ld:%lld.%09ld", (uintmax_t)st->st_dev,
			 (uintmax_t)st->st_ino, (intmax_t)st->st_size, (long long)st->st_mtim.tv_sec,
			 st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

/* The record's key part (after its size and hash). */
static const char *record_key(const char *rec)
{
	const char *sp = rec ? strchr(rec, ' ') : NULL;
	sp = sp ? strchr(sp + 1, ' ') : NULL;
	return sp ? sp + 1 : NULL;
}

/* The key of what the database renders now (rows' generation gen): the
 * record's key part when the file is current. */
static char *current_key(struct loop *l, long long gen)
{
	struct optlog_doc d;
	memset(&d, 0, sizeof(d));
	events_load(l, &d);
	char *env = optlog_env(l), *key = key_now(l, env, &d, gen);
	events_done(&d);
	free(env);
	return key;
}

bool loop_optlog_unchanged(struct loop *l)
{
	struct stat st;
	char *seen = NULL, *seen_stat = NULL;
	bool same = false;
	long long gen;
	if (stat(l->ws.optlog_path, &st) == 0 && store_rows_gen(l->ws.store, &gen, NULL) == 0 &&
	    gen >= 0 && store_meta_get(l->ws.store, RECORD_STAT, &seen_stat, NULL) == 0 &&
	    seen_stat && store_meta_get(l->ws.store, RECORD_KEY, &seen, NULL) == 0 && seen) {
		char *now = stat_text(&st);
		const char *k = record_key(seen);
		if (!strcmp(now, seen_stat) && k) {
			char *key = current_key(l, gen);
			same = key && !strcmp(key, k);
			free(key);
		}
		free(now);
	}
	free(seen);
	free(seen_stat);
	return same;
}

void loop_optlog_record_stat(struct loop *l, const struct stat *before, size_t len)
{
	struct stat after;
	if (store_readonly(l->ws.store) || stat(l->ws.optlog_path, &after) < 0 ||
	    (uintmax_t)after.st_size != len)
		return;
	char *was = stat_text(before), *now = stat_text(&after);
	if (!strcmp(was, now))
		store_meta_set(l->ws.store, RECORD_STAT, now, NULL);
	free(was);
	free(now);
}

bool loop_optlog_current(struct loop *l, const struct sb *have)
{
	long long gen;
	char *seen = NULL;
	if (store_rows_gen(l->ws.store, &gen, NULL) < 0 || gen < 0 ||
	    store_meta_get(l->ws.store, RECORD_KEY, &seen, NULL) < 0 || !seen || !*seen) {
		free(seen);
		return false;
	}
	char *key = current_key(l, gen);
	char *rec = record_text(have->buf ? have->buf : "", have->len, key);
	bool same = rec && !strcmp(rec, seen);
	free(rec);
	free(key);
	free(seen);
	return same;
}

/* d's header lines over rows (bl holds the Baseline line's text). */
static void head_doc(struct loop *l, const struct log_row *rows, size_t n, const char *env,
		     struct optlog_doc *d, struct sb *bl)
{
	memset(d, 0, sizeof(*d));
	d->op = l->ws.op;
	d->env = (char *)env;
	if (n > 0 && rows[0].status == RS_BASE) {
		optlog_fmt_bench(rows[0].bench_ms, bl);
		if (isfinite(rows[0].bench_ms))
			sb_adds(bl, " ms");
		sb_addf(bl, " (iter 0%s%.7s)", rows[0].commit ? ", " : "",
			rows[0].commit ? rows[0].commit : "");
		d->baseline = bl->buf;
	}
	d->target = l->contract->c.v[CF_TARGET];
	events_load(l, d);
}

bool loop_render_optlog(struct loop *l, const struct log_row *rows, size_t n, long long gen,
			const struct sb *have, struct sb *out, char **key)
{
	bool same = false;
	struct optlog_doc d;
	struct sb bl = SB_INIT;
	char *env = optlog_env(l);

	head_doc(l, rows, n, env, &d, &bl);
	d.rows = (struct log_row *)rows;
	d.nrows = n;
	if (have)
		same = optlog_render_same(&d, have->buf, have->len);
	if (!same)
		optlog_render(&d, out);
	if (key)
		*key = key_now(l, env, &d, gen);
	events_done(&d);
	sb_release(&bl);
	free(env);
	return same;
}

/* Whether have is the text optloop last recorded writing (whatever it was
 * rendered from). */
static bool recorded_same(struct loop *l, const struct sb *have)
{
	char *seen = NULL;
	size_t size = 0;
	unsigned long long hash = 0;
	bool same = false;
	store_meta_get(l->ws.store, RECORD_KEY, &seen, NULL);
	if (seen && sscanf(seen, "%zu %llx", &size, &hash) == 2)
		same = size == have->len && hash == hash64(have->buf ? have->buf : "", have->len);
	free(seen);
	return same;
}

/* A path beside OPT_LOG.md for a copy of the file a person edited, one no
 * file holds yet (caller frees). */
static char *orig_path(struct loop *l)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	char *p = xasprintf("%s.orig-%s", l->ws.optlog_path, when);
	for (int k = 2; access(p, F_OK) == 0; k++) {
		free(p);
		p = xasprintf("%s.orig-%s-%d", l->ws.optlog_path, when, k);
	}
	return p;
}

static bool blank_text(const struct sb *t)
{
	for (size_t i = 0; i < t->len; i++)
		if (!strchr(" \t\r\n", t->buf[i]))
			return false;
	return true;
}

/* rows merged into have, the file a person edited: into text with what it
 * kept said in l->optlog_note (1); when it cannot be merged, have is
 * copied aside first and text is left as rendered (0); <0 when the copy
 * could not be written (then nothing may replace the file). */
static int merge_edited(struct loop *l, const struct log_row *rows, size_t n, const struct sb *have,
			struct sb *text, struct err *e)
{
	struct optlog_doc d;
	struct sb bl = SB_INIT, merged = SB_INIT, kept = SB_INIT;
	struct err me = {0};
	char *env = optlog_env(l);
	int rc = 0;

	head_doc(l, rows, n, env, &d, &bl);
	d.rows = (struct log_row *)rows;
	d.nrows = n;
	if (optlog_merge(&d, have->buf, have->len, &merged, &kept, NULL, &me) == 0) {
		if (kept.len) {
			sb_reset(text);
			sb_add(text, merged.buf, merged.len);
			l->optlog_note = xasprintf("OPT_LOG.md: kept what was edited by hand (%s); the rows' "
						   "gate, bench, vs best and status are the database's",
						   kept.buf);
			rc = 1;
		}
	} else {
		char *copy = orig_path(l);
		rc = fsutil_write_atomic(copy, have->buf, have->len, e);
		if (rc == 0) {
			const char *base = strrchr(copy, '/');
			l->optlog_note = xasprintf(
				"OPT_LOG.md was edited by hand and cannot be merged with the database "
				"(%s): it is kept as %s, and OPT_LOG.md is written from the database; "
				"carry your edits over from the copy",
				me.msg, base ? base + 1 : copy);
		} else {
			err_prefix(e, "OPT_LOG.md was edited by hand and cannot be merged (%s), and "
				      "its copy could not be written, so it was left as it is: ",
				   me.msg);
		}
		free(copy);
	}
	events_done(&d);
	free(env);
	sb_release(&bl);
	sb_release(&merged);
	sb_release(&kept);
	return rc;
}

int loop_write_optlog(struct loop *l, struct err *e)
{
	struct log_rows *sr;
	const struct log_row *rows;
	size_t n;
	struct sb text = SB_INIT, have = SB_INIT;
	char *key = NULL;
	long long gen = -1;
	int rc = store_rows_gen(l->ws.store, &gen, e);
	if (rc < 0 || (rc = loop_rows_get(l->ws.store, &sr, &rows, &n, e)) < 0)
		return rc;
	free(l->optlog_note);
	l->optlog_note = NULL;
	/* a file a person edited is merged, never silently replaced */
	bool edited = fsutil_read_file(l->ws.optlog_path, &have, NULL) == 0 && !blank_text(&have);
	bool same = loop_render_optlog(l, rows, n, gen, edited ? &have : NULL, &text, &key);
	char *merged = NULL;
	store_meta_get(l->ws.store, MERGED_KEY, &merged, NULL);
	bool was_merged = merged && *merged;
	free(merged);
	/* optloop's own rendering (the database changed since), or a file cut
	 * short, loses nothing when rendered again */
	if (!same && edited &&
	    ((!was_merged && recorded_same(l, &have)) ||
	     (have.len <= text.len && !memcmp(have.buf, text.buf, have.len))))
		edited = false;
	bool merges = false;
	if (!same && edited && (rc = merge_edited(l, rows, n, &have, &text, e)) > 0) {
		merges = true;
		rc = 0;
	}
	if (rc == 0 && same) {
		sb_reset(&text);
		sb_add(&text, have.buf, have.len);
	}
	if (rc == 0)
		rc = write_recorded(l, &text, key, e);
	if (rc == 0) {
		l->optlog_edited = false;
		/* a merged file holds what a person added: the next write merges
		 * again, even though optloop wrote it */
		if (merges != was_merged && !store_readonly(l->ws.store))
			store_meta_set(l->ws.store, MERGED_KEY, merges ? "1" : "", NULL);
	}
	free(key);
	sb_release(&text);
	sb_release(&have);
	log_rows_put(sr);
	return rc;
}

bool loop_optlog_ours(struct loop *l, const struct sb *have)
{
	/* what its own rows render is not enough: a Direction edited by hand
	 * reads back as rows that render the file again */
	return recorded_same(l, have);
}

void loop_optlog_edited(struct loop *l, const struct log_row *rows, size_t n, const struct sb *have)
{
	struct optlog_doc d;
	struct sb bl = SB_INIT, kept = SB_INIT, repl = SB_INIT;
	struct err me = {0};
	char *env = optlog_env(l);

	l->optlog_edited = true;
	head_doc(l, rows, n, env, &d, &bl);
	d.rows = (struct log_row *)rows;
	d.nrows = n;
	if (optlog_merge(&d, have->buf, have->len, NULL, &kept, &repl, &me) < 0)
		loop_problem(l,
			"OPT_LOG.md was edited by hand and cannot be merged with the database (%s); "
			"it is left as it is: fix that, or the next optloop log (or optloop repair, "
			"now) writes OPT_LOG.md from the database and keeps a copy of yours as "
			"OPT_LOG.md.orig-<time>",
			me.msg);
	else if (kept.len)
		loop_problem(l,
			"OPT_LOG.md was edited by hand: it has %s, which optloop keeps%s%s%s; it is "
			"left as it is: the next optloop log (or optloop repair, now) writes the "
			"database's rows into it and keeps your columns, text and Directions",
			kept.buf, repl.len ? ", and " : "", repl.len ? repl.buf : "",
			repl.len ? " (the database is the record: its figures replace the file's)" : "");
	else
		loop_problem(l,
			"OPT_LOG.md differs from the database: %s; the database is the record: the "
			"next optloop log (or optloop repair, now) writes its rows",
			repl.len ? repl.buf : "its text is not what optloop renders");
	events_done(&d);
	free(env);
	sb_release(&bl);
	sb_release(&kept);
	sb_release(&repl);
}

/* The file as recorded, when the record's key is from this renderer at the
 * rows' generation gen: into text (0), else ERR_NOTFOUND. */
static int recorded_text(struct loop *l, long long gen, struct sb *text)
{
	char *seen = NULL, fp[24];
	size_t size = 0;
	unsigned long long hash = 0;
	long long rgen = -1;
	int used = 0, rc = ERR_NOTFOUND;

	store_meta_get(l->ws.store, RECORD_KEY, &seen, NULL);
	snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)render_fingerprint());
	if (seen && sscanf(seen, "%zu %llx %lld %*x %n", &size, &hash, &rgen, &used) == 3 &&
	    used > 0 && !strcmp(seen + used, fp) && rgen == gen &&
	    fsutil_read_file(l->ws.optlog_path, text, NULL) == 0 && text->len == size &&
	    hash64(text->buf, text->len) == hash)
		rc = 0;
	free(seen);
	return rc;
}

/* Whether old, the file as recorded with its head ending at at, is the
 * renderer's shape: as many lines above the table as it writes, and last
 * the previous row, then the re-assessments and stops as d has them (a
 * file merged with a person's edits is not: the new row must go into the
 * table, not after their text).  *rows_end: where its rows end. */
static bool rendered_shape(const struct sb *old, size_t at, const struct log_row *prev,
			   const struct sb *events, size_t *rows_end)
{
	struct optlog_doc none;
	struct sb head = SB_INIT, last = SB_INIT;
	size_t lines = 0, want = 0;
	memset(&none, 0, sizeof(none));
	optlog_render_head(&none, &head);
	for (size_t i = 0; i < head.len; i++)
		want += head.buf[i] == '\n';
	for (size_t i = 0; i < at; i++)
		lines += old->buf[i] == '\n';
	optlog_render_row(prev, &last);
	size_t end = old->len - (old->len >= events->len ? events->len : old->len);
	bool same = lines == want && end >= at + last.len &&
		    !memcmp(old->buf + end, events->buf ? events->buf : "", old->len - end) &&
		    old->len - end == events->len &&
		    !memcmp(old->buf + end - last.len, last.buf, last.len);
	*rows_end = end;
	sb_release(&head);
	sb_release(&last);
	return same;
}

int loop_write_optlog_appended(struct loop *l, int iter, struct err *e)
{
	struct log_rows *sr = NULL, *first = NULL;
	const struct log_row *rows;
	size_t at, end = 0;
	long long n = 0, rkey;
	struct sb old = SB_INIT, text = SB_INIT, bl = SB_INIT, events = SB_INIT;
	struct optlog_doc d;
	long long gen = -1;
	/* the newest two rows and the first (the Baseline line's), not every
	 * row: the rows before the new one are in the file as it was */
	int rc = store_rows_gen(l->ws.store, &gen, e);
	if (rc < 0 || (rc = store_rows_count(l->ws.store, &n, &rkey, e)) < 0 ||
	    (rc = store_rows_before(l->ws.store, INT_MAX, 2, false, &sr, e)) < 0 ||
	    (rc = store_rows_first(l->ws.store, 1, &first, e)) < 0) {
		log_rows_put(sr);
		log_rows_put(first);
		return rc;
	}
	rows = sr->v;
	char *env = optlog_env(l);
	head_doc(l, first->v, first->n, env, &d, &bl);
	optlog_render_events(&d, &events);
	/* The row's insert moved the generation by one: the file recorded one
	 * step before is every row but this one, unless the row is the first
	 * (the Baseline line comes from it) or not the last. */
	if (gen < 1 || n < 2 || sr->n < 2 || rows[1].iter != iter || rows[0].iter >= iter ||
	    recorded_text(l, gen - 1, &old) < 0 || !(at = optlog_head_len(old.buf, old.len)) ||
	    !rendered_shape(&old, at, &rows[0], &events, &end)) {
		events_done(&d);
		free(env);
		sb_release(&bl);
		sb_release(&events);
		sb_release(&old);
		log_rows_put(sr);
		log_rows_put(first);
		rc = loop_write_optlog(l, e);
		return rc < 0 ? rc : 0;
	}
	/* the head again (the Env line moves with the rows), the rows as they
	 * were, the new one, the re-assessments and stops */
	optlog_render_head(&d, &text);
	sb_add(&text, old.buf + at, end - at);
	optlog_render_row(&rows[1], &text);
	sb_add(&text, events.buf ? events.buf : "", events.len);
	char *key = key_now(l, env, &d, gen);
	rc = write_recorded(l, &text, key, e);
	free(key);
	events_done(&d);
	free(env);
	sb_release(&bl);
	sb_release(&events);
	sb_release(&old);
	sb_release(&text);
	log_rows_put(sr);
	log_rows_put(first);
	return rc < 0 ? rc : 1;
}
