/* fleet_pump.h - with --fleet-store and the agent link, a thread that runs
 * the fleet_publish tool every --fleet-publish-interval-ms, in a sandboxed worker like any
 * call, so the chunks agents send reach the fleet store without an agent
 * or a person asking.  The link never waits on it: the chunks are on disk
 * first (the session spool), the pump reads them from there. */
#ifndef MCP_FLEET_PUMP_H
#define MCP_FLEET_PUMP_H

#include "server.h"

/* Start the pump for `cfg` (borrowed for the process lifetime); a no-op
 * without a fleet store or an agent link.  Call once the zygote runs. */
void mcp_fleet_pump_start(const struct mcp_config *cfg);

#endif
