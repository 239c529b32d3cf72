/* input.h - bounded, line-at-a-time reading of profile files.
 *
 * Opens a regular file, detects gzip or zstd compression by magic number
 * (zlib and libzstd do the decompressing), and hands out lines without
 * their newline.  Every byte read counts against the input limit and every
 * line against the line limit; passing either is a PL_ERR_LIMIT error,
 * never silent truncation.  The SHA-256 of the file's bytes as stored is
 * computed on the way (sha256.h) for provenance, by a thread of its own for
 * a big file.
 */
#ifndef PL_INPUT_H
#define PL_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "digest_cache.h"
#include "error.h"
#include "limits.h"
#include "util.h"

enum pl_codec { PL_CODEC_NONE = 0, PL_CODEC_GZIP, PL_CODEC_ZSTD };

struct pl_input_state;

struct pl_input {
	char *path;
	enum pl_codec codec;
	uint64_t file_size;       /* bytes on disk */
	uint64_t bytes_out;       /* decompressed bytes handed out so far */
	uint64_t line_no;         /* 1-based number of the last line returned */
	struct pl_input_state *st;
};

/* Open `path` (a regular file; FIFOs and devices are refused). */
enum pl_err pl_input_open(struct pl_input *in, const char *path,
			  const struct pl_limits *lim, struct pl_error *err);

/* Next line: returns 1 with *line and *len set (borrowed until the next call),
 * 0 at end of input, or -1 with `err` filled. */
int pl_input_line(struct pl_input *in, const char **line, size_t *len,
		  struct pl_error *err);

/* Plain text only: the bytes read after the last line returned, in place
 * (borrowed until the next call), without consuming them; 0 when none are
 * at hand (compressed input, or the end of a block).  The last line there
 * may be incomplete. */
size_t pl_input_buffered(struct pl_input *in, const char **text);

/* Consume `n` of those bytes, which the caller found to be `nlines`
 * complete lines (newlines included), none longer than the line limit. */
void pl_input_skip(struct pl_input *in, size_t n, uint64_t nlines);

/* Peek at the first bytes of decompressed content (up to `cap`), without
 * consuming them; returns the count. */
size_t pl_input_peek(struct pl_input *in, char *buf, size_t cap,
		     struct pl_error *err);

/* Append every decompressed byte not yet handed out to `out` (for the
 * formats that are not lines: pprof, JSON).  The input limit holds as for
 * lines; returns PL_OK at the end of input. */
enum pl_err pl_input_read_all(struct pl_input *in, struct pl_buf *out, struct pl_error *err);

/* The SHA-256 of the file's stored bytes, as 64 hex digits; to be asked
 * for once, after input was read to the end (pl_input_line returned 0).
 * Fails with PL_ERR_INPUT when the file changed while it was read (see
 * input.c: a big file's size or modification time moved). */
enum pl_err pl_input_sha256(struct pl_input *in, char out[65], struct pl_error *err);

/* The same, finished later: pl_input_detach_hash hands the hash (and the
 * open file it reads) over, so the input can be closed while a big file's
 * hashing thread goes on; pl_input_hash_finish waits for it, gives the
 * digest as pl_input_sha256 does and frees it.  pl_input_hash_free gives
 * a hash up unfinished (NULL is ignored). */
struct pl_input_hash;
struct pl_input_hash *pl_input_detach_hash(struct pl_input *in);
enum pl_err pl_input_hash_finish(struct pl_input_hash *h, char out[65],
				 struct pl_error *err);
/* The same, saying whether the digest came from the digest cache. */
struct pl_input_digest_from {
	bool cached;
	char entry[64];                    /* its entry in the cache folder */
	struct pl_file_identity identity;  /* the file's, at open */
};
enum pl_err pl_input_hash_finish_from(struct pl_input_hash *h, char out[65],
				      struct pl_input_digest_from *from, struct pl_error *err);
/* The digest cache (digest_cache.h) of the inputs this thread opens from
 * now on; NULL (the default): every input is hashed. */
void pl_input_set_digest_cache(const char *dir);
void pl_input_hash_free(struct pl_input_hash *h);
/* Is a thread still hashing (so that finishing would wait)? */
bool pl_input_hash_busy(struct pl_input_hash *h);

void pl_input_close(struct pl_input *in);

const char *pl_codec_name(enum pl_codec c);

#endif
