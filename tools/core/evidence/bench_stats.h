/* bench_stats.h - the statistics behind compare_benchmarks: a two-sided
 * Mann-Whitney U test and a bootstrap confidence interval for the ratio
 * of two medians.
 *
 * The U test chooses its method as scipy.stats.mannwhitneyu(method="auto")
 * does (scipy 1.7 and later): the exact null distribution when either
 * sample has at most 8 values and no value is tied, otherwise the normal
 * approximation with the tie correction and the continuity correction.
 * The exact distribution is counted with 128-bit integers; when a sample
 * pair is too large for that (PL_MWU_EXACT_MAX_CELLS) the normal
 * approximation is used instead and `exact_declined` says so.
 *
 * The bootstrap is deterministic: a splitmix64 generator with a fixed
 * seed, a fixed number of resamples (fewer for very large samples, so
 * the work stays bounded; the count used is reported) and the percentile
 * method with linear interpolation between order statistics.
 *
 * Everything here is pure: no allocation survives a call, no errors.
 */
#ifndef PL_BENCH_STATS_H
#define PL_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The exact distribution is used only for m*n up to this many cells. */
#define PL_MWU_EXACT_MAX_CELLS 100000
/* Samples at most this large on one side qualify for the exact test. */
#define PL_MWU_EXACT_MAX_SMALL 8

enum pl_mwu_method { PL_MWU_EXACT, PL_MWU_NORMAL };

struct pl_mwu {
	double u_x;          /* U of the first sample: scipy's `statistic` */
	double u_y;          /* n1*n2 - u_x */
	double p;            /* two-sided p-value, in [0, 1] */
	double z;            /* standardized U (normal method); NaN for exact
			      * or when every value is tied */
	enum pl_mwu_method method;
	bool ties;           /* some value occurs more than once */
	double tie_term;     /* sum over tie groups of t^3 - t */
	bool exact_declined; /* scipy would count exactly; too large here */
};

/* Two-sided test of x (n1 values) against y (n2 values), n1, n2 >= 1. */
void pl_mwu_test(const double *x, size_t n1, const double *y, size_t n2,
		 struct pl_mwu *out);

/* Can the exact distribution of U be counted for samples of m and n? */
bool pl_mwu_exact_feasible(size_t m, size_t n);

/* P(U <= u) under the null hypothesis for samples of m and n values
 * without ties; NaN when not feasible. */
double pl_mwu_exact_cdf(uint64_t u, size_t m, size_t n);

/* The smallest two-sided p-value samples of m and n values can reach
 * (no ties): 2 / C(m+n, m), capped at 1. */
double pl_mwu_min_p(size_t m, size_t n);

/* Median of n >= 1 values (the mean of the middle two when n is even);
 * `v` is left unchanged. */
double pl_median(const double *v, size_t n);

#define PL_BOOT_RESAMPLES 10000
#define PL_BOOT_MIN_RESAMPLES 1000
#define PL_BOOT_MAX_DRAWS 200000000ull  /* resamples * (n1 + n2) */
#define PL_BOOT_SEED 0x5045524c454e5331ull  /* "PERLENS1" */

struct pl_boot {
	double ratio;        /* median(cand) / median(base) of the samples */
	double lo, hi;       /* percentile interval */
	double level;        /* e.g. 0.95 */
	size_t resamples;
	uint64_t seed;
};

/* How many resamples a pair of samples gets: PL_BOOT_RESAMPLES, fewer
 * (never below PL_BOOT_MIN_RESAMPLES) when n1 + n2 is so large that the
 * draws would pass PL_BOOT_MAX_DRAWS. */
size_t pl_boot_resamples_for(size_t n1, size_t n2);

/* Percentile bootstrap interval at `level` for median(cand)/median(base),
 * resampling each side independently with replacement.  Values must be
 * positive and finite (the caller checks); n1, n2 >= 1. */
void pl_boot_median_ratio(const double *base, size_t n1, const double *cand,
			  size_t n2, size_t resamples, uint64_t seed,
			  double level, struct pl_boot *out);

#endif
