/* summary.h - the analysis summary document (schemas/analysis.schema.json).
 *
 * pl_summary_write streams the summary of a profile to `emit` in the
 * layout jansson gives a whole document dumped with PL_DUMP_FLAGS |
 * JSON_INDENT(1): data quality, events, functions, threads, per event the
 * hotspots, threads and DSOs, perf stat blocks, and last the provenance.
 * Its id holds PL_SUMMARY_ID_PLACEHOLDER, for the caller to overwrite once
 * the document is hashed.  The inputs' hashes left pending by the parser
 * are finished before the provenance is written (pl_parse_finish_hashes),
 * which may fail; so does a value jansson cannot encode (PL_ERR_INTERNAL).
 * A failing `emit` is the caller's to notice.  `before_hashes`, when
 * given, is called with `data` just before that wait, when there will be
 * one: a writer can put what it has on disk meanwhile.  `brief` (an object) receives the small parts, as artifact.h's
 * pl_artifact_write describes them.
 */
#ifndef PL_SUMMARY_H
#define PL_SUMMARY_H

#include <jansson.h>

#include "artifact.h"
#include "base/error.h"
#include "profile/profile.h"

/* The id the summary is written and hashed with (an id's length). */
#define PL_SUMMARY_ID_PLACEHOLDER "an-00000000000000000000"

enum pl_err pl_summary_write(struct pl_profile *p, json_dump_callback_t emit, void *data,
			     void (*before_hashes)(void *data), json_t *brief,
			     struct pl_error *err);

#endif
