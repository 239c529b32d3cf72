/* fuzz_perf_script.c - `perf script` text (every header form, frames with
 * addresses and DSOs, srcline lines, inline frames, sched and other
 * tracepoint lines) through the file reader and the perf script parser,
 * then the analysis writers and a reload of the stack table. */
#include "fuzz.h"
#include "profile/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_profile_path(fuzz_file("in.perf.txt", data, size), PL_FMT_PERF_SCRIPT);
	return 0;
}
