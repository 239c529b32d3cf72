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
	size_t offset = 0, n = 0, end, i;
	json_t *all, *kept = json_array(), *page = json_array(), *v;
	char query[64], next[64];

	snprintf(query, sizeof(query), "artifacts|%s", kind);
	if (cursor && tool_cursor_parse(cursor, query, &offset, err)) {
		json_decref(kept);
		json_decref(page);
		return err->code;
	}
	all = pl_artifact_list(ctx->artifact_root ? ctx->artifact_root : "/nonexistent");
	json_array_foreach(all, i, v)
		if (strcmp(kind, "all") == 0 ||
		    strcmp(kind, json_string_value(json_object_get(v, "kind"))) == 0)
			json_array_append(kept, v);
	n = json_array_size(kept);
	if (offset > n)
		offset = n;
	end = offset + limit < n ? offset + limit : n;
	for (i = offset; i < end; i++)
		json_array_append(page, json_array_get(kept, i));
	tool_cursor_make(next, sizeof(next), end, query);
	*result = json_pack("{s:o,s:o}", "artifacts", page, "page",
		tool_page_new(offset, end, n, next,
			      json_sprintf("list_artifacts(kind=\"%s\", cursor=\"%s\")", kind, next)));
	json_decref(all);
	json_decref(kept);
	return PL_OK;
}
