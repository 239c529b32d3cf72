/* session_quality.h - do a device session's numbers add up?
 *
 * analyze_profile reads a session folder (sessions/ID: chunk_* files and
 * the metadata.json the agent link wrote) and asks this file what its
 * chunks hold and what does not add up: the gaps the link recorded, sized
 * in samples; the samples the agent counted as sent against those the
 * chunks hold; a chunk without samples whose perf stat counted CPU time;
 * the CPU time the samples stand for against perf stat's task-clock.
 * What does not add up becomes a note of the data quality; a good
 * session adds none.
 */
#ifndef PL_SESSION_QUALITY_H
#define PL_SESSION_QUALITY_H

#include <jansson.h>

#include "profile/profile.h"

/* The checks on profile `p` (its sources the session's chunks, in order)
 * with the session's metadata `meta` (may be NULL): notes added to `p`,
 * and the per-chunk sample counts put in `out` ("chunk_samples"). */
void tool_session_quality(struct pl_profile *p, json_t *meta, json_t *out);

#endif
