/* view_time.h - the `view.time` argument of list_hotspots: a time window,
 * [from_seconds, to_seconds) after the first sample.
 *
 * Reading the argument is one function (tool_view_time_init), kept apart
 * from what the window does (profile/time_window.h cuts the loaded copy of
 * the profile), so that a fuller `view` argument can take over the reading
 * and keep the rest.  A window given is part of the cursor's query, so a
 * page's cursor is bound to it, and the result says what it kept.
 *
 * Ownership: plain values; nothing to release.
 */
#ifndef PL_VIEW_TIME_H
#define PL_VIEW_TIME_H

#include "tools/registry.h"
#include "profile/aggregate.h"
#include "profile/time_window.h"

struct tool_view_time {
	bool active;                   /* view.time was given */
	double from_s, to_s;
	bool absolute;                 /* given as {"perf_time": "START,END"} */
	uint64_t from_ns, to_ns;       /* then the window on the recording's clock */
	struct pl_window_stats st;     /* filled by tool_view_time_apply */
	struct pl_amount before, after;/* the event's weight before and after */
};

/* Read view.time from the call's arguments; a view or time that is not
 * what the schema says is PL_ERR_USAGE naming the fix. */
enum pl_err tool_view_time_init(struct tool_view_time *t, json_t *args, struct pl_error *err);

/* Cut `p` to the window (nothing when inactive), counting `event`'s
 * weight before and after. */
enum pl_err tool_view_time_apply(struct tool_view_time *t, struct pl_profile *p, uint32_t event,
				 struct pl_error *err);

/* A window given as perf_time, in seconds after `p`'s first timed
 * sample (from_s, to_s), for callers that cut no copy (get_timeline). */
void tool_view_time_resolve(struct tool_view_time *t, const struct pl_profile *p);

/* "|time=FROM,TO" for a cursor's query, "" when inactive. */
void tool_view_time_query(const struct tool_view_time *t, struct pl_buf *query);

/* {"from_seconds", "to_seconds", "perf_time" (perf report --time's
 * START,END), "samples", "period", "percent_of_samples",
 * "percent_of_period", "timeless_samples"}: what the window kept of the
 * event (new reference); NULL when inactive. */
json_t *tool_view_time_json(const struct tool_view_time *t);

#endif
