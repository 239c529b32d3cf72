/* fuzz_speedscope.c - libFuzzer harness for the speedscope reader (profile/parse_json.c):
 * any bytes as the file, with small limits so that limits are reached too.
 * Seed corpus: tests/fuzz/corpus/speedscope/ (tests/integration/json_craft.py's
 * good and bad files, and speedscope's own export of its example profile). */
#include "fuzz.h"
#include "profile/parse_pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	fuzz_profile_buffer(pl_parse_speedscope, data, n);
	return 0;
}
