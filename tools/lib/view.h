/* view.h - the `view` argument of the tools that read an analysis: which
 * part of an event's samples a call answers for, and how its stacks are
 * transformed.
 *
 * A view is one JSON object, parsed here and nowhere else:
 *   {"tid", "comm"}                the threads (thread_filter.h); the
 *                                  top-level tid and comm arguments of
 *                                  older calls mean the same;
 *   {"time": {from_seconds, to_seconds}}  a time window after the first
 *                                  timed sample (time_window.h), or
 *   {"time": {"perf_time": "START,END"}}  one on the recording's own
 *                                  clock, as perf script prints it and
 *                                  perf report --time takes it;
 *   {"focus", "ignore", "hide", "show_from", "merge", "under",
 *    "collapse_recursion"}         the stack transforms of
 *                                  profile/transform.h, in its order.
 * Threads and time come first, then the transforms.  Applied to the
 * call's own loaded copy of the stack table before anything is
 * aggregated; function ids stay those of the whole analysis.  A view that
 * keeps no sample is PL_ERR_USAGE naming what took them.
 *
 * Every answer of a view carries tool_view_json (the normalized view and
 * the share of samples and period it kept); cursors carry its key, and
 * next steps to tools that take a view carry it too.
 *
 * Ownership: a view borrows strings from the call's arguments and owns
 * its compiled patterns and its normalized object: tool_view_release.
 */
#ifndef PL_TOOL_VIEW_H
#define PL_TOOL_VIEW_H

#include "tools/registry.h"
#include "thread_filter.h"
#include "profile/transform.h"
#include "profile/time_window.h"

struct tool_view {
	bool active;                    /* anything given */
	bool older_threads;             /* the tool has the older tid and comm */
	bool top_tid, top_comm;         /* the call gave them at the top: its steps do too */
	struct tool_thread_filter threads;
	json_t *thread_args;            /* {"tid", "comm"} the filter borrows from (owned) */
	struct pl_transform tf;
	bool has_time;
	double from_seconds, to_seconds;
	bool time_absolute;             /* given as perf_time */
	uint64_t from_ns, to_ns;        /* then the window on the recording's clock */
	const char *perf_time;          /* as given (borrowed) */
	json_t *normalized;             /* the view as answered (owned) */
	char *key;                      /* its compact JSON, for cursors (owned) */
	struct pl_amount event_total;   /* the event's whole weight */
	struct pl_transform_stats st;   /* what the transforms did (kept: what is left) */
	struct pl_window_stats time_st; /* what view.time kept (time_window.h) */
	char *event;                    /* the event the view was applied to (owned),
					 * for steps that name none: a view is of one event */
};

/* Read "view" of a call's arguments, and with `older_threads` the older
 * top-level "tid" and "comm" (list_hotspots, get_call_paths, get_hotspot;
 * export_profile's tid is something else).  An invalid pattern, or tid or
 * comm given both ways with two values, is PL_ERR_USAGE naming the field.
 * Release the view even on error. */
enum pl_err tool_view_init(struct tool_view *v, json_t *args, bool older_threads, struct pl_error *err);
void tool_view_release(struct tool_view *v);

/* Before loading the profile a view applies to: with view.time, ask the
 * stack table for the samples' times (stack_table.h's want_timed). */
void tool_view_prepare(const struct tool_view *v, struct pl_profile *p);

/* Apply the view to `p` (the call's own copy) for `event`; the event's
 * totals in `p` become the view's. */
enum pl_err tool_view_apply(struct tool_view *v, struct pl_profile *p, uint32_t event,
			    struct pl_error *err);

/* "|view=KEY" for a cursor's query, "" when inactive. */
void tool_view_query(const struct tool_view *v, struct pl_buf *query);

/* ".view-" and 12 hex digits of the view's key's SHA-256 after a file's
 * name, so a view's file stands apart from the whole event's; nothing
 * when inactive. */
void tool_view_file_suffix(const struct tool_view *v, struct pl_buf *path);

/* The view into a next step's arguments for list_hotspots,
 * get_call_paths or get_hotspot (tid and comm at the top when the call
 * gave them there, as older callers read them); returns args. */
json_t *tool_view_args(const struct tool_view *v, json_t *args);

/* The view into every next step anywhere in `result` (nested ones too)
 * that calls a tool taking a view on analysis `id`. */
void tool_view_steps(const struct tool_view *v, json_t *result, const char *id);

/* {"applied", "samples", "period", "percent_of_samples",
 * "percent_of_period", "unmatched"?, "stacks_rewritten"?, "note"?} (new),
 * NULL when inactive. */
json_t *tool_view_json(const struct tool_view *v);

/* The view's parts of a result: "view", and on the tools with the older
 * tid and comm, "thread_filter" for them (older callers read it). */
void tool_view_describe(const struct tool_view *v, json_t *result);

#endif
