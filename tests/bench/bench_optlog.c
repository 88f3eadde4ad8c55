/*
 * bench_optlog — reading a 100,000-row OPT_LOG.md (about 9 MB).
 *
 *   optlog_parse   the parsing part, in process, against a python3 line
 *                  splitter on the same file in the same run
 *   import         `optloop import FILE` end to end: wall time and peak RSS
 *                  (targets: <= 0.5 s, <= 100 MB), and the same with --json
 */
#include "core/err.h"
#include "core/fsutil.h"
#include "core/optlog.h"
#include "core/sb.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NROWS 100000

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A log in the rendered shape with the variety a long session produces:
 * failed gates with no bench, subset gates, escaped pipes, code spans. */
static void generate(struct sb *out)
{
	struct optlog_doc d = {0};
	static const char *const what[] = {
		"tile BT=64, fuse the gate loads into the loop",
		"use `tl.dot(a|b)` for the inter-chunk state",
		"split K into 2 stages | pipeline the loads",
		"revert exp2 rewrite; keep fp32 accumulation",
		"autotune num_warps {4, 8} for T <= 2048",
	};
	double best = 1.0;

	d.op = "chunk_gla";
	d.env = "NVIDIA H200 | CUDA 12.4 | PyTorch 2.5.1 | Triton 3.1.0 | opt-a[1a2b3c4]";
	d.baseline = "1.000 ms (iter 0)";
	d.target = "1.3x geomean over main on 4 shapes";
	srand(42);
	for (int i = 0; i < NROWS; i++) {
		struct log_row r = {.iter = i, .bench_ms = NAN, .vs_best = NAN};
		char buf[160];
		snprintf(buf, sizeof(buf), "%s v%d", what[i % 5], i);
		r.direction = xstrdup(buf);
		r.gate_v = i % 7 == 3 ? GATE_FAIL : GATE_PASS;
		r.scope = i % 11 == 5 ? SCOPE_SUBSET : SCOPE_FULL;
		if (i == 0) {
			r.status = RS_BASE;
			r.bench_ms = 1.0;
		} else if (r.gate_v == GATE_FAIL) {
			r.status = RS_REVERT;
		} else {
			r.bench_ms = best * (0.97 + (rand() % 1000) / 10000.0);
			r.vs_best = (best - r.bench_ms) / best;
			r.status = r.bench_ms < best ? RS_KEEP : RS_DROP;
			if (r.status == RS_KEEP)
				best = r.bench_ms;
		}
		optlog_doc_add_row(&d, &r);
	}
	optlog_render(&d, out);
	for (size_t i = 0; i < d.nrows; i++)
		log_row_release(&d.rows[i]);
	free(d.rows);
}

/* Run argv with stdout to /dev/null (or to a pipe we read when capture is
 * set); wall seconds and peak RSS in MB of the child. */
static double child_cpu; /* user + sys seconds of the last child */

static double self_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static int run_child(char *const argv[], double *wall, double *rss_mb, struct sb *capture)
{
	int fds[2] = {-1, -1};
	double t0 = now();
	if (capture && pipe(fds) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = capture ? fds[1] : open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		if (capture)
			close(fds[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (capture) {
		char buf[4096];
		ssize_t n;
		close(fds[1]);
		while ((n = read(fds[0], buf, sizeof(buf))) > 0)
			sb_add(capture, buf, (size_t)n);
		close(fds[0]);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0)
		return -1;
	*wall = now() - t0;
	*rss_mb = ru.ru_maxrss / 1024.0;
	child_cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		    ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char py_splitter[] =
	"import sys, time\n"
	"t0 = time.perf_counter()\n"
	"rows = []\n"
	"with open(sys.argv[1], encoding='utf-8') as f:\n"
	"    for line in f:\n"
	"        if line.startswith('|'):\n"
	"            rows.append([c.strip() for c in line.strip().strip('|').split('|')])\n"
	"t1 = time.perf_counter()\n"
	"print(len(rows), round((t1 - t0) * 1000, 1))\n";

int main(void)
{
	const char *tmp = getenv("BENCH_TMP") ? getenv("BENCH_TMP") : "/tmp";
	const char *bin = getenv("OPTLOOP") ? getenv("OPTLOOP") : "./optloop";
	char *path = fsutil_join(tmp, "bench-OPT_LOG.md");
	struct sb text = SB_INIT, back = SB_INIT;
	struct err e = {0};
	double best = INFINITY, best_cpu = INFINITY, first = 0;
	size_t nrows = 0, nprobs = 0;

	generate(&text);
	if (fsutil_write_atomic(path, text.buf, text.len, &e) < 0) {
		fprintf(stderr, "bench optlog: %s\n", e.msg);
		return 1;
	}
	sb_release(&text);

	/* Parsing part: read + optlog_parse, best of 5. */
	for (int k = 0; k < 5; k++) {
		struct optlog_doc d;
		struct problems p = {0};
		double t0 = now(), c0 = self_cpu();
		sb_reset(&back);
		fsutil_read_file(path, &back, NULL);
		int rc = optlog_parse(back.buf, back.len, &d, &p, &e);
		double t = now() - t0, c = self_cpu() - c0;
		if (c < best_cpu)
			best_cpu = c;
		if (rc < 0) {
			fprintf(stderr, "bench optlog: %s\n", e.msg);
			return 1;
		}
		if (t < best)
			best = t;
		if (k == 0)
			first = t; /* cold: fresh heap pages, as in a new process */
		nrows = d.nrows;
		nprobs = p.n;
		optlog_doc_release(&d);
		problems_release(&p);
	}
	double mb = back.len / 1e6;
	sb_release(&back);

	/* The python3 splitter on the same file, best of 3 (its own timer,
	 * interpreter start-up excluded). */
	double py_ms = INFINITY, py_cpu = INFINITY, wall, rss;
	bool have_py = true;
	for (int k = 0; k < 3 && have_py; k++) {
		struct sb out = SB_INIT;
		char *argv[] = {"python3", "-c", (char *)py_splitter, path, NULL};
		long prow = 0;
		double ms = 0;
		if (run_child(argv, &wall, &rss, &out) != 0 || sscanf(out.buf, "%ld %lf", &prow, &ms) != 2)
			have_py = false;
		else if (ms < py_ms)
			py_ms = ms, py_cpu = child_cpu;
		sb_release(&out);
	}
	const char *ok = nrows == NROWS && nprobs == 0 ? "" : " (rows or problems wrong!)";
	if (have_py)
		printf("bench optlog_parse: %zu rows, %.1f MB read and parsed in %.1f ms (%.1f ms CPU; "
		       "first, cold run %.1f ms); python3 line splitter %.1f ms on the same file "
		       "(process %.0f ms CPU with start-up) (%.1fx, cold %.1fx)%s [target faster than "
		       "the python3 splitter] %s\n",
		       nrows, mb, best * 1e3, best_cpu * 1e3, first * 1e3, py_ms, py_cpu * 1e3,
		       py_ms / (best * 1e3), py_ms / (first * 1e3), ok,
		       first * 1e3 < py_ms && !*ok ? "PASS" : "MISS");
	else
		printf("bench optlog_parse: %zu rows, %.1f MB parsed in %.1f ms; python3 not available "
		       "for the comparison%s [target rows read, no problems] %s\n",
		       nrows, mb, best * 1e3, ok, !*ok ? "PASS" : "MISS");

	/* End to end, best of 3 by wall time, and its peak RSS. */
	static const char *const modes[][2] = {{"import", NULL}, {"import_json", "--json"}};
	for (int m = 0; m < 2; m++) {
		double bw = INFINITY, brss = 0, bcpu = 0;
		int rc = 0;
		for (int k = 0; k < 3; k++) {
			char *argv[5] = {(char *)bin, "import", NULL, NULL, NULL};
			int a = 2;
			if (modes[m][1])
				argv[a++] = (char *)modes[m][1];
			argv[a] = path;
			rc = run_child(argv, &wall, &rss, NULL);
			if (wall < bw)
				bw = wall, brss = rss, bcpu = child_cpu;
		}
		bool pass = rc == 0 && bw <= 0.5 && brss <= 100;
		printf("bench optlog_%s: optloop import%s of %d rows end to end %.0f ms (%.0f ms CPU), "
		       "peak RSS %.1f MB%s [target <= 500 ms, <= 100 MB] %s\n",
		       modes[m][0], modes[m][1] ? " --json" : "", NROWS, bw * 1e3, bcpu * 1e3, brss,
		       rc ? " (exit status not 0)" : "", pass ? "PASS" : "MISS");
	}
	unlink(path);
	free(path);
	return 0;
}
