/* bench_verdict.h - the verdict of an A/B comparison of two benchmark
 * artifacts (benchmark.h), benchmark by benchmark.
 *
 * Benchmarks are paired by name; or explicitly (baseline_name with
 * candidate_name, which may be two benchmarks of one artifact: the
 * commands of one hyperfine run); or, when the names differ and each
 * side holds exactly one benchmark, those two, saying that the names
 * differ.  Several a side with no common name is an error listing them.
 * Each pair gets one status: insufficient_data
 * (fewer than 3 repeats a side), not_comparable (a material environment
 * difference, or a different metric, unit or direction),
 * no_material_change, or candidate_improvement / candidate_regression
 * when the two-sided Mann-Whitney p is below PL_BENCH_ALPHA and the whole
 * bootstrap interval of the ratio of medians lies beyond the practical
 * threshold.  A page of results is bounded in bootstrap draws.
 */
#ifndef PL_BENCH_VERDICT_H
#define PL_BENCH_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

#define PL_BENCH_ALPHA 0.05

struct pl_bench_query {
	const char *baseline_id, *candidate_id;  /* as recorded in the result */
	const char *name;                        /* one benchmark, or NULL: all */
	const char *baseline_name, *candidate_name; /* an explicit pair, or both NULL */
	bool candidate_defaulted;                /* candidate_id was not given: it is baseline_id */
	double threshold_percent;                /* the practical threshold */
	size_t offset, limit;                    /* the page of matched benchmarks */
};

/* Compare the artifacts `base` and `cand` (borrowed).  On PL_OK *result
 * is a new object holding everything compare_benchmarks answers but its
 * "page"; the page covers matched benchmarks [offset, *end) of *total
 * (an offset past the end is clamped).  A `name` on neither side, a
 * baseline_name or candidate_name absent from its side, or no pair at
 * all, is a usage error naming the choices. */
enum pl_err pl_bench_compare(json_t *base, json_t *cand, const struct pl_bench_query *q,
			     json_t **result, size_t *end, size_t *total, struct pl_error *err);

#endif
