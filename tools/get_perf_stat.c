/* get_perf_stat.c - the get_perf_stat tool: the typed perf stat blocks
 * stored in an analysis summary, one per stat section read. */
#include "registry.h"
#include "store/artifact.h"

enum pl_err tool_get_perf_stat(const struct tool_ctx *ctx, json_t *args,
			       json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	json_t *summary;
	enum pl_err rc;

	if ((rc = pl_artifact_load_summary(ctx->artifact_root, id, &summary, err)))
		return rc;
	*result = json_pack("{s:s,s:O}", "analysis_id", id,
			    "blocks", json_object_get(summary, "perf_stat"));
	json_decref(summary);
	return PL_OK;
}
