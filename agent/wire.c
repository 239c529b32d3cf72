/* wire.c - frame reader and sender (see wire.h). */
#include "wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

void frame_reader_init(struct frame_reader *r, size_t max)
{
	memset(r, 0, sizeof *r);
	r->max = max;
}

void frame_reader_release(struct frame_reader *r)
{
	free(r->payload);
	r->payload = NULL;
}

char *frame_reader_take(struct frame_reader *r)
{
	char *p = r->payload;
	r->payload = NULL;
	return p;
}

enum frame_status frame_reader_feed(struct frame_reader *r, const uint8_t *data, size_t n,
				    size_t *used)
{
	size_t pos = 0;
	*used = 0;
	if (r->done) {
		/* The last call returned a frame: free it unless it was taken. */
		free(r->payload);
		r->payload = NULL;
		r->hdr_fill = 0;
		r->done = 0;
	}
	while (pos < n) {
		if (r->hdr_fill < AGENT_FRAME_HEADER) {
			size_t take = AGENT_FRAME_HEADER - r->hdr_fill;
			if (take > n - pos)
				take = n - pos;
			memcpy(r->hdr + r->hdr_fill, data + pos, take);
			r->hdr_fill += take;
			pos += take;
			if (r->hdr_fill < AGENT_FRAME_HEADER)
				break;
			r->len = agent_frame_header_len(r->hdr);
			r->flag = r->hdr[4];
			if (r->len > r->max) {
				*used = pos;
				return FRAME_TOO_BIG;
			}
			if (r->len == 0) {
				r->hdr_fill = 0;
				continue;
			}
			r->payload = malloc((size_t)r->len + 1);
			if (!r->payload) {
				*used = pos;
				return FRAME_NOMEM;
			}
			r->fill = 0;
		}
		size_t take = r->len - r->fill;
		if (take > n - pos)
			take = n - pos;
		memcpy(r->payload + r->fill, data + pos, take);
		r->fill += take;
		pos += take;
		if (r->fill == r->len) {
			r->payload[r->len] = '\0';
			r->done = 1; /* reset on the next feed */
			*used = pos;
			return FRAME_DONE;
		}
	}
	*used = pos;
	return FRAME_MORE;
}

void wire_header(uint8_t out[AGENT_FRAME_HEADER], uint32_t len, uint8_t flag)
{
	agent_frame_header_put(out, len, flag);
}

static int send_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				errno = ETIMEDOUT;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int wire_send(int fd, uint8_t flag, const void *payload, size_t len)
{
	uint8_t hdr[AGENT_FRAME_HEADER];
	if (len > 0xffffffffu) {
		errno = EMSGSIZE;
		return -1;
	}
	wire_header(hdr, (uint32_t)len, flag);
	if (send_all(fd, hdr, sizeof hdr) < 0)
		return -1;
	return send_all(fd, payload, len);
}
