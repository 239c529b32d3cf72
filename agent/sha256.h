/* sha256.h - SHA-256 and HMAC-SHA256 for the pairing proof (FIPS 180-4,
 * RFC 2104).  The agent links only libc and zstd, so it carries its own;
 * tests/unit/agent/ checks it against nettle and the RFC 4231 vectors. */
#ifndef AGENT_SHA256_H
#define AGENT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define ASHA256_DIGEST 32
#define ASHA256_BLOCK 64

struct asha256 {
	uint32_t h[8];
	uint64_t bytes;       /* message length so far */
	uint8_t block[ASHA256_BLOCK];
	size_t fill;          /* bytes waiting in block */
};

void asha256_init(struct asha256 *s);
void asha256_update(struct asha256 *s, const void *data, size_t len);
void asha256_final(struct asha256 *s, uint8_t out[ASHA256_DIGEST]);
void asha256_hmac(const void *key, size_t key_len, const void *msg, size_t msg_len,
		 uint8_t out[ASHA256_DIGEST]);

#endif
