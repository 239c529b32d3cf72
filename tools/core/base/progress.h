/* progress.h - how far a long piece of work has come, for whoever
 * listens (the MCP worker turns it into notifications/progress).
 *
 * Process-wide and off by default: a sandboxed worker runs one tool call
 * in its own process, so one listener per process is all there is.  The
 * reading code reports each input's bytes (pl_progress_input; a stream of
 * unknown length, such as perf script's output, has total 0); inputs read
 * one after another add up, so the reported value only grows.  The
 * listener is called at most once per min_interval_ms (a few a second),
 * and only when the value grew; pl_progress_flush gives it the last
 * value at once.
 */
#ifndef PL_PROGRESS_H
#define PL_PROGRESS_H

#include <stdint.h>

/* done of total units ("bytes"); total 0 when unknown. */
typedef void (*pl_progress_fn)(void *opaque, uint64_t done, uint64_t total, const char *unit);

/* Install (fn NULL: remove) the listener; resets the counts. */
void pl_progress_set(pl_progress_fn fn, void *opaque, unsigned min_interval_ms);

/* A new input of `total` bytes starts: what came before stays counted. */
void pl_progress_input_start(uint64_t total);

/* `done` bytes of the current input are read (never more than its total). */
void pl_progress_input(uint64_t done);

/* Work measured in time (a collection): `done_ms` of `total_ms` (0:
 * unknown), unit "ms", rate-limited like the rest; for a call that
 * measures nothing else. */
void pl_progress_time(uint64_t done_ms, uint64_t total_ms);

/* The same when the work ended: sent now, whatever the rate limit, so
 * the last value a client sees is the time the work took, not the last
 * look at the clock before it. */
void pl_progress_time_end(uint64_t done_ms, uint64_t total_ms);

/* The listener gets the latest value now, if it has not had it. */
void pl_progress_flush(void);

#endif
