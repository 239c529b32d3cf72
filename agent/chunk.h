/* chunk.h - one chunk of perf script text on its way out: complete samples
 * go in (counted), zstd level 1 compresses them as they come (so a 16 MB
 * chunk never sits in memory raw), the PERF_STAT sections ride at the end,
 * and chunk_finish() gives the payload of one flag-1 frame (one complete
 * zstd frame) or, uncompressed, of a flag-0 frame / a headless round. */
#ifndef AGENT_CHUNK_H
#define AGENT_CHUNK_H

#include <stddef.h>
#include <stdint.h>

struct chunk {
	int compress;
	void *cctx;           /* ZSTD_CCtx, reused across chunks */
	char *out;            /* the payload so far */
	size_t out_len, out_cap;
	size_t raw;           /* text bytes fed */
	uint64_t samples;     /* sample header lines fed */
	int failed;           /* out of memory or a zstd error: refuse it */
};

int chunk_init(struct chunk *c, int compress);
void chunk_release(struct chunk *c);
void chunk_begin(struct chunk *c);
void chunk_add(struct chunk *c, const char *text, size_t len, int count);
void chunk_add_stat(struct chunk *c, const char *stat, size_t len);
int chunk_finish(struct chunk *c);   /* 0: c->out/out_len hold the payload */

/* Where a sample boundary ends in text[0..len): the length of the complete
 * samples (up to the last blank line with call chains, else the last
 * newline); 0 if none. */
size_t sample_boundary(const char *text, size_t len, int callchains);

#endif
