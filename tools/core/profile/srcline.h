/* srcline.h - the one reader of a frame's srcline text.
 *
 * perf prints a srcline as "FILE:LINE", perhaps followed by notes in
 * parentheses (" (inlined)", " (discriminator 3)"); PerfLens's own lines
 * (symbols/srclines.h) are "FULL/PATH:LINE".  Every consumer (exports,
 * source_context) reads them here, so they agree on what a line is.
 */
#ifndef PL_SRCLINE_H
#define PL_SRCLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True with FILE's length and LINE (0 when not a positive number) when
 * FILE is known (not empty, not "??"); notes after the line are skipped,
 * and a FILE that holds " (...)" itself is kept whole. */
bool pl_srcline_split(const char *srcline, size_t *file_len, uint32_t *line);

#endif
