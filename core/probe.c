/*
 * probe — run the GPU probe command, parse its CSV, judge busy.
 *
 * The probe runs outside the verify's process group through /bin/sh -c with
 * its own short timeout; its output is bounded (PROBE_MAX_OUTPUT) because a
 * probe is a few lines and anything larger is a misconfiguration.
 */
#include "core/probe.h"
#include "core/slurm.h"
#include "core/err.h"
#include "core/sb.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROBE_MAX_OUTPUT (256 * 1024)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- CSV ---- */

/* Split one line at commas into trimmed fields (nvidia-smi never quotes). */
static size_t split_csv(const char *line, size_t len, char ***out)
{
	size_t n = 0, cap = 8;
	char **f = xmalloc(cap * sizeof(*f));
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != ',')
			continue;
		size_t a = start, b = i;
		while (a < b && isspace((unsigned char)line[a]))
			a++;
		while (b > a && isspace((unsigned char)line[b - 1]))
			b--;
		if (n == cap) {
			cap *= 2;
			f = xrealloc(f, cap * sizeof(*f));
		}
		f[n++] = xstrndup(line + a, b - a);
		start = i + 1;
	}
	*out = f;
	return n;
}

static void free_fields(char **f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i]);
	free(f);
}

enum col {
	C_INDEX, C_NAME, C_UUID, C_DRIVER, C_SM, C_MEM, C_MAXSM, C_TEMP, C_POWER, C_PSTATE,
	C_UTIL, C_UNKNOWN,
};

/* Header names as printed (query keys are aliases: clocks.sm is printed as
 * clocks.current.sm [MHz]). */
static enum col column_of(const char *h)
{
	static const struct {
		const char *name;
		enum col c;
	} m[] = {
		{"index", C_INDEX},
		{"name", C_NAME},
		{"gpu_name", C_NAME},
		{"uuid", C_UUID},
		{"gpu_uuid", C_UUID},
		{"driver_version", C_DRIVER},
		{"clocks.current.sm", C_SM},
		{"clocks.sm", C_SM},
		{"clocks.current.memory", C_MEM},
		{"clocks.mem", C_MEM},
		{"clocks.max.sm", C_MAXSM},
		{"clocks.max.sms", C_MAXSM},
		{"temperature.gpu", C_TEMP},
		{"power.draw", C_POWER},
		{"pstate", C_PSTATE},
		{"utilization.gpu", C_UTIL},
	};
	char key[128];
	size_t n = 0;
	/* Drop the unit: "clocks.current.sm [MHz]" → "clocks.current.sm". */
	while (h[n] && h[n] != '[' && n + 1 < sizeof(key)) {
		key[n] = (char)tolower((unsigned char)h[n]);
		n++;
	}
	while (n > 0 && isspace((unsigned char)key[n - 1]))
		n--;
	key[n] = '\0';
	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (strcmp(m[i].name, key) == 0)
			return m[i].c;
	return C_UNKNOWN;
}

/* "345 MHz" → 345; "[N/A]", "N/A", "[Not Supported]" → NAN. */
static double num_of(const char *v)
{
	char *end;
	if (!v || !*v || *v == '[' || !strncasecmp(v, "n/a", 3))
		return NAN;
	double x = strtod(v, &end);
	return end == v ? NAN : x;
}

static char *str_of(const char *v)
{
	if (!v || !*v || *v == '[' || !strcasecmp(v, "n/a"))
		return NULL;
	return xstrdup(v);
}

static void gpu_init(struct probe_gpu *g)
{
	memset(g, 0, sizeof(*g));
	g->index = -1;
	g->sm_mhz = g->mem_mhz = g->max_sm_mhz = g->temp_c = g->power_w = g->util_pct = NAN;
}

static void gpu_release(struct probe_gpu *g)
{
	free(g->name);
	free(g->uuid);
	free(g->driver);
	free(g->pstate);
	gpu_init(g);
}

int probe_parse_csv(const char *text, size_t len, struct probe_reading *out, struct err *e)
{
	enum col *cols = NULL;
	size_t ncols = 0, cap = 0;
	const char *p = text, *end = text + len;
	bool have_header = false;

	memset(out, 0, sizeof(*out));
	out->compute_procs = -1;
	out->raw = xstrndup(text, len);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n && p[n - 1] == '\r')
			n--;
		const char *line = p;
		p = nl ? nl + 1 : end;
		size_t k = 0;
		while (k < n && isspace((unsigned char)line[k]))
			k++;
		if (k == n)
			continue;
		char **f;
		size_t nf = split_csv(line, n, &f);
		if (!have_header) {
			ncols = nf;
			cols = xmalloc(nf * sizeof(*cols));
			for (size_t i = 0; i < nf; i++)
				cols[i] = column_of(f[i]);
			have_header = true;
			free_fields(f, nf);
			continue;
		}
		if (out->ngpus == cap) {
			cap = cap ? 2 * cap : 2;
			out->gpus = xrealloc(out->gpus, cap * sizeof(*out->gpus));
		}
		struct probe_gpu *g = &out->gpus[out->ngpus++];
		gpu_init(g);
		for (size_t i = 0; i < nf && i < ncols; i++) {
			const char *v = f[i];
			switch (cols[i]) {
			case C_INDEX: {
				double x = num_of(v);
				g->index = isnan(x) ? -1 : (int)x;
				break;
			}
			case C_NAME: g->name = str_of(v); break;
			case C_UUID: g->uuid = str_of(v); break;
			case C_DRIVER: g->driver = str_of(v); break;
			case C_PSTATE: g->pstate = str_of(v); break;
			case C_SM: g->sm_mhz = num_of(v); break;
			case C_MEM: g->mem_mhz = num_of(v); break;
			case C_MAXSM: g->max_sm_mhz = num_of(v); break;
			case C_TEMP: g->temp_c = num_of(v); break;
			case C_POWER: g->power_w = num_of(v); break;
			case C_UTIL: g->util_pct = num_of(v); break;
			case C_UNKNOWN: break;
			}
		}
		free_fields(f, nf);
	}
	size_t known = 0;
	for (size_t i = 0; i < ncols; i++)
		known += cols[i] != C_UNKNOWN;
	free(cols);
	if (have_header && !known) {
		/* lines of anything: no reading, however many there are */
		for (size_t i = 0; i < out->ngpus; i++)
			gpu_release(&out->gpus[i]);
		free(out->gpus);
		out->gpus = NULL;
		out->ngpus = 0;
		out->available = false;
		out->why = xstrdup("its first line names no column nvidia-smi prints");
		return err_set(e, ERR_FAIL,
			       "probe output's first line names no nvidia-smi column (expected "
			       "nvidia-smi --format=csv: a header line such as 'index, name, ...', "
			       "then one line per GPU)");
	}
	if (!have_header || out->ngpus == 0) {
		out->available = false;
		out->why = xstrdup(have_header ? "the probe listed no GPU"
					       : "the probe printed nothing");
		return err_set(e, ERR_FAIL,
			       "probe output has %s (expected nvidia-smi --format=csv: a header "
			       "line, then one line per GPU)",
			       have_header ? "a header but no GPU line" : "no header line");
	}
	out->available = true;
	return 0;
}

void probe_judge(struct probe_reading *r, double busy_util)
{
	struct sb why = SB_INIT;
	if (busy_util <= 0)
		busy_util = PROBE_BUSY_UTIL;
	free(r->busy_why);
	r->busy_why = NULL;
	r->busy = false;
	for (size_t i = 0; r->available && i < r->ngpus; i++) {
		const struct probe_gpu *g = &r->gpus[i];
		if (!isnan(g->util_pct) && g->util_pct > busy_util) {
			r->busy = true;
			sb_addf(&why, "%sGPU %d utilisation %.0f %% (above %.0f %%)",
				why.len ? "; " : "", g->index, g->util_pct, busy_util);
		}
	}
	if (r->compute_procs > 0) {
		r->busy = true;
		sb_addf(&why, "%s%d other compute process(es) on the GPU", why.len ? "; " : "",
			r->compute_procs);
	}
	if (r->busy)
		r->busy_why = sb_detach(&why);
	sb_release(&why);
}

/* ---- running ---- */

/* Run cmd through /bin/sh -c with stdout captured and stderr discarded.
 * *status is the wait status; 0 from the function even when the command
 * failed; a negative ERR_* only when no process could be started. */
static int run_capture(const char *cmd, double timeout_s, struct sb *out, int *status,
		       bool *timed_out, struct err *e)
{
	int fds[2];
	*timed_out = false;
	if (pipe(fds) < 0)
		return err_set(e, ERR_IO, "probe: cannot create a pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return err_set(e, ERR_IO, "probe: cannot start a process: %s", strerror(errno));
	}
	if (pid == 0) {
		setpgid(0, 0);
		int devnull = open("/dev/null", O_RDWR);
		dup2(fds[1], 1);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		close(fds[0]);
		close(fds[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(fds[1]);
	double deadline = mono_s() + timeout_s;
	char buf[4096];
	for (;;) {
		double left = deadline - mono_s();
		if (left <= 0) {
			*timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
		int r = poll(&pfd, 1, (int)(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out->len + (size_t)n <= PROBE_MAX_OUTPUT)
			sb_add(out, buf, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static int count_pids(const char *text)
{
	int n = 0;
	const char *p = text;
	while (*p) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (isdigit((unsigned char)*p))
			n++;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return n;
}

/* Run one probe command: wrapped (its text with o->wrap before it), through
 * o->capture when there is one, else as a process here. */
static int capture(const struct probe_opts *o, const char *raw, const char *wrapped,
		   double timeout, struct sb *out, int *status, bool *timed_out, struct err *e)
{
	if (o && o->wrap && o->capture)
		return o->capture(o->capture_ctx, raw, timeout, out, status, timed_out, e);
	return run_capture(wrapped, timeout, out, status, timed_out, e);
}

static int probe_once(const struct probe_opts *o, struct probe_reading *out, struct err *e)
{
	const char *cmd = o && o->command ? o->command : PROBE_DEFAULT_COMMAND;
	const char *apps = o && o->apps_command ? o->apps_command : PROBE_DEFAULT_APPS_COMMAND;
	const char *raw_cmd = cmd, *raw_apps = apps;
	struct sb wcmd = SB_INIT, wapps = SB_INIT;
	if (o && o->wrap) {
		sb_addf(&wcmd, "%s ", o->wrap);
		slurm_shell_quote(&wcmd, cmd);
		cmd = wcmd.buf;
		if (apps[0]) {
			sb_addf(&wapps, "%s ", o->wrap);
			slurm_shell_quote(&wapps, apps);
			apps = wapps.buf;
		}
	}
	double timeout = o && o->timeout_s > 0 ? o->timeout_s : 10.0;
	struct sb text = SB_INIT;
	int status = 0, rc;
	bool timed_out;
	double t = now_s();

	memset(out, 0, sizeof(*out));
	rc = capture(o, raw_cmd, cmd, timeout, &text, &status, &timed_out, e);
	if (rc < 0) {
		sb_release(&text);
		sb_release(&wcmd);
		sb_release(&wapps);
		return rc;
	}
	if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		out->compute_procs = -1;
		out->raw = xstrdup(sb_str(&text));
		if (timed_out)
			out->why = xasprintf("no probe: '%s' did not finish within %.0f s", cmd,
					     timeout);
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
			out->why = xasprintf("no probe: the command '%s' was not found (no GPU "
					     "tools on this machine)", cmd);
		else
			out->why = xasprintf("no probe: '%s' failed (exit %d)", cmd,
					     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	} else if (probe_parse_csv(text.buf, text.len, out, NULL) < 0) {
		char *why = out->why;
		out->why = xasprintf("no probe: '%s' gave unreadable output (%s)", cmd,
				     why ? why : "?");
		free(why);
	}
	sb_release(&text);
	out->command = xstrdup(cmd);
	out->node = o && o->node ? xstrdup(o->node) : NULL;
	out->t = t;
	if (out->available && apps[0]) {
		struct sb a = SB_INIT;
		rc = capture(o, raw_apps, apps, timeout, &a, &status, &timed_out, e);
		if (rc == 0 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			out->compute_procs = count_pids(sb_str(&a));
		sb_release(&a);
	}
	probe_judge(out, o ? o->busy_util : 0);
	sb_release(&wcmd);
	sb_release(&wapps);
	return 0;
}

int probe_run(const struct probe_opts *o, struct probe_reading *out, struct err *e)
{
	int rc = probe_once(o, out, e);
	double settle = o ? o->settle_s : 0;
	if (rc < 0 || settle <= 0 || !out->busy || out->compute_procs > 0)
		return rc;
	/* Busy by utilisation alone: the window may still hold the run that
	 * just ended.  Look again once it has passed. */
	struct timespec ts = {.tv_sec = (time_t)settle,
			      .tv_nsec = (long)((settle - (double)(time_t)settle) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	struct probe_reading again;
	if ((rc = probe_once(o, &again, e)) < 0)
		return rc;
	if (!again.available) {
		probe_reading_release(&again);
		return 0;
	}
	again.settled_s = again.t - out->t;
	again.settled_from = out->busy_why;
	out->busy_why = NULL;
	probe_reading_release(out);
	*out = again;
	return 0;
}

void probe_reading_release(struct probe_reading *r)
{
	for (size_t i = 0; i < r->ngpus; i++)
		gpu_release(&r->gpus[i]);
	free(r->gpus);
	free(r->why);
	free(r->command);
	free(r->node);
	free(r->raw);
	free(r->busy_why);
	free(r->settled_from);
	memset(r, 0, sizeof(*r));
	r->compute_procs = -1;
}

/* ---- JSON ---- */

static json_t *jnum(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *probe_reading_json(const struct probe_reading *r)
{
	json_t *o = json_object(), *gpus = json_array();
	json_object_set_new(o, "available", json_boolean(r->available));
	json_object_set_new(o, "why", jstr(r->why));
	json_object_set_new(o, "command", jstr(r->command));
	if (r->node)
		json_object_set_new(o, "node", jstr(r->node));
	json_object_set_new(o, "t", jnum(r->t));
	json_object_set_new(o, "compute_procs",
			    r->compute_procs >= 0 ? json_integer(r->compute_procs) : json_null());
	json_object_set_new(o, "busy", json_boolean(r->busy));
	json_object_set_new(o, "busy_why", jstr(r->busy_why));
	if (r->settled_s > 0) {
		json_object_set_new(o, "settled_s", jnum(r->settled_s));
		json_object_set_new(o, "settled_from", jstr(r->settled_from));
	}
	for (size_t i = 0; i < r->ngpus; i++) {
		const struct probe_gpu *g = &r->gpus[i];
		json_t *j = json_object();
		json_object_set_new(j, "index", g->index >= 0 ? json_integer(g->index) : json_null());
		json_object_set_new(j, "name", jstr(g->name));
		json_object_set_new(j, "uuid", jstr(g->uuid));
		json_object_set_new(j, "driver", jstr(g->driver));
		json_object_set_new(j, "sm_mhz", jnum(g->sm_mhz));
		json_object_set_new(j, "mem_mhz", jnum(g->mem_mhz));
		json_object_set_new(j, "max_sm_mhz", jnum(g->max_sm_mhz));
		json_object_set_new(j, "temp_c", jnum(g->temp_c));
		json_object_set_new(j, "power_w", jnum(g->power_w));
		json_object_set_new(j, "pstate", jstr(g->pstate));
		json_object_set_new(j, "util_pct", jnum(g->util_pct));
		json_array_append_new(gpus, j);
	}
	json_object_set_new(o, "gpus", gpus);
	json_object_set_new(o, "raw", jstr(r->raw));
	return o;
}

static double get_num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static char *get_str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? xstrdup(s) : NULL;
}

int probe_reading_from_json(const json_t *j, struct probe_reading *out, struct err *e)
{
	memset(out, 0, sizeof(*out));
	out->compute_procs = -1;
	if (!json_is_object(j))
		return err_set(e, ERR_FAIL, "probe reading: not a JSON object");
	out->available = json_is_true(json_object_get(j, "available"));
	out->busy = json_is_true(json_object_get(j, "busy"));
	out->why = get_str(j, "why");
	out->busy_why = get_str(j, "busy_why");
	double st = get_num(j, "settled_s");
	out->settled_s = isnan(st) ? 0 : st;
	out->settled_from = get_str(j, "settled_from");
	out->command = get_str(j, "command");
	out->node = get_str(j, "node");
	out->raw = get_str(j, "raw");
	out->t = get_num(j, "t");
	double cp = get_num(j, "compute_procs");
	out->compute_procs = isnan(cp) ? -1 : (int)cp;
	const json_t *gpus = json_object_get(j, "gpus");
	size_t n = json_array_size(gpus);
	if (n) {
		out->gpus = xcalloc(n, sizeof(*out->gpus));
		for (size_t i = 0; i < n; i++) {
			const json_t *g = json_array_get(gpus, i);
			struct probe_gpu *p = &out->gpus[i];
			gpu_init(p);
			double idx = get_num(g, "index");
			p->index = isnan(idx) ? -1 : (int)idx;
			p->name = get_str(g, "name");
			p->uuid = get_str(g, "uuid");
			p->driver = get_str(g, "driver");
			p->pstate = get_str(g, "pstate");
			p->sm_mhz = get_num(g, "sm_mhz");
			p->mem_mhz = get_num(g, "mem_mhz");
			p->max_sm_mhz = get_num(g, "max_sm_mhz");
			p->temp_c = get_num(g, "temp_c");
			p->power_w = get_num(g, "power_w");
			p->util_pct = get_num(g, "util_pct");
		}
		out->ngpus = n;
	}
	return 0;
}

void probe_describe(const struct probe_reading *r, struct sb *out)
{
	if (r->node)
		sb_addf(out, "on node %s: ", r->node);
	if (!r->available) {
		sb_adds(out, r->why ? r->why : "no probe");
		return;
	}
	for (size_t i = 0; i < r->ngpus; i++) {
		const struct probe_gpu *g = &r->gpus[i];
		if (i)
			sb_addc(out, '\n');
		sb_addf(out, "GPU %d %s", g->index, g->name ? g->name : "(unnamed)");
		if (g->uuid)
			sb_addf(out, " %s", g->uuid);
		if (g->driver)
			sb_addf(out, ", driver %s", g->driver);
		if (!isnan(g->sm_mhz)) {
			sb_addf(out, ": SM %.0f", g->sm_mhz);
			if (!isnan(g->max_sm_mhz))
				sb_addf(out, "/%.0f", g->max_sm_mhz);
			sb_adds(out, " MHz");
		}
		if (!isnan(g->mem_mhz))
			sb_addf(out, ", mem %.0f MHz", g->mem_mhz);
		if (!isnan(g->temp_c))
			sb_addf(out, ", %.0f C", g->temp_c);
		if (!isnan(g->power_w))
			sb_addf(out, ", %.2f W", g->power_w);
		if (g->pstate)
			sb_addf(out, ", %s", g->pstate);
		if (!isnan(g->util_pct))
			sb_addf(out, ", util %.0f %%", g->util_pct);
	}
	if (r->compute_procs >= 0)
		sb_addf(out, "; %d compute process(es)", r->compute_procs);
	if (r->busy)
		sb_addf(out, "; BUSY: %s", r->busy_why ? r->busy_why : "");
	if (r->settled_s > 0)
		sb_addf(out, "; read again after %.1f s (the first reading showed %s)",
			r->settled_s, r->settled_from ? r->settled_from : "a busy GPU");
}
