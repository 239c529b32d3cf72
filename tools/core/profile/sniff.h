/* sniff.h - what an input that nothing could read looks like, and the
 * "nothing parsed" decision.
 *
 * A file from which no parser took a sample or a stat block is not an
 * empty profile: it is a format PerfLens does not read (a Go pprof file, a
 * JSON of another tool, an ELF binary, an old perf.data).  pl_parse_path
 * asks pl_nothing_read after each file; when the file yielded nothing and
 * either had lines no parser understood or is not text at all, the
 * analysis fails with PL_ERR_UNSUPPORTED naming what the content looks
 * like and the formats that are read.  A file that parsed with some
 * malformed lines, or an empty or comment-only text, is not touched.
 *
 * The description looks only at the first bytes of the decompressed
 * content (magic numbers, the shape of a protobuf or JSON head); it is a
 * guess for the message, never a parse.
 */
#ifndef PL_SNIFF_H
#define PL_SNIFF_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/util.h"
#include "profile.h"

/* Append to `out` a phrase saying what `head` (the first `n` decompressed
 * bytes; `codec` "none", "gzip" or "zstd") looks like, e.g. "gzip-compressed
 * protobuf (a pprof profile?)".  Returns true when it is text (lines a
 * parser could have read), false for binary data. */
bool pl_sniff_describe(const unsigned char *head, size_t n, const char *codec,
		       struct pl_buf *out);

/* What the file `path` yielded since `before` (the profile's counters
 * before it was parsed): PL_OK when it gave something or is blank text;
 * else PL_ERR_UNSUPPORTED in `err`, saying what the file looks like and
 * which formats are read. */
struct pl_parse_mark {
	uint64_t parsed, skipped, malformed;
	size_t nstats, nsources;
};
void pl_parse_mark_take(const struct pl_profile *p, struct pl_parse_mark *m);
enum pl_err pl_nothing_read(const struct pl_profile *p, const char *path,
			    const struct pl_parse_mark *before, struct pl_error *err);

#endif
