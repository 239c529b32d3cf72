/* list_devices.c - the list_devices tool: the device agents this server's
 * agent link holds or held (dial-in and connected out), from the state
 * files the link publishes (devices/ID.json), by device id, paged. */
#include "registry.h"
#include "tools/lib/device_common.h"
#include "collectors/agentlink/channel.h"

#include <string.h>

/* The link's own state (link.json, new) as the schema has it, or NULL. */
static json_t *link_brief(json_t *link_new)
{
	json_t *b;

	if (!json_is_object(link_new)) {
		json_decref(link_new);
		return NULL;
	}
	b = json_pack("{s:o,s:o,s:o,s:o,s:o}",
		"server_pid", dev_typed_or_null(link_new, "server_pid", DEV_INT),
		"control", dev_typed_or_null(link_new, "control", DEV_BOOL),
		"listen", dev_typed_or_null(link_new, "listen", DEV_STRING),
		"port", dev_typed_or_null(link_new, "port", DEV_INT),
		"pairing_code_set", dev_typed_or_null(link_new, "pairing_code_set", DEV_BOOL));
	json_decref(link_new);
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
		json_array_append_new(briefs, dev_brief(d));
	page = dev_page_slice(briefs, &pg);
	link = ctx->artifact_root ? coll_read_json(ctx->artifact_root, COLL_LINK_STATE, 1u << 16) : NULL;
	link = link_brief(link);
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
			dev_steps_add(steps, dev_analyze_step(ctx, session, "analyze the chunks of this device's session so far"));
		else if (last && json_array_size(steps) < 5)
			/* No capture is writing chunks (the open session, if any,
			 * holds metrics only): a capture that stopped by itself
			 * (duration_seconds, its target exited) left a finished
			 * session nobody named yet. */
			dev_steps_add(steps, dev_analyze_step(ctx, last, "analyze the device's last finished session"));
	}
	*result = json_pack("{s:o,s:o,s:o,s:o}", "devices", page, "link", link ? link : json_null(),
			    "next_steps", steps,
			    "page", tool_page_json(&pg, tool_page_call(&pg, "list_devices", args, NULL)));
	json_decref(all);
	json_decref(briefs);
	return PL_OK;
}
