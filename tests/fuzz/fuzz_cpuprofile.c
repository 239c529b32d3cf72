/* fuzz_cpuprofile.c - libFuzzer harness for the V8 .cpuprofile reader (profile/parse_json.c):
 * any bytes as the file, with small limits so that limits are reached too.
 * Seed corpus: tests/fuzz/corpus/cpuprofile/ (tests/integration/json_craft.py's
 * good and bad files and a node --cpu-prof profile). */
#include "fuzz.h"
#include "profile/parse_pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	fuzz_profile_buffer(pl_parse_cpuprofile, data, n);
	return 0;
}
