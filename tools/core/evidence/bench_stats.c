/* bench_stats.c - Mann-Whitney U and the bootstrap of a ratio of medians
 * (see bench_stats.h).
 *
 * Ranks are averaged over ties, as scipy.stats.rankdata does.  The exact
 * null distribution of U for samples of m <= n values is the coefficient
 * list of the Gaussian binomial [m+n choose m](q) (Mann and Whitney 1947;
 * computed as Harding 1984 does: for i = 1..m multiply by 1 - q^(n+i),
 * then divide by 1 - q^i), kept in 128-bit integers so it is exact; the
 * feasibility check keeps every coefficient far below 2^127.
 *
 * The bootstrap sorts each sample once and resamples indexes: the k-th
 * smallest value of a resample is found by counting how often each index
 * was drawn, which costs O(n) per resample and no comparisons.
 */
#include "bench_stats.h"
#include "base/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- ranks */

struct ranked {
	double v;
	size_t i;     /* position in x then y */
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *p = a, *q = b;

	if (p->v != q->v)
		return p->v < q->v ? -1 : 1;
	return p->i < q->i ? -1 : p->i > q->i;
}

/* Sum of the (tie-averaged) ranks of x's values; fills the tie fields. */
static double rank_sum_x(const double *x, size_t n1, const double *y, size_t n2,
			 struct pl_mwu *out)
{
	size_t n = n1 + n2, i = 0;
	struct ranked *r = pl_xmalloc(n * sizeof(*r));
	double sum = 0;

	for (size_t k = 0; k < n1; k++)
		r[k] = (struct ranked){x[k], k};
	for (size_t k = 0; k < n2; k++)
		r[n1 + k] = (struct ranked){y[k], n1 + k};
	qsort(r, n, sizeof(*r), cmp_ranked);
	out->ties = false;
	out->tie_term = 0;
	while (i < n) {
		size_t j = i + 1;
		while (j < n && r[j].v == r[i].v)
			j++;
		double t = (double)(j - i), avg = ((double)i + 1 + (double)j) / 2;
		if (j - i > 1) {
			out->ties = true;
			out->tie_term += t * t * t - t;
		}
		for (size_t k = i; k < j; k++)
			if (r[k].i < n1)
				sum += avg;
		i = j;
	}
	free(r);
	return sum;
}

/* -------------------------------------------------- exact distribution */

bool pl_mwu_exact_feasible(size_t m, size_t n)
{
	double log2_binom;

	if (m == 0 || n == 0 || m > PL_MWU_EXACT_MAX_CELLS || n > PL_MWU_EXACT_MAX_CELLS ||
	    m * n > PL_MWU_EXACT_MAX_CELLS)
		return false;
	log2_binom = (lgamma((double)(m + n + 1)) - lgamma((double)(m + 1)) -
		      lgamma((double)(n + 1))) / log(2.0);
	return log2_binom < 120;
}

/* Counts of U = 0..m*n over the C(m+n, m) arrangements (m*n+1 entries,
 * a new array the caller frees). */
static __int128 *u_counts(size_t m, size_t n)
{
	size_t small = m < n ? m : n, big = m < n ? n : m;
	size_t len = small * big + small + 1;
	__int128 *c = pl_xcalloc(len, sizeof(*c));

	c[0] = 1;
	for (size_t i = 1; i <= small; i++) {
		size_t top = i * big + i, shift = big + i;
		for (size_t k = top; k >= shift; k--)
			c[k] -= c[k - shift];
		for (size_t k = i; k <= top; k++)
			c[k] += c[k - i];
	}
	return c;
}

double pl_mwu_exact_cdf(uint64_t u, size_t m, size_t n)
{
	__int128 *c, below = 0, total = 0;
	uint64_t cells = (uint64_t)m * n;

	if (!pl_mwu_exact_feasible(m, n))
		return NAN;
	if (u >= cells)
		return 1.0;
	c = u_counts(m, n);
	for (uint64_t k = 0; k <= cells; k++) {
		total += c[k];
		if (k <= u)
			below += c[k];
	}
	free(c);
	return (double)((long double)below / (long double)total);
}

double pl_mwu_min_p(size_t m, size_t n)
{
	double log_binom = lgamma((double)(m + n + 1)) - lgamma((double)(m + 1)) -
			   lgamma((double)(n + 1));
	double p = 2.0 / exp(log_binom);

	return p > 1 ? 1 : p;
}

/* ------------------------------------------------------------- the test */

static void normal_p(double u, size_t n1, size_t n2, struct pl_mwu *out)
{
	double n = (double)(n1 + n2), mu = (double)n1 * (double)n2 / 2;
	double s = sqrt((double)n1 * (double)n2 / 12 * ((n + 1) - out->tie_term / (n * (n - 1))));

	out->method = PL_MWU_NORMAL;
	if (!(s > 0)) {
		/* Every value tied: U sits at its mean; scipy's z is -inf. */
		out->z = NAN;
		out->p = 1;
		return;
	}
	out->z = (u - mu - 0.5) / s;     /* continuity correction */
	out->p = erfc(out->z / sqrt(2.0));  /* 2 * normal survival */
	if (out->p > 1)
		out->p = 1;
}

void pl_mwu_test(const double *x, size_t n1, const double *y, size_t n2,
		 struct pl_mwu *out)
{
	double r1 = rank_sum_x(x, n1, y, n2, out);
	double cells = (double)n1 * (double)n2, u;
	bool small = n1 <= PL_MWU_EXACT_MAX_SMALL || n2 <= PL_MWU_EXACT_MAX_SMALL;

	out->u_x = r1 - (double)n1 * ((double)n1 + 1) / 2;
	out->u_y = cells - out->u_x;
	u = out->u_x > out->u_y ? out->u_x : out->u_y;
	out->exact_declined = false;
	out->z = NAN;
	if (small && !out->ties && pl_mwu_exact_feasible(n1, n2)) {
		out->method = PL_MWU_EXACT;
		out->p = 2 * pl_mwu_exact_cdf((uint64_t)(cells - u), n1, n2);
		if (out->p > 1)
			out->p = 1;
		return;
	}
	out->exact_declined = small && !out->ties;
	normal_p(u, n1, n2, out);
}

/* ------------------------------------------------------------- medians */

static int cmp_double(const void *a, const void *b)
{
	double p = *(const double *)a, q = *(const double *)b;

	return p < q ? -1 : p > q;
}

static double *sorted_copy(const double *v, size_t n)
{
	double *s = pl_xmalloc(n * sizeof(*s));

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return s;
}

double pl_median(const double *v, size_t n)
{
	double *s = sorted_copy(v, n);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;

	free(s);
	return m;
}

/* ----------------------------------------------------------- bootstrap */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* An index in [0, n): the high half of a 64x64 product (no division). */
static size_t draw_index(uint64_t *state, size_t n)
{
	return (size_t)(((unsigned __int128)splitmix64(state) * n) >> 64);
}

/* The k-th smallest (0-based) of a resample given by index `counts`. */
static double kth_drawn(const double *sorted, const uint32_t *counts, size_t n, size_t k)
{
	size_t seen = 0;

	for (size_t j = 0; j < n; j++) {
		seen += counts[j];
		if (seen > k)
			return sorted[j];
	}
	return sorted[n - 1];
}

/* Median of one resample of the sorted sample `s`. */
static double resample_median(const double *s, size_t n, uint32_t *counts, uint64_t *state)
{
	memset(counts, 0, n * sizeof(*counts));
	for (size_t i = 0; i < n; i++)
		counts[draw_index(state, n)]++;
	if (n % 2)
		return kth_drawn(s, counts, n, n / 2);
	return (kth_drawn(s, counts, n, n / 2 - 1) + kth_drawn(s, counts, n, n / 2)) / 2;
}

/* numpy's default ("linear") quantile of sorted values. */
static double quantile(const double *s, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return s[n - 1];
	return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

size_t pl_boot_resamples_for(size_t n1, size_t n2)
{
	uint64_t draws = (uint64_t)n1 + n2;
	uint64_t r = PL_BOOT_RESAMPLES;

	if (draws && r * draws > PL_BOOT_MAX_DRAWS)
		r = PL_BOOT_MAX_DRAWS / draws;
	return r < PL_BOOT_MIN_RESAMPLES ? PL_BOOT_MIN_RESAMPLES : (size_t)r;
}

void pl_boot_median_ratio(const double *base, size_t n1, const double *cand,
			  size_t n2, size_t resamples, uint64_t seed,
			  double level, struct pl_boot *out)
{
	double *sb = sorted_copy(base, n1), *sc = sorted_copy(cand, n2);
	double *ratios = pl_xmalloc((resamples ? resamples : 1) * sizeof(*ratios));
	uint32_t *counts = pl_xmalloc((n1 > n2 ? n1 : n2) * sizeof(*counts));
	uint64_t state = seed;

	out->ratio = pl_median(cand, n2) / pl_median(base, n1);
	out->level = level;
	out->resamples = resamples;
	out->seed = seed;
	for (size_t r = 0; r < resamples; r++) {
		double mb = resample_median(sb, n1, counts, &state);
		double mc = resample_median(sc, n2, counts, &state);
		ratios[r] = mc / mb;
	}
	qsort(ratios, resamples, sizeof(*ratios), cmp_double);
	out->lo = resamples ? quantile(ratios, resamples, (1 - level) / 2) : out->ratio;
	out->hi = resamples ? quantile(ratios, resamples, (1 + level) / 2) : out->ratio;
	free(sb);
	free(sc);
	free(ratios);
	free(counts);
}
