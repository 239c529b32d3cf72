/* schema.c - create and check the fleet store's tables (see schema.h).
 *
 * ClickHouse's distributed DDL (ON CLUSTER) needs ZooKeeper, which many
 * small clusters do not run: `perflens fleet-init` is run against each
 * shard's URL instead, and creates there the shard's _local tables and,
 * with a cluster, the _all Distributed tables over them.
 */
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each table: its name, columns and MergeTree keys, and the Distributed
 * sharding key. */
static const struct {
	const char *name, *columns, *keys, *shard_by;
} tables[] = {
	{"chunks", "chunk_id String, device String, session String, chunk UInt32, server String, "
		   "arrived DateTime, minute DateTime, seconds Float64, labels Array(String), events Array(String), samples UInt64",
	 "PARTITION BY toYYYYMM(minute) ORDER BY chunk_id", "cityHash64(chunk_id)"},
	{"samples", "day Date, minute DateTime, device String, session String, chunk_id String, "
		    "labels Array(String), event String, unit String, thread String, stack_id UInt64, "
		    "samples UInt64, period UInt64",
	 "PARTITION BY toYYYYMM(day) ORDER BY (event, minute, device, chunk_id, thread, stack_id)",
	 "cityHash64(chunk_id)"},
	{"stacks", "stack_id UInt64, frames Array(UInt64)", "ORDER BY stack_id", "stack_id"},
	{"frames", "frame_id UInt64, function String, dso String", "ORDER BY frame_id", "frame_id"},
};

/* `cfg` with its database swapped for `default`, for CREATE DATABASE. */
static enum pl_err exec_in_default(const struct fleet_cfg *cfg, const char *sql, struct pl_error *err)
{
	char endpoint[512], db[128], url[700];
	struct fleet_cfg other = *cfg;
	enum pl_err e;

	if ((e = fleet_parse_url(cfg->url, endpoint, sizeof(endpoint), db, sizeof(db), err)))
		return e;
	snprintf(url, sizeof(url), "%s/default", endpoint);
	other.url = url;
	return fleet_exec(&other, sql, NULL, 0, NULL, err);
}

static enum pl_err create_tables(const struct fleet_cfg *cfg, const char *db, struct pl_error *err)
{
	char sql[1200];
	enum pl_err e;

	for (size_t i = 0; i < PL_ARRAY_LEN(tables); i++) {
		snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS %s_local (%s) "
			 "ENGINE = ReplacingMergeTree() %s", tables[i].name, tables[i].columns, tables[i].keys);
		if ((e = fleet_exec(cfg, sql, NULL, 0, NULL, err)))
			return e;
		if (!cfg->cluster)
			continue;
		snprintf(sql, sizeof(sql), "CREATE TABLE IF NOT EXISTS %s_all AS %s_local "
			 "ENGINE = Distributed(%s, %s, %s_local, %s)", tables[i].name, tables[i].name,
			 cfg->cluster, db, tables[i].name, tables[i].shard_by);
		if ((e = fleet_exec(cfg, sql, NULL, 0, NULL, err)))
			return e;
	}
	return fleet_exec(cfg, "CREATE TABLE IF NOT EXISTS perflens_schema (version UInt32, "
			  "created DateTime) ENGINE = TinyLog", NULL, 0, NULL, err);
}

/* The version the store holds (0: none yet). */
static enum pl_err stored_version(const struct fleet_cfg *cfg, unsigned *version, struct pl_error *err)
{
	struct pl_buf answer = {0};
	enum pl_err e = fleet_exec(cfg, "SELECT max(version) FROM perflens_schema FORMAT TSV", NULL, 0,
				   &answer, err);

	*version = 0;
	if (!e && answer.len)
		*version = (unsigned)strtoul(answer.data, NULL, 10);
	pl_buf_release(&answer);
	return e;
}

enum pl_err fleet_schema_init(const struct fleet_cfg *cfg, bool *created_new, struct pl_error *err)
{
	char endpoint[512], db[128], sql[300];
	unsigned version;
	enum pl_err e;

	*created_new = false;
	if ((e = fleet_parse_url(cfg->url, endpoint, sizeof(endpoint), db, sizeof(db), err)))
		return e;
	snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS %s", db);
	if ((e = exec_in_default(cfg, sql, err)) || (e = create_tables(cfg, db, err)) ||
	    (e = stored_version(cfg, &version, err)))
		return e;
	if (version && version != FLEET_SCHEMA_VERSION)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "use a PerfLens of that schema version, or a new database",
			       "the fleet store holds schema version %u; this PerfLens writes version %u",
			       version, FLEET_SCHEMA_VERSION);
	if (version)
		return PL_OK;
	snprintf(sql, sizeof(sql), "INSERT INTO perflens_schema VALUES (%u, now())", FLEET_SCHEMA_VERSION);
	*created_new = true;
	return fleet_exec(cfg, sql, NULL, 0, NULL, err);
}

enum pl_err fleet_schema_check(const struct fleet_cfg *cfg, struct pl_error *err)
{
	unsigned version;
	enum pl_err e = stored_version(cfg, &version, err);

	if (e == PL_ERR_EXTERNAL && strstr(err->text, "perflens_schema"))
		return pl_fail(err, PL_ERR_UNSUPPORTED, "run `perflens fleet-init --fleet-store URL` once per shard",
			       "the fleet store has no PerfLens tables yet");
	if (e)
		return e;
	if (version != FLEET_SCHEMA_VERSION)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "run `perflens fleet-init --fleet-store URL` once per shard",
			       "the fleet store holds schema version %u, this PerfLens reads version %u",
			       version, FLEET_SCHEMA_VERSION);
	return PL_OK;
}
