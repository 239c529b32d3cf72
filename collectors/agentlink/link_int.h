/* link_int.h - what the agent link's files share (internal to
 * collectors/agentlink/): the wire (wire.c, perfchunk.c), the spool
 * (spool.c) and the log (log.c), which the devices and their threads
 * (link.c) use; none of them calls back into link.c.
 *
 * Errors are the tree's one type: a fallible function returns an enum
 * pl_err and fills the caller's struct pl_error (base/error.h), whose
 * text is what the device's state shows (last_drop, reason) and whose
 * code a control answer carries to the tool.
 */
#ifndef COLL_LINK_INT_H
#define COLL_LINK_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "link.h"
#include "base/util.h"

/* ------------------------------------------------------------ the wire */

/* The frame's flags, header and limits (frame.h, which the agent
 * includes too). */
#include "frame.h"

struct wire_frame {
	uint8_t flag;
	uint32_t len;
	unsigned char *data;   /* new: len bytes plus a NUL; NULL when len 0 */
};

/* Read one frame of at most `cap` bytes (the header is checked before any
 * allocation).  PL_OK, or the link ended or failed: PL_ERR_EXTERNAL
 * (closed, a socket error), PL_ERR_TIMEOUT (nothing in time, or the send
 * bound passed unacknowledged), PL_ERR_LIMIT (over the cap, out of
 * memory); f->flag is the cut frame's, or 0xff when the header itself did
 * not come whole. */
enum pl_err coll_wire_read(int fd, uint32_t cap, struct wire_frame *f, struct pl_error *err);

/* Send one frame: PL_OK, PL_ERR_TIMEOUT (the send bound passed) or
 * PL_ERR_EXTERNAL (the link broke). */
enum pl_err coll_wire_send(int fd, uint8_t flag, const void *p, size_t len, struct pl_error *err);

/* Socket options of every agent link: keepalive, TCP_USER_TIMEOUT and
 * SO_SNDTIMEO of `send_ms`, close-on-exec. */
void coll_wire_socket_opts(int fd, unsigned send_ms);

/* A zstd chunk's decompressed size into *size, checked: PL_ERR_MALFORMED
 * when it is not one complete zstd frame, PL_ERR_LIMIT when it
 * decompresses past AGENT_CHUNK_TEXT_MAX. */
enum pl_err coll_wire_zstd_text_size(const void *p, size_t n, unsigned long long *size,
				     struct pl_error *err);

/* The same walk, handing each decompressed piece to `fn` (NULL: none),
 * which refuses the chunk by returning its error (filled) instead of
 * PL_OK. */
typedef enum pl_err (*coll_wire_piece_fn)(void *arg, const unsigned char *piece, size_t n,
					  struct pl_error *err);
enum pl_err coll_wire_zstd_walk(const void *p, size_t n, coll_wire_piece_fn fn, void *arg,
				unsigned long long *size, struct pl_error *err);

/* A flag-5 chunk (extension 4, perfchunk.c), checked as it decompresses:
 * the 16-byte pipe header, whole records (each at least its 8-byte
 * header), at least one event attribute, within AGENT_CHUNK_TEXT_MAX.  PL_OK
 * with the decompressed size in *size and the SAMPLE records in
 * *samples; else the walk's errors, PL_ERR_MALFORMED for bad framing and
 * PL_ERR_UNSUPPORTED for tracing or AUX data. */
enum pl_err coll_wire_perf_chunk_check(const void *p, size_t n, unsigned long long *size,
				       uint64_t *samples, struct pl_error *err);

/* HMAC-SHA256(key, "perflens-pair-v1 " role " " agent_nonce " " server_nonce)
 * as 64 lower-case hex characters plus a NUL. */
void coll_wire_pair_proof(const char *code, const char *role, const char *agent_nonce,
		     const char *server_nonce, char out[65]);

/* Constant-time equality of two NUL-terminated strings of the same
 * expected length. */
bool coll_wire_equal_ct(const char *a, const char *b);

/* 16 random bytes as 32 hex characters; false when urandom fails. */
bool coll_wire_nonce(char out[33]);

/* ----------------------------------------------------------- the spool */

struct spool {
	char id[128];
	char dir[4096];
	char device[128];
	unsigned next_chunk;        /* the index the next chunk gets */
	unsigned chunks;            /* written */
	unsigned long long wire_bytes, text_bytes;
	unsigned metrics;           /* frames kept */
	unsigned maps;              /* maps_NNNNN.json files */
	json_t *gaps;               /* [{chunk, reason}] */
	json_t *metrics_counts;     /* {type: n} */
	json_t *platform;           /* borrowed copy of the hello's */
	json_t *labels;             /* the hello's labels {KEY: VALUE} (a copy), or NULL */
	json_t *counters;           /* the agent's last counters, or NULL */
	json_t *capture;            /* what start answered, or NULL */
	json_t *write_errors;       /* {file: {error, count, first}}: what could not be written */
	char started[40], last_chunk[40];
	char ended[200];            /* why the capture ended on the device by itself, or "" */
	/* The capture's own clock (monotonic ms, 0 unknown): its start and
	 * stop answers and the last chunk, so a stop can size what did not
	 * come (spool_capture_tail); and the agent's counters at its start. */
	long long capture_t0_ms, capture_stop_ms, last_chunk_ms;
	long long paused_at_ms, paused_total_ms;  /* a pause in progress (0: none), and the time paused */
	long long resumed_ms;                     /* the last resume, 0 none */
	json_t *counters_at_start;  /* or NULL (a seed agent has none) */
	json_t *capture_counters;   /* what the agent says it sent for this capture, or NULL */
	double capture_seconds;     /* start answer to stop answer less the pauses, < 0 unknown */
	bool live;
	bool dir_made;
};

/* Open a new session for `device` (its folder is made on first data). */
void spool_open(struct spool *s, const char *artifact_root, const char *device,
		json_t *platform, json_t *labels);
/* A chunk (flag 0 text, 1 zstd or 5 perf.data): PL_OK, or it was not
 * written and a gap is recorded: PL_ERR_LIMIT (the fleet spool is full)
 * or PL_ERR_OUTPUT (the write failed). */
enum pl_err spool_chunk(struct spool *s, const void *p, size_t n, const char *suffix,
			unsigned long long text_bytes, struct pl_error *err);
/* One metrics frame appended to metrics.jsonl; true when it could not be
 * and that is a new kind of write error (the device's state should say). */
bool spool_metrics(struct spool *s, json_t *frame);
void spool_maps(struct spool *s, json_t *maps);
/* A chunk that never came whole (the link cut mid-frame): a gap. */
void spool_gap(struct spool *s, const char *reason);
/* A gap with its size: `gap` (new) gets the chunk index and the reason. */
void spool_gap_sized(struct spool *s, const char *reason, json_t *gap);
/* Finalize: live false, metrics.json; an empty session is removed.
 * True when the session's folder stays (it holds something). */
bool spool_close(struct spool *s);
/* metadata.json now (live or final). */
void spool_write_metadata(struct spool *s);
/* Make the session's folder now (and its first metadata.json):
 * PL_ERR_OUTPUT when it cannot be made (a read-only or full sessions
 * folder), so that a capture with nowhere to land is refused before the
 * device starts it. */
enum pl_err spool_make_dir_now(struct spool *s, struct pl_error *err);
/* At startup: recover the sessions an earlier server left live. */
void spool_sweep(const char *artifact_root);
/* "2026-12-01T21:00:00.123Z" */
void spool_now_iso(char *out, size_t cap);

/* A write for `what` (a file name) that failed with errno `e`, counted in
 * `errors` ({what: {error (the latest), count (every failed write),
 * first (when)}}: nothing the link could not keep is silent) and logged
 * when the file's error is new (its first, or another kind), naming
 * `owner` (a session or device id).  True then. */
bool coll_note_write_error(json_t *errors, const char *owner, const char *what, int e);

/* The agent's capture_problems of `answer` (status, stop) into the
 * capture's record (`capture`, the start answer kept) as `problems`
 * (problems.c); true when that changed the record (write the session's
 * metadata then). */
bool coll_capture_problems(json_t *capture, json_t *answer);

/* ------------------------------------------------------------- the log */

/* "perflens-mcp: agent link: ..." on stderr (log.c). */
void coll_link_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
