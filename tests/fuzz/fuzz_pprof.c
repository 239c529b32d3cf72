/* fuzz_pprof.c - libFuzzer harness for the pprof reader (profile/parse_pprof.c):
 * any bytes as a profile.proto message, with small limits so that limits
 * are reached too.  Seed corpus: tests/fuzz/corpus/pprof/ (hand-made
 * profiles of tests/integration/pprof_craft.py and a Go CPU profile). */
#include "fuzz.h"
#include "profile/parse_pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	fuzz_profile_buffer(pl_parse_pprof, data, n);
	return 0;
}
