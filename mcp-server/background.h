/* background.h - one tool call the server makes by itself (the fleet
 * publisher, the live analysis), in a sandboxed worker like any call: no
 * caller waits on it, and its answer is the worker's {"ok": RESULT} or
 * {"error": ...}. */
#ifndef MCP_BACKGROUND_H
#define MCP_BACKGROUND_H

#include "server.h"

/* Run tool `name` with `args` (borrowed) under `cfg`'s policy for it and
 * wait for its answer (new reference), or NULL when the tool is not
 * registered or the worker gave none. */
json_t *mcp_background_call(const struct mcp_config *cfg, const char *name, json_t *args);

#endif
