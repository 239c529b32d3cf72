/* wire.c - the agent protocol's bytes: frames (a 5-byte header, uint32
 * big-endian length and a flag, then the payload), the socket options
 * that bound a peer that stops reading, the zstd check of a chunk, and
 * the pairing proof of extension 1 (docs/agent-protocol.md).
 *
 * A frame's length is checked against the caller's cap before anything
 * is allocated; a frame over it ends the link (its length cannot be
 * trusted, so the stream cannot be resynchronised).  A chunk is
 * decompressed only to count and check it (into a fixed scratch buffer,
 * discarded): the text is parsed by analyze_profile's sandboxed worker.
 */
#include "link_int.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nettle/hmac.h>
#include <zstd.h>

/* Why a recv() or send() failed, as the link's error (errno kept). */
static enum pl_err socket_fail(struct pl_error *err, int e, bool sending)
{
	if (e == EAGAIN || e == EWOULDBLOCK)
		return pl_fail(err, PL_ERR_TIMEOUT, NULL, "%s", sending
			       ? "the agent stopped reading (the send bound passed)"
			       : "the peer sent nothing in time");
	if (e == ETIMEDOUT && !sending)
		return pl_fail(err, PL_ERR_TIMEOUT, NULL, "the agent stopped reading or is gone (what the server "
			       "sent went unacknowledged for the send bound: TCP_USER_TIMEOUT)");
	return pl_fail(err, PL_ERR_EXTERNAL, NULL, "%s", strerror(e));
}

static enum pl_err read_exact(int fd, void *p, size_t n, struct pl_error *err)
{
	size_t off = 0;

	while (off < n) {
		ssize_t r = recv(fd, (char *)p + off, n - off, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			return pl_fail(err, PL_ERR_EXTERNAL, NULL, "%s",
				       off ? "the link closed mid-frame" : "the link closed");
		if (r < 0)
			return socket_fail(err, errno, false);
		off += (size_t)r;
	}
	return PL_OK;
}

enum pl_err coll_wire_read(int fd, uint32_t cap, struct wire_frame *f, struct pl_error *err)
{
	unsigned char h[AGENT_FRAME_HEADER];
	enum pl_err rc;

	f->data = NULL;
	f->len = 0;
	f->flag = 0xff;  /* unknown until the header is whole */
	if ((rc = read_exact(fd, h, sizeof(h), err)))
		return rc;
	f->len = agent_frame_header_len(h);
	f->flag = h[4];
	if (f->len > cap)
		return pl_fail(err, PL_ERR_LIMIT, NULL, "a frame header claims %u bytes, over the cap of %u",
			       f->len, cap);
	if (f->len == 0)
		return PL_OK;
	f->data = malloc((size_t)f->len + 1);
	if (!f->data)
		return pl_fail(err, PL_ERR_LIMIT, NULL, "out of memory for a %u-byte frame", f->len);
	if ((rc = read_exact(fd, f->data, f->len, err))) {
		free(f->data);
		f->data = NULL;
		return rc;
	}
	f->data[f->len] = '\0';
	return PL_OK;
}

enum pl_err coll_wire_send(int fd, uint8_t flag, const void *p, size_t len, struct pl_error *err)
{
	unsigned char h[AGENT_FRAME_HEADER];
	const unsigned char *parts[2] = {h, p};
	size_t sizes[2] = {sizeof(h), len};

	agent_frame_header_put(h, (uint32_t)len, flag);
	for (int i = 0; i < 2; i++)
		for (size_t off = 0; off < sizes[i];) {
			ssize_t w = send(fd, parts[i] + off, sizes[i] - off, MSG_NOSIGNAL);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return socket_fail(err, w < 0 ? errno : EPIPE, true);
			off += (size_t)w;
		}
	return PL_OK;
}

void coll_wire_socket_opts(int fd, unsigned send_ms)
{
	int one = 1, idle = 30, intvl = 5, cnt = 4;
	unsigned user_timeout = send_ms;
	struct timeval tv = {send_ms / 1000, (send_ms % 1000) * 1000};

	fcntl(fd, F_SETFD, FD_CLOEXEC);
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* One zstd stream over the chunk: PL_OK at its end, or what is wrong
 * with it (a piece `fn` refused included); *total counts the bytes. */
static enum pl_err walk_stream(ZSTD_DCtx *dc, ZSTD_inBuffer *in, unsigned char *scratch, size_t scratch_len,
			       coll_wire_piece_fn fn, void *arg, unsigned long long *total,
			       struct pl_error *err)
{
	size_t r = 1;
	enum pl_err rc;

	while (in->pos < in->size || r != 0) {
		ZSTD_outBuffer out = {scratch, scratch_len, 0};
		r = ZSTD_decompressStream(dc, &out, in);
		if (ZSTD_isError(r))
			return pl_fail(err, PL_ERR_MALFORMED, NULL, "a zstd chunk that does not decompress: %s",
				       ZSTD_getErrorName(r));
		*total += out.pos;
		if (*total > AGENT_CHUNK_TEXT_MAX)
			return pl_fail(err, PL_ERR_LIMIT, NULL, "a chunk over %llu MB decompressed", AGENT_CHUNK_TEXT_MAX >> 20);
		if (fn && out.pos && (rc = fn(arg, scratch, out.pos, err)))
			return rc;
		if (r == 0 && in->pos < in->size)
			return pl_fail(err, PL_ERR_MALFORMED, NULL, "a zstd chunk with bytes after its frame");
		if (r != 0 && in->pos == in->size && out.pos < out.size)
			return pl_fail(err, PL_ERR_MALFORMED, NULL, "a zstd chunk whose frame is cut short");
	}
	return PL_OK;
}

enum pl_err coll_wire_zstd_walk(const void *p, size_t n, coll_wire_piece_fn fn, void *arg,
				unsigned long long *size, struct pl_error *err)
{
	/* Per call, not per thread: a thread-local buffer outlived nothing
	 * but leaked 1 MB with every reader thread that ended. */
	const size_t scratch_len = 1u << 20;
	unsigned char *scratch;
	ZSTD_DCtx *dc = NULL;
	ZSTD_inBuffer in = {p, n, 0};
	enum pl_err rc;

	*size = 0;
	if (n < 4 || memcmp(p, "\x28\xb5\x2f\xfd", 4) != 0)
		return pl_fail(err, PL_ERR_MALFORMED, NULL, "a zstd chunk that does not start with the zstd magic");
	if (!(scratch = malloc(scratch_len)) || !(dc = ZSTD_createDCtx())) {
		free(scratch);
		return pl_fail(err, PL_ERR_LIMIT, NULL, "out of memory");
	}
	ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, 27);
	rc = walk_stream(dc, &in, scratch, scratch_len, fn, arg, size, err);
	ZSTD_freeDCtx(dc);
	free(scratch);
	return rc;
}

enum pl_err coll_wire_zstd_text_size(const void *p, size_t n, unsigned long long *size,
				     struct pl_error *err)
{
	return coll_wire_zstd_walk(p, n, NULL, NULL, size, err);
}

void coll_wire_pair_proof(const char *code, const char *role, const char *agent_nonce,
		     const char *server_nonce, char out[65])
{
	struct hmac_sha256_ctx h;
	uint8_t mac[SHA256_DIGEST_SIZE];
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "perflens-pair-v1 %s %s %s", role, agent_nonce, server_nonce);

	hmac_sha256_set_key(&h, strlen(code), (const uint8_t *)code);
	hmac_sha256_update(&h, (size_t)n, (const uint8_t *)msg);
	hmac_sha256_digest(&h, sizeof(mac), mac);
	pl_hex(mac, sizeof(mac), out);
	out[64] = '\0';
	memset(&h, 0, sizeof(h));
}

bool coll_wire_equal_ct(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	unsigned char d = na != nb;

	for (size_t i = 0; i < na && i < nb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

bool coll_wire_nonce(char out[33])
{
	unsigned char b[16];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && pl_read_full(fd, b, sizeof(b)) == sizeof(b);

	if (fd >= 0)
		close(fd);
	if (!ok)
		return false;
	pl_hex(b, sizeof(b), out);
	out[32] = '\0';
	return true;
}
