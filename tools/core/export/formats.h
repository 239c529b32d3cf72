/* export_formats.h - one event of a profile as a speedscope JSON file or as
 * a pprof profile (gzipped profile.proto), for the viewers people already
 * use (speedscope.app, `go tool pprof`, pprof-based UIs).
 *
 * Both take the names the folded export gives (export.h: pl_fold_stacks),
 * so the three views agree name for name, but keep what folding loses:
 * every profile stack is one sample of its own (never merged with another
 * stack that folds to the same line), with its sample count and its
 * weight, which is the summed event period exactly as in the folded and
 * SVG exports (the sample count where the input gave no period).
 *
 *  - speedscope: one "sampled" profile; shared frames are (name, file,
 *    line), file and line from the frame's srcline where perf printed one;
 *    samples list frame indexes root to leaf; weights are periods; the unit
 *    is "nanoseconds" for ns events and "none" for counts.
 *  - pprof: sample_type [samples/count, EVENT/(nanoseconds|count)];
 *    location ids leaf first; a location is one frame, with several lines
 *    (innermost first) only for an "outer->inner" chain printed as one
 *    frame (perf 6.1's "(inlined)" frames stay apart: the analysis does not
 *    keep the address that ties one to its caller); functions are (name =
 *    folded name, system_name = the symbol as perf printed it, filename);
 *    one mapping per DSO (build_id is left empty: the profile does not
 *    carry build-ids and none is invented); process name (comm), pid and
 *    tid are sample labels.
 *
 * Sizes are bounded: an export holds at most PL_EXPORT_MAX_REFS frame
 * references (the sum of the exported stacks' depths), checked before
 * anything is written; past it the writers fail with PL_ERR_LIMIT.
 * Output is deterministic: stacks in profile order, tables in order of
 * first use, JSON keys sorted, gzip header without a time stamp.
 */
#ifndef PL_EXPORT_FORMATS_H
#define PL_EXPORT_FORMATS_H

#include <stdio.h>

#include "export/fold.h"

#define PL_EXPORT_MAX_REFS (32u << 20)

struct pl_export_opts {
	const char *name;      /* profile name viewers show */
	const char *exporter;  /* e.g. "perflens 0.1.0" */
	const char *comment;   /* pprof comment line; may be NULL */
	uint64_t max_refs;     /* 0: PL_EXPORT_MAX_REFS (tests lower it) */
};

/* What an export holds, for the tool's result. */
struct pl_export_stats {
	uint64_t samples;      /* records */
	uint64_t weight;       /* summed period, as the folded export */
	uint64_t stacks;       /* samples written: one per profile stack */
	uint64_t frames;       /* speedscope frames, or pprof locations */
	uint64_t functions;    /* pprof only */
	uint64_t mappings;     /* pprof only */
	uint64_t mappings_with_build_id; /* pprof: from the recording's build-ids */
	const char *file_unit; /* the weight's unit as the file names it */
};

enum pl_err pl_write_speedscope(FILE *out, const struct pl_profile *p,
				const struct pl_fold_opts *fo,
				const struct pl_export_opts *eo,
				struct pl_export_stats *st, struct pl_error *err);

enum pl_err pl_write_pprof(FILE *out, const struct pl_profile *p,
			   const struct pl_fold_opts *fo,
			   const struct pl_export_opts *eo,
			   struct pl_export_stats *st, struct pl_error *err);

/* PL_ERR_LIMIT when an export of fo->event would pass the size bound. */
enum pl_err pl_export_check_size(const struct pl_profile *p, const struct pl_fold_opts *fo,
				 const struct pl_export_opts *eo, struct pl_error *err);


/* Protobuf wire format (protobuf.dev/programming-guides/encoding), the
 * little profile.proto needs.  A varint is 7 bits a byte, low bits first,
 * the high bit set on every byte but the last; an int64 is its two's
 * complement as a uint64 (10 bytes when negative). */
size_t pl_pb_varint(uint8_t out[10], uint64_t v);
void pl_pb_put_varint(struct pl_buf *b, uint64_t v);
/* Field `field` as a varint (wire type 0): tag, then value. */
void pl_pb_put_uint(struct pl_buf *b, uint32_t field, uint64_t v);
/* Field `field` as length-delimited bytes (wire type 2): a string or an
 * embedded message already encoded. */
void pl_pb_put_bytes(struct pl_buf *b, uint32_t field, const void *data, size_t n);
/* A packed repeated varint field (nothing when n is 0). */
void pl_pb_put_packed(struct pl_buf *b, uint32_t field, const uint64_t *v, size_t n);

#endif
