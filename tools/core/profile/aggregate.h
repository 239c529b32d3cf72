/* aggregate.h - per-event views of a profile: hotspots, threads, DSOs and
 * call paths.
 *
 * Everything is computed for one event at a time; events are never added
 * together.  Self weight goes to a stack's leaf function; inclusive weight
 * goes once to each distinct function of a stack, so recursion can never
 * push a function past 100%.  Weights are carried as samples and as summed
 * period; percentages use the period (what perf report shows).
 *
 * Ownership: a view is filled by pl_view_build and released with
 * pl_view_release; its arrays are owned by the view.
 */
#ifndef PL_AGGREGATE_H
#define PL_AGGREGATE_H

#include "profile.h"

struct pl_amount {
	uint64_t samples;
	uint64_t period;
};

struct pl_func_weight {
	struct pl_amount self;
	struct pl_amount incl;
};

struct pl_view {
	const struct pl_profile *p;
	uint32_t event;
	struct pl_amount total;
	struct pl_func_weight *funcs;    /* [nfuncs] */
	uint32_t *hot_order;             /* func ids with weight, sorted */
	size_t nhot;
	struct pl_amount *threads;       /* [nthreads] */
	uint32_t *thread_order;          /* threads with weight, sorted */
	size_t nthread_order;
	/* DSOs keyed by string id (PL_NOID maps to slot 0: unknown). */
	uint32_t *dso_ids;               /* distinct DSO string ids */
	struct pl_func_weight *dsos;     /* parallel to dso_ids */
	size_t ndsos;
	struct pl_amount unknown_leaf;   /* self weight on [unknown] symbols */
	uint64_t stacks;                 /* unique stacks with this event */
};

enum pl_hot_sort { PL_SORT_SELF = 0, PL_SORT_INCLUSIVE };

void pl_view_build(struct pl_view *v, const struct pl_profile *p, uint32_t event);
void pl_view_sort(struct pl_view *v, enum pl_hot_sort by);
void pl_view_release(struct pl_view *v);

/* Percentage of the event's total period, rounded to 4 decimals. */
double pl_percent(const struct pl_view *v, uint64_t period);

/* Call paths: unique root-to-leaf function sequences, threads merged. */
struct pl_callpath {
	const uint32_t *funcs;   /* root first; borrowed from the set */
	uint32_t depth;
	struct pl_amount w;
};
struct pl_callpaths {
	struct pl_strtab keys;
	struct pl_callpath *paths;  /* sorted by period, then samples, then key */
	size_t n;
};
/* Build the call paths of `event`; with `func_filter` != PL_NOID keep only
 * paths that pass through that function. */
void pl_callpaths_build(struct pl_callpaths *cp, const struct pl_profile *p,
			uint32_t event, uint32_t func_filter);
void pl_callpaths_release(struct pl_callpaths *cp);

/* The main executable of the event's samples, as a DSO string id, or
 * PL_NOID when no frame's module looks like a program: pprof readers
 * (go tool pprof's "File:") take the first mapping for it, and a
 * comparison joins two builds of one program at different paths by it. */
uint32_t pl_main_dso(const struct pl_profile *p, uint32_t event);

#endif
