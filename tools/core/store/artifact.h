/* artifact.h - versioned, content-addressed analysis artifacts.
 *
 * An analysis is two JSON documents under ARTIFACT_ROOT/analyses/:
 *   ID.json         the summary (schemas/analysis.schema.json): data
 *                   quality, events, functions, threads, and per event the
 *                   hotspots, threads and DSOs, perf stat blocks, and the
 *                   provenance;
 *   ID.stacks.json  the stack table (schemas/stacks.schema.json) from which
 *                   the whole profile can be rebuilt for call paths and
 *                   exports.
 * ID is "an-" and the first 20 hex digits of the SHA-256 of both documents'
 * content (the summary's with its id field holding the same number of
 * zeros), so the same input gives the same id and byte-identical files.
 * Both are written atomically: a temporary file in the same folder,
 * fsync, then rename.
 */
#ifndef PL_ARTIFACT_H
#define PL_ARTIFACT_H

#include <jansson.h>

#include "jsonstr.h"

#include "base/error.h"
#include "base/fsatomic.h"
#include "base/version.h"
#include "profile/profile.h"

#define PL_ANALYSIS_SCHEMA_VERSION 1
#define PL_DUMP_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(10))

struct pl_artifact_ref {
	char id[32];
	char summary_path[4096];
	char stacks_path[4096];
};

/* Write both documents; fills `ref`.  Finishes the inputs' hashes left
 * pending by the parser (pl_parse_finish_hashes), which may fail.  With
 * `summary_out`, the summary's small parts come back for a quick answer:
 * {"events", "quality"} as written, and "top_hotspots", per event in
 * order, its first PL_ARTIFACT_TOP hotspots as written, each with its
 * function's "symbol" and "dso" added. */
#define PL_ARTIFACT_TOP 5
enum pl_err pl_artifact_write(struct pl_profile *p, const char *root,
			      struct pl_artifact_ref *ref, json_t **summary_out,
			      struct pl_error *err);


/* Is `id` well formed ("an-" + 20 lower-case hex)? */
bool pl_artifact_id_valid(const char *id);

/* The values of the summary's top-level `keys` (n of them, at most 8),
 * and only those, in `summary` as an object of them (new reference): the
 * text is scanned, and only those values are parsed, so that a small
 * listing (list_artifacts) does not build the whole document.  A key the
 * summary lacks is absent; a file that is not one JSON object, holds a
 * wanted key twice or whose wanted value does not parse is
 * PL_ERR_MALFORMED, as with pl_artifact_load_summary. */
enum pl_err pl_artifact_load_summary_keys(const char *root, const char *id, const char *const *keys,
					  size_t n, json_t **summary, struct pl_error *err);

/* Read a summary (new reference in *summary). */
enum pl_err pl_artifact_load_summary(const char *root, const char *id,
				     json_t **summary, struct pl_error *err);

/* Rebuild the profile of an analysis from its stack table. */
enum pl_err pl_artifact_load_profile(const char *root, const char *id,
				     struct pl_profile *p, struct pl_error *err);

/* Every artifact under `root` (analyses/, exports/ and benchmarks/), sorted
 * by path: a new array of {"path": "analyses/an-....json", "kind":
 * "analysis" | "stacks" | "export" | "benchmark", "uri":
 * "perflens://artifacts/PATH", "bytes": N, "mime_type": "..."}. */
json_t *pl_artifact_list(const char *root);

/* Check a relative artifact path ("analyses/NAME", "exports/NAME" or
 * "benchmarks/NAME", NAME of [A-Za-z0-9._-] only) or its
 * perflens://artifacts/ URI, and give the relative path in `rel` (cap
 * bytes).  False when it is neither. */
bool pl_artifact_rel_path(const char *path_or_uri, char *rel, size_t cap);

/* Open an artifact for reading without following symlinks; -1 with
 * `err` filled when it is absent or not a regular file. */
int pl_artifact_open(const char *root, const char *rel, uint64_t *size,
		     struct pl_error *err);

#endif
