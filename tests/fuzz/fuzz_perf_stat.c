/* fuzz_perf_stat.c - `perf stat` output, human and `-x` CSV with any
 * separator: the line parser alone (as an agent chunk's stat section
 * feeds it) and the stand-alone stat file through the profile reader. */
#include "fuzz.h"
#include "profile/perf_stat.h"
#include "profile/profile.h"

#include <string.h>

static void lines(const uint8_t *data, size_t size)
{
	struct pl_stat_parser *sp = pl_stat_parser_new("fuzz");
	const char *s = (const char *)data, *end = s + size;
	struct pl_error err;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);

		if (pl_stat_parser_line(sp, s, n, &err) != PL_OK)
			break;
		s += n + 1;
	}
	pl_stat_block_free(pl_stat_parser_finish(sp));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double v;
	bool is_int;

	lines(data, size);
	pl_stat_parse_number((const char *)data, size < 64 ? size : 64, &v, &is_int);
	fuzz_profile_path(fuzz_file("in.stat.txt", data, size), PL_FMT_PERF_STAT);
	return 0;
}
