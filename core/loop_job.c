/*
 * loop_job — one handle for the loop's three measuring jobs: a verify
 * (loop_verify.c), a noise session and a confirm session (loop_session.c).
 * Front-ends begin, poll, pump, cancel and end a job the same way whatever
 * its kind; the kind shows only in the result.  The loop holds the job
 * going, so there is one at a time and loop_close can end one left going.
 */
#include "core/loop_impl.h"
#include "core/run.h"
#include "core/store.h"

#include <stdlib.h>
#include <string.h>

struct loop_job {
	struct loop *l;
	enum loop_job_kind kind;
	struct loop_noise_run *noise;     /* LOOP_JOB_NOISE */
	struct loop_confirm_run *confirm; /* LOOP_JOB_CONFIRM */
	double t0;
	bool over; /* pump said 0: the job ended by itself or by its cancel */
};

static const char *kind_word(enum loop_job_kind k)
{
	return k == LOOP_JOB_NOISE ? "noise" : k == LOOP_JOB_CONFIRM ? "confirm" : "verify";
}

void loop_job_result_release(struct loop_job_result *r)
{
	enum loop_job_kind k = r->kind;
	loop_measurement_release(&r->m);
	loop_session_release(&r->s);
	memset(r, 0, sizeof(*r));
	r->kind = k;
}

int loop_job_begin(struct loop *l, const struct loop_job_opts *o, struct loop_job **out,
		   struct err *e)
{
	int rc;
	*out = NULL;
	if (o->kind != LOOP_JOB_VERIFY && o->kind != LOOP_JOB_NOISE && o->kind != LOOP_JOB_CONFIRM)
		return err_set(e, ERR_USAGE, "no such job kind: %d", (int)o->kind);
	if (l->job)
		return err_set(e, ERR_REFUSED,
			       "%s refused: a %s run is already going (cancel it first)",
			       kind_word(o->kind), kind_word(l->job->kind));
	struct loop_job *j = xcalloc(1, sizeof(*j));
	j->l = l;
	j->kind = o->kind;
	j->t0 = loop_now();
	switch (o->kind) {
	case LOOP_JOB_VERIFY:
		rc = loop_verify_begin(l, &o->verify, e);
		break;
	case LOOP_JOB_NOISE:
		rc = loop_noise_begin(l, &o->session, &j->noise, e);
		break;
	default:
		rc = loop_confirm_begin(l, &o->session, &j->confirm, e);
		break;
	}
	if (rc < 0) {
		free(j);
		return rc;
	}
	l->job = j;
	*out = j;
	return 0;
}

int loop_job_fds(const struct loop_job *j, int fds[2])
{
	switch (j->kind) {
	case LOOP_JOB_VERIFY:
		return loop_verify_fds(j->l, fds);
	case LOOP_JOB_NOISE:
		return loop_noise_fds(j->noise, fds);
	default:
		return loop_confirm_fds(j->confirm, fds);
	}
}

int loop_job_pump(struct loop_job *j, int timeout_ms, struct err *e)
{
	int rc;
	(void)e; /* a run's failure is recorded with it and reported by loop_job_end */
	if (j->over)
		return 0;
	switch (j->kind) {
	case LOOP_JOB_VERIFY:
		rc = loop_verify_pump(j->l, timeout_ms);
		break;
	case LOOP_JOB_NOISE:
		rc = loop_noise_pump(j->noise, timeout_ms);
		break;
	default:
		rc = loop_confirm_pump(j->confirm, timeout_ms);
		break;
	}
	j->over = rc <= 0;
	return rc;
}

void loop_job_cancel(struct loop_job *j)
{
	switch (j->kind) {
	case LOOP_JOB_VERIFY:
		loop_verify_cancel(j->l);
		break;
	case LOOP_JOB_NOISE:
		loop_noise_cancel(j->noise);
		break;
	default:
		loop_confirm_cancel(j->confirm);
		break;
	}
}

void loop_job_progress(const struct loop_job *j, struct loop_job_progress *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = j->kind;
	switch (j->kind) {
	case LOOP_JOB_VERIFY: {
		struct loop *l = j->l;
		p->iter = l->vrun ? run_record(l->vrun)->iter : 0;
		p->run = p->nruns = 1;
		p->running = !j->over;
		p->command = l->vcmd;
		p->result = loop_verify_result(l);
		break;
	}
	case LOOP_JOB_NOISE:
		loop_noise_progress(j->noise, p);
		break;
	default:
		loop_confirm_progress(j->confirm, p);
		break;
	}
	p->elapsed_s = loop_now() - j->t0;
	loop_probe_commands(&p->probe, &p->probe_apps);
}

int loop_job_end(struct loop_job *j, struct loop_job_result *out, struct err *e)
{
	struct loop *l = j->l;
	int rc;
	memset(out, 0, sizeof(*out));
	out->kind = j->kind;
	/* ended before it was over: cancelled, unless it just finished */
	if (!j->over && loop_job_pump(j, 0, NULL) > 0)
		loop_job_cancel(j);
	switch (j->kind) {
	case LOOP_JOB_VERIFY:
		rc = loop_verify_end(l, &out->m, e);
		break;
	case LOOP_JOB_NOISE:
		rc = loop_noise_end(j->noise, &out->s, e);
		break;
	default:
		rc = loop_confirm_end(j->confirm, &out->s, e);
		break;
	}
	if (rc < 0)
		loop_job_result_release(out);
	l->job = NULL;
	free(j);
	return rc;
}

int loop_job_run(struct loop *l, const struct loop_job_opts *o, struct loop_job_result *out,
		 struct err *e)
{
	struct loop_job *j;
	bool stopping = false;
	memset(out, 0, sizeof(*out));
	out->kind = o->kind;
	int rc = loop_job_begin(l, o, &j, e);
	if (rc < 0)
		return rc;
	while (loop_job_pump(j, o->stop ? 200 : -1, NULL) > 0) {
		if (o->stop && *o->stop && !stopping) {
			loop_job_cancel(j);
			stopping = true;
		}
	}
	return loop_job_end(j, out, e);
}

void loop_job_close(struct loop *l)
{
	struct loop_job_result r;
	if (l->job) {
		loop_job_end(l->job, &r, NULL);
		loop_job_result_release(&r);
	}
}
