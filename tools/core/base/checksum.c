/* checksum.c - the cache files' checksum (see checksum.h). */
#include "checksum.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define P1 0x9e3779b185ebca87ull
#define P2 0xc2b2ae3d27d4eb4full
#define P3 0x165667b19e3779f9ull

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static uint64_t round64(uint64_t h, uint64_t v)
{
	return rotl(h + v * P2, 31) * P1;
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

void pl_checksum_init(struct pl_checksum *c)
{
	c->lane[0] = P1 + P2;
	c->lane[1] = P2;
	c->lane[2] = 0;
	c->lane[3] = (uint64_t)0 - P1;
}

void pl_checksum_feed(struct pl_checksum *c, const void *data, size_t n)
{
	const unsigned char *p = data;
	unsigned char tail[32] = {0};
	size_t i = 0;

	for (; i + 32 <= n; i += 32)
		for (int l = 0; l < 4; l++)
			c->lane[l] = round64(c->lane[l], load64(p + i + 8 * l));
	if (i < n) {
		memcpy(tail, p + i, n - i);
		for (int l = 0; l < 4; l++)
			c->lane[l] = round64(c->lane[l], load64(tail + 8 * l));
	}
}

uint64_t pl_checksum_final(const struct pl_checksum *c, uint64_t total)
{
	uint64_t x = rotl(c->lane[0], 1) + rotl(c->lane[1], 7) + rotl(c->lane[2], 12) +
		     rotl(c->lane[3], 18) + total;

	x ^= x >> 33;
	x *= P2;
	x ^= x >> 29;
	x *= P3;
	return x ^ (x >> 32);
}

uint64_t pl_checksum_sealed(const void *blob, size_t len, size_t header, size_t field)
{
	/* The header is fed whole, from a copy with the field zeroed: each
	 * feed pads its own tail, so splitting it would change the value. */
	unsigned char *head = pl_xmalloc(header ? header : 1);
	struct pl_checksum c;
	uint64_t x;

	memcpy(head, blob, header);
	memset(head + field, 0, 8);
	pl_checksum_init(&c);
	pl_checksum_feed(&c, head, header);
	pl_checksum_feed(&c, (const unsigned char *)blob + header, len - header);
	x = pl_checksum_final(&c, len);
	free(head);
	return x;
}
