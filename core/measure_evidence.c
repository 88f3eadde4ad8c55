/*
 * measure_evidence — what backs an iteration's claim besides its runs: the
 * explanations recorded for its flags (promote --explain) and the files
 * attached to it (profiles, traces), each checked for what it is.  See
 * measure.h.
 */
#include "core/measure.h"
#include "core/err.h"
#include "core/fsutil.h"
#include "core/rules.h"
#include "core/sb.h"
#include "core/store.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- explanations and artifacts ---- */



int measure_explain(struct store *s, int iter, const char *note, bool *promoted, struct err *e)
{
	struct store_confirm c;
	if (promoted)
		*promoted = false;
	char *why = NULL;
	if (measure_impossible(s, iter, &why)) {
		int rc = err_set(e, ERR_REFUSED,
				 "promote --explain refused: iteration %d's time is impossible (%s); "
				 "no explanation lifts that: the kernel skipped work or the benchmark "
				 "timed the wrong thing. Log it as drop (the kernel goes back to the "
				 "best)",
				 iter, why);
		free(why);
		return rc;
	}
	int rc = store_note_add(s, STORE_NOTE_EXPLAINED, iter, note, e);
	if (rc < 0 || store_confirm_last(s, iter, &c, NULL) < 0)
		return rc;
	/* A confirm that was fast but held back only by implausible flags
	 * promotes once they are explained. */
	if (c.done && !c.promoted &&
	    rules_promotes(stats_verdict_parse(c.verdict), c.flags, true)) {
		rc = store_confirm_promote(s, c.id, e);
		if (rc == 0)
			rc = store_event(s, iter, "confirm.explained", note, e);
		if (rc == 0 && promoted)
			*promoted = true;
	}
	store_confirm_release(&c);
	return rc;
}

int measure_explanations(struct store *s, int iter, struct sb *out)
{
	return store_notes(s, STORE_NOTE_EXPLAINED, iter, out);
}

/* path as the report cites it: relative to the workspace when it lies in
 * it (an absolute path names one machine's checkout), else as given. */
static char *cited_path(const char *path, const char *workspace_dir)
{
	char *dir = workspace_dir ? realpath(workspace_dir, NULL) : NULL;
	size_t n = dir ? strlen(dir) : 0;
	char *out = dir && !strncmp(path, dir, n) && path[n] == '/' ? xstrdup(path + n + 1)
								     : xstrdup(path);
	free(dir);
	return out;
}

int measure_attach_in(struct store *s, int iter, const char *path, const char *workspace_dir,
		      struct err *e)
{
	char *cited = cited_path(path, workspace_dir);
	int rc = measure_attach(s, iter, cited, e);
	free(cited);
	return rc;
}

int measure_attach(struct store *s, int iter, const char *path, struct err *e)
{
	return store_note_add(s, STORE_NOTE_ARTIFACT, iter, path, e);
}

static bool has_ci(const char *text, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = text; *p; p++)
		if (!strncasecmp(p, w, n))
			return true;
	return false;
}

/* What a profiler or roofline file is, from its name and its first 64 KiB;
 * NULL when it is none of them. */
static const char *artifact_kind(const char *path, const char *text)
{
	static const struct {
		const char *suffix, *kind;
	} by_name[] = {
		{".ncu-rep", "Nsight Compute report"},
		{".nsys-rep", "Nsight Systems report"},
		{".qdrep", "Nsight Systems report"},
	};
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++) {
		size_t k = strlen(by_name[i].suffix);
		if (n > k && !strcmp(path + n - k, by_name[i].suffix))
			return by_name[i].kind;
	}
	if (strstr(text, "==PROF==") || strstr(text, "\"Metric Name\"") ||
	    strstr(text, "GPU Speed Of Light"))
		return "Nsight Compute export";
	if (strstr(text, "cuda_gpu_kern_sum") || strstr(text, "CUDA GPU Kernel Summary") ||
	    strstr(text, "Total Time (ns)"))
		return "Nsight Systems export";
	if (strstr(text, "Self CUDA") && strstr(text, "# of Calls"))
		return "torch.profiler table";
	/* export_chrome_trace's JSON (what FLA's verify --profile writes) */
	if (strstr(text, "\"traceEvents\"") &&
	    (strstr(text, "\"deviceProperties\"") || strstr(text, "\"schemaVersion\"") ||
	     strstr(text, "\"cuda_runtime\"") || strstr(text, "\"kernel\"")))
		return "torch.profiler trace";
	if (strstr(text, "# Samples:") && strstr(text, "# Overhead"))
		return "perf report";
	static const char *const units[] = {"GB/s", "TB/s", "GFLOP/s", "TFLOP/s", "FLOP/byte",
					    "FLOP/B", "% of peak", NULL};
	if (has_ci(text, "roofline") || has_ci(text, "arithmetic intensity"))
		for (int i = 0; units[i]; i++) {
			const char *u = text;
			while ((u = strstr(u, units[i])) != NULL) {
				const char *d = u;
				while (d > text && d[-1] == ' ')
					d--;
				if (d > text && isdigit((unsigned char)d[-1]))
					return "roofline reading";
				u += strlen(units[i]);
			}
		}
	return NULL;
}

/* What kind of profiler or roofline file path is (artifact_kind over its
 * name and first 64 KiB); *kind NULL when none. */
static int file_kind(const char *path, const char **kind, struct err *e)
{
	struct sb head = SB_INIT;
	int fd, rc = fsutil_open_read(path, FSUTIL_ANY_SIZE, &fd, e);
	if (rc < 0)
		return rc;
	char buf[65536];
	ssize_t got;
	while ((got = read(fd, buf, sizeof(buf))) < 0 && errno == EINTR)
		;
	close(fd);
	if (got > 0)
		sb_add(&head, buf, (size_t)got);
	sb_addc(&head, '\0');
	*kind = artifact_kind(path, head.buf);
	sb_release(&head);
	return 0;
}

int measure_file_kind(const char *path, const char **kind, struct err *e)
{
	return file_kind(path, kind, e);
}

int measure_attach_check(struct store *s, int iter, const char *path, const char *workspace_dir,
			 char **real, const char **kind, struct err *e)
{
	struct stat sb;
	*kind = NULL;
	switch (fsutil_file_under(path, workspace_dir, workspace_dir, real)) {
	case 0:
		break;
	case ERR_REFUSED:
		return err_set(e, ERR_REFUSED,
			       "promote --attach refused: %s is outside the workspace; the evidence "
			       "stays with the loop: put it under %s/trace/ and attach it from there",
			       path, workspace_dir);
	default:
		return err_set(e, ERR_USAGE,
			       "promote --attach: %s is not a file (attach the profiler or roofline "
			       "output itself)",
			       path);
	}
	path = *real;
	double mt = stat(path, &sb) == 0 ? (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec / 1e9 : 0;
	int run_id = 0;
	struct store_run r;
	if (store_iter_run(s, iter, &run_id, NULL, NULL) == 0 && run_id &&
	    store_run_get(s, run_id, &r, NULL) == 0) {
		double t = r.t_end;
		store_run_release(&r);
		if (mt < t)
			return err_set(e, ERR_REFUSED,
				       "promote --attach refused: %s was written before iteration %d's "
				       "verify ended, so it cannot be a reading of that kernel; profile "
				       "the candidate now and attach the new file",
				       path, iter);
	}
	int rc = file_kind(path, kind, e);
	if (rc < 0)
		return rc;
	if (!*kind)
		return err_set(e, ERR_USAGE,
			       "promote --attach: %s is not recognised as a profiler or roofline "
			       "reading; attach " MEASURE_PROFILE_KINDS,
			       path);
	return 0;
}

int measure_attach_run_trace(struct store *s, int iter, int run_id, const char *path,
			     const char *workspace_dir, char **real, struct err *e)
{
	struct stat sb;
	*real = NULL;
	if (fsutil_file_under(path, workspace_dir, workspace_dir, real) != 0 ||
	    stat(*real, &sb) != 0)
		return err_set(e, ERR_NOTFOUND, "no profiler trace at %s", path);
	double mt = (double)sb.st_mtim.tv_sec + sb.st_mtim.tv_nsec / 1e9;
	struct store_run r;
	if (store_run_get(s, run_id, &r, NULL) < 0)
		return err_set(e, ERR_NOTFOUND, "iteration %d has no run %d", iter, run_id);
	/* written by this run, not left by an earlier one */
	bool during = mt >= r.t_start - 1 && mt <= r.t_end + 1;
	store_run_release(&r);
	if (!during)
		return err_set(e, ERR_REFUSED,
			       "%s was not written during iteration %d's verify (an earlier "
			       "run's trace): not attached",
			       *real, iter);
	const char *kind;
	int rc = file_kind(*real, &kind, e);
	if (rc < 0)
		return rc;
	if (!kind)
		return err_set(e, ERR_USAGE, "%s is not a profiler trace: not attached", *real);
	return measure_attach_in(s, iter, *real, workspace_dir, e);
}

int measure_artifacts(struct store *s, int iter, struct sb *out)
{
	return store_notes(s, STORE_NOTE_ARTIFACT, iter, out);
}
