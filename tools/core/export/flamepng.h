/* flamepng.h - flame graphs as PNG pictures, for a model to look at.
 *
 * The frames, their order, widths and colours are the SVG's
 * (pl_flamegraph_layout); cairo draws them and writes the PNG, and text
 * comes from the committed glyph atlas (font_atlas.h: no font files are
 * opened, so a sandboxed worker can draw, and the bytes are the same on
 * every machine).  Names are fitted into their frames as the SVG fits
 * them (cut with ".."); a character outside printable ASCII shows as '?'.
 * Output is deterministic: the same stacks in any order give the same
 * bytes.  Levels past what max_height holds are not drawn, and the
 * picture says how many were cut.
 *
 * The sandwich picture shows one function F: above the middle bar (F's
 * total), its callers as a flame graph whose root is F, growing upwards
 * (each stack passed as F, its caller, ..., the root); below, its callees
 * as an icicle from F downwards (each stack passed as F, its callee, ...,
 * the leaf).  Both halves share one scale, F's width.
 */
#ifndef PL_FLAMEPNG_H
#define PL_FLAMEPNG_H

#include "base/util.h"
#include "export/flamegraph.h"

struct pl_png_opts {
	const char *title;       /* should name the event and the unit */
	const char *subtitle;    /* may be NULL */
	const char *unit;        /* for the weights; default "samples" */
	uint32_t width;          /* px, 200..4000, default 1200 */
	uint32_t max_height;     /* px, default 1600: deeper levels are cut */
};

struct pl_png_stats {
	uint32_t width, height;
	uint32_t levels, levels_cut;  /* levels drawn ("all" included) and not drawn */
	uint64_t frames;              /* frames drawn */
};

enum pl_err pl_flamegraph_png(struct pl_buf *out, const struct pl_flame_stack *stacks, size_t n,
			      const char *const *names, size_t nnames,
			      const struct pl_png_opts *o, struct pl_png_stats *st,
			      struct pl_error *err);

enum pl_err pl_sandwich_png(struct pl_buf *out, const struct pl_flame_stack *callers, size_t ncallers,
			    const struct pl_flame_stack *callees, size_t ncallees,
			    const char *const *names, size_t nnames,
			    const struct pl_png_opts *o, struct pl_png_stats *st,
			    struct pl_error *err);

/* A timeline as a bar chart: n buckets of `all` weight each, and with
 * `part` (may be NULL) the part of each that a function holds, drawn over
 * it in a stronger colour.  o->max_height is the picture's height here
 * (default 320); the x axis is labelled in seconds (bucket 0 at start_s,
 * bucket_s a bucket),
 * the y axis with the largest bucket's weight.  st->levels is the number
 * of buckets drawn. */
enum pl_err pl_timeline_png(struct pl_buf *out, const uint64_t *all, const uint64_t *part, size_t n,
			    double start_s, double bucket_s, const struct pl_png_opts *o,
			    struct pl_png_stats *st, struct pl_error *err);

/* Load libcairo now (once per process): the server does it before its
 * workers fork, since a confined worker could not.  False when it cannot
 * be loaded (a picture then fails, naming the package). */
bool pl_flamepng_preload(void);

#endif
