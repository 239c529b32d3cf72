/* progress.c - the process-wide progress counter (see progress.h).
 *
 * Values: everything finished before the current input (base) plus the
 * current input's bytes; the total likewise.  The listener is called from
 * the reporting thread; the counter itself is not locked, since only the
 * thread that set the listener reports: the same calls made on any other
 * thread (the hash thread of input.c, the second side compare_profiles
 * loads beside the first) do nothing.
 */
#include "progress.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

static struct {
	pl_progress_fn fn;
	void *opaque;
	uint64_t interval_ns;
	uint64_t base, base_total;     /* inputs finished before the current one */
	uint64_t done, total;          /* the current input */
	uint64_t sent;                 /* the last value the listener got */
	uint64_t sent_at_ns;
	pthread_t owner;               /* the thread that set fn */
} pg;

/* Is there a listener, and is this its thread? */
static bool reporting(void)
{
	return pg.fn && pthread_equal(pthread_self(), pg.owner);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void pl_progress_set(pl_progress_fn fn, void *opaque, unsigned min_interval_ms)
{
	pg.fn = fn;
	pg.owner = pthread_self();
	pg.opaque = opaque;
	pg.interval_ns = (uint64_t)min_interval_ms * 1000000u;
	pg.base = pg.base_total = pg.done = pg.total = pg.sent = pg.sent_at_ns = 0;
}

static void send_value(bool now, uint64_t value, uint64_t total, const char *unit)
{
	uint64_t t;

	if (!reporting() || value <= pg.sent)
		return;
	t = now_ns();
	if (!now && pg.sent_at_ns && t - pg.sent_at_ns < pg.interval_ns)
		return;
	pg.sent = value;
	pg.sent_at_ns = t;
	pg.fn(pg.opaque, value, total, unit);
}

/* The inputs' bytes; the total is unknown while a stream of unknown
 * length is read. */
static void send(bool now)
{
	send_value(now, pg.base + pg.done, pg.total ? pg.base_total + pg.total : 0, "bytes");
}

void pl_progress_time(uint64_t done_ms, uint64_t total_ms)
{
	if (reporting())
		send_value(false, done_ms, total_ms > done_ms ? total_ms : 0, "ms");
}

void pl_progress_time_end(uint64_t done_ms, uint64_t total_ms)
{
	if (reporting())
		send_value(true, done_ms, total_ms > done_ms ? total_ms : 0, "ms");
}

void pl_progress_input_start(uint64_t total)
{
	if (!reporting())
		return;
	pg.base += pg.done;
	pg.base_total += pg.total;
	pg.done = 0;
	pg.total = total;
}

void pl_progress_input(uint64_t done)
{
	if (!reporting())
		return;
	pg.done = done > pg.total && pg.total ? pg.total : done;
	send(false);
}

void pl_progress_flush(void)
{
	send(true);
}
