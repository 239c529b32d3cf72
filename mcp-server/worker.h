/* worker.h - the tools/call job: its bytes, and how a sandboxed worker
 * runs it (worker.c).  Internal to mcp-server/.
 *
 * A job is {"tool": NAME, "args": ARGS}: the arguments the server already
 * checked against the tool's input schema (defaults filled).  The worker
 * answers with progress records (below), then one JSON document.  The tool
 * context (roots, writes, limits, symbol and perf configuration) does not
 * travel: main() fixes it before the zygote is forked, so the zygote and
 * every worker, forked by it or by the server, hold the same one.
 */
#ifndef MCP_WORKER_H
#define MCP_WORKER_H

#include <jansson.h>

#include "tools/registry.h"

#define MCP_JOB_NAME "tools/call"

/* Before its answer a worker may write progress records, each one line:
 * MCP_PROGRESS_MARK, then {"done": N, "total": N, "unit": "bytes"}, then
 * a newline (base/progress.h decides when: a few a second at most). */
#define MCP_PROGRESS_MARK '\x1e'
#define MCP_PROGRESS_INTERVAL_MS 250

/* The length of the progress records at the start of `data` (`len`
 * bytes): where the answer begins.  With `each`, every complete record's
 * JSON (borrowed) is passed to each(opaque, record) in order. */
size_t mcp_progress_records(const char *data, size_t len, void (*each)(void *opaque, json_t *rec),
			    void *opaque);

/* Register the job and the spare workers' warm-up with the sandbox, for
 * workers that run with `ctx` (borrowed for the process lifetime).  Call
 * from main() once the options are final, before sbx_zygote_start(). */
enum pl_err mcp_worker_setup(const struct tool_ctx *ctx, struct pl_error *err);

/* The job's bytes for a call of `t` with checked `args` (borrowed), or
 * its follow-up (registry.h); new: free() it.  *len gets their length.
 * A worker whose handler asked for a follow-up says so in its answer:
 * {"ok": RESULT, "followup": true}. */
char *mcp_job_new(const struct tool_def *t, json_t *args, bool followup, size_t *len);

/* Run the call here through the registry (tool_run) and give the answer
 * a worker writes: {"ok": RESULT} (with "blocks": the result's own content
 * blocks, registry.h's TOOL_BLOCKS_KEY, when it has any) or {"error": tool_error_json_new()}.
 * New reference.  In the worker, or in-process with --no-sandbox. */
json_t *mcp_worker_answer(const struct tool_def *t, const struct tool_ctx *ctx, json_t *args);

#endif
