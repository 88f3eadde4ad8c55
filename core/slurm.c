/*
 * slurm — the Runner field, Slurm's command lines and what its commands
 * print, read without running anything.  See slurm.h.
 */
#include "core/slurm.h"

#include "core/err.h"
#include "core/sb.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the Runner field ---- */

/* salloc options optloop sets itself, or that would take the allocation
 * out of its hands. */
static const char *const owned[] = {
	"--no-shell", "--jobid", "--pty", "--bell", "--no-bell", NULL,
};

void slurm_runner_release(struct slurm_runner *r)
{
	for (size_t i = 0; i < r->nargs; i++)
		free(r->args[i]);
	free(r->args);
	free(r->canon);
	memset(r, 0, sizeof(*r));
}

double slurm_time_limit(const struct slurm_runner *r)
{
	const char *v = NULL;
	for (size_t i = 0; r && i < r->nargs; i++) {
		if (!strncmp(r->args[i], "--time=", 7))
			v = r->args[i] + 7;
		else if ((!strcmp(r->args[i], "-t") || !strcmp(r->args[i], "--time")) &&
			 i + 1 < r->nargs)
			v = r->args[i + 1];
		else if (!strncmp(r->args[i], "-t", 2) && r->args[i][2])
			v = r->args[i] + 2;
	}
	if (!v || !*v)
		return -1;
	/* days-hours[:minutes[:seconds]], or minutes[:seconds], or
	 * hours:minutes:seconds (Slurm's forms) */
	long d = 0, f[3] = {0};
	int n = 0;
	const char *p = v, *dash = strchr(v, '-');
	char *end;
	if (dash) {
		d = strtol(v, &end, 10);
		if (end != dash || d < 0)
			return -1;
		p = dash + 1;
	}
	while (n < 3) {
		f[n++] = strtol(p, &end, 10);
		if (end == p || f[n - 1] < 0)
			return -1;
		if (*end != ':')
			break;
		p = end + 1;
	}
	if (*end)
		return -1;
	if (dash) /* hours[:minutes[:seconds]] */
		return 86400.0 * d + 3600.0 * f[0] + 60.0 * f[1] + f[2];
	if (n == 3)
		return 3600.0 * f[0] + 60.0 * f[1] + f[2];
	return 60.0 * f[0] + (n == 2 ? f[1] : 0);
}

double slurm_duration(const char *s)
{
	if (!s || !*s)
		return -1;
	if (!strcasecmp(s, "off") || !strcasecmp(s, "never"))
		return 0;
	char *end;
	double v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0 || !isdigit((unsigned char)*s))
		return -1;
	double unit = 60; /* a bare number is minutes, as Slurm's --time */
	if (*end) {
		if (!strcmp(end, "s") || !strcmp(end, "sec"))
			unit = 1;
		else if (!strcmp(end, "m") || !strcmp(end, "min"))
			unit = 60;
		else if (!strcmp(end, "h"))
			unit = 3600;
		else if (!strcmp(end, "d"))
			unit = 86400;
		else
			return -1;
	}
	return v * unit;
}

/* Split value into words: white space separates, '...' and "..." quote
 * (no escapes inside).  ERR_USAGE for a quote left open. */
static int split_words(const char *v, char ***out, size_t *n, struct err *e)
{
	struct sb w = SB_INIT;
	*out = NULL;
	*n = 0;
	const char *p = v;
	while (*p) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		sb_reset(&w);
		sb_adds(&w, "");
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == '\'' || *p == '"') {
				char q = *p++;
				const char *close = strchr(p, q);
				if (!close) {
					sb_release(&w);
					for (size_t i = 0; i < *n; i++)
						free((*out)[i]);
					free(*out);
					*out = NULL;
					*n = 0;
					return err_set(e, ERR_USAGE,
						       "Runner: a %c quote is never closed in '%s' "
						       "(close it, or write the value without quotes)",
						       q, v);
				}
				sb_add(&w, p, (size_t)(close - p));
				p = close + 1;
			} else {
				sb_addc(&w, *p++);
			}
		}
		*out = xrealloc(*out, (*n + 1) * sizeof(char *));
		(*out)[(*n)++] = xstrdup(sb_str(&w));
	}
	sb_release(&w);
	return 0;
}

static void free_words(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

static bool owned_option(const char *a)
{
	for (size_t i = 0; owned[i]; i++) {
		size_t k = strlen(owned[i]);
		if (!strncmp(a, owned[i], k) && (a[k] == '\0' || a[k] == '='))
			return true;
	}
	return false;
}

int slurm_runner_parse(const char *value, struct slurm_runner *out, struct err *e)
{
	char **w;
	size_t n;
	memset(out, 0, sizeof(*out));
	out->idle_s = SLURM_IDLE_DEFAULT_S;
	int rc = split_words(value ? value : "", &w, &n, e);
	if (rc < 0)
		return rc;
	if (n == 0 || (n == 1 && !strcasecmp(w[0], "local"))) {
		free_words(w, n);
		out->canon = xstrdup("local");
		return 0;
	}
	if (!strcasecmp(w[0], "local")) {
		rc = err_set(e, ERR_USAGE,
			     "Runner: local takes no options, but '%s' follows it (write just local, "
			     "or slurm followed by salloc's options)",
			     w[1]);
		free_words(w, n);
		return rc;
	}
	if (strcasecmp(w[0], "slurm")) {
		rc = err_set(e, ERR_USAGE,
			     "Runner: '%s' is not a runner (write local, or slurm followed by "
			     "salloc's options, e.g. slurm --partition=gpu --gres=gpu:1 "
			     "--time=02:00:00 idle=30m)",
			     w[0]);
		free_words(w, n);
		return rc;
	}
	struct sb canon = SB_INIT;
	sb_adds(&canon, "slurm");
	out->slurm = true;
	out->args = xcalloc(n, sizeof(char *));
	bool value_may_follow = false; /* "-t 02:00:00", "--partition gpu" */
	for (size_t i = 1; i < n && rc == 0; i++) {
		const char *a = w[i];
		const char *eq = strchr(a, '=');
		bool was = value_may_follow;
		value_may_follow = a[0] == '-' && !eq;
		if (was && a[0] != '-' && !(eq && eq > a && !strncasecmp(a, "idle=", 5))) {
			out->args[out->nargs++] = xstrdup(a);
			value_may_follow = false;
		} else if (a[0] == '-') {
			if (!strcmp(a, "-") || !strcmp(a, "--"))
				rc = err_set(e, ERR_USAGE,
					     "Runner: '%s' is no salloc option (write options such as "
					     "--partition=gpu)",
					     a);
			else if (owned_option(a))
				rc = err_set(e, ERR_USAGE,
					     "Runner: optloop sets salloc's %.*s itself (leave it out of "
					     "the Runner field)",
					     (int)(eq ? eq - a : (long)strlen(a)), a);
			else
				out->args[out->nargs++] = xstrdup(a);
		} else if (eq && eq > a) {
			size_t k = (size_t)(eq - a);
			if (k == 4 && !strncasecmp(a, "idle", 4)) {
				double d = slurm_duration(eq + 1);
				if (d < 0)
					rc = err_set(e, ERR_USAGE,
						     "Runner: idle=%s is not a duration (write e.g. "
						     "idle=30m, idle=90s, idle=2h, or idle=off to hold "
						     "the allocation until optloop stop)",
						     eq + 1);
				else
					out->idle_s = d;
			} else {
				rc = err_set(e, ERR_USAGE,
					     "Runner: optloop has no option '%.*s' (its only one is "
					     "idle=DURATION; salloc's options start with -, e.g. "
					     "--time=%s)",
					     (int)k, a, eq + 1);
			}
		} else {
			rc = err_set(e, ERR_USAGE,
				     "Runner: '%s' is neither a salloc option (those start with -, "
				     "e.g. --partition=%s) nor idle=DURATION; salloc runs no command "
				     "here (optloop runs each verify with srun inside the allocation)",
				     a, a);
		}
		if (rc == 0) {
			sb_addc(&canon, ' ');
			sb_adds(&canon, a);
		}
	}
	free_words(w, n);
	if (rc < 0) {
		sb_release(&canon);
		return rc;
	}
	out->canon = sb_detach(&canon);
	return 0;
}

/* ---- command lines ---- */

void slurm_shell_quote(struct sb *out, const char *s)
{
	sb_addc(out, '\'');
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			sb_adds(out, "'\\''");
		else
			sb_addc(out, *p);
	}
	sb_addc(out, '\'');
}

void slurm_salloc_command(const struct slurm_runner *r, struct sb *out)
{
	sb_adds(out, "exec salloc --no-shell");
	for (size_t i = 0; i < r->nargs; i++) {
		sb_addc(out, ' ');
		slurm_shell_quote(out, r->args[i]);
	}
}

static void step_options(const char *job, const char *node, struct sb *out)
{
	sb_adds(out, "srun --jobid=");
	slurm_shell_quote(out, job);
	/* --overlap: a step starts while the one before it is still being
	 * cleaned up ("step creation temporarily disabled"), never waits */
	sb_adds(out, " --nodes=1 --ntasks=1 --overlap");
	if (node && *node) {
		sb_adds(out, " --nodelist=");
		slurm_shell_quote(out, node);
	}
}

void slurm_step_command(const char *job, const char *node, const char *cmd, struct sb *out)
{
	/* The step's shell prints where it runs, then becomes the command
	 * (passed as $0, so it needs no second level of quoting). */
	static const char mark[] =
		"printf '" SLURM_MARK " job %s step %s node %s gpus %s\\n' \"$SLURM_JOB_ID\" "
		"\"$SLURM_STEP_ID\" \"${SLURMD_NODENAME:-$(hostname)}\" "
		"\"${SLURM_STEP_GPUS:-${CUDA_VISIBLE_DEVICES:-none}}\"; exec /bin/sh -c \"$0\"";
	sb_adds(out, "exec ");
	step_options(job, node, out);
	sb_adds(out, " --kill-on-bad-exit=1 --unbuffered --job-name=optloop /bin/sh -c ");
	slurm_shell_quote(out, mark);
	sb_addc(out, ' ');
	slurm_shell_quote(out, cmd);
}

void slurm_probe_prefix(const char *job, const char *node, struct sb *out)
{
	step_options(job, node, out);
	sb_adds(out, " --quiet --job-name=optloop-probe /bin/sh -c");
}

/* ---- salloc's and squeue's output ---- */

/* The number after prefix in line, into job. */
static bool number_after(const char *line, const char *prefix, char *job, size_t jobsz)
{
	const char *p = strstr(line, prefix);
	if (!p)
		return false;
	p += strlen(prefix);
	size_t n = 0;
	while (isdigit((unsigned char)p[n]))
		n++;
	if (!n || n >= jobsz)
		return false;
	memcpy(job, p, n);
	job[n] = '\0';
	return true;
}

enum slurm_salloc_event slurm_salloc_line(const char *line, char *job, size_t jobsz)
{
	if (number_after(line, "Granted job allocation ", job, jobsz))
		return SALLOC_GRANTED;
	if (number_after(line, "Pending job allocation ", job, jobsz) ||
	    (number_after(line, "job ", job, jobsz) && strstr(line, "queued")))
		return SALLOC_PENDING;
	if (number_after(line, "Job allocation ", job, jobsz) &&
	    (strstr(line, "revoked") || strstr(line, "cancel")))
		return SALLOC_REVOKED;
	if (strstr(line, "Job aborted") || strstr(line, "allocation failure"))
		return SALLOC_REVOKED;
	if (strstr(line, "salloc: error:"))
		return SALLOC_ERROR;
	return SALLOC_OTHER;
}

static void copy_field(char *dst, size_t dsz, const char *a, size_t n)
{
	while (n && isspace((unsigned char)*a))
		a++, n--;
	while (n && isspace((unsigned char)a[n - 1]))
		n--;
	if (n >= dsz)
		n = dsz - 1;
	memcpy(dst, a, n);
	dst[n] = '\0';
}

void slurm_squeue_parse(const char *text, int exit_status, struct slurm_job *out)
{
	memset(out, 0, sizeof(*out));
	out->phase = SJ_GONE;
	if (!text)
		return;
	if (exit_status != 0) {
		if (!strstr(text, "Invalid job id")) {
			out->phase = SJ_UNKNOWN;
			copy_field(out->reason, sizeof(out->reason), text, strcspn(text, "\n"));
		}
		return;
	}
	/* the first non-empty line */
	while (*text == '\n' || *text == '\r' || *text == ' ')
		text++;
	size_t len = strcspn(text, "\r\n");
	if (!len)
		return;
	const char *bar1 = memchr(text, '|', len);
	const char *bar2 = bar1 ? memchr(bar1 + 1, '|', len - (size_t)(bar1 + 1 - text)) : NULL;
	copy_field(out->state, sizeof(out->state), text, bar1 ? (size_t)(bar1 - text) : len);
	if (bar1)
		copy_field(out->reason, sizeof(out->reason), bar1 + 1,
			   (bar2 ? (size_t)(bar2 - bar1 - 1) : len - (size_t)(bar1 + 1 - text)));
	if (bar2)
		copy_field(out->nodes, sizeof(out->nodes), bar2 + 1,
			   len - (size_t)(bar2 + 1 - text));
	if (!strcmp(out->nodes, "(null)"))
		out->nodes[0] = '\0';
	/* the ending states Slurm documents; any other word is not taken for
	 * an end: a job that may still hold GPUs is never forgotten */
	static const char *const ending[] = {
		"COMPLETING", "COMPLETED",     "CANCELLED",    "FAILED",	 "TIMEOUT",
		"NODE_FAIL",  "PREEMPTED",     "BOOT_FAIL",    "DEADLINE",	 "OUT_OF_MEMORY",
		"REVOKED",    "SPECIAL_EXIT", "STAGE_OUT",    "SIGNALING", NULL};
	const char *s = out->state;
	bool ends = false;
	for (size_t i = 0; ending[i] && !ends; i++)
		ends = !strcmp(s, ending[i]);
	if (!*s)
		out->phase = SJ_GONE;
	else if (!strcmp(s, "PENDING") || !strcmp(s, "REQUEUED") || !strcmp(s, "REQUEUE_HOLD") ||
		 !strcmp(s, "REQUEUE_FED") || !strcmp(s, "RESV_DEL_HOLD"))
		out->phase = SJ_PENDING;
	else if (!strcmp(s, "RUNNING") || !strcmp(s, "CONFIGURING") || !strcmp(s, "RESIZING"))
		out->phase = SJ_RUNNING;
	else if (!strcmp(s, "SUSPENDED") || !strcmp(s, "STOPPED"))
		out->phase = SJ_HELD;
	else if (ends)
		out->phase = SJ_ENDING;
	else {
		out->phase = SJ_UNKNOWN;
		char why[sizeof(out->reason)];
		snprintf(why, sizeof(why), "squeue says state '%.*s', which optloop does not know",
			 (int)strcspn(s, "\x1b\r\n"), s);
		memcpy(out->reason, why, sizeof(why));
	}
}

void slurm_first_node(const char *list, char *out, size_t outsz)
{
	size_t n = 0;
	const char *p = list ? list : "";
	/* name characters up to a ',' or a '[' */
	while (p[n] && p[n] != ',' && p[n] != '[')
		n++;
	struct sb b = SB_INIT;
	sb_add(&b, p, n);
	if (p[n] == '[') {
		const char *q = p + n + 1;
		size_t k = 0;
		while (isalnum((unsigned char)q[k]))
			k++;
		sb_add(&b, q, k);
	}
	snprintf(out, outsz, "%s", sb_str(&b));
	sb_release(&b);
}

/* ---- a step's output ---- */

void slurm_scan_init(struct slurm_scan *s)
{
	memset(s, 0, sizeof(*s));
}

static void word_after(const char *line, const char *key, char *dst, size_t dsz)
{
	const char *p = strstr(line, key);
	if (!p)
		return;
	p += strlen(key);
	size_t n = strcspn(p, " \t");
	copy_field(dst, dsz, p, n);
}

static void scan_line(struct slurm_scan *s, const char *line)
{
	if (!s->marked && !strncmp(line, SLURM_MARK, strlen(SLURM_MARK))) {
		s->marked = true;
		word_after(line, " job ", s->job, sizeof(s->job));
		word_after(line, " step ", s->step, sizeof(s->step));
		word_after(line, " node ", s->node, sizeof(s->node));
		word_after(line, " gpus ", s->gpus, sizeof(s->gpus));
		return;
	}
	bool srun = !strncmp(line, "srun: ", 6);
	bool stepd = !strncmp(line, "slurmstepd", 10);
	if (!srun && !stepd)
		return;
	snprintf(s->last, sizeof(s->last), "%s", line);
	if (strstr(line, "Job step aborted"))
		s->aborted = true;
	if (strstr(line, "DUE TO TIME LIMIT"))
		s->time_limit = true;
	if (strstr(line, "DUE TO NODE FAIL") || strstr(line, "Node failure") ||
	    strstr(line, "node failure"))
		s->node_fail = true;
	if (strstr(line, "DUE TO PREEMPTION"))
		s->preempted = true;
	if (strstr(line, "CANCELLED"))
		s->cancelled = true;
	if (strstr(line, "Invalid job id") || strstr(line, "Job has expired") ||
	    strstr(line, "Expired or invalid job") ||
	    strstr(line, "Unable to confirm allocation") || strstr(line, "already completing") ||
	    strstr(line, "Job/step already completing or completed"))
		s->no_job = true;
	if (strstr(line, "Unable to create step") || strstr(line, "Unable to launch") ||
	    strstr(line, "Unable to allocate resources"))
		s->launch_failed = true;
	if (strstr(line, ": task ") &&
	    (strstr(line, "Killed") || strstr(line, "Terminated") || strstr(line, "Exited")))
		s->killed_task = true;
}

void slurm_scan_feed(struct slurm_scan *s, const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char c = buf[i];
		if (c == '\n' || c == '\r') {
			if (!s->skip) {
				s->line[s->len] = '\0';
				scan_line(s, s->line);
			}
			s->len = 0;
			s->skip = false;
			continue;
		}
		if (s->skip)
			continue;
		if (s->len + 1 >= sizeof(s->line)) {
			/* Slurm's own lines are short: a long one is the harness's */
			s->skip = true;
			s->len = 0;
			continue;
		}
		s->line[s->len++] = c == '\0' ? ' ' : c;
	}
}

void slurm_scan_finish(struct slurm_scan *s)
{
	if (s->len && !s->skip) {
		s->line[s->len] = '\0';
		scan_line(s, s->line);
	}
	s->len = 0;
	s->skip = false;
}

/* ---- how a step ended ---- */

const char *slurm_cause_name(enum slurm_cause c)
{
	static const char *const names[] = {
		[SC_OK] = "ok",           [SC_CANCELLED] = "cancelled",   [SC_TIMEOUT] = "timeout",
		[SC_TIME_LIMIT] = "time_limit", [SC_REVOKED] = "revoked", [SC_NODE_FAIL] = "node_fail",
		[SC_PREEMPTED] = "preempted", [SC_GONE] = "gone",         [SC_LAUNCH] = "launch",
		[SC_SIGNAL] = "signal",
	};
	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

static bool state_is(const struct slurm_job *j, const char *s)
{
	return j && !strcmp(j->state, s);
}

enum slurm_cause slurm_step_cause(const struct slurm_step_end *in, struct sb *why)
{
	const struct slurm_scan *s = in->scan;
	const struct slurm_job *j = in->job_after;
	enum slurm_cause c;
	int st = in->exit_status;
	/* srun reports a task killed by signal N as 128 + N (143: SIGTERM, 137:
	 * SIGKILL); the harness's own statuses stay below that */
	bool sig_status = st > 128 && st <= 128 + 64;

	if (in->we_timed_out)
		c = SC_TIMEOUT;
	else if (in->we_cancelled)
		c = SC_CANCELLED;
	else if (s->time_limit || state_is(j, "TIMEOUT") || state_is(j, "DEADLINE"))
		c = SC_TIME_LIMIT;
	else if (s->node_fail || state_is(j, "NODE_FAIL") || state_is(j, "BOOT_FAIL"))
		c = SC_NODE_FAIL;
	else if (s->preempted || state_is(j, "PREEMPTED"))
		c = SC_PREEMPTED;
	else if (!s->marked && s->no_job)
		c = in->after_signal || in->time_left ? SC_REVOKED : SC_GONE;
	else if (!s->marked && (s->launch_failed || (st != 0 && s->last[0])) &&
		 !state_is(j, "CANCELLED") && !(j && (j->phase == SJ_GONE || j->phase == SJ_ENDING)))
		c = SC_LAUNCH; /* (a job cancelled while its step started: revoked, below) */
	else if (s->cancelled || s->aborted || s->no_job || state_is(j, "CANCELLED") ||
		 /* a step that never printed its mark, its job ending (COMPLETING
		  * after an scancel): the job was revoked as the step started */
		 (!s->marked && st != 0 && j && j->phase == SJ_ENDING) ||
		 (j && (j->phase == SJ_GONE || j->phase == SJ_ENDING) && (sig_status || in->signal)))
		c = j && j->phase == SJ_RUNNING ? SC_SIGNAL : SC_REVOKED;
	else if (in->signal || sig_status)
		c = SC_SIGNAL;
	else
		c = SC_OK;
	if (!why || c == SC_OK)
		return c;

	char step[64];
	if (s->job[0] && s->step[0])
		snprintf(step, sizeof(step), "Slurm step %s.%s", s->job, s->step);
	else if (s->job[0])
		snprintf(step, sizeof(step), "the Slurm step of job %s", s->job);
	else
		snprintf(step, sizeof(step), "the Slurm step");
	switch (c) {
	case SC_TIMEOUT:
		sb_addf(why, "%s was cancelled with scancel at the run's timeout", step);
		break;
	case SC_CANCELLED:
		sb_addf(why, "%s was cancelled with scancel (the run was stopped)", step);
		break;
	case SC_TIME_LIMIT:
		sb_addf(why, "%s was killed: the allocation reached its time limit (DUE TO TIME "
			     "LIMIT); a new allocation is requested at the next run (raise --time "
			     "in the Runner field if runs need longer)",
			step);
		break;
	case SC_NODE_FAIL:
		sb_addf(why, "%s was lost: its node %s failed; a new allocation is requested at "
			     "the next run",
			step, s->node[0] ? s->node : "(unknown)");
		break;
	case SC_PREEMPTED:
		sb_addf(why, "%s was preempted by the scheduler", step);
		break;
	case SC_REVOKED:
		sb_addf(why, "%s was cancelled from outside optloop: the allocation was revoked "
			     "(scancel, or an administrator); a new one is requested at the next run",
			step);
		break;
	case SC_GONE:
		sb_adds(why, "the allocation was gone before the step could start (it expired or "
			     "was cancelled); a new one is requested at the next run");
		break;
	case SC_LAUNCH:
		sb_adds(why, "srun could not start the step");
		break;
	case SC_SIGNAL:
		if (s->cancelled)
			sb_addf(why, "%s was cancelled from outside optloop (scancel of the step); the "
				     "allocation is still there",
				step);
		else if (in->signal)
			sb_addf(why, "%s ended by signal %d", step, in->signal);
		else
			sb_addf(why, "%s's task was killed by signal %d (srun exit %d)", step, st - 128,
				st);
		break;
	case SC_OK:
		break;
	}
	if (s->last[0])
		sb_addf(why, " [srun said: %s]", s->last);
	return c;
}
