/* thread_filter.h - the tid and comm filters of list_hotspots,
 * get_call_paths and get_hotspot.
 *
 * A filter keeps the stacks of the threads it names (tid, comm, or both:
 * a thread must match every one given) and takes the weight off every
 * other stack of a loaded profile, so the views built afterwards (hotspots,
 * call paths, callers) count only those threads and their percentages are
 * of the selected threads' total.  Function ids stay those of the whole
 * analysis, so a hotspot_id means the same function filtered or not.
 *
 * Ownership: a filter borrows its comm from the call's arguments.
 */
#ifndef PL_THREAD_FILTER_H
#define PL_THREAD_FILTER_H

#include "tools/registry.h"
#include "profile/aggregate.h"

struct tool_thread_filter {
	bool active;          /* tid or comm given */
	bool has_tid;
	int64_t tid;
	const char *comm;     /* borrowed, NULL when not given */
	size_t matched;       /* threads kept with weight under the event */
	struct pl_amount event_total, kept;  /* the whole event's weight, and the kept part */
};

/* Read "tid" and "comm" from the call's arguments (borrowed). */
void tool_thread_filter_init(struct tool_thread_filter *f, json_t *args);

/* Keep only the matching threads' stacks of `p` (the weights of the others
 * are dropped from this loaded copy).  No matching thread with weight
 * under `event` is PL_ERR_USAGE naming the threads that do have some. */
enum pl_err tool_thread_filter_apply(struct tool_thread_filter *f, struct pl_profile *p,
				     uint32_t event, struct pl_error *err);

/* "|tid|comm" for a cursor's query, "" when inactive. */
void tool_thread_filter_query(const struct tool_thread_filter *f, struct pl_buf *query);

/* ", tid=N, comm=\"...\"" for a next_call (values JSON-quoted). */
void tool_thread_filter_call(const struct tool_thread_filter *f, struct pl_buf *call);

/* The same "tid" and "comm" into a next step's arguments; returns args. */
json_t *tool_thread_filter_args(const struct tool_thread_filter *f, json_t *args);

/* {"tid", "comm", "threads", "samples", "period", "percent_of_event"}:
 * what was kept (new reference); NULL when inactive. */
json_t *tool_thread_filter_json(const struct tool_thread_filter *f);

#endif
