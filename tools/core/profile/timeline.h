/* timeline.h - an event's samples per time bucket (get_timeline).
 *
 * The span is that of every timed sample of the profile (all events), so
 * buckets line up across events and with view.time's seconds.  The
 * bucket width is the smallest 1, 2 or 5 times a power of ten nanoseconds
 * that covers the span in at most the buckets asked for.  A sample counts
 * when its stack still has weight under the event (a thread filter or a
 * time window unlinks the others), and, for a function, once per sample
 * when the function is anywhere in its stack (inclusive).
 *
 * Ownership: pl_timeline_build fills arrays the timeline owns;
 * pl_timeline_release frees them.
 */
#ifndef PL_TIMELINE_H
#define PL_TIMELINE_H

#include "aggregate.h"

#define PL_TIMELINE_MAX_BUCKETS 500

struct pl_timeline {
	uint64_t first_ns, last_ns;   /* the profile's first and last timed sample */
	uint64_t start_ns;            /* where bucket 0 starts: first_ns, or a window's start */
	uint64_t width_ns;            /* one bucket; bucket i is [first + i*width, +width) */
	size_t n;                     /* buckets */
	struct pl_amount *all;        /* [n] the event's weight */
	struct pl_amount *func;       /* [n] the function's inclusive weight, or NULL */
	struct pl_amount total, func_total;
};

/* Bucket the timed samples of `event` into at most `buckets` (1 to
 * PL_TIMELINE_MAX_BUCKETS); `func` PL_NOID, or a function whose inclusive
 * weight is counted apart.  With to_s > 0, only [from_s, to_s) seconds
 * after the first sample is bucketed (a zoom), up to the last sample.
 * No timed sample: PL_ERR_UNSUPPORTED (time_window.h's pl_no_time_error). */
enum pl_err pl_timeline_build(struct pl_timeline *t, const struct pl_profile *p, uint32_t event,
			      uint32_t buckets, uint32_t func, double from_s, double to_s,
			      struct pl_error *err);
void pl_timeline_release(struct pl_timeline *t);

/* The smallest 1, 2 or 5 x 10^k ns that covers span_ns + 1 in at most
 * `buckets` buckets. */
uint64_t pl_timeline_width(uint64_t span_ns, uint32_t buckets);

#endif
