/* pdlbr.h - LBR call stacks (perf record --call-graph lbr) walked as perf
 * 6.1 walks them (util/machine.c resolve_lbr_callchain_sample).
 *
 * An event whose branch_sample_type has CALL_STACK takes its user frames
 * from the sample's branch stack, not its callchain: the callchain up to
 * and with the first PERF_CONTEXT_USER (looked for among the first
 * max_stack entries), then entries[0].to (the leaf), then every entry's
 * `from` in order, all of those in user mode.  perf's default (no
 * --stitch-lbr) is assumed: a stack deeper than the LBR keeps what the
 * LBR held.  pd_lbr_begin says how a sample goes; pd_lbr_next then gives
 * its frames, leaf first, markers already applied.
 */
#ifndef PD_LBR_H
#define PD_LBR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pdformat.h"

enum pd_lbr_how {
	PD_LBR_FRAMES,     /* pd_lbr_next gives the frames */
	PD_LBR_FP_CHAIN,   /* perf walks the callchain as for -g: no PERF_CONTEXT_USER in
			    * reach, or an unknown context marker made perf start over */
	PD_LBR_UNREADABLE, /* perf reads bytes this reader cannot see (`why` says which) */
};

struct pd_lbr_iter {
	const struct pd_file *f;
	const struct pd_sample *s;
	uint64_t user_at;      /* index of PERF_CONTEXT_USER in the callchain */
	uint64_t leaf;         /* entries[0].to */
	uint64_t at;           /* next: chain 0..user_at, then leaf, then entries */
	uint8_t mode;
	const char *why;
};

/* True when perf takes the event's user frames from its branch stack. */
static inline bool pd_lbr_applies(const struct pd_attr *a)
{
	return (a->sample_type & PD_S_BRANCH_STACK) && (a->branch_sample_type & PD_BR_CALL_STACK);
}

/* How sample `s` (of an attr pd_lbr_applies to), parsed by
 * pd_parse_sample from the record `rec` of `size` bytes (in `f`'s image
 * or a copy), resolves; max_stack is perf's (127 for perf script). */
enum pd_lbr_how pd_lbr_begin(struct pd_lbr_iter *it, const struct pd_file *f, const struct pd_sample *s,
			     const uint8_t *rec, size_t size, unsigned max_stack);

/* The next frame (its mode, MISC_USER-style 1 kernel / 2 user / 3 hv,
 * and address); false at the end. */
bool pd_lbr_next(struct pd_lbr_iter *it, uint8_t *mode, uint64_t *ip);

#endif
