/* schemas.h - the JSON files of schemas/, embedded at build time.
 *
 * schemas/ is the source of truth for every tool's name, description,
 * annotations and input and output schema; the Makefile runs
 * tools/build/gen-schemas.sh to compile them into pl_schema_files[].
 */
#ifndef PL_SCHEMAS_H
#define PL_SCHEMAS_H

struct pl_schema_file {
	const char *path;   /* e.g. "schemas/tools/list_hotspots.json" */
	const char *text;   /* the file's bytes, NUL-terminated */
};

/* Terminated by a { NULL, NULL } row. */
extern const struct pl_schema_file pl_schema_files[];

/* The text of `path`, or NULL when it was not embedded. */
const char *pl_schema_text(const char *path);

#endif
