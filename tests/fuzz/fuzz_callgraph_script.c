/* fuzz_callgraph_script.c - libFuzzer harness for the call-graph probe's
 * reader of perf script output (collectors/callgraph_probe.c): any bytes
 * give counts that hold together (full chains within the samples at a
 * chain's bottom, those within all samples, depths within the chain).
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Itools/core -I. \
 *     tests/fuzz/fuzz_callgraph_script.c (libperflens's objects) -ljansson ...
 */
#include "collectors/callgraph_probe.h"
#include "collectors/known_chain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_chain(json_t *c, json_int_t all)
{
	json_int_t n = json_integer_value(json_object_get(c, "samples"));
	json_int_t full = json_integer_value(json_object_get(c, "full_chains"));
	json_int_t d = json_integer_value(json_object_get(c, "depth_found"));

	if (n > all || full > n || d < 0 || d > COLL_CHAIN_DEPTH || (n == 0 && d != 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that a read past the end is caught. */
	char *copy = malloc(size ? size : 1);
	json_t *r;
	json_int_t all;

	memcpy(copy, data, size);
	r = coll_chains_from_script(copy, size);
	all = json_integer_value(json_object_get(r, "samples"));
	check_chain(json_object_get(r, "with_frame_pointers"), all);
	check_chain(json_object_get(r, "without_frame_pointers"), all);
	json_decref(r);
	free(copy);
	return 0;
}
