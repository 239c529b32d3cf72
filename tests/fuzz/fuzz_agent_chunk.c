/* fuzz_agent_chunk.c - device-agent captures: one chunk (perf script text,
 * then a "### PERF_STAT ###" section) read with format detection, and a
 * session folder, whose chunk_* files come from the input cut at each line
 * "### CHUNK ###" (at most 8 files), read in name order.  The first input
 * byte picks: even, one file; odd, a folder. */
#include "fuzz.h"
#include "profile/profile.h"

#include <stdio.h>
#include <string.h>

#define SEP "\n### CHUNK ###\n"

static void session(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size;
	char name[64];
	const char *last = NULL;

	fuzz_clean("session");
	for (int i = 0; i < 8 && s <= end; i++) {
		const char *cut = i < 7 ? memmem(s, (size_t)(end - s), SEP, strlen(SEP)) : NULL;
		size_t n = cut ? (size_t)(cut - s) : (size_t)(end - s);

		snprintf(name, sizeof(name), "session/chunk_%03d.txt", i);
		last = fuzz_file(name, s, n);
		if (!cut)
			break;
		s = cut + strlen(SEP);
	}
	if (last) {
		char dir[512];

		snprintf(dir, sizeof(dir), "%s/session", fuzz_dir());
		fuzz_profile_path(dir, PL_FMT_AUTO);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_take_byte(&data, &size) & 1)
		session(data, size);
	else
		fuzz_profile_path(fuzz_file("chunk_000.txt", data, size), PL_FMT_AUTO);
	return 0;
}
