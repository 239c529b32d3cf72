/* stop_capture.c - the stop_capture tool: the device's agent stops perf;
 * the link finalizes the session (a chunk flushed around the stop still
 * lands in it) and the answer names it, with analyze_profile on it as the
 * next step, the agent's own counters to check it against and what the
 * agent said went wrong (the capture's problems, each with its fix). */
#include "registry.h"
#include "tools/lib/device_common.h"

enum pl_err tool_stop_capture(const struct tool_ctx *ctx, json_t *args, json_t **result,
			      struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	json_t *answer, *a, *session, *steps = json_array(), *meta = NULL;
	enum pl_err rc;

	if ((rc = dev_require_control(ctx, err)) ||
	    (rc = dev_request(ctx, "stop", device, NULL, 40000, &answer, err))) {
		json_decref(steps);
		return rc;
	}
	a = json_object_get(answer, "answer");
	session = json_object_get(a, "session");
	if (json_is_string(session)) {
		dev_steps_add(steps, dev_analyze_step(ctx, json_string_value(session),
			"analyze the finished session: hotspots per event"));
		meta = dev_load_session(ctx, json_string_value(session));
	}
	json_array_append_new(steps, tool_next_step("list_sessions", json_pack("{s:s}", "device", device),
						    "the device's sessions"));
	*result = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "device", dev_brief(json_object_get(answer, "device")),
		"session", dev_typed_or_null(a, "session", DEV_STRING),
		"chunks", dev_typed_or_null(meta, "chunks", DEV_INT),
		"gaps", dev_typed_or_null(meta, "gaps", DEV_ARRAY),
		"problems", dev_typed_or_null(json_object_get(meta, "capture"), "problems", DEV_ARRAY),
		"agent_counters", dev_typed_or_null(a, "counters", DEV_OBJECT),
		"next_steps", steps);
	json_decref(meta);
	json_decref(answer);
	return PL_OK;
}
