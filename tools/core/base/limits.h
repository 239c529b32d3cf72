/* limits.h - the resource limits every reader and parser enforces.
 *
 * Each limit stops the work with PL_ERR_LIMIT when passed (nothing is
 * dropped silently); the operator may only lower them from the defaults,
 * with the flags of pl_limit_options (the same on both binaries).
 */
#ifndef PL_LIMITS_H
#define PL_LIMITS_H

#include <stdint.h>

#include "options.h"

/* Resource limits; pl_limits_default() gives the documented defaults. */
struct pl_limits {
	uint64_t max_input_bytes;   /* decompressed bytes read, 1 GiB */
	uint64_t max_records;       /* samples + counters, 10 million */
	uint64_t max_line;          /* bytes in one line, 1 MiB */
	uint32_t max_depth;         /* frames in one stack, 4096 */
	uint32_t max_frames;        /* unique frames, 2 million */
	uint32_t max_stacks;        /* unique call paths, 1 million */
};
void pl_limits_default(struct pl_limits *lim);

/* The --max-* flags over a struct pl_limits, each from 1 up to its
 * default (a limit can only be lowered). */
extern const struct pl_option pl_limit_options[];

#endif
