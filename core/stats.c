/*
 * stats — estimators, pooled noise, the verdict and the implausible flags.
 * See stats.h for the rules; this file keeps them in one place so the loop,
 * the reports, the TUI and the decision-quality simulator agree.
 */
#include "core/stats.h"
#include "core/rules.h"
#include "core/sb.h"

#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorted copy of the first n values (caller frees). */
static double *sorted_copy(const double *x, size_t n)
{
	double *v = xmalloc(n * sizeof(*v));
	memcpy(v, x, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	return v;
}

static double quantile_sorted(const double *v, size_t n, double p)
{
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	return v[lo] + (h - (double)lo) * (v[hi] - v[lo]);
}

/* v[k] becomes the value a sort would put there, every value before it no
 * larger and every one after it no smaller: the k-th order statistic in
 * expected linear time (a median of session centres was a sort of all of
 * them, for one value).  No NaN in v. */
static void select_kth(double *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	while (hi > lo) {
		double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
		double pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		ptrdiff_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		/* v[lo..j] <= pivot, v[i..hi] >= pivot, equal to it between */
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			return;
	}
}

/* quantile_sorted's figure, to the last bit, without sorting: the two
 * order statistics it reads, selected (v is scratch, n values). */
static double quantile_select(double *v, size_t n, double p)
{
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < n ? lo + 1 : lo;
	for (size_t i = 0; i < n; i++)
		if (isnan(v[i])) { /* no order to select in: sort as before */
			qsort(v, n, sizeof(*v), cmp_double);
			return quantile_sorted(v, n, p);
		}
	select_kth(v, n, lo);
	double vlo = v[lo], vhi = vlo;
	if (hi != lo) { /* the smallest of those after lo */
		vhi = v[hi];
		for (size_t i = hi + 1; i < n; i++)
			vhi = v[i] < vhi ? v[i] : vhi;
	}
	return vlo + (h - (double)lo) * (vhi - vlo);
}

double stats_quantile(const double *x, size_t n, double p)
{
	if (n == 0 || !(p >= 0 && p <= 1))
		return NAN;
	double *v = xmalloc(n * sizeof(*v));
	memcpy(v, x, n * sizeof(*v));
	double q = quantile_select(v, n, p);
	free(v);
	return q;
}

double stats_median(const double *x, size_t n)
{
	return stats_quantile(x, n, 0.5);
}

double stats_mean(const double *x, size_t n)
{
	double s = 0;
	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

double stats_std(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	double m = stats_mean(x, n), ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - m) * (x[i] - m);
	return sqrt(ss / (double)(n - 1));
}

double stats_d2(size_t n)
{
	/* Expected range of n standard normal samples. */
	switch (n) {
	case 2: return 1.128;
	case 3: return 1.693;
	case 4: return 2.059;
	default: return NAN;
	}
}

double stats_spread(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	double *v = n <= 4 ? sorted_copy(x, n) : xmalloc(n * sizeof(*v)), s;
	if (n <= 4) {
		s = (v[n - 1] - v[0]) / stats_d2(n);
	} else {
		memcpy(v, x, n * sizeof(*v));
		double med = quantile_select(v, n, 0.5);
		for (size_t i = 0; i < n; i++)
			v[i] = fabs(x[i] - med);
		s = 1.4826 * quantile_select(v, n, 0.5);
	}
	free(v);
	return s;
}

double stats_t975(int dof)
{
	static const double t[] = {
		0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201,  2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080,  2.074,  2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};
	const double z = 1.959964;
	if (dof <= 0)
		return z;
	if (dof <= 30)
		return t[dof];
	/* Cornish-Fisher expansion: within 0.0005 of the exact value beyond 30. */
	double z3 = z * z * z, z5 = z3 * z * z, v = dof;
	return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v);
}

/* Standard normal quantile (Acklam's rational approximation, relative
 * error under 1.2e-9). */
static double normal_quantile(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
				   -2.759285104469687e+02, 1.383577518672690e+02,
				   -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
				   -1.556989798598866e+02, 6.680131188771972e+01,
				   -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
				   -2.400758277161838e+00, -2.549732539343734e+00,
				   4.374664141464968e+00,  2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
				   2.445134137142996e+00, 3.754408661907416e+00};
	if (p <= 0 || p >= 1)
		return p <= 0 ? -INFINITY : INFINITY;
	if (p < 0.02425 || p > 1 - 0.02425) {
		double q = sqrt(-2 * log(p < 0.5 ? p : 1 - p));
		double x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
			   ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
		return p < 0.5 ? x : -x;
	}
	double q = p - 0.5, r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double stats_t_quantile(double p, int dof)
{
	double z = normal_quantile(p);
	if (dof <= 0)
		return z;
	if (dof == 1)
		return tan(M_PI * (p - 0.5));
	if (dof == 2)
		return (2 * p - 1) / sqrt(2 * p * (1 - p));
	/* Cornish-Fisher to the fourth term (errs on the wide side for few
	 * degrees of freedom and extreme p, which only makes it stricter) */
	double v = dof, z2 = z * z, z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2;
	return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
	       (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

bool stats_time_ok(double ms)
{
	return isfinite(ms) && ms > 0;
}

void stats_summarize(const double *x, size_t n, struct stats_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (n == 0) {
		out->median = out->mean = out->std = out->min = out->max = NAN;
		out->p10 = out->p90 = NAN;
		return;
	}
	double *v = sorted_copy(x, n);
	out->median = quantile_sorted(v, n, 0.5);
	out->p10 = quantile_sorted(v, n, 0.1);
	out->p90 = quantile_sorted(v, n, 0.9);
	out->min = v[0];
	out->max = v[n - 1];
	out->mean = stats_mean(v, n);
	out->std = stats_std(v, n);
	free(v);
}

/* ---- sets ---- */

void stats_set_add_run(struct stats_set *s, const char *key, double ms, int session)
{
	struct stats_shape *sh = (struct stats_shape *)stats_set_find(s, key);
	if (!sh) {
		if (s->nshapes == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 4;
			s->shapes = xrealloc(s->shapes, s->cap * sizeof(*s->shapes));
		}
		sh = &s->shapes[s->nshapes++];
		memset(sh, 0, sizeof(*sh));
		sh->key = xstrdup(key);
	}
	if (sh->n == sh->cap) {
		sh->cap = sh->cap ? 2 * sh->cap : 4;
		sh->ms = xrealloc(sh->ms, sh->cap * sizeof(*sh->ms));
		sh->session = xrealloc(sh->session, sh->cap * sizeof(*sh->session));
	}
	sh->ms[sh->n] = ms;
	sh->session[sh->n] = session;
	sh->n++;
}

void stats_set_add(struct stats_set *s, const char *key, double ms)
{
	stats_set_add_run(s, key, ms, 0);
}

void stats_set_env(struct stats_set *s, const char *env)
{
	free(s->env);
	s->env = xstrdup(env);
}

const struct stats_shape *stats_set_find(const struct stats_set *s, const char *key)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->nshapes; i++)
		if (strcmp(s->shapes[i].key, key) == 0)
			return &s->shapes[i];
	return NULL;
}

void stats_set_release(struct stats_set *s)
{
	for (size_t i = 0; i < s->nshapes; i++) {
		free(s->shapes[i].key);
		free(s->shapes[i].ms);
		free(s->shapes[i].session);
	}
	free(s->shapes);
	free(s->env);
	memset(s, 0, sizeof(*s));
}

/* Values grouped by their session, in one sort rather than a scan of the
 * rest for each group (a tree measured in 800 sessions took 320,000
 * comparisons a shape): *order holds the indices 0..n-1 group after group,
 * each group's in their own order and the groups in the order of their
 * first value, so that sums over them add in the order they always did;
 * group g is order[start[g]] .. order[start[g + 1] - 1].  A value of no
 * session (0) is a group of its own when zero_alone, else in no group. */
struct sess_key {
	long long k; /* the session, or a key of its own */
	size_t i;
};

static int cmp_sess_key(const void *x, const void *y)
{
	const struct sess_key *a = x, *b = y;
	return a->k != b->k ? (a->k < b->k ? -1 : 1) : (a->i > b->i) - (a->i < b->i);
}

static int cmp_group_first(const void *x, const void *y)
{
	const size_t *a = x, *b = y; /* {first index, start in keys, length} */
	return (a[0] > b[0]) - (a[0] < b[0]);
}

static size_t sess_groups(const int *sess, size_t n, bool zero_alone, size_t **order,
			  size_t **start)
{
	struct sess_key *keys = xmalloc((n ? n : 1) * sizeof(*keys));
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (sess[i] == 0 && !zero_alone)
			continue;
		keys[m].k = sess[i] == 0 ? LLONG_MIN + (long long)i : sess[i];
		keys[m++].i = i;
	}
	qsort(keys, m, sizeof(*keys), cmp_sess_key);
	size_t (*g)[3] = xmalloc((m ? m : 1) * sizeof(*g)), ng = 0;
	for (size_t a = 0, b; a < m; a = b) {
		for (b = a + 1; b < m && keys[b].k == keys[a].k; b++)
			;
		g[ng][0] = keys[a].i;
		g[ng][1] = a;
		g[ng++][2] = b - a;
	}
	qsort(g, ng, sizeof(*g), cmp_group_first);
	*order = xmalloc((m ? m : 1) * sizeof(**order));
	*start = xmalloc((ng + 1) * sizeof(**start));
	size_t o = 0;
	for (size_t k = 0; k < ng; k++) {
		(*start)[k] = o;
		for (size_t j = 0; j < g[k][2]; j++)
			(*order)[o++] = keys[g[k][1] + j].i;
	}
	(*start)[ng] = o;
	free(g);
	free(keys);
	return ng;
}

/* The usable runs of a shape as log times, in a new array; *bad set when
 * a time was unusable.  With by_session, runs of one session (id ≠ 0)
 * collapse into their median: a cross-session comparison has one value per
 * session.  sess, when not NULL, receives the session of each value. */
static double *log_values(const struct stats_shape *sh, bool by_session, size_t *n, bool *bad,
			  int **sess)
{
	*n = 0;
	if (sess)
		*sess = NULL;
	if (!sh)
		return NULL;
	double *v = xmalloc((sh->n ? sh->n : 1) * sizeof(*v));
	int *sv = xmalloc((sh->n ? sh->n : 1) * sizeof(*sv));
	for (size_t i = 0; i < sh->n; i++) {
		if (!stats_time_ok(sh->ms[i])) {
			if (bad)
				*bad = true;
			continue;
		}
		sv[*n] = sh->session[i];
		v[(*n)++] = log(sh->ms[i]);
	}
	if (by_session) {
		double *tmp = xmalloc((*n ? *n : 1) * sizeof(*tmp));
		size_t *order, *start, ng = sess_groups(sv, *n, true, &order, &start);
		double *c = xmalloc((ng ? ng : 1) * sizeof(*c));
		int *cs = xmalloc((ng ? ng : 1) * sizeof(*cs));
		for (size_t k = 0; k < ng; k++) {
			size_t m = 0;
			for (size_t j = start[k]; j < start[k + 1]; j++)
				tmp[m++] = v[order[j]];
			c[k] = stats_median(tmp, m);
			cs[k] = sv[order[start[k]]];
		}
		memcpy(v, c, ng * sizeof(*v));
		memcpy(sv, cs, ng * sizeof(*sv));
		*n = ng;
		free(c);
		free(cs);
		free(order);
		free(start);
		free(tmp);
	}
	if (sess)
		*sess = sv;
	else
		free(sv);
	return v;
}

static bool env_differs(const char *a, const char *b)
{
	return a && b && strcmp(a, b) != 0;
}

static void noise_finish(double ss, int dof, int runs, struct stats_noise *out)
{
	memset(out, 0, sizeof(*out));
	if (dof <= 0) {
		out->assumed = true;
		out->raw = NAN;
		out->sigma = STATS_NOISE_DEFAULT;
	} else {
		out->raw = sqrt(ss / dof);
		out->sigma = out->raw > STATS_NOISE_FLOOR ? out->raw : STATS_NOISE_FLOOR;
		out->dof = dof;
		out->runs = runs;
	}
	/* A log-normal with this sigma has this coefficient of variation. */
	out->cv = sqrt(expm1(out->sigma * out->sigma));
	out->unstable = out->cv >= STATS_UNSTABLE_CV;
}

static void add_spread(const double *v, size_t n, double *ss, int *dof, int *runs)
{
	if (n >= 2) {
		double s = stats_spread(v, n);
		*ss += (double)(n - 1) * s * s;
		*dof += (int)(n - 1);
		*runs += (int)n;
	}
}

/* One session's spread of one kernel's runs, as pooled. */
struct spread_part {
	int session;
	double ss; /* (n − 1)·s² */
	int dof, runs;
};

static int part_newest_first(const void *a, const void *b)
{
	int x = ((const struct spread_part *)a)->session, y = ((const struct spread_part *)b)->session;
	return (x < y) - (x > y);
}

/* One group's contribution.  Across sessions: the spread of its session
 * centres, added to the sums at once.  Within sessions: the spread of the
 * runs of each session, appended to parts for noise_pool_x to choose. */
static void pool_add(const struct stats_set *g, const char *env, const char *shape, bool within,
		     double *ss, int *dof, int *runs, struct spread_part **parts, size_t *nparts)
{
	size_t n;
	int *sess;
	if (!g || env_differs(g->env, env))
		return;
	double *v = log_values(stats_set_find(g, shape), !within, &n, NULL, &sess);
	if (!within) {
		add_spread(v, n, ss, dof, runs);
	} else {
		double *tmp = xmalloc((n ? n : 1) * sizeof(*tmp));
		size_t *order, *start, ng = sess_groups(sess, n, false, &order, &start);
		for (size_t k = 0; k < ng; k++) {
			size_t m = 0;
			for (size_t j = start[k]; j < start[k + 1]; j++)
				tmp[m++] = v[order[j]];
			struct spread_part p = {.session = sess[order[start[k]]]};
			add_spread(tmp, m, &p.ss, &p.dof, &p.runs);
			if (p.dof) {
				*parts = xrealloc(*parts, (*nparts + 1) * sizeof(**parts));
				(*parts)[(*nparts)++] = p;
			}
		}
		free(order);
		free(start);
		free(tmp);
	}
	free(sess);
	free(v);
}

/* across (may be NULL: groups) holds the groups whose spread between
 * sessions stands in for the spread within one.
 *
 * Within sessions the newest sessions speak for the noise: sessions are
 * taken newest first, whole, until they hold STATS_NOISE_RECENT_DOF degrees
 * of freedom; older ones are left out.  A loaded period measured earlier
 * must not outvote quiet measurements made since (the machine's state is
 * what a new run meets), and the t quantile of the interval accounts for
 * the fewer degrees of freedom. */
static void noise_pool_x(const struct stats_set *const *groups, size_t ngroups,
			 const struct stats_set *const *across, size_t nacross, const char *env,
			 const char *shape, bool within, struct stats_noise *out)
{
	double ss = 0;
	int dof = 0, runs = 0;
	struct spread_part *parts = NULL;
	size_t nparts = 0;
	for (size_t i = 0; i < ngroups; i++)
		pool_add(groups[i], env, shape, within, &ss, &dof, &runs, &parts, &nparts);
	if (nparts > 1)
		qsort(parts, nparts, sizeof(*parts), part_newest_first);
	for (size_t i = 0; i < nparts; i++) {
		if (dof >= STATS_NOISE_RECENT_DOF && parts[i].session != parts[i - 1].session)
			break;
		ss += parts[i].ss;
		dof += parts[i].dof;
		runs += parts[i].runs;
	}
	free(parts);
	noise_finish(ss, dof, runs, out);
	/* No session has repeated a kernel yet: the spread between sessions
	 * holds the spread within one (shared GPU state only removes noise),
	 * so it stands in until the first repeat inside a session. */
	if (within && out->assumed) {
		struct stats_noise x;
		if (across)
			noise_pool_x(across, nacross, NULL, 0, env, shape, false, &x);
		else
			noise_pool_x(groups, ngroups, NULL, 0, env, shape, false, &x);
		if (!x.assumed) {
			*out = x;
			out->crossed = true;
		}
	}
}

static void noise_pool(const struct stats_set *const *groups, size_t ngroups, const char *env,
		       const char *shape, bool within, struct stats_noise *out)
{
	noise_pool_x(groups, ngroups, NULL, 0, env, shape, within, out);
}

void stats_noise_pool(const struct stats_set *const *groups, size_t ngroups, const char *env,
		      const char *shape, struct stats_noise *out)
{
	noise_pool(groups, ngroups, env, shape, false, out);
}

void stats_noise_term(const struct stats_set *g, const char *env, const char *shape,
		      struct stats_noise_term *out)
{
	memset(out, 0, sizeof(*out));
	/* pool_add between sessions, into sums of its own */
	pool_add(g, env, shape, false, &out->ss, &out->dof, &out->runs, NULL, NULL);
}

void stats_noise_pool_terms(const struct stats_noise_term *t, size_t n, struct stats_noise *out)
{
	double ss = 0;
	int dof = 0, runs = 0;
	/* add_spread's additions, in the same order (a group that adds
	 * nothing has no term to add) */
	for (size_t i = 0; i < n; i++) {
		if (!t[i].dof)
			continue;
		ss += t[i].ss;
		dof += t[i].dof;
		runs += t[i].runs;
	}
	noise_finish(ss, dof, runs, out);
}

/* Do the two sets share a measuring session (a confirm run)? */
static bool share_session(const struct stats_set *a, const struct stats_set *b)
{
	for (size_t i = 0; a && b && i < a->nshapes; i++) {
		const struct stats_shape *x = &a->shapes[i];
		const struct stats_shape *y = stats_set_find(b, x->key);
		for (size_t k = 0; y && k < x->n; k++)
			for (size_t j = 0; x->session[k] && j < y->n; j++)
				if (y->session[j] == x->session[k])
					return true;
	}
	return false;
}

/* ---- comparison ---- */

static double gain_of(double d)
{
	return -expm1(-d); /* 1 − candidate/best */
}

/* An interval's bound as a "vs best" percentage.  A gain's interval is
 * bounded above by +100 % but not below: with one pair and a wide look its
 * lower end can read -1e37 %, which says no more than "below -1000 %". */
static void add_gain_bound(struct sb *s, double g)
{
	if (isfinite(g) && g < -10)
		sb_adds(s, "below -1000%");
	else
		sb_addf(s, "%+.1f%%", 100 * g);
}

/* Standard error of a median of n runs, in units of the per-run sigma: a
 * median is less efficient than a mean (√(π/2) ≈ 1.25 times the error for
 * many runs; exact-ish small-n values from the normal order statistics). */
static double median_se(size_t n)
{
	static const double f[] = {1, 1, 1, 1.160, 1.092, 1.198};
	double k = n < sizeof(f) / sizeof(f[0]) ? f[n] : 1.2533;
	return k / sqrt((double)n);
}

/* Median of the Walsh averages (dᵢ + dⱼ)/2, i ≤ j, of the pair
 * differences dᵢ = b[i] − c[i]. */
static double hodges_lehmann(const double *b, const double *c, size_t n)
{
	size_t m = n * (n + 1) / 2, k = 0;
	double *w = xmalloc(m * sizeof(*w));
	for (size_t i = 0; i < n; i++)
		for (size_t j = i; j < n; j++)
			w[k++] = 0.5 * ((b[i] - c[i]) + (b[j] - c[j]));
	double h = stats_median(w, m);
	free(w);
	return h;
}

static void add_shape_key(struct stats_cmp *c, size_t *cap, const char *key)
{
	for (size_t i = 0; i < c->nshapes; i++)
		if (strcmp(c->shapes[i].key, key) == 0)
			return;
	if (c->nshapes == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		c->shapes = xrealloc(c->shapes, *cap * sizeof(*c->shapes));
	}
	struct stats_shape_cmp *s = &c->shapes[c->nshapes++];
	memset(s, 0, sizeof(*s));
	s->key = xstrdup(key);
	s->best_ms = s->cand_ms = s->speedup = s->gain = s->lo = s->hi = NAN;
}

/* A sequential win accepted by the ratio test while the bound under every
 * look still reaches below the threshold (noise measured by few runs). */
static bool by_ratio_test(const struct stats_cmp *c)
{
	return isfinite(c->llr) && c->verdict == SV_FAST &&
	       log(c->speedup) - c->band < -log1p(-c->threshold);
}

/* The comparison's 95 % interval of gain at this look. */
static void interval95(const struct stats_cmp *c, double *lo, double *hi)
{
	double d = log(c->speedup), t95 = stats_t975(c->dof);
	*lo = gain_of(d - t95 * c->se);
	*hi = gain_of(d + t95 * c->se);
}

/* What stats_compare's pass over the shapes gathers for the aggregate and
 * its words. */
struct cmp_acc {
	double thr, thr_win, thr_loss; /* the threshold, and as log gain and loss */
	double q;                      /* the quantile of the reported interval */
	bool looks;                    /* sequential: looked at after every pair */
	double sum_d, sum_se;          /* over the common shapes */
	int min_dof;
	bool any_assumed;
	size_t nwin, nmissing, nextra, npairs_noise;
};

/* The aggregate over the common shapes: the geomean speedup, its band, the
 * verdict, the sequential test and the guards of a fresh-process session. */
static void cmp_aggregate(struct stats_cmp *out, const struct stats_opts *o,
			  const struct cmp_acc *a)
{
	double S = (double)out->ncommon;
	double d = a->sum_d / S;
	/* With any shape's noise assumed, use the normal quantile. */
	out->dof = a->any_assumed || a->min_dof < 0 ? 0 : a->min_dof;
	/* Shapes of one run share its GPU state, so their errors move
	 * together: add the standard errors instead of root-summing. */
	double t95 = stats_t975(out->dof);
	out->band = (a->looks ? stats_t_quantile(a->q, out->dof) : t95) * a->sum_se / S;
	out->speedup = exp(d);
	out->gain = gain_of(d);
	out->lo = gain_of(d - out->band);
	out->hi = gain_of(d + out->band);
	if (out->speedup > STATS_IMPLAUSIBLE_AGG)
		out->flags |= SF_IMPLAUSIBLE_AGG;
	if (out->ncommon >= 2 && d >= a->thr_win && a->nwin == 1)
		out->flags |= SF_CONFINED;
	double se = a->sum_se / S;
	out->se = se;
	if (o && o->sequential && se > 0) {
		/* Wald's SPRT on D ~ N(δ, se²): H1 δ = 2·thr_win against
		 * H0 δ = thr_win. */
		double d0 = a->thr_win, d1 = 2 * a->thr_win;
		out->llr = (d1 - d0) * (d - 0.5 * (d0 + d1)) / (se * se);
	}
	bool seq = o && o->sequential && isfinite(out->llr);
	/* A win is accepted by its interval (the bound under every look
	 * when the comparison is sequential), or by the ratio test once
	 * the 95 % interval clears the threshold: the ratio test is quick
	 * near its two hypotheses, the bound when the change is far past
	 * them. */
	bool sprt_win = seq && out->llr >= log((1 - STATS_SEQ_BETA) / out->alpha) &&
			d - t95 * se >= a->thr_win;
	if (d - out->band >= a->thr_win || sprt_win)
		out->verdict = SV_FAST;
	else if (d + t95 * se <= -a->thr_loss)
		out->verdict = SV_SLOW;
	else if (d > -a->thr_loss && d < a->thr_win)
		out->verdict = SV_SAME;
	else
		out->verdict = SV_AMBIGUOUS;
	if (seq)
		out->decided = out->verdict == SV_FAST || out->verdict == SV_SLOW ||
			       out->llr <= log(STATS_SEQ_BETA / (1 - out->alpha));
	/* Too few runs for medians to outvote one disturbed run: decide
	 * only when the other sessions tell the same story. */
	size_t fewest = SIZE_MAX;
	for (size_t i = 0; i < out->nshapes; i++) {
		const struct stats_shape_cmp *sc = &out->shapes[i];
		if (sc->in_best && sc->in_cand) {
			size_t m = sc->n_best < sc->n_cand ? sc->n_best : sc->n_cand;
			fewest = m < fewest ? m : fewest;
		}
	}
	const struct stats_cmp *sc = o ? o->screen : NULL;
	if (seq && sc && sc->ncommon && isfinite(sc->speedup) && isfinite(sc->se)) {
		out->screen_gap = fabs(d - log(sc->speedup));
		out->screen_tol = STATS_AGREE_Z * sqrt(se * se + sc->se * sc->se);
	}
	/* In-process pairs (every shape's noise their own spread): a
	 * disturbance of the process moves both sides alike, in blocks
	 * of 25 ms taken in turn, so one pair is not one fresh process
	 * that may have met interference; the A/A runs measured what
	 * remains.  The two guards below are for fresh processes. */
	bool inproc = a->npairs_noise && a->npairs_noise == out->ncommon;
	if (seq && !inproc && out->decided && fewest < STATS_ROBUST_RUNS &&
	    out->screen_gap > out->screen_tol) {
		out->disagrees = true;
		out->decided = false;
		if (out->verdict == SV_FAST)
			out->verdict = SV_AMBIGUOUS;
	}
	/* One pair decides a win only when the candidate's other runs
	 * can vouch for it: their agreement band is narrower than the
	 * threshold, so a disturbed run in the pair would have shown. */
	if (seq && !inproc && out->verdict == SV_FAST && fewest < 2 &&
	    !(isfinite(out->screen_tol) && out->screen_tol < a->thr_win)) {
		out->lone_pair = true;
		out->verdict = SV_AMBIGUOUS;
		out->decided = false;
	}
}

/* Verdicts no comparison can give (no best, another environment, other
 * shapes, shapes missing), and out->why in words. */
static void cmp_word(struct stats_cmp *out, const struct stats_set *best,
		     const struct stats_set *cand, const struct stats_opts *o,
		     const struct cmp_acc *a)
{
	struct sb why = SB_INIT;
	bool no_best = !best || best->nshapes == 0;
	/* "vs best" is the log's word; any other side is named in full */
	const char *vs = o && o->against ? o->against : "best";
	const char *the = o && o->against ? o->against : "the best";
	if (no_best) {
		out->verdict = SV_NONE;
		sb_addf(&why, "no %s to compare with yet", vs);
	} else if (env_differs(best->env, cand ? cand->env : NULL)) {
		out->verdict = SV_NOT_COMPARABLE;
		out->flags |= SF_ENV_CHANGED;
		sb_addf(&why, "environment changed (%s: %s; now: %s): re-measure %s first", vs,
			best->env, cand->env, the);
	} else if (a->nextra) {
		out->verdict = SV_NOT_COMPARABLE;
		out->flags |= SF_SHAPES_CHANGED;
		sb_addf(&why, "shape set changed (%zu shape(s) %s never measured): re-measure "
			      "%s on the new shapes first", a->nextra, the, the);
	} else if (a->nmissing || out->ncommon == 0) {
		out->verdict = SV_MISSING;
		sb_addf(&why, "%zu shape(s) of %s were not measured (or had no usable time)",
			a->nmissing ? a->nmissing : out->nshapes, the);
	} else {
		sb_addf(&why, "%+.1f%% vs %s over %zu shape(s), ", 100 * out->gain, vs, out->ncommon);
		stats_level_text(out, &why);
		sb_adds(&why, " interval ");
		add_gain_bound(&why, out->lo);
		sb_adds(&why, " .. ");
		add_gain_bound(&why, out->hi);
		sb_addf(&why, ", threshold %.1f%%", 100 * a->thr);
		if (a->any_assumed)
			sb_addf(&why, "; noise assumed %.0f%% (no kernel measured twice yet: the first "
				      "repeat, a confirm or optloop noise, measures it)",
				100 * STATS_NOISE_DEFAULT);
		else
			sb_addf(&why, "; noise from %d %s%s", out->noise_runs,
				a->npairs_noise ? "in-process pair" : "run", out->noise_runs == 1 ? "" : "s");
		if (out->verdict == SV_SAME)
			sb_adds(&why, "; the change is below the threshold: too small to matter, "
				      "nothing to confirm");
		if (out->lone_pair)
			sb_addf(&why, "; one pair cannot decide a win here: the candidate's other runs "
				      "vary too much to vouch for it, another pair decides");
		else if (out->disagrees)
			sb_addf(&why, "; this session disagrees with the candidate's other runs "
				      "(%+.1f%% there): one run may have met interference, another "
				      "pair decides",
				100 * o->screen->gain);
		else if (by_ratio_test(out)) {
			/* Say which interval cleared the threshold, so a decided
			 * win never reads as one whose only interval spans zero. */
			double lo, hi;
			interval95(out, &lo, &hi);
			sb_adds(&why, "; sequential test accepts the win (its ratio test, with the 95% "
				      "interval at this look ");
			add_gain_bound(&why, lo);
			sb_adds(&why, " .. ");
			add_gain_bound(&why, hi);
			sb_adds(&why, " past the threshold; the bound under every look narrows as "
				      "more runs measure the noise)");
		} else if (isfinite(out->llr))
			sb_addf(&why, "; sequential test %s",
				out->verdict == SV_FAST ? "accepts the win"
				: out->decided		? "rules out a win of the threshold"
							: "undecided: another pair is needed");
	}
	out->why = sb_detach(&why);
}

/* One shape both sides measured: the log speedup d (best over candidate)
 * and its standard error, with the shape's noise into s->noise.  Counts in
 * *npairs_noise a shape whose noise is its session's own pair spread. */
static double shape_estimate(struct stats_shape_cmp *s, const double *lb, size_t nb,
			     const double *lc, size_t nc, const struct stats_set **groups,
			     size_t ng, const struct stats_opts *o, const char *env, bool paired,
			     size_t *npairs_noise, double *se)
{
	double d = stats_median(lb, nb) - stats_median(lc, nc);
	noise_pool_x(groups, ng, o ? o->across : NULL, o ? o->nacross : 0, env, s->key, paired,
		     &s->noise);
	double eb = median_se(nb), ec = median_se(nc);
	*se = s->noise.sigma * sqrt(eb * eb + ec * ec);
	/* One session, whole pairs (B C B C ..., or the harness's own pairs):
	 * the Hodges-Lehmann estimate of the pair differences, as robust as a
	 * median and nearly as exact as a mean, and any drift across the
	 * session cancels. */
	if (paired && nb == nc && nb >= 2) {
		d = hodges_lehmann(lb, lc, nb);
		*se = s->noise.sigma * sqrt(2.0 / (double)nb) * (nb <= 2 ? 1.0 : 1.05);
	}
	/* In-process pairs: the spread of their own log ratios (A/A runs, other
	 * pairs of a session) is the noise of one pair, once some session has
	 * two of them. */
	struct stats_noise pn;
	if (paired && nb == nc && o && o->pairs) {
		noise_pool_x(&o->pairs, 1, NULL, 0, env, s->key, true, &pn);
		if (!pn.assumed && !pn.crossed) {
			pn.pairs = true;
			s->noise = pn;
			(*npairs_noise)++;
			*se = pn.sigma / sqrt((double)nb) * (nb <= 2 ? 1.0 : 1.05);
		}
	}
	return d;
}

void stats_compare(const struct stats_set *best, const struct stats_set *cand,
		   const struct stats_opts *o, struct stats_cmp *out)
{
	size_t cap = 0, nmissing = 0, nextra = 0;
	double thr = o && o->threshold > 0 ? o->threshold : RULES_THRESHOLD;
	double thr_win = -log1p(-thr), thr_loss = log1p(thr);
	double sum_d = 0, sum_se = 0;
	int min_dof = -1;
	bool any_assumed = false;

	memset(out, 0, sizeof(*out));
	out->threshold = thr;
	out->worst = -1;
	out->speedup = out->gain = out->lo = out->hi = out->band = out->llr = out->se = NAN;
	out->screen_gap = out->screen_tol = NAN;
	out->noise_runs = -1;

	for (size_t i = 0; best && i < best->nshapes; i++)
		add_shape_key(out, &cap, best->shapes[i].key);
	for (size_t i = 0; cand && i < cand->nshapes; i++)
		add_shape_key(out, &cap, cand->shapes[i].key);

	const char *env = cand && cand->env ? cand->env : best ? best->env : NULL;
	size_t ng = (o ? o->nhistory : 0) + 2;
	const struct stats_set **groups = xcalloc(ng, sizeof(*groups));
	const struct stats_set **refs = xcalloc(ng, sizeof(*refs));
	for (size_t i = 0; o && i < o->nhistory; i++)
		groups[i] = refs[i] = o->history[i];
	groups[ng - 2] = refs[ng - 2] = best;
	groups[ng - 1] = cand;

	size_t ncollapse_checked = 0, ncollapsed = 0;
	size_t npairs_noise = 0; /* common shapes whose noise is the pairs' own spread */

	bool paired = share_session(best, cand);
	out->paired = paired;
	/* The interval a comparison reports is the one its decision uses: 95 %
	 * for a single look; for a confirm looked at after every pair, the
	 * bound that holds under every look to the cap (Bonferroni over the
	 * looks), so an interval shown wholly past the threshold has decided. */
	bool looks = o && o->sequential;
	out->spent = looks ? o->spent : 0;
	out->alpha = looks ? stats_alpha(o->spent) : NAN;
	double q = looks ? 1 - out->alpha / STATS_SEQ_LOOKS : 0.975;
	out->level = 2 * q - 1;
	double worst_d = INFINITY;
	size_t nwin = 0;
	for (size_t i = 0; i < out->nshapes; i++) {
		struct stats_shape_cmp *s = &out->shapes[i];
		bool bad = false;
		size_t nb, nc;
		double *lb = log_values(stats_set_find(best, s->key), !paired, &nb, &bad, NULL);
		double *lc = log_values(stats_set_find(cand, s->key), !paired, &nc, &bad, NULL);
		if (bad)
			out->flags |= SF_BAD_TIME;
		s->n_best = nb;
		s->n_cand = nc;
		s->in_best = nb > 0;
		s->in_cand = nc > 0;
		if (nb)
			s->best_ms = exp(stats_median(lb, nb));
		if (nc)
			s->cand_ms = exp(stats_median(lc, nc));
		if (s->in_best && !s->in_cand)
			nmissing++;
		if (s->in_cand && !s->in_best)
			nextra++;
		if (s->in_best && s->in_cand) {
			double se, d = shape_estimate(s, lb, nb, lc, nc, groups, ng, o, env, paired,
						      &npairs_noise, &se);
			double t = looks ? stats_t_quantile(q, s->noise.dof) : stats_t975(s->noise.dof);
			s->speedup = exp(d);
			s->gain = gain_of(d);
			s->lo = gain_of(d - t * se);
			s->hi = gain_of(d + t * se);
			sum_d += d;
			sum_se += se;
			if (out->noise_runs < 0 || s->noise.runs < out->noise_runs)
				out->noise_runs = s->noise.runs;
			if (s->noise.assumed)
				any_assumed = true;
			else if (min_dof < 0 || s->noise.dof < min_dof)
				min_dof = s->noise.dof;
			if (s->noise.unstable)
				out->flags |= SF_UNSTABLE;
			if (s->speedup > STATS_IMPLAUSIBLE_SHAPE)
				out->flags |= SF_IMPLAUSIBLE_SHAPE;
			if (d >= thr_win)
				nwin++;
			if (d < worst_d) {
				worst_d = d;
				out->worst = (long)i;
			}
			/* Collapse: the candidate's own runs agree far better than
			 * this shape has ever been measured to (a cached or skipped
			 * computation).  Judged over all shapes below. */
			if (nc >= 3) {
				struct stats_noise ref;
				noise_pool(refs, ng - 1, env, s->key, paired, &ref);
				double sc = stats_spread(lc, nc);
				ncollapse_checked++;
				if ((!ref.assumed && !ref.crossed && sc < 0.1 * ref.raw) || sc == 0)
					ncollapsed++;
			}
			out->ncommon++;
		}
		free(lb);
		free(lc);
	}
	free(groups);
	free(refs);
	if (any_assumed)
		out->flags |= SF_NOISE_ASSUMED;
	if (ncollapse_checked && ncollapsed == ncollapse_checked)
		out->flags |= SF_COLLAPSED;

	struct cmp_acc acc = {.thr = thr, .thr_win = thr_win, .thr_loss = thr_loss, .q = q,
			      .looks = looks, .sum_d = sum_d, .sum_se = sum_se, .min_dof = min_dof,
			      .any_assumed = any_assumed, .nwin = nwin, .nmissing = nmissing,
			      .nextra = nextra, .npairs_noise = npairs_noise};
	if (out->ncommon)
		cmp_aggregate(out, o, &acc);
	if (out->noise_runs < 0)
		out->noise_runs = 0;

	cmp_word(out, best, cand, o, &acc);
}

void stats_cmp_release(struct stats_cmp *c)
{
	for (size_t i = 0; i < c->nshapes; i++)
		free(c->shapes[i].key);
	free(c->shapes);
	free(c->why);
	memset(c, 0, sizeof(*c));
}

double stats_alpha(unsigned spent)
{
	return ldexp(STATS_SEQ_ALPHA, -(int)(spent > 60 ? 60 : spent));
}

void stats_level_text(const struct stats_cmp *c, struct sb *out)
{
	if (c->level > 0.951)
		sb_addf(out, "%.*f%% (under every look to %d pairs%s)", c->spent ? 3 : 2,
			100 * c->level, STATS_SEQ_LOOKS,
			c->spent == 0	  ? ""
			: c->spent == 1 ? "; the candidate's second confirm"
					: "; a later confirm of the candidate");
	else
		sb_adds(out, "95%");
}

bool stats_confirm_more(const struct stats_cmp *c, size_t pairs, size_t max_pairs)
{
	if (!max_pairs)
		max_pairs = STATS_CONFIRM_MAX_PAIRS;
	if (pairs >= max_pairs)
		return false;
	switch (c->verdict) {
	case SV_FAST:
	case SV_SLOW:
	case SV_SAME:
	case SV_AMBIGUOUS:
		/* without the test (a plain comparison): while a win is possible */
		return isfinite(c->llr) ? !c->decided
					: c->verdict == SV_AMBIGUOUS && c->hi >= c->threshold;
	default:
		return false; /* missing shapes, another environment: more runs won't help */
	}
}

static const char *const verdict_names[] = {
	[SV_NONE] = "none",           [SV_FAST] = "fast",
	[SV_SAME] = "same",           [SV_SLOW] = "slow",
	[SV_AMBIGUOUS] = "ambiguous", [SV_MISSING] = "missing",
	[SV_NOT_COMPARABLE] = "not_comparable",
};

const char *stats_verdict_name(enum stats_verdict v)
{
	if ((unsigned)v >= sizeof(verdict_names) / sizeof(verdict_names[0]))
		return "none";
	return verdict_names[v];
}

enum stats_verdict stats_verdict_parse(const char *name)
{
	for (size_t i = 0; name && i < sizeof(verdict_names) / sizeof(verdict_names[0]); i++)
		if (strcmp(verdict_names[i], name) == 0)
			return (enum stats_verdict)i;
	return SV_NONE;
}

static const struct {
	unsigned bit;
	const char *name;
} flag_names[] = {
	{SF_IMPLAUSIBLE_AGG, "implausible_aggregate"},
	{SF_IMPLAUSIBLE_SHAPE, "implausible_shape"},
	{SF_CONFINED, "win_confined_to_one_shape"},
	{SF_COLLAPSED, "collapsed_noise"},
	{SF_BAD_TIME, "bad_time"},
	{SF_IMPOSSIBLE, "impossible"},
	{SF_UNSTABLE, "unstable"},
	{SF_NOISE_ASSUMED, "noise_assumed"},
	{SF_ENV_CHANGED, "env_changed"},
	{SF_SHAPES_CHANGED, "shapes_changed"},
	{SF_BUSY_GPU, "busy_gpu"},
	{SF_SUBSET_GATE, "subset_gate"},
};

json_t *stats_flags_json(unsigned flags)
{
	json_t *a = json_array();
	if (flags & SF_IMPLAUSIBLE_MASK)
		json_array_append_new(a, json_string("implausible"));
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (flags & flag_names[i].bit)
			json_array_append_new(a, json_string(flag_names[i].name));
	return a;
}

void stats_flags_text(unsigned flags, struct sb *out)
{
	json_t *a = stats_flags_json(flags);
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v)
	{
		if (i)
			sb_adds(out, ", ");
		sb_adds(out, json_string_value(v));
	}
	json_decref(a);
}

unsigned stats_flags_parse(const json_t *arr)
{
	unsigned f = 0;
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
	{
		const char *s = json_string_value(v);
		for (size_t k = 0; s && k < sizeof(flag_names) / sizeof(flag_names[0]); k++)
			if (strcmp(s, flag_names[k].name) == 0)
				f |= flag_names[k].bit;
	}
	return f;
}

static json_t *num_or_null(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

/* The shape with the largest speedup measured on both sides, or NULL. */
static const struct stats_shape_cmp *fastest_shape(const struct stats_cmp *c)
{
	const struct stats_shape_cmp *f = NULL;
	for (size_t i = 0; i < c->nshapes; i++) {
		const struct stats_shape_cmp *s = &c->shapes[i];
		if (s->in_best && s->in_cand && isfinite(s->speedup) && (!f || s->speedup > f->speedup))
			f = s;
	}
	return f;
}

json_t *stats_implausible_json(const struct stats_cmp *c)
{
	json_t *a = json_array();
	const struct stats_shape_cmp *f = fastest_shape(c);
	struct sb d = SB_INIT;
#define RULE(name)                                                                       \
	do {                                                                             \
		json_array_append_new(a, json_pack("{s:s, s:s}", "rule", name, "detail", \
						   d.buf ? d.buf : ""));                 \
		sb_reset(&d);                                                            \
	} while (0)
	if (c->flags & SF_IMPLAUSIBLE_AGG) {
		sb_addf(&d, "the aggregate speedup %.2fx is above %.1fx", c->speedup,
			STATS_IMPLAUSIBLE_AGG);
		RULE("implausible_aggregate");
	}
	for (size_t i = 0; (c->flags & SF_IMPLAUSIBLE_SHAPE) && i < c->nshapes; i++) {
		const struct stats_shape_cmp *s = &c->shapes[i];
		if (!(s->in_best && s->in_cand && s->speedup > STATS_IMPLAUSIBLE_SHAPE))
			continue;
		sb_addf(&d, "%s at %.2fx is above %.0fx", s->key, s->speedup,
			STATS_IMPLAUSIBLE_SHAPE);
		RULE("implausible_shape");
	}
	if ((c->flags & SF_CONFINED) && f) {
		sb_addf(&d, "only %s (%.2fx) wins beyond the threshold, of %zu shapes", f->key,
			f->speedup, c->ncommon);
		RULE("win_confined_to_one_shape");
	}
	if (c->flags & SF_COLLAPSED) {
		sb_adds(&d, "on every shape with 3 or more runs the candidate's run-to-run spread is "
			    "below a tenth of that shape's measured noise (a cached or skipped "
			    "computation reads so)");
		RULE("collapsed_noise");
	}
	if (c->flags & SF_BAD_TIME) {
		sb_adds(&d, "a time is zero, negative or not a number");
		RULE("bad_time");
	}
#undef RULE
	sb_release(&d);
	return a;
}

json_t *stats_cmp_json(const struct stats_cmp *c)
{
	json_t *o = json_object(), *shapes = json_array();
	json_object_set_new(o, "verdict", json_string(stats_verdict_name(c->verdict)));
	json_object_set_new(o, "flags", stats_flags_json(c->flags));
	json_object_set_new(o, "threshold", json_real(c->threshold));
	json_object_set_new(o, "speedup", num_or_null(c->speedup));
	json_object_set_new(o, "vs_best", num_or_null(c->gain));
	json_object_set_new(o, "interval", json_pack("[oo]", num_or_null(c->lo), num_or_null(c->hi)));
	struct sb m = SB_INIT;
	sb_init(&m);
	sb_adds(&m, "log-normal t interval, ");
	stats_level_text(c, &m);
	sb_adds(&m, ", pooled per-run noise");
	json_object_set_new(o, "interval_method", json_string(m.buf));
	sb_release(&m);
	json_object_set_new(o, "level", json_real(c->level));
	json_object_set_new(o, "worst_shape",
			    c->worst >= 0 && (size_t)c->worst < c->nshapes ? json_string(c->shapes[c->worst].key) : json_null());
	json_object_set_new(o, "why", json_string(c->why ? c->why : ""));
	json_object_set_new(o, "implausible_why", stats_implausible_json(c));
	json_object_set_new(o, "paired", json_boolean(c->paired));
	json_object_set_new(o, "noise_runs", json_integer(c->noise_runs));
	if (isfinite(c->llr)) {
		json_object_set_new(o, "sequential",
				    json_pack("{s:s, s:f, s:b, s:f, s:f}", "test",
					      "SPRT on the log speedup: H1 twice the threshold vs H0 "
					      "the threshold",
					      "llr", c->llr, "decided", c->decided, "alpha",
					      c->alpha, "beta", STATS_SEQ_BETA));
		json_t *sq = json_object_get(o, "sequential");
		json_object_set_new(sq, "confirms_before", json_integer(c->spent));
		json_object_set_new(sq, "disagrees", json_boolean(c->disagrees));
		json_object_set_new(sq, "screen_gap", num_or_null(c->screen_gap));
		json_object_set_new(sq, "screen_tol", num_or_null(c->screen_tol));
		bool ratio = by_ratio_test(c);
		json_object_set_new(sq, "accepted_by", c->verdict != SV_FAST ? json_null()
							: json_string(ratio ? "ratio test" : "interval"));
		if (ratio) {
			double lo, hi;
			interval95(c, &lo, &hi);
			json_object_set_new(sq, "interval95", json_pack("[ff]", lo, hi));
		}
	}
	for (size_t i = 0; i < c->nshapes; i++) {
		const struct stats_shape_cmp *s = &c->shapes[i];
		json_t *j = json_object();
		json_object_set_new(j, "shape", json_string(s->key));
		json_object_set_new(j, "best_ms", num_or_null(s->best_ms));
		json_object_set_new(j, "cand_ms", num_or_null(s->cand_ms));
		json_object_set_new(j, "n_best", json_integer((json_int_t)s->n_best));
		json_object_set_new(j, "n_cand", json_integer((json_int_t)s->n_cand));
		json_object_set_new(j, "speedup", num_or_null(s->speedup));
		json_object_set_new(j, "vs_best", num_or_null(s->gain));
		json_object_set_new(j, "interval",
				    json_pack("[oo]", num_or_null(s->lo), num_or_null(s->hi)));
		if (s->in_best && s->in_cand) {
			json_object_set_new(j, "noise", json_real(s->noise.sigma));
			json_object_set_new(j, "noise_assumed", json_boolean(s->noise.assumed));
			json_object_set_new(j, "noise_runs", json_integer(s->noise.runs));
			json_object_set_new(j, "noise_from",
					    json_string(s->noise.assumed ? "assumed"
							: s->noise.pairs ? "pairs"
									 : "runs"));
		}
		json_array_append_new(shapes, j);
	}
	json_object_set_new(o, "shapes", shapes);
	return o;
}
