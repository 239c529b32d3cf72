/* list_artifacts.c - the list_artifacts tool: one page of what lies under
 * the artifact root (analyses, their stack tables, exports), in path
 * order, each with its resource URI and size; an analysis also with what
 * its summary says of its inputs and events, and when it was written (the
 * viewer's list of analyses).  `filter` keeps the artifacts whose path or
 * an input's path holds it. */
#include "registry.h"
#include "store/artifact.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* {"inputs", "events": [{name, samples}], "modified"} of an analysis'
 * summary at `rel` ("analyses/ID.json"), or NULL when it cannot be read
 * (then the entry is listed without it). New reference. */
static json_t *analysis_brief(const char *root, const char *rel)
{
	char id[64], path[4096], when[32];
	const char *name = strchr(rel, '/') + 1;
	size_t n = strlen(name);
	struct pl_error err;
	struct stat sb;
	struct tm tm;
	json_t *sum, *brief, *inputs, *events, *v;
	size_t i;

	if (n <= 5 || n - 5 >= sizeof(id))
		return NULL;
	snprintf(id, sizeof(id), "%.*s", (int)(n - 5), name);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	static const char *const keys[] = {"events", "provenance"};

	/* Only these two of the summary: parsing all of it (86 kB for a
	 * small capture) was most of a call's time. */
	if (!pl_artifact_id_valid(id) || stat(path, &sb) < 0 ||
	    pl_artifact_load_summary_keys(root, id, keys, PL_ARRAY_LEN(keys), &sum, &err))
		return NULL;
	gmtime_r(&sb.st_mtime, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	inputs = json_array();
	events = json_array();
	json_array_foreach(json_object_get(json_object_get(sum, "provenance"), "inputs"), i, v)
		if (json_is_string(json_object_get(v, "path")))
			json_array_append(inputs, json_object_get(v, "path"));
	json_array_foreach(json_object_get(sum, "events"), i, v)
		if (json_is_string(json_object_get(v, "name")))
			json_array_append_new(events, json_pack("{s:O,s:I}", "name", json_object_get(v, "name"),
				"samples", json_integer_value(json_object_get(v, "samples"))));
	brief = json_pack("{s:o,s:o,s:s}", "inputs", inputs, "events", events, "modified", when);
	json_decref(sum);
	return brief;
}

static bool matches(json_t *item, const char *filter)
{
	json_t *v;
	size_t i;

	if (!filter || !*filter)
		return true;
	if (strstr(json_string_value(json_object_get(item, "path")), filter))
		return true;
	json_array_foreach(json_object_get(json_object_get(item, "analysis"), "inputs"), i, v)
		if (strstr(json_string_value(v), filter))
			return true;
	return false;
}

/* Add its brief to an analysis entry (borrowed). */
static void add_brief(const char *root, json_t *item)
{
	json_t *brief;

	if (strcmp(json_string_value(json_object_get(item, "kind")), "analysis") == 0 &&
	    !json_object_get(item, "analysis") &&
	    (brief = analysis_brief(root, json_string_value(json_object_get(item, "path")))))
		json_object_set_new(item, "analysis", brief);
}

enum pl_err tool_list_artifacts(const struct tool_ctx *ctx, json_t *args,
				json_t **result, struct pl_error *err)
{
	const char *kind = json_string_value(json_object_get(args, "kind"));
	const char *filter = json_string_value(json_object_get(args, "filter"));
	const char *root = ctx->artifact_root ? ctx->artifact_root : "/nonexistent";
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct pl_buf query = {0};
	struct tool_page pg;
	json_t *all, *kept, *page, *v;
	enum pl_err rc;
	size_t i;

	pl_buf_addf(&query, "artifacts|%s|%s", kind, filter ? filter : "");
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err))) {
		pl_buf_release(&query);
		return rc;
	}
	all = pl_artifact_list(root);
	kept = json_array();
	json_array_foreach(all, i, v) {
		if (strcmp(kind, "all") != 0 && strcmp(kind, json_string_value(json_object_get(v, "kind"))) != 0)
			continue;
		if (filter && *filter)
			add_brief(root, v);  /* the filter looks at the inputs too */
		if (matches(v, filter))
			json_array_append(kept, v);
	}
	tool_page_bound(&pg, json_array_size(kept));
	page = json_array();
	for (i = pg.start; i < pg.end; i++) {
		add_brief(root, json_array_get(kept, i));
		json_array_append(page, json_array_get(kept, i));
	}
	*result = json_pack("{s:o,s:o}", "artifacts", page, "page",
		tool_page_json(&pg, tool_page_call(&pg, "list_artifacts", args, NULL)));
	json_decref(all);
	json_decref(kept);
	pl_buf_release(&query);
	return PL_OK;
}
