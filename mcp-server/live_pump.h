/* live_pump.h - with --live-analysis-interval-ms and the agent link, a
 * thread that analyzes each live device session again when chunks have
 * landed since its last analysis, so the viewer's Live page (which is
 * read-only and analyzes nothing itself) shows the profile as it grows,
 * not only when an agent calls analyze_profile.  Each analysis is an
 * ordinary analyze_profile call in a sandboxed worker; the link never
 * waits on it. */
#ifndef MCP_LIVE_PUMP_H
#define MCP_LIVE_PUMP_H

#include "server.h"

/* Start the pump for `cfg` (borrowed for the process lifetime); a no-op
 * without an interval, an agent link or writes.  Call once the zygote
 * runs. */
void mcp_live_pump_start(const struct mcp_config *cfg);

#endif
