/* policy.h - what the worker of one tools/call may do (policy.c).
 * Internal to mcp-server/.
 *
 * The confinement comes from two places only: the operator's flags (the
 * roots, --allow-writes, --allow-process-execution, --allow-collection,
 * the symbol files, the limits) and the tool's row in tools/registry.c
 * (its `needs`, and for a collection tool which argument names the
 * program perf starts and which its timeout).  Nothing a client sends
 * widens it; the server knows no tool by name.
 */
#ifndef MCP_POLICY_H
#define MCP_POLICY_H

#include <limits.h>

#include "server.h"
#include "sandbox/sandbox.h"

#define MCP_POLICY_MAX_READS 128

/* A worker's policy and the storage its pointers use. */
struct mcp_policy {
	struct sbx_policy pol;                /* points into this struct and cfg */
	const char *reads[MCP_POLICY_MAX_READS];
};

/* Fill `p` for a call of `t` with checked `args` (borrowed; read only
 * for the arguments the row names) on a server configured by `cfg`
 * (borrowed: p->pol points into it). */
void mcp_policy_for(const struct mcp_config *cfg, const struct tool_def *t, json_t *args,
		    struct mcp_policy *p);

#endif
