/* input.c - file reading, decompression and line splitting (see input.h).
 *
 * Raw bytes are read in 256 KiB blocks; lines are found with memchr.  Plain
 * text is handed out in place, and only a line that runs across blocks is
 * copied into a window of one line limit.  Compressed input is decompressed
 * into a window of one line limit plus one block.  Either way memory stays
 * bounded whatever the input size.  Gzip members and zstd frames may be
 * concatenated (as a streaming agent writes them).
 *
 * Threading: for files of THREADS_FROM or more, a reader thread keeps the
 * read system calls and the SHA-256 off the parser's path.  It reads into
 * a ring of RING_SLOTS blocks, publishes each block, then hashes it; the
 * parser takes blocks in order and gives each back when it moves on, and
 * the reader refills only given-back slots (which it has hashed by then).
 * While the ring is full (the parser is the slower side) the reader hashes
 * ahead instead of waiting: it reads the next blocks a second time with
 * pread into a buffer of its own, hashes them and keeps a keyed 64-bit
 * fingerprint and the length of each; when such a block later comes
 * through the ring it is checked against both, and a difference (the file
 * changed in between) fails the read.  So the digest still covers exactly
 * the bytes that were parsed, and the hashing of a big file no longer
 * waits for the parser's slow stretches.  Only the reader touches the SHA
 * context until pl_input_sha256 waits for it to finish; one mutex guards
 * the counters and flags, and a side is woken only when it waits.  Small
 * files are read and hashed inline.
 */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <zlib.h>
#include <zstd.h>

#define RAW_BLOCK (1u << 18)
#define RING_SLOTS 8
/* Below this, reading and hashing inline costs less than starting and
 * feeding two threads. */
#define THREADS_FROM (16 * RAW_BLOCK)

/* An error[] value: the block differs from what was hashed ahead. */
#define READ_CHANGED (-1)

/* The reading thread and the ring of blocks it shares with the parser.
 * Blocks are numbered from 0; block k lives in slot k % RING_SLOTS. */
enum { W_READER, W_PARSER, W_ROLES };
struct reader {
	pthread_t thread;
	bool running;              /* the thread was started */
	pthread_mutex_t mu;
	pthread_cond_t cv[W_ROLES];  /* one per side */
	bool waiting[W_ROLES];     /* a side waits on its condition */
	unsigned char *slot[RING_SLOTS];
	size_t len[RING_SLOTS];
	int error[RING_SLOTS];     /* errno of a failed read, else 0 */
	uint64_t filled;           /* blocks published (reader writes) */
	uint64_t next;             /* blocks the parser took (parser writes) */
	bool last;                 /* the block before `filled` ended the file */
	bool done;                 /* the reader has hashed all it read */
	bool stop;                 /* the parser closes the input */
	/* Hashing ahead; the reader's alone. */
	uint64_t hashed;           /* blocks fed to the SHA-256 */
	bool ahead_end;            /* a block read ahead ended the file */
	uint64_t ahead_cap;        /* blocks that may be hashed ahead */
	uint64_t *ahead_fp;        /* [block] fingerprint of what was hashed */
	uint32_t *ahead_len;       /* [block] its length */
	unsigned char *ahead_buf;  /* RAW_BLOCK bytes */
	uint64_t fp_key;           /* fingerprint seed, different every run */
};

struct pl_input_state {
	int fd;
	struct pl_limits lim;
	struct sha256_ctx sha;
	struct reader rd;
	unsigned char *raw;        /* the current block (plain text or compressed) */
	size_t raw_pos, raw_len;
	bool raw_eof;
	z_stream z;
	bool z_ready;
	ZSTD_DCtx *zs;
	bool zs_between_frames;    /* the last zstd call ended a frame */
	char *win;                 /* decompressed window (plain: the carry) */
	size_t win_cap, win_start, win_end;
	bool out_eof;              /* no more decompressed bytes will come */
	bool carry_out;            /* plain: the last line handed out was the window */
};

const char *pl_codec_name(enum pl_codec c)
{
	switch (c) {
	case PL_CODEC_GZIP: return "gzip";
	case PL_CODEC_ZSTD: return "zstd";
	default: return "none";
	}
}

/* ------------------------------------------------------------ reading */

/* Read a whole block (a short read is not the end of a file), from the
 * file position, or with pread at `off` when it is not -1; returns the
 * byte count, or -1 with errno set. */
static ssize_t read_block_at(int fd, unsigned char *buf, int64_t off)
{
	size_t got = 0;

	while (got < RAW_BLOCK) {
		ssize_t n = off < 0 ? read(fd, buf + got, RAW_BLOCK - got) :
			    pread(fd, buf + got, RAW_BLOCK - got, (off_t)(off + (int64_t)got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static ssize_t read_block(int fd, unsigned char *buf)
{
	return read_block_at(fd, buf, -1);
}

/* Slots the reader may fill: those given back (the parser still holds
 * block next - 1). */
static uint64_t free_slots(const struct reader *r)
{
	return RING_SLOTS - (r->filled - (r->next ? r->next - 1 : 0));
}

/* Wait as `role` (mutex held). */
static void wait_as(struct reader *r, int role)
{
	r->waiting[role] = true;
	pthread_cond_wait(&r->cv[role], &r->mu);
	r->waiting[role] = false;
}

/* Wake a side if it waits (mutex held): a block handed over costs no
 * system call while the other side is busy. */
static void wake(struct reader *r, int role)
{
	if (r->waiting[role])
		pthread_cond_signal(&r->cv[role]);
}

static void wake_all(struct reader *r)
{
	for (int i = 0; i < W_ROLES; i++)
		pthread_cond_broadcast(&r->cv[i]);
}

/* A keyed 64-bit fingerprint of a block: eight independent lanes, each
 * word xored in and multiplied by an odd constant (a bijection, so a
 * changed word changes its lane), the lanes folded with 128-bit multiplies
 * at the end.  About 20 GB/s on the project's VM, several times a single
 * chain of multiplies such as pl_hash: it runs on the reader thread, the
 * slower side when the parser is fast. */
static uint64_t fingerprint(const unsigned char *p, size_t n, uint64_t key)
{
	const uint64_t k = 0xe7037ed1a0b428dbULL | 1;
	uint64_t a = key, b = key + 1, c = key + 2, d = key + 3;
	uint64_t e = key + 4, f = key + 5, g = key + 6, h = key + 7, t[8] = {0};

	for (; n >= 64; p += 64, n -= 64) {
		a = (a ^ pl_load_u64(p)) * k;
		b = (b ^ pl_load_u64(p + 8)) * k;
		c = (c ^ pl_load_u64(p + 16)) * k;
		d = (d ^ pl_load_u64(p + 24)) * k;
		e = (e ^ pl_load_u64(p + 32)) * k;
		f = (f ^ pl_load_u64(p + 40)) * k;
		g = (g ^ pl_load_u64(p + 48)) * k;
		h = (h ^ pl_load_u64(p + 56)) * k;
	}
	memcpy(t, p, n);
	return pl_mul_fold(a ^ t[0] ^ n, b ^ t[1]) ^ pl_mul_fold(c ^ t[2], d ^ t[3]) ^
	       pl_mul_fold(e ^ t[4], f ^ t[5]) ^ pl_mul_fold(g ^ t[6], h ^ t[7] ^ k);
}


/* Hash the next block ahead of the ring (mutex not held); false when
 * there is nothing more to hash ahead. */
static bool hash_ahead(struct pl_input_state *st)
{
	struct reader *r = &st->rd;
	uint64_t b = r->hashed;
	ssize_t n;

	if (r->ahead_end || b >= r->ahead_cap)
		return false;
	n = read_block_at(st->fd, r->ahead_buf, (int64_t)(b * RAW_BLOCK));
	if (n < 0) {
		/* Leave the block to the ring, which reports the error. */
		r->ahead_end = true;
		return false;
	}
	sha256_update(&st->sha, (size_t)n, r->ahead_buf);
	r->ahead_fp[b] = fingerprint(r->ahead_buf, (size_t)n, r->fp_key);
	r->ahead_len[b] = (uint32_t)n;
	r->hashed = b + 1;
	r->ahead_end = n < (ssize_t)RAW_BLOCK;
	return true;
}

/* A block read into the ring that was hashed ahead: 0 when it is what
 * was hashed, READ_CHANGED when the file changed in between. */
static int check_ahead(const struct reader *r, uint64_t b, const unsigned char *buf,
		       ssize_t n)
{
	if ((uint32_t)n != r->ahead_len[b] || fingerprint(buf, (size_t)n, r->fp_key) != r->ahead_fp[b])
		return READ_CHANGED;
	return 0;
}

static void *reader_main(void *arg)
{
	struct pl_input_state *st = arg;
	struct reader *r = &st->rd;
	bool last = false;

	pthread_mutex_lock(&r->mu);
	while (!last) {
		uint64_t k, b;
		ssize_t n;
		bool pre;
		int e;
		/* A full ring hashes ahead while it can, then waits until half
		 * of it is free: one wake-up for several blocks. */
		if (!free_slots(r)) {
			bool more = true;
			while (!r->stop && free_slots(r) < RING_SLOTS / 2 && more) {
				pthread_mutex_unlock(&r->mu);
				more = hash_ahead(st);
				pthread_mutex_lock(&r->mu);
			}
			while (!r->stop && free_slots(r) < RING_SLOTS / 2)
				wait_as(r, W_READER);
		}
		if (r->stop)
			break;
		b = r->filled;
		k = b % RING_SLOTS;
		pthread_mutex_unlock(&r->mu);
		n = read_block(st->fd, r->slot[k]);
		e = n < 0 ? errno : 0;
		pre = b < r->hashed;
		if (pre && n >= 0)
			e = check_ahead(r, b, r->slot[k], n);
		pthread_mutex_lock(&r->mu);
		r->error[k] = e;
		r->len[k] = e ? 0 : (size_t)n;
		r->last = last = e || n < (ssize_t)RAW_BLOCK;
		r->filled++;
		wake(r, W_PARSER);
		pthread_mutex_unlock(&r->mu);
		/* The parser may read the block meanwhile; the slot is not
		 * refilled before this thread comes back for it. */
		if (!pre && n > 0) {
			sha256_update(&st->sha, (size_t)n, r->slot[k]);
			r->hashed = b + 1;
		}
		pthread_mutex_lock(&r->mu);
	}
	r->done = true;
	wake(r, W_PARSER);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* A seed no file can be made for in advance: the fingerprints only have
 * to tell a changed block from the one hashed, within one run. */
static uint64_t fingerprint_key(const void *addr)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return pl_hash(&ts, sizeof(ts), (uint64_t)(uintptr_t)addr ^ (uint64_t)getpid());
}

/* Start the reader; without it (small file, or no thread could be made)
 * every block is read and hashed inline, in one buffer. */
static void reader_start(struct pl_input_state *st, uint64_t file_size)
{
	struct reader *r = &st->rd;

	r->slot[0] = pl_xmalloc(RAW_BLOCK);
	if (file_size < THREADS_FROM)
		return;
	for (size_t i = 0; i < RING_SLOTS; i++) {
		if (i)
			r->slot[i] = pl_xmalloc(RAW_BLOCK);
		pl_prefault(r->slot[i], RAW_BLOCK);
	}
	/* Hashing ahead covers the file as it was at open and what the input
	 * limit lets the parser read (a grown file's tail goes through the
	 * ring as before). */
	r->ahead_cap = file_size / RAW_BLOCK + 1;
	if (r->ahead_cap > st->lim.max_input_bytes / RAW_BLOCK + 2)
		r->ahead_cap = st->lim.max_input_bytes / RAW_BLOCK + 2;
	r->ahead_fp = pl_xmalloc(r->ahead_cap * sizeof(*r->ahead_fp));
	r->ahead_len = pl_xmalloc(r->ahead_cap * sizeof(*r->ahead_len));
	r->ahead_buf = pl_xmalloc(RAW_BLOCK);
	r->fp_key = fingerprint_key(r);
	pthread_mutex_init(&r->mu, NULL);
	for (int i = 0; i < W_ROLES; i++)
		pthread_cond_init(&r->cv[i], NULL);
	r->running = pthread_create(&r->thread, NULL, reader_main, st) == 0;
	if (r->running)
		return;
	pthread_mutex_destroy(&r->mu);
	for (int i = 0; i < W_ROLES; i++)
		pthread_cond_destroy(&r->cv[i]);
}

/* The next block from the reader thread (giving back the current one):
 * its bytes, or 0 bytes at the end, or -1 with errno set. */
static ssize_t reader_take(struct reader *r, unsigned char **buf)
{
	ssize_t n;
	uint64_t k;
	int e;

	pthread_mutex_lock(&r->mu);
	while (r->filled == r->next && !r->last)
		wait_as(r, W_PARSER);
	if (r->filled == r->next) {
		pthread_mutex_unlock(&r->mu);
		*buf = r->slot[0];
		return 0;
	}
	k = r->next++ % RING_SLOTS;
	if (free_slots(r) >= RING_SLOTS / 2)
		wake(r, W_READER);
	*buf = r->slot[k];
	e = r->error[k];
	n = e ? -1 : (ssize_t)r->len[k];
	pthread_mutex_unlock(&r->mu);
	errno = e;
	return n;
}

/* Wait until the reader has hashed everything (then the SHA context is
 * the parser's to look at). */
static void reader_finish(struct reader *r)
{
	if (!r->running)
		return;
	pthread_mutex_lock(&r->mu);
	while (!r->done)
		wait_as(r, W_PARSER);
	pthread_mutex_unlock(&r->mu);
}

static void reader_stop(struct reader *r)
{
	if (r->running) {
		pthread_mutex_lock(&r->mu);
		r->stop = true;
		wake_all(r);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
		pthread_mutex_destroy(&r->mu);
		for (int i = 0; i < W_ROLES; i++)
			pthread_cond_destroy(&r->cv[i]);
		r->running = false;
	}
	for (size_t i = 0; i < RING_SLOTS; i++)
		free(r->slot[i]);
	free(r->ahead_fp);
	free(r->ahead_len);
	free(r->ahead_buf);
}

static enum pl_err read_raw(struct pl_input *in, struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	unsigned char *buf = st->rd.slot[0];
	ssize_t n;

	if (st->raw_pos < st->raw_len || st->raw_eof)
		return PL_OK;
	if (st->rd.running) {
		n = reader_take(&st->rd, &buf);
	} else {
		n = read_block(st->fd, buf);
		if (n > 0)
			sha256_update(&st->sha, (size_t)n, buf);
	}
	if (n < 0 && errno == READ_CHANGED)
		return pl_fail(err, PL_ERR_INPUT, "analyze it again once nothing writes to it",
			       "'%s' changed while it was read", in->path);
	if (n < 0)
		return pl_fail(err, PL_ERR_INPUT, "check the file and its permissions",
			       "cannot read '%s': %s", in->path, strerror(errno));
	st->raw_eof = n < (ssize_t)RAW_BLOCK;
	st->raw = buf;
	st->raw_pos = 0;
	st->raw_len = (size_t)n;
	return PL_OK;
}

static enum pl_err count_out(struct pl_input *in, size_t n, struct pl_error *err)
{
	in->bytes_out += n;
	if (in->bytes_out > in->st->lim.max_input_bytes)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-input-bytes, or split the capture",
			       "'%s' holds more than %llu bytes of profile text", in->path,
			       (unsigned long long)in->st->lim.max_input_bytes);
	return PL_OK;
}

/* Decompress into win[win_end..win_cap). */
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
		rc = in->codec == PL_CODEC_GZIP ? fill_gzip(in, err) : fill_zstd(in, err);
		if (rc)
			return rc;
	}
	return count_out(in, st->win_end - before, err);
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
	if (in->codec == PL_CODEC_NONE) {
		/* Only a line that runs across blocks is copied. */
		st->win_cap = (size_t)st->lim.max_line + 1;
		st->win = pl_xmalloc(st->win_cap);
		return count_out(in, st->raw_len, err);
	}
	/* The window fills up to a block past the longest line. */
	st->win_cap = (size_t)st->lim.max_line + RAW_BLOCK + 1;
	st->win = pl_xmalloc(st->win_cap);
	pl_prefault(st->win, st->win_cap);
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
	reader_start(st, (uint64_t)sb.st_size);
	st->raw = st->rd.slot[0];
	in->st = st;
	in->path = pl_xstrndup(path, strlen(path));
	in->file_size = (uint64_t)sb.st_size;
	if (read_raw(in, err) || open_codec(in, err)) {
		pl_input_close(in);
		return err->code;
	}
	return PL_OK;
}

/* ------------------------------------------------------------- lines */

static int line_too_long(struct pl_input *in, struct pl_error *err)
{
	pl_fail(err, PL_ERR_LIMIT, "raise --max-line, or check that this is a text profile",
		"line %llu of '%s' is longer than %llu bytes",
		(unsigned long long)in->line_no + 1, in->path,
		(unsigned long long)in->st->lim.max_line);
	return -1;
}

static int line_out(struct pl_input *in, const char *s, size_t n,
		    const char **line, size_t *len)
{
	if (n > 0 && s[n - 1] == '\r')
		n--;
	in->line_no++;
	*line = s;
	*len = n;
	return 1;
}

/* Plain text is not copied: a line is handed out where it was read, and
 * only a line that runs across blocks is put together in the window. */
static int line_plain(struct pl_input *in, const char **line, size_t *len,
		      struct pl_error *err)
{
	struct pl_input_state *st = in->st;

	if (st->carry_out) {
		st->win_end = 0;
		st->carry_out = false;
	}
	for (;;) {
		const unsigned char *s = st->raw + st->raw_pos;
		size_t avail = st->raw_len - st->raw_pos;
		const unsigned char *nl = memchr(s, '\n', avail);
		size_t n = nl ? (size_t)(nl - s) : avail;

		if (nl && !st->win_end) {
			if (n > st->lim.max_line)
				return line_too_long(in, err);
			st->raw_pos += n + 1;
			return line_out(in, (const char *)s, n, line, len);
		}
		if (n > st->lim.max_line - st->win_end)
			return line_too_long(in, err);
		memcpy(st->win + st->win_end, s, n);
		st->win_end += n;
		st->raw_pos += nl ? n + 1 : n;
		if (nl || (st->raw_eof && st->win_end)) {
			st->carry_out = true;
			return line_out(in, st->win, st->win_end, line, len);
		}
		if (st->raw_eof)
			return 0;
		if (read_raw(in, err) || count_out(in, st->raw_len, err))
			return -1;
	}
}

/* Decompressed text, through the window. */
static int line_window(struct pl_input *in, const char **line, size_t *len,
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
			if (n > st->lim.max_line)
				return line_too_long(in, err);
			st->win_start += nl ? n + 1 : n;
			return line_out(in, start, n, line, len);
		}
		if (st->out_eof)
			return 0;
		if (avail > st->lim.max_line)
			return line_too_long(in, err);
		scanned = avail;
		if (fill_window(in, err))
			return -1;
	}
}

size_t pl_input_buffered(struct pl_input *in, const char **text)
{
	struct pl_input_state *st = in->st;

	if (in->codec != PL_CODEC_NONE)
		return 0;
	if (st->carry_out) {
		/* The carried line was handed out; the window is free again. */
		st->win_end = 0;
		st->carry_out = false;
	}
	if (st->win_end)
		return 0;
	*text = (const char *)st->raw + st->raw_pos;
	return st->raw_len - st->raw_pos;
}

void pl_input_skip(struct pl_input *in, size_t n, uint64_t nlines)
{
	in->st->raw_pos += n;
	in->line_no += nlines;
}

int pl_input_line(struct pl_input *in, const char **line, size_t *len,
		  struct pl_error *err)
{
	if (in->codec == PL_CODEC_NONE)
		return line_plain(in, line, len, err);
	return line_window(in, line, len, err);
}

size_t pl_input_peek(struct pl_input *in, char *buf, size_t cap,
		     struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	size_t avail;

	if (in->codec == PL_CODEC_NONE) {
		avail = st->raw_len - st->raw_pos < cap ? st->raw_len - st->raw_pos : cap;
		memcpy(buf, st->raw + st->raw_pos, avail);
		return avail;
	}
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

	reader_finish(&in->st->rd);
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
		reader_stop(&st->rd);
		if (st->fd >= 0)
			close(st->fd);
		free(st->win);
		free(st);
	}
	free(in->path);
	memset(in, 0, sizeof(*in));
}
