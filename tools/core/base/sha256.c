/* sha256.c - SHA-256 through nettle (see sha256.h). */
#include "sha256.h"
#include "util.h"

void pl_sha256_init(struct pl_sha256 *s)
{
	sha256_init(&s->c);
}

void pl_sha256_update(struct pl_sha256 *s, const void *p, size_t n)
{
	sha256_update(&s->c, n, p);
}

void pl_sha256_final(struct pl_sha256 *s, unsigned char out[PL_SHA256_SIZE])
{
	sha256_digest(&s->c, PL_SHA256_SIZE, out);
}

void pl_sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char digest[PL_SHA256_SIZE];
	struct pl_sha256 s;

	pl_sha256_init(&s);
	pl_sha256_update(&s, p, n);
	pl_sha256_final(&s, digest);
	pl_hex(digest, sizeof(digest), out);
}
