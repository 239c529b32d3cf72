/* fuzz_perf_data.c - libFuzzer harness for the native perf.data reader
 * (tools/core/perfdata/): any bytes, as a perf.data image, give a profile,
 * a refusal (PL_ERR_UNSUPPORTED) or a malformed-input error, never a
 * crash, a read past the image or unbounded memory.  No symbol file is
 * opened (pd_read_image), so a run depends on the input alone.  Inputs of
 * odd size are read with a sample hook, as the off-CPU collection reads
 * its recordings (tracepoints as plain samples; every frame the hook is
 * given is read back).
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Itools/core -I. \
 *     tests/fuzz/fuzz_perf_data.c BUILD/libperflens.a $(pkg-config --libs libzstd libelf ...)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "perfdata/pdread.h"
#include "profile/profile.h"

static const struct pl_profile *hooked;
static volatile uint64_t seen;

static void touch_frames(void *arg, int32_t pid, int32_t tid, uint64_t time, const uint32_t *frames,
			 const uint64_t *pcs, size_t n)
{
	(void)arg;
	seen += (uint64_t)pid + (uint64_t)tid + time;
	for (size_t i = 0; i < n; i++)
		seen += pcs[i] + hooked->funcs[hooked->frames[frames[i]].func].kind;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pl_limits lim;
	struct pl_profile p;
	struct pl_error err;
	uint8_t *copy = malloc(size ? size : 1);

	/* An exact-size copy, so that a read past the end is caught. */
	memcpy(copy, data, size);
	pl_limits_default(&lim);
	lim.max_records = 100000;
	lim.max_stacks = 100000;
	lim.max_frames = 100000;
	pl_profile_init(&p, &lim);
	hooked = &p;
	pd_read_set_sample_hook(size & 1 ? touch_frames : NULL, NULL);
	enum pl_err rc = pd_read_image(&p, copy, size, "fuzz", &err);
	pd_read_set_sample_hook(NULL, NULL);
	if (rc == PL_ERR_UNSUPPORTED && (!err.text[0] || !err.hint[0]))
		abort();   /* a refusal always says why, and the fix */
	uint64_t records, samples;
	pd_walk_image(copy, size, &records, &samples, &err);
	pl_profile_release(&p);
	free(copy);
	return 0;
}
