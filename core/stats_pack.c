/*
 * stats_pack — a comparison (struct stats_cmp) as JSON and back, every field
 * to the last bit, so a comparison kept in the store reads back as the one
 * that was made (measure_confirm_compare keeps a confirm's).  Not the
 * reports' form (stats_cmp_json): that one is for people and leaves fields
 * out; this one is for the store and leaves nothing out.
 */
#include "core/stats.h"
#include "core/sb.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A field added to these structs must be packed and unpacked below: the
 * sizes hold them to the fields this file knows (LP64). */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct stats_noise) == 40, "pack every field of stats_noise");
_Static_assert(sizeof(struct stats_shape_cmp) == 120, "pack every field of stats_shape_cmp");
_Static_assert(sizeof(struct stats_cmp) == 176, "pack every field of stats_cmp");
#endif

/* JSON has no NaN or infinity: they are null, "inf" and "-inf". */
static json_t *num(double x)
{
	if (isnan(x))
		return json_null();
	if (isinf(x))
		return json_string(x > 0 ? "inf" : "-inf");
	return json_real(x);
}

static double unnum(const json_t *j, bool *ok)
{
	if (json_is_real(j) || json_is_integer(j))
		return json_number_value(j);
	if (json_is_null(j))
		return NAN;
	const char *s = json_string_value(j);
	if (s && !strcmp(s, "inf"))
		return INFINITY;
	if (s && !strcmp(s, "-inf"))
		return -INFINITY;
	*ok = false;
	return NAN;
}

static json_t *noise_pack(const struct stats_noise *n)
{
	return json_pack("[oooiibbbb]", num(n->sigma), num(n->raw), num(n->cv), n->dof, n->runs, n->assumed, n->crossed, n->unstable, n->pairs);
}

static bool flag_at(const json_t *j, size_t i, bool *ok)
{
	const json_t *v = json_array_get(j, i);
	*ok = *ok && json_is_boolean(v);
	return json_is_true(v);
}

static int int_at(const json_t *j, size_t i, bool *ok)
{
	const json_t *v = json_array_get(j, i);
	json_int_t x = json_integer_value(v);
	*ok = *ok && json_is_integer(v) && x >= INT_MIN && x <= INT_MAX;
	return (int)x;
}

static bool noise_unpack(const json_t *j, struct stats_noise *n)
{
	bool ok = json_array_size(j) == 9;
	n->sigma = unnum(json_array_get(j, 0), &ok);
	n->raw = unnum(json_array_get(j, 1), &ok);
	n->cv = unnum(json_array_get(j, 2), &ok);
	n->dof = int_at(j, 3, &ok);
	n->runs = int_at(j, 4, &ok);
	n->assumed = flag_at(j, 5, &ok);
	n->crossed = flag_at(j, 6, &ok);
	n->unstable = flag_at(j, 7, &ok);
	n->pairs = flag_at(j, 8, &ok);
	return ok;
}

static json_t *shape_pack(const struct stats_shape_cmp *s)
{
	return json_pack("{s:s, s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:b, s:b}", "key",
			 s->key, "best_ms", num(s->best_ms), "cand_ms", num(s->cand_ms), "n_best",
			 (json_int_t)s->n_best, "n_cand", (json_int_t)s->n_cand, "speedup",
			 num(s->speedup), "gain", num(s->gain), "lo", num(s->lo), "hi", num(s->hi),
			 "noise", noise_pack(&s->noise), "in_best", s->in_best, "in_cand", s->in_cand);
}

static bool shape_unpack(const json_t *j, struct stats_shape_cmp *s)
{
	const char *key;
	json_int_t nb, nc;
	int ib, ic;
	json_t *noise;
	bool ok = true;
	if (json_unpack((json_t *)j, "{s:s, s:I, s:I, s:o, s:b, s:b}", "key", &key, "n_best", &nb, "n_cand",
			&nc, "noise", &noise, "in_best", &ib, "in_cand", &ic) != 0 ||
	    nb < 0 || nc < 0)
		return false;
	s->key = xstrdup(key);
	s->n_best = (size_t)nb;
	s->n_cand = (size_t)nc;
	s->in_best = ib;
	s->in_cand = ic;
	s->best_ms = unnum(json_object_get(j, "best_ms"), &ok);
	s->cand_ms = unnum(json_object_get(j, "cand_ms"), &ok);
	s->speedup = unnum(json_object_get(j, "speedup"), &ok);
	s->gain = unnum(json_object_get(j, "gain"), &ok);
	s->lo = unnum(json_object_get(j, "lo"), &ok);
	s->hi = unnum(json_object_get(j, "hi"), &ok);
	return ok && noise_unpack(noise, &s->noise);
}

json_t *stats_cmp_pack(const struct stats_cmp *c)
{
	json_t *shapes = json_array();
	for (size_t i = 0; i < c->nshapes; i++)
		json_array_append_new(shapes, shape_pack(&c->shapes[i]));
	json_t *o = json_pack("{s:i, s:I, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:i,"
			      " s:b, s:o, s:b, s:b, s:b, s:o, s:o, s:o, s:i, s:I, s:o}",
			      "verdict", (int)c->verdict, "flags", (json_int_t)c->flags,
			      "threshold", num(c->threshold), "ncommon", (json_int_t)c->ncommon,
			      "speedup", num(c->speedup), "gain", num(c->gain), "lo", num(c->lo),
			      "hi", num(c->hi), "level", num(c->level), "spent",
			      (json_int_t)c->spent, "alpha", num(c->alpha), "band", num(c->band),
			      "dof", c->dof, "paired", c->paired, "llr", num(c->llr), "decided",
			      c->decided, "disagrees", c->disagrees, "lone_pair", c->lone_pair,
			      "screen_gap", num(c->screen_gap), "screen_tol", num(c->screen_tol),
			      "se", num(c->se), "noise_runs", c->noise_runs, "worst",
			      (json_int_t)c->worst, "shapes", shapes);
	if (c->why)
		json_object_set_new(o, "why", json_string(c->why));
	return o;
}

int stats_cmp_unpack(const json_t *j, struct stats_cmp *c)
{
	int verdict, dof, runs, paired, decided, dis, lone;
	json_int_t flags, ncommon, spent, worst;
	json_t *shapes;
	bool ok = true;
	memset(c, 0, sizeof(*c));
	c->worst = -1;
	if (json_unpack((json_t *)j, "{s:i, s:I, s:I, s:I, s:i, s:b, s:b, s:b, s:b, s:i, s:I, s:o}",
			"verdict", &verdict, "flags", &flags, "ncommon", &ncommon, "spent", &spent,
			"dof", &dof, "paired", &paired, "decided", &decided, "disagrees", &dis,
			"lone_pair", &lone, "noise_runs", &runs, "worst", &worst, "shapes",
			&shapes) != 0 ||
	    !json_is_array(shapes) || flags < 0 || flags > UINT_MAX || ncommon < 0 || spent < 0 ||
	    spent > UINT_MAX || worst < -1 || worst >= (json_int_t)json_array_size(shapes))
		return -1;
	c->verdict = (enum stats_verdict)verdict;
	c->flags = (unsigned)flags;
	c->ncommon = (size_t)ncommon;
	c->spent = (unsigned)spent;
	c->dof = dof;
	c->paired = paired;
	c->decided = decided;
	c->disagrees = dis;
	c->lone_pair = lone;
	c->noise_runs = runs;
	c->worst = (long)worst;
	static const struct {
		const char *name;
		size_t at;
	} reals[] = {
		{"threshold", offsetof(struct stats_cmp, threshold)},
		{"speedup", offsetof(struct stats_cmp, speedup)},
		{"gain", offsetof(struct stats_cmp, gain)},
		{"lo", offsetof(struct stats_cmp, lo)},
		{"hi", offsetof(struct stats_cmp, hi)},
		{"level", offsetof(struct stats_cmp, level)},
		{"alpha", offsetof(struct stats_cmp, alpha)},
		{"band", offsetof(struct stats_cmp, band)},
		{"llr", offsetof(struct stats_cmp, llr)},
		{"screen_gap", offsetof(struct stats_cmp, screen_gap)},
		{"screen_tol", offsetof(struct stats_cmp, screen_tol)},
		{"se", offsetof(struct stats_cmp, se)},
	};
	for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
		double x = unnum(json_object_get(j, reals[i].name), &ok);
		memcpy((char *)c + reals[i].at, &x, sizeof(x));
	}
	const char *why = json_string_value(json_object_get(j, "why"));
	c->why = why ? xstrdup(why) : NULL;
	c->nshapes = json_array_size(shapes);
	c->shapes = c->nshapes ? xcalloc(c->nshapes, sizeof(*c->shapes)) : NULL;
	for (size_t i = 0; ok && i < c->nshapes; i++)
		ok = shape_unpack(json_array_get(shapes, i), &c->shapes[i]);
	if (!ok) {
		stats_cmp_release(c);
		c->worst = -1;
		return -1;
	}
	return 0;
}
