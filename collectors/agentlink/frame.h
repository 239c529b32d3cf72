/* frame.h - the agent protocol's frame, written once for both ends: the
 * device agent (agent/wire.c, static, libc only) and the server's link
 * (wire.c) include this and nothing else of each other.
 *
 * A frame is a 5-byte header (the payload's length, uint32 big-endian,
 * then a flag) and the payload (docs/agent-protocol.md).  The limits are
 * one table: a reader checks a header's length against the one that
 * applies before it allocates anything, and a frame over it ends the link
 * (its length cannot be trusted, so the stream cannot be resynchronised).
 * Pure C with no dependency, so the static agent can carry it. */
#ifndef COLL_AGENTLINK_FRAME_H
#define COLL_AGENTLINK_FRAME_H

#include <stdint.h>

/* The flags.  AGENT_FRAME_PERF_DATA: extension 4, only on a link that
 * negotiated "perf_data": one zstd frame of a whole pipe-mode perf.data. */
enum agent_frame_flag {
	AGENT_FRAME_RAW = 0,        /* perf script text (a chunk) */
	AGENT_FRAME_ZSTD = 1,       /* the same as one complete zstd frame */
	AGENT_FRAME_CMD = 2,        /* server -> agent JSON {id, cmd, args} */
	AGENT_FRAME_RESP = 3,       /* agent -> server JSON (the hello too) */
	AGENT_FRAME_METRICS = 4,    /* one health snapshot (JSON) */
	AGENT_FRAME_PERF_DATA = 5,
};

#define AGENT_FRAME_HEADER 5

/* The limits, both ends. */
#define AGENT_FRAME_PREAUTH_MAX (64u << 10)   /* a frame before the peer proved the pairing code */
#define AGENT_FRAME_MAX (80u << 20)           /* a frame after it */
#define AGENT_CHUNK_TEXT_MAX (256ull << 20)   /* a chunk's text, decompressed (the server checks) */
#define AGENT_MAPS_MAX (1u << 20)             /* a maps frame (extension 2) */
#define AGENT_MAPS_ENTRIES 4096               /* its mappings */

static inline void agent_frame_header_put(uint8_t out[AGENT_FRAME_HEADER], uint32_t len, uint8_t flag)
{
	out[0] = (uint8_t)(len >> 24);
	out[1] = (uint8_t)(len >> 16);
	out[2] = (uint8_t)(len >> 8);
	out[3] = (uint8_t)len;
	out[4] = flag;
}

static inline uint32_t agent_frame_header_len(const uint8_t h[AGENT_FRAME_HEADER])
{
	return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

#endif
