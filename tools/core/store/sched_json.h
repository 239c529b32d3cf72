/* sched_json.h - the per-task scheduling table (profile/sched.h) as JSON,
 * for the analysis summary and collect_profile's sched result.
 */
#ifndef PL_SCHED_JSON_H
#define PL_SCHED_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "profile/profile.h"

/* {"unit", "window_ns", "tasks_total", "tasks": [...], counts}: tasks
 * named `prefer_comm` (may be NULL) first, then by time accounted, at most
 * `limit` of them (0: all); NULL when the profile held no sched
 * tracepoint.  New reference. */
json_t *pl_sched_json(const struct pl_profile *p, size_t limit, const char *prefer_comm);

#endif
