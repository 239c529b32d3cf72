/* configure_device_metrics.c - the configure_device_metrics tool: which
 * health metrics a device sends and how often (the agent's
 * configure_metrics command: system and process always with `enabled`,
 * network, disk and per-thread by choice).  No perf runs for it, so only
 * the operator's control flag gates it; what is not given stays as it is,
 * and a call with no settings reads them. */
#include "registry.h"
#include "tools/lib/device_common.h"

/* The settings given, under the agent's names. */
static json_t *agent_settings(json_t *args)
{
	static const struct {
		const char *ours, *agents;
	} names[] = {
		{"enabled", "enabled"}, {"interval_seconds", "interval"}, {"network", "network"},
		{"disk", "disk"}, {"threads", "threads"},
	};
	json_t *out = json_object(), *v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((v = json_object_get(args, names[i].ours)))
			json_object_set(out, names[i].agents, v);
	return out;
}

enum pl_err tool_configure_device_metrics(const struct tool_ctx *ctx, json_t *args, json_t **result,
					  struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	json_t *answer, *a;
	enum pl_err rc;

	if ((rc = dev_require_control(ctx, err)))
		return rc;
	if ((rc = dev_request(ctx, "configure_metrics", device, agent_settings(args), 30000, &answer, err)))
		return rc;
	a = json_object_get(answer, "answer");
	*result = json_pack("{s:s,s:{s:O?,s:O?,s:O?,s:O?,s:O?},s:[o]}", "device", device,
		"metrics", "enabled", json_object_get(a, "metrics_enabled"),
		"interval_seconds", json_object_get(a, "interval"), "network", json_object_get(a, "network"),
		"disk", json_object_get(a, "disk"), "threads", json_object_get(a, "threads"),
		"next_steps", tool_next_step("get_device_metrics", json_pack("{s:s,s:s}", "device", device,
			"type", json_is_true(json_object_get(a, "disk")) ? "disk" : "system"),
			"the frames the device sends now"));
	json_decref(answer);
	return PL_OK;
}
