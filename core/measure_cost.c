/* measure_cost — what deciding cost: the runs of each iteration and of the
 * whole history by kind, in words and as JSON (measure.h). */
#include "core/measure.h"
#include "core/model.h"
#include "core/sb.h"
#include "core/store.h"

#include <jansson.h>

#include <stdlib.h>
#include <string.h>

static void cost_add(struct loop_cost_row *r, enum run_kind kind, int runs, int paired, double s)
{
	r->runs += runs;
	r->measurements += runs + paired;
	r->gpu_s += s;
	switch (kind) {
	case RUN_VERIFY:
		r->verify += runs;
		r->verify_s += s;
		break;
	case RUN_CONFIRM:
		r->confirm += runs;
		r->confirm_s += s;
		break;
	case RUN_NOISE:
		r->noise += runs;
		r->noise_s += s;
		break;
	default:
		r->other += runs;
		r->other_s += s;
		break;
	}
}

void measure_cost_row_add(struct loop_cost_row *to, const struct loop_cost_row *r)
{
	to->runs += r->runs;
	to->measurements += r->measurements;
	to->gpu_s += r->gpu_s;
	to->verify += r->verify;
	to->confirm += r->confirm;
	to->noise += r->noise;
	to->other += r->other;
	to->verify_s += r->verify_s;
	to->confirm_s += r->confirm_s;
	to->noise_s += r->noise_s;
	to->other_s += r->other_s;
}

/* store_run_costs' rows, one a kind, as one row an iteration: each handed
 * to fn once its last kind is in; the whole history's added to *total. */
struct cost_stream {
	struct loop_cost_row row, *total;
	bool open;
	void (*fn)(void *ctx, const struct loop_cost_row *r);
	void *ctx;
};

static void stream_row(void *ctx, int iter, enum run_kind kind, int runs, int paired, double s)
{
	struct cost_stream *c = ctx;
	if (iter == STORE_COST_TOTAL) {
		cost_add(c->total, kind, runs, paired, s);
		return;
	}
	if (c->open && c->row.iter != iter) {
		c->fn(c->ctx, &c->row);
		c->open = false;
	}
	if (!c->open) {
		memset(&c->row, 0, sizeof(c->row));
		c->row.iter = iter;
		c->open = true;
	}
	cost_add(&c->row, kind, runs, paired, s);
}

/* The rows of iter (STORE_COST_ALL: every iteration; STORE_COST_TOTAL:
 * none), then the total */
static int stream(struct store *s, int iter, struct cost_stream *c, struct err *e)
{
	memset(c->total, 0, sizeof(*c->total));
	c->total->iter = -1;
	int rc = iter == STORE_COST_TOTAL ? 0 : store_run_costs(s, iter, stream_row, c, e);
	if (rc == 0 && c->open)
		c->fn(c->ctx, &c->row);
	if (rc == 0)
		rc = store_run_costs(s, STORE_COST_TOTAL, stream_row, c, e);
	return rc;
}

static void cost_push(void *ctx, const struct loop_cost_row *r)
{
	struct loop_cost *c = ctx;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	c->v[c->n++] = *r;
}

int measure_cost(struct store *s, int iter, struct loop_cost *out, struct err *e)
{
	memset(out, 0, sizeof(*out));
	struct cost_stream c = {.total = &out->total, .fn = cost_push, .ctx = out};
	int rc = stream(s, iter == LOOP_COST_ALL ? STORE_COST_ALL
			   : iter >= 0		 ? iter
						 : STORE_COST_TOTAL,
			&c, e);
	if (rc < 0)
		measure_cost_release(out);
	return rc;
}

int measure_cost_each(struct store *s, void (*head)(void *ctx, size_t n),
		      struct loop_cost_row *total,
		      void (*fn)(void *ctx, const struct loop_cost_row *r), void *ctx,
		      struct err *e)
{
	struct cost_stream c = {.total = total, .fn = fn, .ctx = ctx};
	size_t n;
	int rc = store_cost_iters(s, &n, e);
	if (rc == 0) {
		head(ctx, n);
		rc = stream(s, STORE_COST_ALL, &c, e);
	}
	return rc;
}

const struct loop_cost_row *measure_cost_of(const struct loop_cost *c, int iter)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].iter == iter)
			return &c->v[i];
	return NULL;
}

void measure_cost_release(struct loop_cost *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static void secs_words(double s, struct sb *out)
{
	if (s < 10)
		sb_addf(out, "%.1f s", s);
	else if (s < 600)
		sb_addf(out, "%.0f s", s);
	else
		sb_addf(out, "%.1f min", s / 60);
}

/* A row's runs by kind, in a fixed order. */
#define COST_KINDS 4
struct cost_kind {
	const char *name;
	int n;
	double s;
};
static void cost_kinds(const struct loop_cost_row *r, struct cost_kind k[COST_KINDS])
{
	k[0] = (struct cost_kind){"verify", r->verify, r->verify_s};
	k[1] = (struct cost_kind){"confirm", r->confirm, r->confirm_s};
	k[2] = (struct cost_kind){"noise", r->noise, r->noise_s};
	k[3] = (struct cost_kind){"other", r->other, r->other_s};
}

void measure_cost_words(const struct loop_cost_row *r, struct sb *out)
{
	if (!r || !r->runs) {
		sb_adds(out, "nothing run");
		return;
	}
	if (r->measurements != r->runs)
		sb_addf(out, "%d measurements in ", r->measurements);
	sb_addf(out, "%d run%s, ", r->runs, r->runs == 1 ? "" : "s");
	secs_words(r->gpu_s, out);
	struct cost_kind k[COST_KINDS];
	cost_kinds(r, k);
	int kinds = 0;
	for (size_t i = 0; i < COST_KINDS; i++)
		kinds += k[i].n > 0;
	if (kinds < 2)
		return;
	sb_adds(out, " (");
	bool first = true;
	for (size_t i = 0; i < COST_KINDS; i++) {
		if (!k[i].n)
			continue;
		sb_addf(out, "%s%s %d, ", first ? "" : "; ", k[i].name, k[i].n);
		secs_words(k[i].s, out);
		first = false;
	}
	sb_adds(out, ")");
}

json_t *measure_cost_json(const struct loop_cost_row *r)
{
	static const struct loop_cost_row none = {0};
	if (!r)
		r = &none;
	json_t *by = json_object();
	struct cost_kind k[COST_KINDS];
	cost_kinds(r, k);
	for (size_t i = 0; i < COST_KINDS; i++)
		if (k[i].n)
			json_object_set_new(by, k[i].name,
					    json_pack("{s:i,s:f}", "runs", k[i].n, "s", k[i].s));
	return json_pack("{s:i,s:i,s:f,s:o}", "runs", r->runs, "measurements", r->measurements,
			 "gpu_s", r->gpu_s, "by_kind", by);
}
