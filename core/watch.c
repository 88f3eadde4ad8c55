/*
 * watch — loop.h's watcher: one workspace followed from outside, for
 * `optloop watch`, agents and dashboards.
 *
 * inotify wakes it (the workspace folder, where optloop.db's WAL, OPT_LOG.md
 * and the lock live; trace/, where the run going writes its raw log; the
 * folders of the kernel files); nothing is polled.  On a wake the workspace
 * is read as a read-only client reads it (loop_open LOOP_READONLY) and
 * compared with what was read before; each difference is one event.  The
 * raw log of a run going is read from where the last read stopped and fed
 * to a parser of its own, so progress, stage and the gate's verdict arrive
 * as the harness prints them.
 */
#include "core/loop.h"
#include "core/loop_core.h"

#include "core/err.h"
#include "core/fsutil.h"
#include "core/parse.h"
#include "core/patset.h"
#include "core/sb.h"
#include "core/store.h"
#include "core/workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

/* What one read of the workspace found; compared with the next one. */
struct snap {
	bool have;
	enum loop_state state;
	int iteration;
	int nrows;
	int last_committed;  /* the newest row with a commit, -1 none */
	int run_id;          /* the run going (t_end 0), 0 none */
	int last_run_end;    /* the newest run that ended */
	int confirm_id;      /* the newest finished confirm */
	int reassess_id;     /* the newest re-assessment, 0 none */
	int explained_id;    /* the newest explanation (promote --explain), 0 none */
	int stall;
	bool stopping;
	char *problems;
};

struct loop_watch {
	char *cwd, *op;
	int fd;        /* epoll: the inotify descriptor and the driver's pidfd */
	int ino;       /* inotify */
	int pidfd;     /* the optloop running the run going, -1 none */
	int pidfd_run; /* whose run it is */
	int told_dead; /* the run whose driver was said to be gone */
	int exited;    /* the pid whose pidfd said it exited (a zombie still
			* answers kill(pid, 0) until its parent reaps it) */
	int pidfd_pid;
	int wd_trace;
	/* the run going: its raw log, read from off, through p */
	int tail_run;
	char *tail_path;
	off_t tail_off;
	const struct patset *ps; /* own_ps: the loop's set is the loop's */
	struct patset *own_ps;
	struct parser *p;
	int last_progress;
	char *last_stage;
	enum gate_verdict last_gate;
	struct snap s;
	/* what the emitter hands the caller */
	loop_watch_fn fn;
	void *ctx;
	unsigned flags;
	int iter_for_events;
	int last_start; /* the newest run whose run.start was told */
};

static double now(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void emit(struct loop_watch *w, struct loop_watch_event *ev)
{
	ev->t = now();
	if (!ev->op)
		ev->op = w->op;
	w->fn(w->ctx, ev);
}

static void snap_release(struct snap *s)
{
	free(s->problems);
	memset(s, 0, sizeof(*s));
}

static void add_watch(struct loop_watch *w, const char *dir, uint32_t mask)
{
	if (fsutil_is_dir(dir))
		inotify_add_watch(w->ino, dir, mask);
}

/* ---- the raw log of the run going ------------------------------------- */

static void on_parse_event(void *ctx, const struct parse_event *pe)
{
	struct loop_watch *w = ctx;
	const struct parse_result *r = parser_result(w->p);
	if (pe->kind == PEV_PROGRESS || (pe->kind == PEV_TEST_CASE && pe->progress >= 0)) {
		if (pe->progress != w->last_progress) {
			w->last_progress = pe->progress;
			struct loop_watch_event ev = {.kind = LOOP_WATCH_PROGRESS,
						      .iteration = w->iter_for_events,
						      .run_id = w->tail_run,
						      .progress = pe->progress};
			emit(w, &ev);
		}
	} else if (pe->kind == PEV_STAGE && r->stage &&
		   (!w->last_stage || strcmp(w->last_stage, r->stage))) {
		free(w->last_stage);
		w->last_stage = xstrdup(r->stage);
		struct loop_watch_event ev = {.kind = LOOP_WATCH_STAGE,
					      .iteration = w->iter_for_events,
					      .run_id = w->tail_run,
					      .progress = w->last_progress,
					      .text = w->last_stage};
		emit(w, &ev);
	} else if (pe->kind == PEV_GATE_VERDICT) {
		/* the verdict as printed; the run's own is decided when it ends */
		enum gate_verdict g = r->gate_line_fail   ? GATE_FAIL
				      : r->gate_line_pass ? GATE_PASS
				      : r->gate_not_found ? GATE_ERROR
							  : r->gate;
		if (g != w->last_gate) {
			w->last_gate = g;
			struct loop_watch_event ev = {.kind = LOOP_WATCH_GATE,
						      .iteration = w->iter_for_events,
						      .run_id = w->tail_run,
						      .gate = gate_verdict_name(g),
						      .gate_v = g};
			emit(w, &ev);
		}
	}
}

static void tail_stop(struct loop_watch *w)
{
	parser_free(w->p);
	w->p = NULL;
	free(w->tail_path);
	w->tail_path = NULL;
	free(w->last_stage);
	w->last_stage = NULL;
	w->tail_run = 0;
	w->tail_off = 0;
}

static void tail_start(struct loop_watch *w, int run_id, const char *path, const struct patset *ps)
{
	tail_stop(w);
	w->tail_run = run_id;
	w->tail_path = path ? xstrdup(path) : NULL;
	w->last_progress = -1;
	w->last_gate = GATE_NONE;
	w->p = parser_new(ps, on_parse_event, w);
}

/* Feed what the raw log gained since the last read.  A log that shrank
 * (replaced, truncated) is read again from its start. */
static void tail_read(struct loop_watch *w)
{
	if (!w->tail_path || !w->p)
		return;
	int fd = open(w->tail_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return;
	off_t end = lseek(fd, 0, SEEK_END);
	if (end < w->tail_off) {
		const struct patset *ps = w->ps;
		int run = w->tail_run;
		char *path = xstrdup(w->tail_path);
		tail_start(w, run, path, ps);
		free(path);
	}
	char buf[65536];
	ssize_t n;
	lseek(fd, w->tail_off, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (w->flags & LOOP_WATCH_WANT_OUTPUT) {
			struct loop_watch_event ev = {.kind = LOOP_WATCH_OUTPUT,
						      .iteration = w->iter_for_events,
						      .run_id = w->tail_run,
						      .text = buf,
						      .len = (size_t)n};
			emit(w, &ev);
		}
		parser_feed(w->p, buf, (size_t)n);
		w->tail_off += n;
	}
	close(fd);
}

/* ---- the optloop driving the run going ------------------------------------- */

/* Its exit wakes the watcher (a pidfd in the epoll set): a driver killed
 * mid-run leaves the run unfinished until a writer reconciles it, and the
 * watcher says so instead of showing a run that never ends. */
static void follow_driver(struct loop_watch *w, int run_id, struct store *store)
{
	struct store_run run;
	if (w->pidfd >= 0) {
		epoll_ctl(w->fd, EPOLL_CTL_DEL, w->pidfd, NULL);
		close(w->pidfd);
		w->pidfd = -1;
	}
	w->pidfd_run = run_id;
	if (store_run_get(store, run_id, &run, NULL) < 0)
		return;
	if (run.pid > 0) {
#ifdef SYS_pidfd_open
		w->pidfd = (int)syscall(SYS_pidfd_open, run.pid, 0);
#endif
		if (w->pidfd >= 0) {
			struct epoll_event ee = {.events = EPOLLIN, .data.fd = w->pidfd};
			epoll_ctl(w->fd, EPOLL_CTL_ADD, w->pidfd, &ee);
			w->pidfd_pid = run.pid;
		}
	}
	store_run_release(&run);
}

static bool driver_gone(int pid)
{
	return pid > 0 && kill(pid, 0) < 0 && errno == ESRCH;
}

/* ---- reading the workspace ------------------------------------------------ */

static void emit_run_start(struct loop_watch *w, const struct store_run *run)
{
	struct loop_watch_event ev = {.kind = LOOP_WATCH_RUN_START,
				      .iteration = run->iter,
				      .run_id = run->id,
				      .run_kind = run_kind_name(run->kind),
				      .pid = run->pid,
				      .text = run->command,
				      .log_path = run->log_path};
	emit(w, &ev);
	w->last_start = run->id;
}

/* The runs: the rest of the followed run's output first, then the runs
 * that ended, then the one going: events in the order they happened. */
static void run_events(struct loop_watch *w, struct loop *l, struct store *store, struct snap *s)
{
	struct store_run run;
	if (w->tail_run)
		tail_read(w);
	/* the run that was going has ended, and any that began and ended
	 * between two looks (a short run on a busy machine) */
	int *ended = NULL;
	size_t nended = 0;
	if (w->s.have) {
		s->last_run_end = w->s.last_run_end;
		store_runs_ended_after(store, s->last_run_end, &ended, &nended);
	} else { /* the first look: only what happens from now on */
		s->last_run_end = w->last_start = store_last_ended_run(store);
	}
	for (size_t i = 0; i < nended; i++) {
		if (ended[i] > s->last_run_end)
			s->last_run_end = ended[i];
		if (store_run_get(store, ended[i], &run, NULL) == 0) {
			if (run.id > w->last_start) /* begun and ended between two looks */
				emit_run_start(w, &run);
			struct loop_watch_event ev = {.kind = LOOP_WATCH_RUN_END,
						      .iteration = run.iter,
						      .run_id = run.id,
						      .run_kind = run_kind_name(run.kind),
						      .gate = gate_verdict_name(run.gate),
						      .gate_v = run.gate,
						      .bench_ms = run.bench_ms,
						      .vs_best = run.vs_best,
						      .log_path = run.log_path};
			emit(w, &ev);
			store_run_release(&run);
		}
		if (ended[i] == w->tail_run)
			tail_stop(w);
	}
	free(ended);
	if (store_run_unfinished(store, &run, NULL) == 0) {
		s->run_id = run.id;
		if (run.id != w->tail_run) {
			w->iter_for_events = run.iter;
			emit_run_start(w, &run);
			if (!w->own_ps) { /* the workspace's own patterns first, as runs do */
				char *extra = xasprintf("%s/patterns", loop_dir(l));
				patset_load(NULL, fsutil_is_dir(extra) ? extra : NULL, &w->own_ps, NULL);
				free(extra);
			}
			w->ps = w->own_ps;
			if (w->ps)
				tail_start(w, run.id, run.log_path, w->ps);
		}
		store_run_release(&run);
	}
	if (w->tail_run && s->run_id != w->tail_run)
		tail_stop(w); /* gone without an end: a writer settles it */
	if (s->run_id && s->run_id != w->pidfd_run)
		follow_driver(w, s->run_id, store);
	if (w->tail_run)
		tail_read(w);
}

/* The newest rows (the log's order is the iterations'), as many as the
 * events need and no more: every row after the first `from` (the rows
 * logged since the last look), every row after iteration `after` (those
 * committed since), and back to the newest committed row; all of them
 * where there are fewer.  *n: how many rows there are, read with them
 * (the newest of them is row *n - 1).  NULL when they cannot be read. */
static struct log_rows *rows_tail(struct store *st, int from, int after, int *n)
{
	for (size_t limit = 8;; limit *= 2) {
		struct log_rows *rs;
		long long n0, n1, k0, k1;
		if (store_rows_count(st, &n0, &k0, NULL) < 0 ||
		    store_rows_before(st, INT_MAX, limit, false, &rs, NULL) < 0)
			return NULL;
		if (store_rows_count(st, &n1, &k1, NULL) < 0) {
			log_rows_put(rs);
			return NULL;
		}
		bool committed = false;
		for (size_t i = 0; i < rs->n && !committed; i++)
			committed = rs->v[i].commit != NULL;
		/* (a row logged between the reads: read again) */
		bool whole = n0 == n1 && k0 == k1 && k0 >= 0;
		if (whole && (rs->n < limit || ((long long)rs->n >= n0 - from &&
						rs->v[0].iter <= after && committed))) {
			*n = (int)n0;
			return rs;
		}
		log_rows_put(rs);
		if (limit > (size_t)INT_MAX / 2)
			return NULL;
	}
}

/* The rows logged and committed since the last look, in the order they
 * happen in a loop.  rows: the newest rows (rows_tail), the last of them
 * row s->nrows - 1. */
static void row_events(struct loop_watch *w, const struct log_rows *rows, const struct snap *s)
{
	/* the position of rows' first row among all rows */
	size_t first = rows ? (size_t)s->nrows - rows->n : 0;
	if (w->s.have && s->nrows > w->s.nrows) {
		for (size_t i = (size_t)w->s.nrows; rows && i < (size_t)s->nrows; i++) {
			const struct log_row *r = &rows->v[i - first];
			struct loop_watch_event ev = {.kind = LOOP_WATCH_ROW,
						      .iteration = r->iter,
						      .status = row_status_name(r->status),
						      .text = r->direction,
						      .gate = r->gate,
						      .gate_v = r->gate_v,
						      .bench_ms = r->bench_ms,
						      .vs_best = r->vs_best,
						      .unconfirmed = r->unconfirmed};
			emit(w, &ev);
		}
	}
	if (w->s.have && s->last_committed > w->s.last_committed) {
		for (size_t i = 0; rows && i < rows->n; i++) {
			const struct log_row *r = &rows->v[i];
			if (r->commit && r->iter > w->s.last_committed) {
				struct loop_watch_event ev = {.kind = LOOP_WATCH_COMMIT,
							      .iteration = r->iter,
							      .commit = r->commit,
							      .status = row_status_name(r->status)};
				emit(w, &ev);
			}
		}
	}
}

/* Read the workspace into *s; events for what changed since w->s. */
static int read_once(struct loop_watch *w, struct err *e)
{
	struct loop *l;
	struct loop_status st;
	struct log_rows *rows = NULL;
	struct snap s = {0};
	int rc = loop_open(w->cwd, w->op, LOOP_READONLY, &l, e);
	if (rc < 0)
		return rc;
	if ((rc = loop_status(l, &st, e)) < 0) {
		loop_close(l);
		return rc;
	}
	if (!w->op)
		w->op = xstrdup(st.op);
	struct store *store = loop_workspace(l)->store;
	rows = rows_tail(store, w->s.have ? w->s.nrows : INT_MAX,
			 w->s.have ? w->s.last_committed : INT_MAX, &s.nrows);
	s.have = true;
	s.state = st.state;
	s.iteration = st.iteration;
	if (!rows)
		s.nrows = 0;
	s.last_committed = -1;
	for (size_t i = 0; rows && i < rows->n; i++)
		if (rows->v[i].commit)
			s.last_committed = rows->v[i].iter;
	s.stall = st.stall;
	s.stopping = st.state == ST_STOPPING;
	s.problems = st.problems ? xstrdup(st.problems) : NULL;
	struct store_run run;
	run_events(w, l, store, &s);
	row_events(w, rows, &s);
	struct store_confirm c;
	if (store_confirm_last(store, st.iteration, &c, NULL) == 0 ||
	    (st.iteration > 0 && store_confirm_last(store, st.iteration - 1, &c, NULL) == 0)) {
		s.confirm_id = c.done ? c.id : 0;
		if (w->s.have && c.done && c.id != w->s.confirm_id) {
			struct loop_watch_event ev = {.kind = LOOP_WATCH_CONFIRM,
						      .iteration = c.iter,
						      .verdict = c.verdict ? c.verdict : "none",
						      .promoted = c.promoted};
			emit(w, &ev);
		}
		store_confirm_release(&c);
	} else {
		s.confirm_id = w->s.confirm_id;
	}
	int after;
	char *next = NULL;
	s.reassess_id = store_reassess_newest(store, &after, &next);
	if (w->s.have && s.reassess_id != w->s.reassess_id && s.reassess_id) {
		struct loop_watch_event ev = {.kind = LOOP_WATCH_REASSESS,
					      .iteration = after,
					      .text = next};
		emit(w, &ev);
	}
	free(next);
	/* an explanation changes what a verdict allows (keep, a held confirm
	 * promoted) while every count above stays the same */
	int ex_iter;
	char *ex_text = NULL;
	store_note_newest(store, STORE_NOTE_EXPLAINED, &s.explained_id, &ex_iter,
			  w->s.have ? &ex_text : NULL);
	if (w->s.have && s.explained_id > w->s.explained_id) {
		struct loop_watch_event ev = {.kind = LOOP_WATCH_EXPLAIN,
					      .iteration = ex_iter,
					      .text = ex_text};
		emit(w, &ev);
	}
	free(ex_text);
	if (!w->s.have || s.state != w->s.state || s.iteration != w->s.iteration) {
		struct loop_watch_event ev = {.kind = LOOP_WATCH_STATE,
					      .iteration = s.iteration,
					      .state = loop_state_name(s.state),
					      .text = st.next,
					      .stall = st.stall,
					      .stall_limit = st.stall_limit};
		emit(w, &ev);
		if (w->s.have && s.state == ST_STALLED) {
			struct loop_watch_event sv = {.kind = LOOP_WATCH_STALL,
						      .iteration = s.iteration,
						      .stall = st.stall,
						      .stall_limit = st.stall_limit};
			emit(w, &sv);
		}
		if (w->s.have && s.state == ST_STOPPING) {
			struct store_stop sp;
			bool have = store_stop_last(store, &sp);
			struct loop_watch_event sv = {.kind = LOOP_WATCH_STOP,
						      .iteration = s.iteration,
						      .reason = have ? sp.reason : NULL,
						      .bound = have ? sp.bound : NULL};
			emit(w, &sv);
			if (have)
				store_stop_release(&sp);
		}
	}
	if (s.run_id && s.run_id != w->told_dead && store_run_get(store, s.run_id, &run, NULL) == 0) {
		if (run.pid == w->exited || driver_gone(run.pid)) {
			w->told_dead = s.run_id;
			char *t = xasprintf("the optloop that ran %s run %d (pid %d) is gone: the run "
					    "was cut off; the next command that writes records it as "
					    "incomplete",
					    run_kind_name(run.kind), run.id, run.pid);
			struct loop_watch_event ev = {.kind = LOOP_WATCH_PROBLEM,
						      .iteration = run.iter,
						      .run_id = run.id,
						      .pid = run.pid,
						      .text = t};
			emit(w, &ev);
			free(t);
		}
		store_run_release(&run);
	}
	if (s.problems && (!w->s.problems || strcmp(s.problems, w->s.problems))) {
		struct loop_watch_event ev = {.kind = LOOP_WATCH_PROBLEM,
					      .iteration = s.iteration,
					      .text = s.problems};
		emit(w, &ev);
	}
	snap_release(&w->s);
	w->s = s;
	log_rows_put(rows);
	loop_status_release(&st);
	loop_close(l);
	return 0;
}

int loop_watch_open(const char *cwd, const char *op, unsigned flags, loop_watch_fn fn, void *ctx,
		    struct loop_watch **out, struct err *e)
{
	struct loop *l;
	struct loop_status st;
	int rc = loop_open(cwd, op, LOOP_READONLY, &l, e);
	if (rc < 0)
		return rc;
	if ((rc = loop_status(l, &st, e)) < 0) {
		loop_close(l);
		return rc;
	}
	struct loop_watch *w = xcalloc(1, sizeof(*w));
	w->cwd = xstrdup(st.repo);
	w->op = xstrdup(st.op);
	w->fn = fn;
	w->ctx = ctx;
	w->flags = flags;
	w->pidfd = -1;
	w->fd = epoll_create1(EPOLL_CLOEXEC);
	w->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0 || w->ino < 0) {
		rc = err_set(e, ERR_IO, "cannot watch the workspace: %s", strerror(errno));
	} else {
		struct epoll_event ee = {.events = EPOLLIN, .data.fd = w->ino};
		epoll_ctl(w->fd, EPOLL_CTL_ADD, w->ino, &ee);
		/* not IN_ATTRIB: sqlite touches its files' metadata on every read,
		 * the watcher's own included */
		uint32_t files = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY;
		add_watch(w, st.workspace, files);
		add_watch(w, loop_workspace(l)->trace_dir, files);
		/* the kernel's folders: READY becomes EDITING when a file changes */
		for (size_t i = 0; i < st.nkernel; i++) {
			char *p = fsutil_join(st.repo, st.kernel[i]);
			if (!fsutil_is_dir(p)) {
				char *slash = strrchr(p, '/');
				if (slash)
					*slash = '\0';
			}
			add_watch(w, p, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE);
			free(p);
		}
	}
	loop_status_release(&st);
	loop_close(l);
	if (rc < 0) {
		loop_watch_close(w);
		return rc;
	}
	*out = w;
	return read_once(w, e);
}

int loop_watch_fd(const struct loop_watch *w)
{
	return w->fd;
}

int loop_watch_pump(struct loop_watch *w, struct err *e)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	struct epoll_event ev[4];
	bool woke = false;
	int n = epoll_wait(w->fd, ev, 4, 0);
	for (int i = 0; i < n; i++) {
		if (ev[i].data.fd == w->pidfd) { /* the driver exited: once is enough */
			woke = true;
			w->exited = w->pidfd_pid;
			epoll_ctl(w->fd, EPOLL_CTL_DEL, w->pidfd, NULL);
			close(w->pidfd);
			w->pidfd = -1;
		}
	}
	ssize_t len;
	while ((len = read(w->ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ie = (const struct inotify_event *)p;
			p += sizeof(*ie) + ie->len;
			/* a reader's own traces are no news: sqlite's shared memory
			 * (every read touches it, ours included), and the database
			 * files closed by a reader that opened them read-write; a
			 * write to them shows as IN_MODIFY */
			size_t nl = ie->len ? strlen(ie->name) : 0;
			if (nl > 4 && !strcmp(ie->name + nl - 4, "-shm"))
				continue;
			if (!strncmp(ie->name, "optloop.db", 10) && (ie->mask & ~IN_CLOSE_WRITE) == 0)
				continue;
			woke = true;
		}
	}
	if (!woke)
		return 0;
	return read_once(w, e);
}

void loop_watch_close(struct loop_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->ino >= 0)
		close(w->ino);
	if (w->pidfd >= 0)
		close(w->pidfd);
	tail_stop(w);
	patset_free(w->own_ps);
	snap_release(&w->s);
	free(w->cwd);
	free(w->op);
	free(w);
}

const char *loop_watch_kind_name(enum loop_watch_kind k)
{
	static const char *const names[] = {
		[LOOP_WATCH_STATE] = "state",     [LOOP_WATCH_RUN_START] = "run.start",
		[LOOP_WATCH_PROGRESS] = "progress", [LOOP_WATCH_STAGE] = "stage",
		[LOOP_WATCH_GATE] = "gate",       [LOOP_WATCH_RUN_END] = "run.end",
		[LOOP_WATCH_ROW] = "row",         [LOOP_WATCH_COMMIT] = "commit",
		[LOOP_WATCH_CONFIRM] = "confirm", [LOOP_WATCH_STALL] = "stall",
		[LOOP_WATCH_STOP] = "stop",       [LOOP_WATCH_PROBLEM] = "problem",
		[LOOP_WATCH_EXPLAIN] = "explain",   [LOOP_WATCH_REASSESS] = "reassess",
		[LOOP_WATCH_OUTPUT] = "output",
	};
	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}
