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
	json_t *views = json_object_get(summary, "views"), *steps = json_array();

	/* Samples beside the counters (an agent chunk's stat section rides
	 * with its samples): where the counted time went. */
	if (json_array_size(views))
		json_array_append_new(steps, tool_next_step("list_hotspots", json_pack("{s:s,s:O}", "analysis_id", id,
			"event", json_object_get(json_array_get(views, 0), "event")),
			"the functions the samples beside these counters fall in"));
	*result = json_pack("{s:s,s:O,s:o}", "analysis_id", id,
			    "blocks", json_object_get(summary, "perf_stat"), "next_steps", steps);
	json_decref(summary);
	return PL_OK;
}
