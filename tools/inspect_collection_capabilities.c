/* inspect_collection_capabilities.c - the inspect_collection_capabilities
 * tool: what perf can collect here.
 *
 * The gates (collection, writes, process execution) and perf's presence
 * are checked here; the probes and their cache are collectors/capabilities.
 */
#include "registry.h"
#include "collectors/capabilities.h"

enum pl_err tool_inspect_collection_capabilities(const struct tool_ctx *ctx, json_t *args,
						 json_t **result, struct pl_error *err)
{
	if (!ctx->allow_collection || !ctx->allow_writes || !ctx->artifact_root ||
	    !ctx->allow_process_execution)
		return pl_fail(err, PL_ERR_PATH,
			       "restart perflens-mcp with --allow-collection --allow-writes --allow-process-execution --artifact-root DIR (the CLI: --authorize-target PHRASE)",
			       "probing collection needs the collection flags at server start");
	if (!ctx->perf.path)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "install linux-perf or pass --perf-path FILE",
			       "no perf was found");
	return coll_capabilities(ctx->perf.path, ctx->perf.probe_workload, ctx->artifact_root,
				 json_is_true(json_object_get(args, "refresh")), result, err);
}
