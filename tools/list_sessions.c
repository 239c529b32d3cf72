/* list_sessions.c - the list_sessions tool: the device sessions under the
 * artifact root (sessions/ID/metadata.json), newest first, with the uri
 * analyze_profile reads them by; a live one says so. */
#include "registry.h"
#include "tools/lib/device_common.h"
#include "collectors/agentlink/channel.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int newest_first(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "started"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "started"));
	int c = strcmp(y ? y : "", x ? x : "");

	return c ? c : strcmp(json_string_value(json_object_get(*(json_t *const *)b, "session")),
			      json_string_value(json_object_get(*(json_t *const *)a, "session")));
}

/* One session's brief from its metadata (new), each field of its schema's
 * kind or null: metadata.json may be a seed's, or damaged. */
static json_t *session_brief(const char *id, json_t *m)
{
	char uri[300];
	json_t *chunks = dev_typed(m, "chunks", DEV_INT);
	json_t *started = dev_typed(m, "started", DEV_STRING);

	if (!started)
		started = dev_typed(m, "timestamp", DEV_STRING);
	dev_session_uri(id, uri, sizeof(uri));
	return json_pack("{s:s,s:s,s:o,s:b,s:b,s:o,s:i,s:O,s:o,s:o,s:o,s:o,s:o}",
		"session", id, "uri", uri,
		"device", dev_typed_or_null(m, "agent", DEV_STRING),
		"live", json_is_true(json_object_get(m, "live")),
		"recovered", json_is_true(json_object_get(m, "recovered")),
		"chunks", chunks ? json_incref(chunks) : json_integer(0),
		"gaps", (int)json_array_size(json_object_get(m, "gaps")),
		"started", started ? started : json_null(),
		"last_chunk_time", dev_typed_or_null(m, "last_chunk_time", DEV_STRING),
		"text_bytes", dev_typed_or_null(m, "text_bytes", DEV_INT),
		"samples_sent", dev_typed_or_null(json_object_get(m, "agent_counters"), "samples_sent", DEV_INT),
		"capture", dev_typed_or_null(m, "capture", DEV_OBJECT),
		"write_errors", dev_typed_or_null(m, "write_errors", DEV_OBJECT));
}

enum pl_err tool_list_sessions(const struct tool_ctx *ctx, json_t *args, json_t **result,
			       struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	json_t **items = NULL, *all = json_array(), *page, *steps = json_array(), *s;
	size_t n = 0, cap = 0, i;
	struct pl_buf query = {0};
	struct tool_page pg;
	struct dirent *de;
	char dir[4200];
	enum pl_err rc;
	DIR *d;

	pl_buf_addf(&query, "sessions|%s", device ? device : "");
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err))) {
		pl_buf_release(&query);
		json_decref(all);
		json_decref(steps);
		return rc;
	}
	snprintf(dir, sizeof(dir), "%s/%s", ctx->artifact_root ? ctx->artifact_root : "/nonexistent",
		 COLL_SESSIONS_DIR);
	if ((d = opendir(dir))) {
		while ((de = readdir(d))) {
			json_t *m = coll_id_ok(de->d_name) ? dev_load_session(ctx, de->d_name) : NULL;
			const char *agent = json_string_value(json_object_get(m, "agent"));
			if (json_is_object(m) && (!device || (agent && strcmp(agent, device) == 0))) {
				PL_GROW(items, cap, n + 1);
				items[n++] = session_brief(de->d_name, m);
			}
			json_decref(m);
		}
		closedir(d);
	}
	if (n)
		qsort(items, n, sizeof(*items), newest_first);
	for (i = 0; i < n; i++)
		json_array_append_new(all, items[i]);
	free(items);
	page = dev_page_slice(all, &pg);
	json_array_foreach(page, i, s)
		if (json_integer_value(json_object_get(s, "chunks")) > 0 && json_array_size(steps) < 3)
			dev_steps_add(steps, dev_analyze_step(ctx, json_string_value(json_object_get(s, "session")),
				json_is_true(json_object_get(s, "live")) ? "analyze the chunks of this live session so far"
									 : "analyze this session"));
	*result = json_pack("{s:o,s:o,s:o}", "sessions", page, "next_steps", steps,
			    "page", tool_page_json(&pg, tool_page_call(&pg, "list_sessions", args, NULL)));
	json_decref(all);
	pl_buf_release(&query);
	return PL_OK;
}
