/* list_artifacts.c - the list_artifacts tool: one page of what lies under
 * the artifact root (analyses, their stack tables, exports), in path
 * order, each with its resource URI and size. */
#include "registry.h"
#include "store/artifact.h"

#include <string.h>

enum pl_err tool_list_artifacts(const struct tool_ctx *ctx, json_t *args,
				json_t **result, struct pl_error *err)
{
	const char *kind = json_string_value(json_object_get(args, "kind"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct pl_buf query = {0};
	struct tool_page pg;
	json_t *all, *kept, *page, *v;
	enum pl_err rc;
	size_t i;

	pl_buf_addf(&query, "artifacts|%s", kind);
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err))) {
		pl_buf_release(&query);
		return rc;
	}
	all = pl_artifact_list(ctx->artifact_root ? ctx->artifact_root : "/nonexistent");
	kept = json_array();
	json_array_foreach(all, i, v)
		if (strcmp(kind, "all") == 0 ||
		    strcmp(kind, json_string_value(json_object_get(v, "kind"))) == 0)
			json_array_append(kept, v);
	tool_page_bound(&pg, json_array_size(kept));
	page = json_array();
	for (i = pg.start; i < pg.end; i++)
		json_array_append(page, json_array_get(kept, i));
	*result = json_pack("{s:o,s:o}", "artifacts", page, "page",
		tool_page_json(&pg, tool_page_call(&pg, "list_artifacts", args, NULL)));
	json_decref(all);
	json_decref(kept);
	pl_buf_release(&query);
	return PL_OK;
}
