/* transform.h - stack transforms of a view: focus, ignore, hide,
 * show_from, merge, under and collapse_recursion over a loaded profile.
 *
 * A transform rewrites the stack table of one event before any view is
 * aggregated from it, so hotspots, call paths, callers and exports read
 * the transformed stacks without knowing about transforms.  Function ids
 * do not change: a hotspot_id means the same function with or without a
 * transform.  Patterns are POSIX extended regular expressions (regcomp,
 * REG_EXTENDED | REG_NOSUB), at most PL_TF_PATTERN_MAX bytes, without
 * back-references, stacked quantifiers or repetitions nested so deep that
 * regcomp's copies of them would blow up (transform.c), matched anywhere in a function's full symbol (as
 * pprof matches function names); each function is matched once per
 * pattern, whatever the number of its frames.
 *
 * The order, one step after the other on each stack (root first):
 *   1. ignore     drop the stack when any frame matches;
 *   2. focus      keep it only when some frame matches; with `under`, only
 *                 when such a frame has a caller (a frame nearer the root)
 *                 matching `under`;
 *   3. hide       remove the matching frames (a stack left empty is dropped);
 *   4. show_from  cut the frames above the first match from the root (a
 *                 stack without a match is dropped);
 *   5. merge      remove the matching frames but the root, so each one's
 *                 weight goes to its caller;
 *   6. collapse_recursion  a run of frames of one function (direct
 *                 recursion) becomes its last frame.
 * Steps 1 to 4 are pprof's -ignore, -focus, -hide and -show_from, in the
 * order go tool pprof applies them (ignore and focus read the stack as
 * recorded).  Rewritten stacks that become equal are merged.  The caller
 * checks of a profile whose stacks were rewritten are dropped (their
 * frame indexes no longer hold), and caller_check.attempted turns false.
 *
 * Ownership: a transform owns its compiled patterns; release it with
 * pl_transform_release.
 */
#ifndef PL_TRANSFORM_H
#define PL_TRANSFORM_H

#include <regex.h>

#include "aggregate.h"

enum pl_tf_field {
	PL_TF_IGNORE = 0, PL_TF_FOCUS, PL_TF_UNDER, PL_TF_HIDE, PL_TF_SHOW_FROM, PL_TF_MERGE,
	PL_TF_NFIELDS
};
/* "ignore", "focus", "under", "hide", "show_from", "merge". */
extern const char *const pl_tf_field_names[PL_TF_NFIELDS];

#define PL_TF_PATTERN_MAX 256

struct pl_transform {
	bool given[PL_TF_NFIELDS];
	regex_t re[PL_TF_NFIELDS];
	bool collapse_recursion;
};

/* What applying did. */
struct pl_transform_stats {
	struct pl_amount before, kept;          /* the event's weight in, and left */
	struct pl_amount dropped[PL_TF_NFIELDS];/* taken off by each step (focus's
						 * includes under's) */
	bool matched[PL_TF_NFIELDS];            /* the pattern matched a frame of a
						 * stack that reached its step */
	uint64_t stacks_rewritten;
	bool caller_checks_dropped;             /* the profile had some, see above */
};

void pl_transform_init(struct pl_transform *t);
void pl_transform_release(struct pl_transform *t);

/* Compile `pattern` for `field`.  An empty, too long or invalid pattern,
 * or one with a back-reference, is PL_ERR_USAGE naming the field, the
 * byte position where it can be found, and the valid form. */
enum pl_err pl_transform_set(struct pl_transform *t, enum pl_tf_field field, const char *pattern,
			     struct pl_error *err);

/* Anything to do? */
bool pl_transform_active(const struct pl_transform *t);

/* Rewrite the stacks of `event` in `p` (the other events' weights of a
 * changed stack are dropped: a transformed profile answers for one event).
 * `under` without `focus` is PL_ERR_USAGE; a limit on stacks, PL_ERR_LIMIT.
 * Nothing kept is not an error here: *st says what each step took. */
enum pl_err pl_transform_apply(const struct pl_transform *t, struct pl_profile *p, uint32_t event,
			       struct pl_transform_stats *st, struct pl_error *err);

#endif
