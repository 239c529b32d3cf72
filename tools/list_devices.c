/* list_devices.c - the list_devices tool: the device agents this server's
 * agent link holds or held (dial-in and connected out), from the state
 * files the link publishes (devices/ID.json), by device id, paged. */
#include "registry.h"
#include "device_common.h"
#include "collectors/agentlink/channel.h"

#include <string.h>

/* What a model needs of a device's state (new). */
static json_t *device_brief(json_t *d)
{
	json_t *hello = json_object_get(d, "hello");
	static const char *const keep[] = {
		"device", "address", "port", "direction", "state", "reason", "session", "chunks",
		"samples", "text_bytes", "wire_bytes", "frames_dropped", "metrics_frames",
		"last_chunk_time", "connected_at", "legacy", "features", "platform", "capabilities",
		"capture", "last_drop", "write_errors", "last_session", "session_chunks",
	};
	json_t *b = json_object();

	for (size_t i = 0; i < PL_ARRAY_LEN(keep); i++) {
		json_t *v = json_object_get(d, keep[i]);
		json_object_set(b, keep[i], v ? v : json_null());
	}
	json_object_set(b, "agent_version", json_object_get(hello, "agent_version")
			? json_object_get(hello, "agent_version") : json_null());
	return b;
}

enum pl_err tool_list_devices(const struct tool_ctx *ctx, json_t *args, json_t **result,
			      struct pl_error *err)
{
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	json_t *all = dev_list_devices(ctx), *briefs = json_array(), *page, *link, *steps = json_array(), *d;
	struct tool_page pg;
	enum pl_err rc;
	size_t i;

	if ((rc = tool_page_open(&pg, "devices", cursor, 0, limit, err))) {
		json_decref(all);
		json_decref(briefs);
		json_decref(steps);
		return rc;
	}
	json_array_foreach(all, i, d)
		json_array_append_new(briefs, device_brief(d));
	page = dev_page_slice(briefs, &pg);
	link = ctx->artifact_root ? coll_read_json(ctx->artifact_root, COLL_LINK_STATE, 1u << 16) : NULL;
	json_array_foreach(page, i, d) {
		const char *state = json_string_value(json_object_get(d, "state"));
		const char *session = json_string_value(json_object_get(d, "session"));
		if (state && strcmp(state, "connected") == 0 && json_array_size(steps) < 3)
			json_array_append_new(steps, tool_next_step("list_device_processes",
				json_pack("{s:O}", "device", json_object_get(d, "device")),
				"find the pid to profile on this device"));
		json_int_t session_chunks = json_integer_value(json_object_get(d, "session_chunks"));
		const char *last = json_string_value(json_object_get(d, "last_session"));
		if (session && session_chunks > 0 && json_array_size(steps) < 5)
			json_array_append_new(steps, dev_analyze_step(session, "analyze the chunks of this device's session so far"));
		else if (last && json_array_size(steps) < 5)
			/* No capture is writing chunks (the open session, if any,
			 * holds metrics only): a capture that stopped by itself
			 * (duration_seconds, its target exited) left a finished
			 * session nobody named yet. */
			json_array_append_new(steps, dev_analyze_step(last, "analyze the device's last finished session"));
	}
	*result = json_pack("{s:o,s:o,s:o,s:o}", "devices", page, "link", link ? link : json_null(),
			    "next_steps", steps,
			    "page", tool_page_json(&pg, tool_page_call(&pg, "list_devices", args, NULL)));
	json_decref(all);
	json_decref(briefs);
	return PL_OK;
}
