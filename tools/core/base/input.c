/* input.c - file reading, decompression and line splitting (see input.h).
 *
 * Raw bytes are read in 256 KiB blocks; lines are found with memchr.  Plain
 * text is handed out in place, and only a line that runs across blocks is
 * copied into a window of one line limit.  Compressed input is decompressed
 * into a window of one line limit plus one block.  Either way memory stays
 * bounded whatever the input size.  Gzip members and zstd frames may be
 * concatenated (as a streaming agent writes them).
 *
 * Hashing: the SHA-256 of a small file is updated inline as each block is
 * read.  A file of THREADS_FROM or more is hashed by a thread of its own
 * that reads it a second time with pread, from the page cache the
 * parser's reads fill, so neither side waits for the other: the parser
 * runs at its own speed (folded text parses faster than SHA-256 hashes)
 * and so does the hash (perf script text parses slower).  The two reads
 * must have seen the same bytes: the hash is accepted only when both read
 * the same number of bytes, and the file's size and modification time,
 * taken by each side where its read ended, are what fstat gave at open.
 * Otherwise the file changed while it was read, and the caller is told so
 * (a file still being appended to included; a small one, hashed inline,
 * is exact whatever happens).  Since Linux 6.13 a local file system gives
 * a file whose times were looked at a fine-grained timestamp on its next
 * change, so any write in between shows; with coarser timestamps (older
 * kernels, some network file systems) a same-size rewrite within one
 * clock tick of the open could go unseen.  A chmod or rename in between
 * changes only the change time, which is not compared.  The hash may be
 * handed over and finished later (pl_input_detach_hash), so work that
 * does not need it can go on while the hashing thread catches up.
 * With a digest cache (pl_input_set_digest_cache), a file whose identity
 * is kept there is not hashed at all: its parse must still read it to its
 * end with the size, modification and change times it had at open.
 */
#include "input.h"
#include "progress.h"
#include "escape.h"
#include "sha256.h"
#include "digest_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#define RAW_BLOCK (1u << 18)
/* Below this, hashing inline costs less than starting a thread and
 * reading the file twice. */
#define THREADS_FROM (16 * RAW_BLOCK)

/* The SHA-256 of one file, inline or on its thread (see the top). */
struct pl_input_hash {
	struct pl_sha256 sha;
	char *path;
	int fd;                    /* shared with the input until detached */
	bool owns_fd;              /* detached: closing it is ours */
	struct stat at_open;
	bool threaded;             /* a thread hashes (else the parser does) */
	pthread_t thread;
	atomic_bool stop;          /* the input was given up: stop early */
	uint64_t hashed;           /* bytes hashed; the thread's until joined */
	int read_errno;            /* the thread's pread failed */
	struct stat thread_end;    /* fstat where the thread's read ended */
	bool thread_end_ok;
	atomic_bool done;          /* the thread has finished */
	uint64_t parsed;           /* bytes the parser read */
	struct stat parser_end;    /* fstat where the parser's read ended */
	bool parser_end_ok;
	unsigned char *buf;        /* the thread's block */
	const char *cache_dir;     /* the digest cache (digest_cache.h), or NULL */
	int64_t started;           /* when hashing began (CLOCK_REALTIME ns) */
	bool cached;               /* `hex` came from the cache: nothing is hashed */
	char hex[65];
	char entry[64];            /* the cache entry it came from */
};

struct pl_input_state {
	int fd;
	struct pl_limits lim;
	struct pl_input_hash *hash;
	unsigned char *block;      /* the parser's read buffer */
	unsigned char *raw;        /* the current block (plain text or compressed) */
	size_t raw_pos, raw_len;
	bool raw_eof;
	uint64_t raw_read;         /* stored bytes read so far, for progress.h */
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

/* The hashing thread: the whole file, block by block, to its end. */
static void *hash_main(void *arg)
{
	struct pl_input_hash *h = arg;

	while (!atomic_load_explicit(&h->stop, memory_order_relaxed)) {
		ssize_t n = read_block_at(h->fd, h->buf, (int64_t)h->hashed);
		if (n < 0) {
			h->read_errno = errno;
			break;
		}
		pl_sha256_update(&h->sha, h->buf, (size_t)n);
		h->hashed += (uint64_t)n;
		if (n < (ssize_t)RAW_BLOCK) {
			h->thread_end_ok = fstat(h->fd, &h->thread_end) == 0;
			break;
		}
	}
	atomic_store(&h->done, true);
	return NULL;
}

/* The digest cache for the inputs this thread opens next
 * (pl_input_set_digest_cache). */
static __thread const char *digest_cache;

void pl_input_set_digest_cache(const char *dir)
{
	digest_cache = dir;
}

static struct pl_input_hash *hash_start(int fd, const char *path, const struct stat *sb)
{
	struct pl_input_hash *h = pl_xcalloc(1, sizeof(*h));
	struct pl_file_identity id;

	pl_sha256_init(&h->sha);
	h->path = pl_xstrndup(path, strlen(path));
	h->fd = fd;
	h->at_open = *sb;
	atomic_init(&h->stop, false);
	atomic_init(&h->done, false);
	h->cache_dir = digest_cache;
	pl_file_identity_of(sb, &id);
	h->cached = pl_digest_cache_get(h->cache_dir, &id, h->hex, h->entry, sizeof(h->entry));
	h->started = h->cached ? 0 : pl_digest_clock_ns();
	if (!h->cached && sb->st_size >= THREADS_FROM) {
		h->buf = pl_xmalloc(RAW_BLOCK);
		h->threaded = pthread_create(&h->thread, NULL, hash_main, h) == 0;
	}
	return h;
}

/* Stop the thread early (the input is given up) and wait for it. */
static void hash_stop(struct pl_input_hash *h)
{
	if (h->threaded) {
		atomic_store(&h->stop, true);
		pthread_join(h->thread, NULL);
		h->threaded = false;
	}
}

void pl_input_hash_free(struct pl_input_hash *h)
{
	if (!h)
		return;
	hash_stop(h);
	if (h->owns_fd)
		close(h->fd);
	free(h->buf);
	free(h->path);
	free(h);
}

bool pl_input_hash_busy(struct pl_input_hash *h)
{
	return h && h->threaded && !atomic_load(&h->done);
}

/* The same content as at open, by size and modification time. */
static bool same_content(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Did the file stay as it was at open while both sides read it? */
static bool unchanged(const struct pl_input_hash *h)
{
	return h->thread_end_ok && same_content(&h->thread_end, &h->at_open) &&
	       same_content(&h->parser_end, &h->at_open) && h->hashed == h->parsed;
}

/* Keep a digest just made, when the file is as it was at open, change
 * time included (digest_cache.h says when it is kept). */
static void hash_keep(struct pl_input_hash *h)
{
	struct stat now;
	struct pl_file_identity at_open, after;

	if (!h->cache_dir || fstat(h->fd, &now) != 0)
		return;
	pl_file_identity_of(&h->at_open, &at_open);
	pl_file_identity_of(&now, &after);
	pl_digest_cache_put(h->cache_dir, &at_open, &after, h->started, h->hex);
}

enum pl_err pl_input_hash_finish(struct pl_input_hash *h, char out[65],
				 struct pl_error *err)
{
	return pl_input_hash_finish_from(h, out, NULL, err);
}

enum pl_err pl_input_hash_finish_from(struct pl_input_hash *h, char out[65],
				      struct pl_input_digest_from *from, struct pl_error *err)
{
	unsigned char digest[PL_SHA256_SIZE];
	enum pl_err rc = PL_OK;

	if (from)
		memset(from, 0, sizeof(*from));
	if (!h)
		return pl_fail(err, PL_ERR_INTERNAL, NULL, "the input's hash was already taken");
	if (h->cached) {
		/* Nothing hashed: the parser's read must have seen the file
		 * the digest was kept for, to its end. */
		if (!h->parser_end_ok || !same_content(&h->parser_end, &h->at_open) ||
		    h->parser_end.st_ctim.tv_sec != h->at_open.st_ctim.tv_sec ||
		    h->parser_end.st_ctim.tv_nsec != h->at_open.st_ctim.tv_nsec ||
		    h->parsed != (uint64_t)h->at_open.st_size) {
			rc = pl_fail(err, PL_ERR_INPUT, "analyze it again once nothing writes to it",
				     "'%s' changed while it was read", PL_ESC_MSG(h->path));
		} else {
			memcpy(out, h->hex, 65);
			if (from) {
				from->cached = true;
				snprintf(from->entry, sizeof(from->entry), "%s", h->entry);
				pl_file_identity_of(&h->at_open, &from->identity);
			}
		}
		pl_input_hash_free(h);
		return rc;
	}
	if (!h->parser_end_ok) {
		rc = pl_fail(err, PL_ERR_INTERNAL, NULL,
			     "the hash of '%s' was asked for before the file was read to its end", PL_ESC_MSG(h->path));
	} else if (h->threaded) {
		pthread_join(h->thread, NULL);
		h->threaded = false;
		if (h->read_errno)
			rc = pl_fail(err, PL_ERR_INPUT, "check the file and its permissions",
				     "cannot read '%s': %s", PL_ESC_MSG(h->path), strerror(h->read_errno));
		else if (!unchanged(h))
			rc = pl_fail(err, PL_ERR_INPUT, "analyze it again once nothing writes to it",
				     "'%s' changed while it was read", PL_ESC_MSG(h->path));
	}
	if (rc == PL_OK) {
		pl_sha256_final(&h->sha, digest);
		pl_hex(digest, sizeof(digest), out);
		memcpy(h->hex, out, 65);
		hash_keep(h);
	}
	pl_input_hash_free(h);
	return rc;
}

static enum pl_err read_raw(struct pl_input *in, struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	struct pl_input_hash *h = st->hash;
	ssize_t n;

	if (st->raw_pos < st->raw_len || st->raw_eof)
		return PL_OK;
	n = read_block_at(st->fd, st->block, -1);
	if (n < 0)
		return pl_fail(err, PL_ERR_INPUT, "check the file and its permissions",
			       "cannot read '%s': %s", PL_ESC_MSG(in->path), strerror(errno));
	st->raw_eof = n < (ssize_t)RAW_BLOCK;
	if (h) {  /* not handed over yet (see pl_input_detach_hash) */
		h->parsed += (uint64_t)n;
		if (!h->threaded && !h->cached)
			pl_sha256_update(&h->sha, st->block, (size_t)n);
		if (st->raw_eof)
			h->parser_end_ok = fstat(st->fd, &h->parser_end) == 0;
	}
	st->raw = st->block;
	st->raw_pos = 0;
	st->raw_len = (size_t)n;
	st->raw_read += (uint64_t)n;
	pl_progress_input(st->raw_read);
	return PL_OK;
}

static enum pl_err count_out(struct pl_input *in, size_t n, struct pl_error *err)
{
	in->bytes_out += n;
	if (in->bytes_out > in->st->lim.max_input_bytes)
		return pl_fail(err, PL_ERR_LIMIT, "raise --max-input-bytes, or split the capture",
			       "'%s' holds more than %llu bytes of profile text", PL_ESC_MSG(in->path),
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
			       "gzip data in '%s' is corrupt: %s", PL_ESC_MSG(in->path),
			       st->z.msg ? st->z.msg : "inflate failed");
	if (st->raw_eof && st->raw_pos == st->raw_len && rc == Z_BUF_ERROR)
		return pl_fail(err, PL_ERR_MALFORMED, "the file was cut short; copy it again",
			       "gzip data in '%s' is truncated", PL_ESC_MSG(in->path));
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
			       "zstd data in '%s' is corrupt: %s", PL_ESC_MSG(in->path),
			       ZSTD_getErrorName(rc));
	if (ib.pos > st->raw_pos || ob.pos > st->win_end)
		st->zs_between_frames = rc == 0;
	st->raw_pos = ib.pos;
	st->win_end = ob.pos;
	if (st->raw_eof && st->raw_pos == st->raw_len && ob.pos < ob.size) {
		if (!st->zs_between_frames)
			return pl_fail(err, PL_ERR_MALFORMED, "the file was cut short; copy it again",
				       "zstd data in '%s' is truncated", PL_ESC_MSG(in->path));
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
			       "cannot open '%s': %s", PL_ESC_MSG(path), strerror(errno));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return pl_fail(err, PL_ERR_INPUT, "pass a regular file (not a folder, FIFO or device)",
			       "'%s' is not a regular file", PL_ESC_MSG(path));
	}
	fcntl(fd, F_SETFL, 0);
	st = pl_xcalloc(1, sizeof(*st));
	st->lim = *lim;
	st->fd = fd;
	st->block = pl_xmalloc(RAW_BLOCK);
	st->hash = hash_start(fd, path, &sb);
	st->raw = st->block;
	in->st = st;
	in->path = pl_xstrndup(path, strlen(path));
	in->file_size = (uint64_t)sb.st_size;
	pl_progress_input_start(in->file_size);
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
		(unsigned long long)in->line_no + 1, PL_ESC_MSG(in->path),
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

enum pl_err pl_input_read_all(struct pl_input *in, struct pl_buf *out, struct pl_error *err)
{
	struct pl_input_state *st = in->st;
	enum pl_err rc;

	if (in->codec == PL_CODEC_NONE) {
		for (;;) {
			pl_buf_add(out, st->raw + st->raw_pos, st->raw_len - st->raw_pos);
			st->raw_pos = st->raw_len;
			if (st->raw_eof)
				return PL_OK;
			if ((rc = read_raw(in, err)) || (rc = count_out(in, st->raw_len, err)))
				return rc;
		}
	}
	for (;;) {
		pl_buf_add(out, st->win + st->win_start, st->win_end - st->win_start);
		st->win_start = st->win_end;
		if (st->out_eof)
			return PL_OK;
		if ((rc = fill_window(in, err)))
			return rc;
	}
}

struct pl_input_hash *pl_input_detach_hash(struct pl_input *in)
{
	struct pl_input_hash *h = in->st->hash;

	if (!h)
		return NULL;  /* handed over before */
	in->st->hash = NULL;
	h->owns_fd = true;
	in->st->fd = -1;
	return h;
}

enum pl_err pl_input_sha256(struct pl_input *in, char out[65], struct pl_error *err)
{
	return pl_input_hash_finish(pl_input_detach_hash(in), out, err);
}

void pl_input_close(struct pl_input *in)
{
	struct pl_input_state *st = in->st;

	if (st) {
		if (st->z_ready)
			inflateEnd(&st->z);
		ZSTD_freeDCtx(st->zs);
		pl_input_hash_free(st->hash);
		if (st->fd >= 0)
			close(st->fd);
		free(st->block);
		free(st->win);
		free(st);
	}
	free(in->path);
	memset(in, 0, sizeof(*in));
}
