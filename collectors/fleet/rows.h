/* rows.h - one device chunk as rows of the fleet store (schema.h).
 *
 * A chunk's profile (the perf script text the agent sent, parsed as any
 * other) becomes: one `chunks` row; per (minute, event, thread, stack) a
 * `samples` row, the minute that of the samples' own times (perf's clock,
 * seconds since the device booted) on the session's clock (clock_offset_ns
 * maps them to unix time: fleet_publish.c anchors it on the session's
 * first chunk), or the chunk's arrival minute for samples without a time
 * or a session without a clock; and the `stacks` and `frames` rows they
 * name.  Rows
 * are JSON lines (JSONEachRow), written with jansson.  Ids are the first
 * 63 bits of a SHA-256 of what they name (a frame: function and DSO; a
 * stack: its frame ids root to leaf), so every server gives one stack
 * one id and jansson's signed integers hold them.
 */
#ifndef PL_FLEET_ROWS_H
#define PL_FLEET_ROWS_H

#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "base/error.h"
#include "base/util.h"
#include "profile/profile.h"

struct fleet_chunk_meta {
	const char *chunk_id;    /* SESSION/chunk_NNNNN: the same on every replay */
	const char *device;
	const char *session;
	uint32_t chunk;
	const char *server;      /* the ingest server's name */
	time_t arrived;          /* the chunk file's mtime */
	double seconds;          /* the time the chunk covers (the capture's
				  * interval), 0 when not known */
	json_t *labels;          /* array of "KEY=VALUE" strings, sorted (borrowed) */
	bool clock_known;        /* clock_offset_ns says the session's clock */
	int64_t clock_offset_ns; /* unix ns = a sample's time + this */
};

struct fleet_rows {
	struct pl_buf chunks, samples, stacks, frames;  /* JSON lines */
	uint64_t samples_total;  /* the chunk's samples, every event */
	int64_t first_minute;    /* the earliest row's minute (the chunks row's
				  * minute), 0 before any */
};

/* Fill `out` (zeroed by the caller) from `p`; PL_ERR_LIMIT past the
 * store's caps.  fleet_rows_release frees it either way. */
enum pl_err fleet_chunk_rows(const struct pl_profile *p, const struct fleet_chunk_meta *m,
			     struct fleet_rows *out, struct pl_error *err);
void fleet_rows_release(struct fleet_rows *r);

/* The 63-bit id of `n` bytes. */
uint64_t fleet_id(const void *data, size_t n);

#endif
