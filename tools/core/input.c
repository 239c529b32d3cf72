/* input.c - file reading, decompression and line splitting (see input.h).
 *
 * Raw bytes are read in 1 MiB blocks and either copied or decompressed
 * into a window buffer; lines are found with memchr.  The window holds at
 * most one line limit plus one block, so memory stays bounded whatever the
 * input size.  Gzip members and zstd frames may be concatenated (as a
 * streaming agent writes them).
 *
 * Threading: for files over one block, SHA-256 runs in a second thread so
 * that it overlaps parsing.  Blocks are read into a ring of RING_SLOTS
 * buffers; the reader hands each block to the hasher in order and reuses a
 * slot only after the hasher is done with it, so the digest covers exactly
 * the bytes that were parsed.  Only the hasher touches the SHA context
 * until pl_input_sha256 waits for it to drain; the mutex guards the two
 * counters and the stop flag.  Small files are hashed inline.
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <zlib.h>
#include <zstd.h>

#define RAW_BLOCK (1u << 20)
#define RING_SLOTS 4

/* The hashing thread and the ring of raw blocks it shares with the reader. */
struct hasher {
	pthread_t thread;
	bool running;              /* the thread was started */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *slot[RING_SLOTS];
	size_t len[RING_SLOTS];
	uint64_t posted;           /* blocks handed over (reader writes) */
	uint64_t hashed;           /* blocks hashed (hasher writes) */
	bool stop;
};

struct pl_input_state {
	int fd;
	struct pl_limits lim;
	struct sha256_ctx sha;
	struct hasher h;
	unsigned char *raw;        /* compressed bytes read, not yet consumed */
	size_t raw_pos, raw_len;
	bool raw_eof;
	z_stream z;
	bool z_ready;
	ZSTD_DCtx *zs;
	bool zs_between_frames;    /* the last zstd call ended a frame */
	char *win;                 /* decompressed window */
	size_t win_cap, win_start, win_end;
	bool out_eof;              /* no more decompressed bytes will come */
};

const char *pl_codec_name(enum pl_codec c)
{
	switch (c) {
	case PL_CODEC_GZIP: return "gzip";
	case PL_CODEC_ZSTD: return "zstd";
	default: return "none";
	}
}

/* ------------------------------------------------------------ hashing */

static void *hasher_main(void *arg)
{
	struct pl_input_state *st = arg;
	struct hasher *h = &st->h;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		uint64_t k;
		while (h->hashed == h->posted && !h->stop)
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->hashed == h->posted)
			break;
		k = h->hashed % RING_SLOTS;
		pthread_mutex_unlock(&h->mu);
		sha256_update(&st->sha, h->len[k], h->slot[k]);
		pthread_mutex_lock(&h->mu);
		h->hashed++;
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

/* Start the hasher; without it (small file, or no thread could be made)
 * every block is hashed inline in one buffer. */
static void hasher_start(struct pl_input_state *st, uint64_t file_size)
{
	struct hasher *h = &st->h;

	h->slot[0] = pl_xmalloc(RAW_BLOCK);
	if (file_size <= RAW_BLOCK)
		return;
	for (size_t i = 1; i < RING_SLOTS; i++)
		h->slot[i] = pl_xmalloc(RAW_BLOCK);
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	h->running = pthread_create(&h->thread, NULL, hasher_main, st) == 0;
	if (!h->running) {
		pthread_mutex_destroy(&h->mu);
		pthread_cond_destroy(&h->cv);
	}
}

/* The buffer the next block goes to: a slot the hasher is done with. */
static unsigned char *hasher_slot(struct hasher *h)
{
	unsigned char *slot;

	if (!h->running)
		return h->slot[0];
	pthread_mutex_lock(&h->mu);
	while (h->posted - h->hashed >= RING_SLOTS)
		pthread_cond_wait(&h->cv, &h->mu);
	slot = h->slot[h->posted % RING_SLOTS];
	pthread_mutex_unlock(&h->mu);
	return slot;
}

/* Hash the `n` bytes just read into the slot hasher_slot gave. */
static void hasher_post(struct pl_input_state *st, size_t n)
{
	struct hasher *h = &st->h;

	if (!h->running) {
		sha256_update(&st->sha, n, h->slot[0]);
		return;
	}
	if (n == 0)
		return;
	pthread_mutex_lock(&h->mu);
	h->len[h->posted % RING_SLOTS] = n;
	h->posted++;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* Wait until every posted block is hashed (the SHA context is then the
 * reader's to look at). */
static void hasher_drain(struct hasher *h)
{
	if (!h->running)
		return;
	pthread_mutex_lock(&h->mu);
	while (h->hashed != h->posted)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

static void hasher_stop(struct hasher *h)
{
	if (h->running) {
		pthread_mutex_lock(&h->mu);
		h->stop = true;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->thread, NULL);
		pthread_mutex_destroy(&h->mu);
		pthread_cond_destroy(&h->cv);
		h->running = false;
	}
	for (size_t i = 0; i < RING_SLOTS; i++)
		free(h->slot[i]);
}

/* ------------------------------------------------------------ reading */

static enum pl_err read_raw(struct pl_input *in, struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	unsigned char *buf;
	ssize_t n;

	if (st->raw_pos < st->raw_len || st->raw_eof)
		return PL_OK;
	buf = hasher_slot(&st->h);
	do {
		n = read(st->fd, buf, RAW_BLOCK);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return pl_fail(err, PL_ERR_INPUT, "check the file and its permissions",
			       "cannot read '%s': %s", in->path, strerror(errno));
	if (n == 0)
		st->raw_eof = true;
	hasher_post(st, (size_t)n);
	st->raw = buf;
	st->raw_pos = 0;
	st->raw_len = (size_t)n;
	return PL_OK;
}

/* Decompress (or copy) into win[win_end..win_cap); false when stuck. */
static enum pl_err fill_gzip(struct pl_input *in, struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	int rc;

	st->z.next_in = st->raw + st->raw_pos;
	st->z.avail_in = (uInt)(st->raw_len - st->raw_pos);
	st->z.next_out = (Bytef *)st->win + st->win_end;
	st->z.avail_out = (uInt)(st->win_cap - st->win_end);
	rc = inflate(&st->z, Z_NO_FLUSH);
	st->raw_pos = st->raw_len - st->z.avail_in;
	st->win_end = st->win_cap - st->z.avail_out;
	if (rc == Z_STREAM_END) {
		/* Another gzip member may follow. */
		if (read_raw(in, err))
			return err->code;
		if (st->raw_pos == st->raw_len && st->raw_eof)
			st->out_eof = true;
		else
			inflateReset(&st->z);
		return PL_OK;
	}
	if (rc != Z_OK && rc != Z_BUF_ERROR)
		return pl_fail(err, PL_ERR_MALFORMED, "the file is not valid gzip; decompress it and check it",
			       "gzip data in '%s' is corrupt: %s", in->path,
			       st->z.msg ? st->z.msg : "inflate failed");
	if (st->raw_eof && st->raw_pos == st->raw_len && rc == Z_BUF_ERROR)
		return pl_fail(err, PL_ERR_MALFORMED, "the file was cut short; copy it again",
			       "gzip data in '%s' is truncated", in->path);
	return PL_OK;
}

static enum pl_err fill_zstd(struct pl_input *in, struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	ZSTD_inBuffer ib = {st->raw, st->raw_len, st->raw_pos};
	ZSTD_outBuffer ob = {st->win, st->win_cap, st->win_end};
	size_t rc = ZSTD_decompressStream(st->zs, &ob, &ib);

	if (ZSTD_isError(rc))
		return pl_fail(err, PL_ERR_MALFORMED, "the file is not valid zstd; decompress it and check it",
			       "zstd data in '%s' is corrupt: %s", in->path,
			       ZSTD_getErrorName(rc));
	if (ib.pos > st->raw_pos || ob.pos > st->win_end)
		st->zs_between_frames = rc == 0;
	st->raw_pos = ib.pos;
	st->win_end = ob.pos;
	if (st->raw_eof && st->raw_pos == st->raw_len && ob.pos < ob.size) {
		if (!st->zs_between_frames)
			return pl_fail(err, PL_ERR_MALFORMED, "the file was cut short; copy it again",
				       "zstd data in '%s' is truncated", in->path);
		st->out_eof = true;
	}
	return PL_OK;
}

static enum pl_err fill_plain(struct pl_input *in)
{
	struct pl_input_state *st = in->st;
	size_t n = st->raw_len - st->raw_pos;
	size_t room = st->win_cap - st->win_end;

	if (n > room)
		n = room;
	memcpy(st->win + st->win_end, st->raw + st->raw_pos, n);
	st->raw_pos += n;
	st->win_end += n;
	if (st->raw_eof && st->raw_pos == st->raw_len)
		st->out_eof = true;
	return PL_OK;
}

/* Make room and add more decompressed bytes to the window. */
static enum pl_err fill_window(struct pl_input *in, struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	size_t before;
	enum pl_err rc;

	if (st->win_start > 0) {
		memmove(st->win, st->win + st->win_start, st->win_end - st->win_start);
		st->win_end -= st->win_start;
		st->win_start = 0;
	}
	before = st->win_end;
	while (!st->out_eof && st->win_end == before && st->win_end < st->win_cap) {
		if ((rc = read_raw(in, err)))
			return rc;
		if (in->codec == PL_CODEC_GZIP)
			rc = fill_gzip(in, err);
		else if (in->codec == PL_CODEC_ZSTD)
			rc = fill_zstd(in, err);
		else
			rc = fill_plain(in);
		if (rc)
			return rc;
	}
	in->bytes_out += st->win_end - before;
	if (in->bytes_out > st->lim.max_input_bytes)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-input-bytes, or split the capture",
			       "'%s' holds more than %llu bytes of profile text", in->path,
			       (unsigned long long)st->lim.max_input_bytes);
	return PL_OK;
}

static enum pl_codec sniff_codec(const unsigned char *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return PL_CODEC_GZIP;
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return PL_CODEC_ZSTD;
	return PL_CODEC_NONE;
}

static enum pl_err open_codec(struct pl_input *in, struct pl_error *err)
{
	struct pl_input_state *st = in->st;

	in->codec = sniff_codec(st->raw, st->raw_len);
	if (in->codec == PL_CODEC_GZIP) {
		if (inflateInit2(&st->z, 15 + 32) != Z_OK)
			return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot start zlib");
		st->z_ready = true;
	} else if (in->codec == PL_CODEC_ZSTD) {
		st->zs = ZSTD_createDCtx();
		if (!st->zs)
			return pl_fail(err, PL_ERR_INTERNAL, NULL, "cannot start zstd");
	}
	return PL_OK;
}

enum pl_err pl_input_open(struct pl_input *in, const char *path,
			  const struct pl_limits *lim, struct pl_error *err)
{
	struct pl_input_state *st;
	struct stat sb;
	int fd;

	memset(in, 0, sizeof(*in));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return pl_fail(err, PL_ERR_INPUT, "check the path; list the folder to see what is there",
			       "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return pl_fail(err, PL_ERR_INPUT, "pass a regular file (not a folder, FIFO or device)",
			       "'%s' is not a regular file", path);
	}
	fcntl(fd, F_SETFL, 0);
	st = pl_xcalloc(1, sizeof(*st));
	st->lim = *lim;
	sha256_init(&st->sha);
	st->fd = fd;
	hasher_start(st, (uint64_t)sb.st_size);
	st->raw = st->h.slot[0];
	st->win_cap = (size_t)lim->max_line + RAW_BLOCK + 1;
	st->win = pl_xmalloc(st->win_cap);
	in->st = st;
	in->path = pl_xstrndup(path, strlen(path));
	in->file_size = (uint64_t)sb.st_size;
	if (read_raw(in, err) || open_codec(in, err)) {
		pl_input_close(in);
		return err->code;
	}
	return PL_OK;
}

int pl_input_line(struct pl_input *in, const char **line, size_t *len,
		  struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	size_t scanned = 0;

	for (;;) {
		char *start = st->win + st->win_start;
		size_t avail = st->win_end - st->win_start;
		char *nl = memchr(start + scanned, '\n', avail - scanned);
		size_t n;

		if (nl || (st->out_eof && avail > 0)) {
			n = nl ? (size_t)(nl - start) : avail;
			if (n > st->lim.max_line) {
				pl_fail(err, PL_ERR_LIMIT, "raise --max-line, or check that this is a text profile",
					"line %llu of '%s' is longer than %llu bytes",
					(unsigned long long)in->line_no + 1, in->path,
					(unsigned long long)st->lim.max_line);
				return -1;
			}
			st->win_start += nl ? n + 1 : n;
			if (n > 0 && start[n - 1] == '\r')
				n--;
			in->line_no++;
			*line = start;
			*len = n;
			return 1;
		}
		if (st->out_eof)
			return 0;
		if (avail > st->lim.max_line) {
			pl_fail(err, PL_ERR_LIMIT, "raise --max-line, or check that this is a text profile",
				"line %llu of '%s' is longer than %llu bytes",
				(unsigned long long)in->line_no + 1, in->path,
				(unsigned long long)st->lim.max_line);
			return -1;
		}
		scanned = avail;
		if (fill_window(in, err))
			return -1;
	}
}

size_t pl_input_peek(struct pl_input *in, char *buf, size_t cap,
		     struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	size_t avail;

	while (st->win_end - st->win_start < cap && !st->out_eof) {
		size_t before = st->win_end - st->win_start;
		if (fill_window(in, err))
			return 0;
		if (st->win_end - st->win_start == before)
			break;
	}
	avail = st->win_end - st->win_start;
	if (avail > cap)
		avail = cap;
	memcpy(buf, st->win + st->win_start, avail);
	return avail;
}

void pl_input_sha256(struct pl_input *in, char out[65])
{
	unsigned char digest[SHA256_DIGEST_SIZE];
	struct sha256_ctx copy;

	hasher_drain(&in->st->h);
	copy = in->st->sha;

	sha256_digest(&copy, sizeof(digest), digest);
	pl_hex(digest, sizeof(digest), out);
}

void pl_input_close(struct pl_input *in)
{
	struct pl_input_state *st = in->st;

	if (st) {
		if (st->z_ready)
			inflateEnd(&st->z);
		ZSTD_freeDCtx(st->zs);
		hasher_stop(&st->h);
		if (st->fd >= 0)
			close(st->fd);
		free(st->win);
		free(st);
	}
	free(in->path);
	memset(in, 0, sizeof(*in));
}
