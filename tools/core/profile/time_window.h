/* time_window.h - a profile cut down to the samples of a time window.
 *
 * The window is [from, to) seconds after the profile's first timed
 * sample (struct pl_timed: the first of any event).  The loaded copy's
 * stack weights are rebuilt from only the timed samples inside it, in
 * place: ids of functions, frames, stacks and threads stay the analysis'
 * own, so a hotspot_id means the same inside the window or not, and every
 * view built afterwards (aggregate.h) counts only the window.  Events'
 * totals become the window's; tails and caller-check marks are cut to
 * what their stacks still hold (a mark's share of its stack's weight is
 * kept, as the samples do not say which of them had it).
 *
 * Samples without a time, and those past the timeline's cap, are in no
 * window: the result counts them so a caller can say so.
 */
#ifndef PL_TIME_WINDOW_H
#define PL_TIME_WINDOW_H

#include "profile.h"

/* What a window kept, per the whole profile (all events). */
struct pl_window_stats {
	uint64_t first_ns;         /* the first timed sample's time (the input's clock) */
	uint64_t from_ns, to_ns;   /* the window, absolute, [from, to) */
	uint64_t samples, kept;    /* timed samples, and those inside */
	uint64_t past_cap, untimed;/* samples that are in no window */
};

/* Which inputs carry sample times, for messages. */
#define PL_TIMED_INPUTS "perf script text with its time column, perf.data (perf record " \
	"keeps times by default), device sessions, V8 .cpuprofile, speedscope profiles in a time " \
	"unit, and pprof whose samples carry an end_timestamp_ns or timestamp_ns label"

/* Keep only the samples in [from_s, to_s) seconds after the first timed
 * sample.  No timed sample: PL_ERR_UNSUPPORTED naming the inputs that
 * have them; from_s < 0 or to_s <= from_s: PL_ERR_USAGE.  `st` may be
 * NULL. */
enum pl_err pl_profile_time_window(struct pl_profile *p, double from_s, double to_s,
				   struct pl_window_stats *st, struct pl_error *err);

/* The same, for an absolute window [from_ns, to_ns) on the input's own
 * clock (perf's timestamps). */
enum pl_err pl_profile_time_window_abs(struct pl_profile *p, uint64_t from_ns, uint64_t to_ns,
				       struct pl_window_stats *st, struct pl_error *err);

/* perf report --time's "START,END" (seconds on the recording's clock, as
 * perf script prints them; an empty side is open) into nanoseconds; a
 * text that is not that, or an empty window, is PL_ERR_USAGE. */
enum pl_err pl_perf_time_parse(const char *text, uint64_t *from_ns, uint64_t *to_ns, struct pl_error *err);

/* The first timed sample's time; false when there is none. */
bool pl_timed_first(const struct pl_profile *p, uint64_t *first_ns);

/* PL_ERR_UNSUPPORTED: the profile has no timed sample (the message names
 * the input's format when the profile records it). */
enum pl_err pl_no_time_error(const struct pl_profile *p, struct pl_error *err);

#endif
