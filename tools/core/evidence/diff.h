/* diff.h - comparing two profiles of one event: a baseline and a candidate.
 *
 * Shares, not raw weights, are compared: each side's weights are a
 * percentage of that side's total period, and a change is the candidate's
 * share minus the baseline's, in percentage points.  So a candidate that
 * ran twice as long does not look twice as slow everywhere.
 *
 * Functions are matched by (symbol, DSO) text, since ids differ between
 * profiles.  Call paths are the folded lines both sides fold to (the
 * naming of pl_fold, i.e. of stackcollapse-perf.pl), matched by text: the
 * same lines difffolded.pl would pair up from the two folded exports,
 * except that the main executables' commands, the paths' roots, are one
 * when they differ (prog and prog-fixed: two builds of one program).  The
 * folded diff and the differential flame graph are made from those lines
 * with raw weights, as difffolded.pl and flamegraph.pl draw them.
 *
 * A function or path is "added" when only the candidate has weight in it,
 * "removed" when only the baseline has, "unchanged" when its changes round
 * to 0.0000 points and "changed" otherwise.
 *
 * Ownership: a pl_diff borrows both profiles (they must outlive it) and
 * owns everything else; release it with pl_diff_release.
 */
#ifndef PL_DIFF_H
#define PL_DIFF_H

#include <stdio.h>

#include "profile/aggregate.h"
#include "export/fold.h"

#define PL_DIFF_BASE 0
#define PL_DIFF_CAND 1

enum pl_diff_status {
	PL_DIFF_UNCHANGED = 0,
	PL_DIFF_CHANGED,
	PL_DIFF_ADDED,
	PL_DIFF_REMOVED
};
const char *pl_diff_status_name(enum pl_diff_status s);

/* The status of something weighing `before` and `after` (0: absent) whose
 * shares moved by `deltas` points (n of them). */
enum pl_diff_status pl_diff_classify(uint64_t before, uint64_t after,
				     const double *deltas, size_t n);

/* One (symbol, DSO) seen with weight on either side. */
struct pl_diff_func {
	const char *symbol;        /* borrowed from a profile */
	const char *dso;           /* NULL when unknown; the side that had it first */
	const char *dso_key;       /* what the sides were joined by (diff.c dso_key) */
	uint32_t func[2];          /* function id per side, PL_NOID when absent */
	struct pl_func_weight w[2];
	double self_pct[2], incl_pct[2];   /* unrounded shares */
	double self_delta, incl_delta;     /* candidate - baseline, points */
	enum pl_diff_status status;
};

/* One folded line (call path) seen on either side. */
struct pl_diff_path {
	uint64_t count[2];         /* folded weight per side (period) */
	double pct[2], delta;
	enum pl_diff_status status;
	uint32_t text_rank;        /* position in byte order of the text */
};

struct pl_diff {
	const struct pl_profile *p[2];
	uint32_t event[2];
	struct pl_amount total[2];
	uint64_t unique_stacks[2];
	struct pl_amount unknown_self[2];  /* stacks whose leaf is [unknown] */
	struct pl_amount unknown_any[2];   /* stacks with any [unknown] frame */

	struct pl_diff_func *funcs;
	size_t nfuncs;
	const char *main_dso[2];   /* each side's main executable, or NULL */
	char *main_comm[2];        /* the main executables' commands when they
				    * differ (owned), each side's root of its
				    * paths; the candidate's lines are rooted at
				    * the baseline's; NULL when the same or unknown */
	size_t dso_joined_apart;   /* functions joined whose module paths differ
				    * (same file name, other folder) */

	/* Both sides' folded lines: names and lines are the baseline's fold
	 * with the candidate's lines added (its n and weights stay the
	 * baseline's); paths[line id] has both counts. */
	struct pl_folded folded;
	struct pl_diff_path *paths;
	size_t npaths;
	uint32_t *text_order;      /* line ids in byte order of their text */
	uint64_t fold_total[2];
	size_t common_paths;       /* lines with weight on both sides */
};

/* Run fn(a) in a new thread and fn(b) in this one, and wait for both (one
 * after the other here when no thread can be made). */
void pl_diff_run_pair(void *(*fn)(void *), void *a, void *b);

/* Compare event `base_event` of `base` with `cand_event` of `cand`; the
 * caller has checked that they are comparable (same event and unit).
 * `fold` names the folding options (its event field is ignored). */
enum pl_err pl_diff_build(struct pl_diff *d, const struct pl_profile *base,
			  uint32_t base_event, const struct pl_profile *cand,
			  uint32_t cand_event, const struct pl_fold_opts *fold,
			  struct pl_error *err);
void pl_diff_release(struct pl_diff *d);

/* Indexes of the functions whose self or inclusive change is at least
 * `min_points` (in absolute value), by the size of the chosen change,
 * then the other, then symbol and DSO.  Returns the count; *order is
 * new (free it). */
size_t pl_diff_func_order(const struct pl_diff *d, bool by_inclusive,
			  double min_points, size_t **order);

/* Line ids of the paths whose change is at least `min_points`, by the
 * size of the change, then candidate and baseline weight, then text. */
size_t pl_diff_path_order(const struct pl_diff *d, double min_points,
			  uint32_t **order);

/* difffolded.pl's output for the two folded files: "stack count1 count2"
 * per line, a missing count as 0, in byte order of the stack (the peer
 * prints in hash order).  `normalize` scales count1 as its -n does:
 * int(count1 * total2 / total1) when the totals differ. */
enum pl_err pl_diff_write_folded(FILE *out, const struct pl_diff *d,
				 bool normalize, struct pl_error *err);

/* flamegraph.pl's drawing of that output: widths from the candidate,
 * red grew, blue shrank (see flamegraph.h, differential mode). */
enum pl_err pl_diff_write_flamegraph(FILE *out, const struct pl_diff *d,
				     bool normalize, const struct pl_svg_opts *o,
				     struct pl_error *err);

#endif
