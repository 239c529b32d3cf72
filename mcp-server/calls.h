/* calls.h - tools/call execution, the server's side: each call runs in a
 * sandboxed worker process (worker.h: the job; policy.h: its confinement)
 * and its answer becomes a CallToolResult.  Internal to mcp-server/
 * (server.c starts and cancels calls; transports drive them through
 * server.h).
 */
#ifndef MCP_CALLS_H
#define MCP_CALLS_H

#include "server.h"

/* Start `t` with `args` that tool_check_args() accepted (borrowed; copied
 * into the job).
 * Returns the pending call, or NULL when the answer was already sent
 * (a failure to start, or an in-process debug run). */
struct mcp_call *mcp_call_start(struct mcp_server *s, struct mcp_session *sess,
				const struct mcp_sink *sink, json_t *id,
				const struct tool_def *t, json_t *args, bool stateless,
				json_t *progress_token);

/* Cancel the call of `sess` whose request id equals `id`, if running
 * (with `stateless`, any stateless call with that id). */
void mcp_call_cancel(struct mcp_server *s, struct mcp_session *sess, json_t *id,
		     bool stateless);

#endif
