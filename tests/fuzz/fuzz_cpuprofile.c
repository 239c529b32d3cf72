/* fuzz_cpuprofile.c - libFuzzer harness for the V8 .cpuprofile reader (profile/parse_json.c):
 * any bytes as the file, with small limits so that limits are reached too.
 * Seed corpus: tests/fuzz/corpus/cpuprofile/ (tests/integration/json_craft.py's
 * good and bad files and a node --cpu-prof profile). */
#include "profile/parse_pprof.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;

	pl_limits_default(&lim);
	lim.max_depth = 64;
	lim.max_frames = 4096;
	lim.max_stacks = 4096;
	lim.max_records = 100000;
	pl_profile_init(&p, &lim);
	pl_parse_cpuprofile(&p, data, n, "fuzz", &err);
	pl_profile_release(&p);
	return 0;
}
