/* sha256.h - SHA-256 and HMAC-SHA256 for the pairing proof (FIPS 180-4,
 * RFC 2104).  The agent links only libc and zstd, so it carries its own;
 * tests/unit/agent/ checks it against nettle and the RFC 4231 vectors. */
#ifndef AGENT_SHA256_H
#define AGENT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST 32
#define SHA256_BLOCK 64

struct sha256 {
	uint32_t h[8];
	uint64_t bytes;       /* message length so far */
	uint8_t block[SHA256_BLOCK];
	size_t fill;          /* bytes waiting in block */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_DIGEST]);
void sha256_hmac(const void *key, size_t key_len, const void *msg, size_t msg_len,
		 uint8_t out[SHA256_DIGEST]);

#endif
