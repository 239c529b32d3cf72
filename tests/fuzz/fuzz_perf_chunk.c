/* fuzz_perf_chunk.c - libFuzzer harness for the check of a perf.data chunk
 * from a device (extension 4, collectors/agentlink/perfchunk.c): the zstd
 * walk and the pipe-mode framing the server runs before it spools a flag-5
 * payload.  The first input byte picks: even, the rest is compressed first
 * (so the framer sees any bytes); odd, the rest is the payload as sent.
 * Seed corpus: tests/fuzz/corpus/perf_chunk/ (a real chunk of perf record
 * -o -, one cut mid-record, one with a bad pipe header). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "collectors/agentlink/link_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pl_error err;
	unsigned long long got;
	uint64_t samples;

	if (size < 1 || size > (1u << 20))
		return 0;
	uint8_t pick = data[0];
	data++;
	size--;
	if (pick & 1) {
		coll_wire_perf_chunk_check(data, size, &got, &samples, &err);
		return 0;
	}
	size_t cap = ZSTD_compressBound(size);
	void *z = malloc(cap);
	if (!z)
		return 0;
	size_t n = ZSTD_compress(z, cap, data, size, 1);
	if (!ZSTD_isError(n)) {
		/* a chunk that passes decompressed to exactly the input */
		if (coll_wire_perf_chunk_check(z, n, &got, &samples, &err) == PL_OK && got != size)
			abort();
	}
	free(z);
	return 0;
}
