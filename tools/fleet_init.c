/* fleet_init.c - the fleet_init tool (`perflens fleet-init`): create the
 * fleet store's database and tables, or check that they are this
 * PerfLens's version (collectors/fleet/schema.h).  Run once per shard. */
#include "registry.h"
#include "collectors/fleet/schema.h"

enum pl_err tool_fleet_init(const struct tool_ctx *ctx, json_t *args, json_t **result,
			    struct pl_error *err)
{
	char endpoint[512], db[128];
	bool created;
	enum pl_err e;

	(void)args;
	if ((e = fleet_parse_url(ctx->fleet.url ? ctx->fleet.url : "", endpoint, sizeof(endpoint), db,
				 sizeof(db), err)) ||
	    (e = fleet_schema_init(&ctx->fleet, &created, err)))
		return e;
	*result = json_pack("{s:s,s:s,s:o,s:i,s:b,s:o}", "endpoint", endpoint, "database", db,
			    "cluster", ctx->fleet.cluster ? json_string(ctx->fleet.cluster) : json_null(),
			    "schema_version", FLEET_SCHEMA_VERSION, "created", created,
			    "next_steps", json_array());
	return PL_OK;
}
