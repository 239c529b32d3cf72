/* fuzz_digest_cache.c - libFuzzer harness for the digest cache's entries
 * (base/digest_cache.h), files under the artifact root that a damaged
 * disk or another program may have changed.  The input is the entry of a
 * fixed file identity, read through pl_digest_cache_get's own path; a
 * digest it gives back must be 64 lowercase hex digits, and the entry
 * exactly the line pl_digest_cache_put writes for that identity and
 * digest (anything else taken aborts).  Seed corpus:
 * tests/fuzz/corpus/digest_cache/. */
#include "fuzz.h"
#include "base/digest_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct pl_file_identity ID = {0xfe00, 42, 1000, 1700000000123456789, 1700000000223456789};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[4096], hex[65], entry[64], want[256];

	fuzz_file("digests/fe00-42", data, size);
	snprintf(dir, sizeof(dir), "%s/digests", fuzz_dir());
	if (!pl_digest_cache_get(dir, &ID, hex, entry, sizeof(entry)))
		return 0;
	for (int i = 0; i < 64; i++)
		if (!((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f')))
			abort();
	int n = snprintf(want, sizeof(want), "perflens-digest 1 %llu %llu %llu %lld %lld %s\n",
			 (unsigned long long)ID.dev, (unsigned long long)ID.ino, (unsigned long long)ID.size,
			 (long long)ID.mtime_ns, (long long)ID.ctime_ns, hex);
	if (hex[64] != '\0' || strcmp(entry, "fe00-42") != 0 || (size_t)n != size || memcmp(want, data, size) != 0)
		abort();
	return 0;
}
