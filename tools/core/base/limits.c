/* limits.c - the documented default resource limits and their flags (see
 * limits.h): one table gives both binaries' --max-* options and --help. */
#include "limits.h"

#include <stddef.h>

#define DEFAULT_INPUT_BYTES (1ULL << 30)
#define DEFAULT_RECORDS 10000000
#define DEFAULT_LINE (1 << 20)
#define DEFAULT_DEPTH 4096
#define DEFAULT_FRAMES 2000000
#define DEFAULT_STACKS 1000000

void pl_limits_default(struct pl_limits *lim)
{
	lim->max_input_bytes = DEFAULT_INPUT_BYTES;
	lim->max_records = DEFAULT_RECORDS;
	lim->max_line = DEFAULT_LINE;
	lim->max_depth = DEFAULT_DEPTH;
	lim->max_frames = DEFAULT_FRAMES;
	lim->max_stacks = DEFAULT_STACKS;
}

#define LIMIT(flag, field, setter, max, help) \
	{flag, "N", help, setter, offsetof(struct pl_limits, field), max}

const struct pl_option pl_limit_options[] = {
	LIMIT("max-input-bytes", max_input_bytes, pl_option_u64, DEFAULT_INPUT_BYTES,
	      "lower the decompressed bytes read (default 1 GiB)"),
	LIMIT("max-records", max_records, pl_option_u64, DEFAULT_RECORDS,
	      "lower the samples and counters read (default 10 million)"),
	LIMIT("max-line", max_line, pl_option_u64, DEFAULT_LINE,
	      "lower the bytes of one line (default 1 MiB)"),
	LIMIT("max-depth", max_depth, pl_option_u32, DEFAULT_DEPTH,
	      "lower the frames of one stack (default 4096)"),
	LIMIT("max-frames", max_frames, pl_option_u32, DEFAULT_FRAMES,
	      "lower the unique frames (default 2 million)"),
	LIMIT("max-stacks", max_stacks, pl_option_u32, DEFAULT_STACKS,
	      "lower the unique call paths (default 1 million)"),
	{NULL},
};
