/* export.h - folded stacks and SVG flame graphs from a profile.
 *
 * Folding follows stackcollapse-perf.pl's naming rules so that its users
 * get the lines they know: comm first (spaces become '_', "-PID" or
 * "-PID/TID" appended on request, "?" for an unknown pid), "+0x..."
 * offsets already gone, text from the first '(' dropped except
 * "(anonymous namespace)" and Go's ".(", ';' in names becoming ':',
 * quotes removed, "[unknown]" named after its DSO, Java's leading 'L'
 * dropped when the process is named "java", an empty symbol read as " ",
 * and the _[k] _[j] _[i] annotations.  Lines are sorted bytewise and
 * weighted by period.  The rules are those that produced the peer's
 * published expected outputs (FlameGraph test/results, regenerated in
 * 2021).  `peer_compat` also reproduces the one place where the peer
 * loses data: a last record not followed by a blank line.
 *
 * Ownership: pl_folded holds its own strings; release with
 * pl_folded_release.
 */
#ifndef PL_EXPORT_H
#define PL_EXPORT_H

#include <stdio.h>

#include "profile/profile.h"

struct pl_fold_opts {
	uint32_t event;
	bool pid;          /* comm-PID */
	bool tid;          /* comm-PID/TID */
	bool kernel;       /* _[k] on kernel frames */
	bool jit;          /* _[j] on /tmp/perf-N.map frames */
	bool addrs;        /* [dso <pc>] for unknown symbols */
	bool peer_compat;  /* drop unterminated last records, as the peer does */
};

/* Folded lines: each is the sequence of display-name ids its text splits
 * into at ';' (a binary key of uint32_t in `lines`), ids in first-fold
 * order; pl_write_folded sorts them bytewise by text. */
struct pl_folded {
	struct pl_strtab names;   /* display names (no ';' in any) */
	struct pl_strtab lines;   /* name-id sequence -> line id */
	uint64_t *weights;        /* per line id */
	size_t weights_cap;
	size_t n;                 /* lines */
};

enum pl_err pl_fold(struct pl_folded *out, const struct pl_profile *p,
		    const struct pl_fold_opts *o, struct pl_error *err);
void pl_folded_release(struct pl_folded *f);

/* Line `id`'s name ids, root first; *depth gets how many. */
const uint32_t *pl_folded_names(const struct pl_folded *f, uint32_t id, uint32_t *depth);

/* qsort_r comparator of two line ids (uint32_t) of the pl_folded `folded`:
 * the byte order of the lines' text, compared name by name. */
int pl_folded_cmp_lines(const void *a, const void *b, void *folded);

/* The weight pl_fold gives `stack` under o->event (its summed period, less
 * a dropped last record under peer_compat) and the records that make it;
 * false when the stack adds nothing to the folded output. */
bool pl_fold_weight(const struct pl_profile *p, uint32_t stack,
		    const struct pl_fold_opts *o, uint64_t *samples, uint64_t *period);

/* Folding stack by stack, for exports that keep stacks and frames apart
 * (export_formats.h): the same names pl_fold gives, each with its origin. */
struct pl_fold_src {
	uint32_t frame;   /* profile frame id; PL_NOID for the process name */
	uint32_t part;    /* place in the frame's "outer->inner" chain... */
	uint32_t nparts;  /* ...of this many names (1 for most frames) */
};
struct pl_fold_stacks;
struct pl_fold_stacks *pl_fold_stacks_new(const struct pl_profile *p,
					  const struct pl_fold_opts *o);
/* The names of `stack`, root to leaf: ids into pl_fold_stacks_names, and
 * their origins; both borrowed until the next call.  Returns the count. */
size_t pl_fold_stack_names(struct pl_fold_stacks *fs, uint32_t stack,
			   const uint32_t **names, const struct pl_fold_src **src);
const struct pl_strtab *pl_fold_stacks_names(const struct pl_fold_stacks *fs);
void pl_fold_stacks_free(struct pl_fold_stacks *fs);

/* "stack weight\n" lines, sorted. */
enum pl_err pl_write_folded(FILE *out, const struct pl_folded *f,
			    struct pl_error *err);

struct pl_svg_opts {
	const char *title;
	const char *subtitle;
	const char *unit;
	uint32_t width;
};
struct pl_png_opts;
struct pl_png_stats;
/* The same flame graph as a PNG picture (export/flamepng.h) into `out`. */
enum pl_err pl_write_flamegraph_png(struct pl_buf *out, const struct pl_folded *f,
				    const struct pl_png_opts *o, struct pl_png_stats *st,
				    struct pl_error *err);

/* A flame graph of the folded stacks (one event). */
enum pl_err pl_write_flamegraph(FILE *out, const struct pl_folded *f,
				const struct pl_svg_opts *o, struct pl_error *err);

#endif
