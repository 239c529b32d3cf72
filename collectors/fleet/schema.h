/* schema.h - the fleet store's tables, created and versioned by PerfLens
 * (docs/fleet.md has the layout and why).
 *
 * Four tables, each a ReplacingMergeTree so that a row written twice (a
 * chunk replayed after a failure) is one row once merged, and read with
 * FINAL so it counts once before:
 *   chunks   one row per ingested chunk: device, session, labels, samples,
 *            minute (its first sample's)
 *   samples  (event, minute, device, chunk, thread, stack) -> samples, period;
 *            minute: the samples' own (rows.h)
 *   stacks   stack id -> frame ids, root to leaf
 *   frames   frame id -> function, DSO
 * Ids are the first 8 bytes of a SHA-256 of what they name, so every
 * ingest server gives the same frame and stack the same id.  With a
 * cluster each table is TABLE_local on every shard (ON CLUSTER) and
 * TABLE_all, a Distributed table sharded by the chunk (samples, chunks)
 * or the id (stacks, frames); alone, only TABLE_local.
 */
#ifndef PL_FLEET_SCHEMA_H
#define PL_FLEET_SCHEMA_H

#include "store.h"

#define FLEET_SCHEMA_VERSION 2  /* 2: samples by sample time; chunks.minute */

/* Create the database and tables (idempotent) and record the version;
 * a store holding another version is PL_ERR_UNSUPPORTED naming both.
 * *created_new gets whether the version row was written now. */
enum pl_err fleet_schema_init(const struct fleet_cfg *cfg, bool *created_new, struct pl_error *err);

/* PL_OK when the store's tables are at FLEET_SCHEMA_VERSION, else the
 * error naming `perflens fleet-init`. */
enum pl_err fleet_schema_check(const struct fleet_cfg *cfg, struct pl_error *err);

#endif
