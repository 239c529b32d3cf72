/* checksum.h - the 64-bit checksum that seals PerfLens's cache files (the
 * symbol index, the kallsyms index), so that a damaged file is refused.
 *
 * xxh64-style: four independent 8-byte lanes, then an avalanche.  Not a
 * defence against a forger (the files live under the operator's artifact
 * root), only against truncation, bit rot and half-written files.  Each
 * feed pads its own tail to 32 bytes, and the result is part of the files'
 * formats: never change it without bumping their versions.
 */
#ifndef PL_CHECKSUM_H
#define PL_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

struct pl_checksum {
	uint64_t lane[4];
};

void pl_checksum_init(struct pl_checksum *c);
void pl_checksum_feed(struct pl_checksum *c, const void *p, size_t n);
/* The value, given the total length of what was sealed. */
uint64_t pl_checksum_final(const struct pl_checksum *c, uint64_t total);

/* The checksum of a file image that holds its own checksum: the 8 bytes
 * at `field` (inside the first `header` bytes) taken as 0; the caller
 * checks len >= header and field + 8 <= header. */
uint64_t pl_checksum_sealed(const void *blob, size_t len, size_t header, size_t field);

#endif
