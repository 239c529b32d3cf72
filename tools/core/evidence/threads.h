/* threads.h - what each thread of an event does.
 *
 * For a few threads of a view (a page of list_threads): the functions
 * that carry most of each thread's weight (inclusive, entry points such as
 * start_thread and main left out), the share of its weight each
 * applicable hotspot rule's functions cover (so a thread reads as "a pipe
 * reader" or "a lock waiter" in one line), and, for off-CPU stacks that
 * carry a "[state X]" frame (collect_profile's off-CPU folding), its
 * blocked time by task state.  Percentages are of the thread's own weight.
 *
 * Ownership: borrows the classifier and view; returns new references.
 */
#ifndef PL_THREADS_H
#define PL_THREADS_H

#include <jansson.h>

#include "classify.h"

#define PL_THREAD_TOP 3          /* functions and rule shares per thread */
#define PL_THREAD_RULE_MIN 10.0  /* a rule share listed from this percent */

/* One object per entry of threads[] (thread ids of c->p):
 *   {"top_functions": [{"hotspot_id", "symbol", "inclusive_percent",
 *                       "self_percent"}],
 *    "rule_shares": [{"rule", "label", "percent"}],
 *    "blocked_by_state": [{"state", "samples", "period", "percent"}] | null}
 * as a new array, in the order of threads[]. */
json_t *pl_threads_describe(const struct pl_classifier *c, const struct pl_view *v,
			    const uint32_t *threads, size_t n);

/* Off-CPU stacks by where the program blocked: for each stack, the first
 * frame above the kernel's (walking from the leaf, "[state X]" frames
 * skipped) and its caller, weighted once per stack; the PL_BLOCKING_TOP
 * heaviest pairs as a new array of {"hotspot_id", "symbol", "caller",
 * "caller_hotspot_id", "samples", "period", "percent"} (percent of the
 * view's total). */
#define PL_BLOCKING_TOP 5
json_t *pl_blocking_frames(const struct pl_profile *p, const struct pl_view *v);

#endif
