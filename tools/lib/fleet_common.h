/* fleet_common.h - what the fleet tools share: the selection their
 * arguments make (labels, devices, a time range, an event) as a SQL
 * condition, and the store's JSONEachRow answers as JSON.
 */
#ifndef PL_FLEET_COMMON_H
#define PL_FLEET_COMMON_H

#include "tools/registry.h"
#include "collectors/fleet/store.h"

/* " WHERE ..." (or "") for a samples or chunks table from `args`:
 * labels (every KEY=VALUE must be on the row), devices (any of them),
 * from/to (unix seconds, on the rows' minute: the samples' own), and, for samples,
 * event.  PL_ERR_USAGE for a malformed label. */
enum pl_err fleet_where(json_t *args, bool samples, const char *time_column, struct pl_buf *sql,
			struct pl_error *err);

/* Run `sql` (which ends in FORMAT JSONEachRow) and give its rows as a new
 * array, at most `max_rows` (more is PL_ERR_LIMIT naming `narrow`). */
enum pl_err fleet_rows_query(const struct tool_ctx *ctx, const char *sql, size_t max_rows,
			     const char *narrow, json_t **rows, struct pl_error *err);

/* A JSONEachRow number (ClickHouse quotes 64-bit integers). */
uint64_t fleet_u64(json_t *v);

/* The store's schema is current, or the error naming fleet-init. */
enum pl_err fleet_ready(const struct tool_ctx *ctx, struct pl_error *err);

#endif
