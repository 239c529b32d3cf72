/* limits.c - the documented default resource limits (see limits.h). */
#include "limits.h"

void pl_limits_default(struct pl_limits *lim)
{
	lim->max_input_bytes = 1ULL << 30;
	lim->max_records = 10000000;
	lim->max_line = 1 << 20;
	lim->max_depth = 4096;
	lim->max_frames = 2000000;
	lim->max_stacks = 1000000;
}
