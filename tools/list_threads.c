/* list_threads.c - the list_threads tool: one page of an event's threads,
 * heaviest first, read from the analysis summary (already sorted there). */
#include "registry.h"
#include "store/artifact.h"

#include <string.h>

static json_t *thread_json(json_t *threads, json_t *entry, size_t rank)
{
	json_t *t = json_array_get(threads, (size_t)json_integer_value(json_object_get(entry, "thread")));
	json_t *w = json_object_get(entry, "weight");

	return json_pack("{s:I,s:O,s:O,s:O,s:O,s:O,s:O}", "rank", (json_int_t)rank,
			 "pid", json_object_get(t, "pid"), "tid", json_object_get(t, "tid"),
			 "comm", json_object_get(t, "comm"), "samples", json_object_get(w, "samples"),
			 "period", json_object_get(w, "period"), "percent", json_object_get(w, "percent"));
}

enum pl_err tool_list_threads(const struct tool_ctx *ctx, json_t *args,
			      json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *event = json_string_value(json_object_get(args, "event"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct pl_buf query = {0};
	struct tool_page pg;
	json_t *summary, *view, *list, *page;
	size_t vi;
	enum pl_err rc;

	if ((rc = pl_artifact_load_summary(ctx->artifact_root, id, &summary, err)))
		return rc;
	if ((rc = tool_pick_summary_event(summary, event, &vi, err)))
		goto out;
	view = json_array_get(json_object_get(summary, "views"), vi);
	event = json_string_value(json_object_get(view, "event"));
	pl_buf_addf(&query, "threads|%s|%s", id, event);
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err)))
		goto out;
	list = json_object_get(view, "threads");
	tool_page_bound(&pg, json_array_size(list));
	page = json_array();
	for (size_t i = pg.start; i < pg.end; i++)
		json_array_append_new(page, thread_json(json_object_get(summary, "threads"),
							json_array_get(list, i), i + 1));
	*result = json_pack("{s:s,s:s,s:O,s:o,s:o}", "analysis_id", id,
		"event", event, "unit", json_object_get(view, "unit"), "threads", page,
		"page", tool_page_json(&pg, tool_page_call(&pg, "list_threads", args,
			json_pack("{s:s}", "event", event))));
out:
	pl_buf_release(&query);
	json_decref(summary);
	return rc;
}
