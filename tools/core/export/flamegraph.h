/* flamegraph.h - a self-contained, interactive SVG flame graph writer.
 *
 * The caller hands over stacks of name ids (root to leaf) with weights; equal
 * prefixes merge, siblings are ordered by name (byte-wise), widths are
 * proportional to inclusive weight and the root "all" bar sits at the
 * bottom.  The SVG carries its own script: click a frame to zoom (and
 * "Reset Zoom"), "Search" or Ctrl-F for a regex that highlights matches and
 * shows "Matched: X%", and a status line with the hovered frame's details.
 *
 * Output is deterministic: the same stacks in any order give byte-identical
 * SVG.  Frames are merged by their display text, so two ids with the same
 * string are one frame.
 *
 * Differential mode (opts.differential) draws two-count input the way
 * flamegraph.pl draws difffolded.pl's "stack count1 count2" lines: widths
 * from the second count (`weight`), and each frame coloured by the change
 * of the stacks that end in it (weight - before): red when it grew, blue
 * when it shrank, white when it did not, the shade scaled by the largest
 * change of any stack (at least 1); titles add the change as a share of
 * the second total ("; +1.25%").  Stacks may then have weight 0 (present
 * only in the first profile): they are not drawn but still colour their
 * parent.  One-count output is unchanged by this mode's existence.
 *
 * Ownership: everything passed in is borrowed for the duration of the call
 * only; nothing is retained and nothing needs freeing afterwards.
 */
#ifndef PL_FLAMEGRAPH_H
#define PL_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/error.h"

struct pl_flame_stack {
	const uint32_t *names;  /* name ids, root to leaf (borrowed) */
	uint32_t depth;         /* number of ids in `names`; 0 counts in "all" */
	uint64_t weight;        /* > 0 (>= 0 in differential mode) */
	uint64_t before;        /* differential mode: the first count */
};

/* Zero-initialise and set what you need: every 0 / NULL means the default. */
struct pl_flame_opts {
	const char *title;      /* default "Flame Graph" */
	const char *subtitle;   /* may be NULL, e.g. "event cpu-clock, 12,090 samples" */
	const char *unit;       /* "samples", "ns", "events", "count"; default "samples" */
	uint32_t width;         /* image width in px, 100..100000, default 1200 */
	uint32_t frame_height;  /* px per level, 8..256, default 16 */
	double min_width_px;    /* frames narrower than this are omitted, but their
				 * weight still counts in their parent; default 0.1
				 * (pass e.g. 1e-9 to keep every frame) */
	int differential;       /* non-zero: colour by weight - before */
};

/* Write a self-contained SVG flame graph of the `n` stacks to `out`.
 * `names[id]` (id < nnames) is each frame's display text; names may be any
 * bytes (invalid UTF-8 and control characters are replaced in the output).
 * `opts` may be NULL for all defaults.  An empty input (n == 0) writes a
 * valid SVG saying "no samples".
 *
 * Errors: PL_ERR_INTERNAL for NULL out/stacks/names where they are needed,
 * PL_ERR_INPUT for a name id >= nnames, a NULL name in use or a zero weight
 * (outside differential mode),
 * PL_ERR_USAGE for out-of-range options, PL_ERR_OUTPUT when writing fails.
 * Nothing is written on an argument error. */
enum pl_err pl_flamegraph_write(FILE *out, const struct pl_flame_stack *stacks,
				size_t n, const char *const *names, size_t nnames,
				const struct pl_flame_opts *opts,
				struct pl_error *err);

/* The same layout for another renderer (flamepng.c): `fn` gets every
 * frame the SVG draws (not in differential mode), in the SVG's order,
 * with its edges in px (as the SVG places them: the same options give the
 * same x), its level (0 is "all", at the bottom), name, weight, share of
 * the total and the SVG's fill colour.  *levels: levels drawn, "all"
 * included (0 when nothing weighs anything). */
struct pl_flame_box {
	double x0, x1;
	uint32_t level;
	const char *name;       /* borrowed for the call */
	double weight, percent;
	uint8_t rgb[3];
};
typedef void (*pl_flame_box_fn)(void *arg, const struct pl_flame_box *box);
enum pl_err pl_flamegraph_layout(const struct pl_flame_stack *stacks, size_t n,
				 const char *const *names, size_t nnames,
				 const struct pl_flame_opts *opts, pl_flame_box_fn fn, void *arg,
				 uint32_t *levels, struct pl_error *err);

#endif
