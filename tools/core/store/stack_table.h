/* stack_table.h - the stack table of an analysis (ID.stacks.json, version 2,
 * schemas/stacks.schema.json): enough to rebuild the whole profile for
 * call paths, hotspot details and exports.
 *
 * Names are JSON strings, one each.  The bulk tables (functions, frames,
 * stacks) are compact records, STACK_TABLE_CHUNK to a JSON string, separated
 * by spaces; jansson encodes and decodes the strings, and the records inside
 * are plain decimal fields read with strict code.  A stack names an earlier
 * stack it shares its first frames with ("BASE:SHARED") and lists only the
 * frames after them, which makes real profiles 5 to 10 times smaller.
 *
 * The samples' times (profile.h, struct pl_timed) are read only when the
 * profile's want_timed is set.
 *
 * Ownership: the writer borrows the profile; the reader borrows the
 * document and fills a profile the caller initialised and releases.
 */
#ifndef PL_STACK_TABLE_H
#define PL_STACK_TABLE_H

#include <jansson.h>

#include "base/error.h"
#include "profile/profile.h"

#define PL_STACKS_SCHEMA_VERSION 2

/* Write the stack table document of `p` through `emit` (called with pieces
 * of at most 64 KiB, in order).  Returns false when `emit` failed. */
bool pl_stack_table_write(const struct pl_profile *p,
			  json_dump_callback_t emit, void *data);

/* Rebuild a profile from a stack table document; `id` names the analysis
 * in messages.  A malformed document is PL_ERR_MALFORMED saying which
 * entry is bad; a passed limit is PL_ERR_LIMIT. */
enum pl_err pl_stack_table_read(struct pl_profile *p, json_t *doc,
				const char *id, struct pl_error *err);

#endif
