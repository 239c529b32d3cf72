/* disconnect_device.c - the disconnect_device tool: the link stops any
 * capture on the device, closes its link and finalizes its session.  A
 * --server agent dials back in by itself (as a new device link). */
#include "registry.h"
#include "tools/lib/device_common.h"

enum pl_err tool_disconnect_device(const struct tool_ctx *ctx, json_t *args, json_t **result,
				   struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	json_t *answer, *d, *steps = json_array();
	enum pl_err rc;

	if ((rc = dev_require_control(ctx, err)) ||
	    (rc = dev_request(ctx, "disconnect", device, NULL, 30000, &answer, err))) {
		json_decref(steps);
		return rc;
	}
	d = json_object_get(answer, "device");
	if (json_is_string(json_object_get(d, "session")))
		dev_steps_add(steps, dev_analyze_step(ctx, json_string_value(json_object_get(d, "session")),
			"analyze the device's last session"));
	*result = json_pack("{s:o,s:o,s:o}", "device", dev_brief(d), "state", dev_state(d),
			    "next_steps", steps);
	json_decref(answer);
	return PL_OK;
}
