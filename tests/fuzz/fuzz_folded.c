/* fuzz_folded.c - FlameGraph folded stacks ("a;b;c 12" lines) through the
 * file reader, the folded parser and its caches, then the analysis writers
 * and a reload of the stack table (fuzz_profile_path). */
#include "fuzz.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_profile_path(fuzz_file("in.folded", data, size), PL_FMT_FOLDED);
	return 0;
}
