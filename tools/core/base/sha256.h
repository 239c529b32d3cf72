/* sha256.h - SHA-256 (nettle's, which uses the CPU's SHA instructions
 * where there are some: about 1.5 GB/s on the project's VMs).
 *
 * One place for the project's hashing: provenance of inputs, and the ids
 * of artifacts.  (OpenSSL's libcrypto hashes about 12% faster here, but
 * linking it adds about 2 ms to every process start, which every CLI call
 * would pay.)
 */
#ifndef PL_SHA256_H
#define PL_SHA256_H

#include <stddef.h>

#include <nettle/sha2.h>

#define PL_SHA256_SIZE SHA256_DIGEST_SIZE

struct pl_sha256 {
	struct sha256_ctx c;
};

void pl_sha256_init(struct pl_sha256 *s);
void pl_sha256_update(struct pl_sha256 *s, const void *p, size_t n);
void pl_sha256_final(struct pl_sha256 *s, unsigned char out[PL_SHA256_SIZE]);

/* The digest of `n` bytes as 64 hex digits. */
void pl_sha256_hex(const void *p, size_t n, char out[65]);

#endif
