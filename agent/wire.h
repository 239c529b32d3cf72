/* wire.h - the seed's framing (collectors/agentlink/frame.h: a 5-byte
 * header, uint32 big-endian payload length and a flag, then the
 * payload).  frame_reader is incremental so the receiver thread and the
 * fuzz harness feed it the same way; it checks the length against its
 * cap on the header, before anything is allocated. */
#ifndef AGENT_WIRE_H
#define AGENT_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* The frame's flags, header and limits: one definition for the agent and
 * the server's link. */
#include "collectors/agentlink/frame.h"

struct frame_reader {
	uint8_t hdr[AGENT_FRAME_HEADER];
	size_t hdr_fill;
	uint32_t len;         /* payload length of the frame being read */
	uint8_t flag;
	char *payload;        /* len + 1 bytes, NUL-terminated when complete */
	size_t fill;
	size_t max;           /* cap on len; the owner may change it between frames */
	int done;             /* a complete frame was returned */
};

enum frame_status { FRAME_MORE = 0, FRAME_DONE = 1, FRAME_TOO_BIG = -1, FRAME_NOMEM = -2 };

void frame_reader_init(struct frame_reader *r, size_t max);
/* Consume bytes from data[0..n); *used says how many.  FRAME_DONE: one
 * frame is in r->payload/len/flag (owned by the reader until the next
 * feed; frame_reader_take() hands it over).  Zero-length frames are
 * skipped.  FRAME_TOO_BIG ends the stream: the length cannot be trusted. */
enum frame_status frame_reader_feed(struct frame_reader *r, const uint8_t *data, size_t n,
				    size_t *used);
char *frame_reader_take(struct frame_reader *r);
void frame_reader_release(struct frame_reader *r);

void wire_header(uint8_t out[AGENT_FRAME_HEADER], uint32_t len, uint8_t flag);
/* Send one frame on a blocking socket whose SO_SNDTIMEO bounds each send;
 * 0, or -1 with errno (ETIMEDOUT when the peer stopped reading). */
int wire_send(int fd, uint8_t flag, const void *payload, size_t len);

#endif
