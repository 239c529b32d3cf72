/* connect_device.c - the connect_device tool: the agent link connects out
 * to an agent started with --listen and pairs with its code (extension 1's
 * mutual proof, or a seed agent's token where --agent-allow-legacy allows
 * it).  The code goes to the link in a request file (0600) it removes on
 * reading; it never appears in the result. */
#include "registry.h"
#include "tools/lib/device_common.h"

enum pl_err tool_connect_device(const struct tool_ctx *ctx, json_t *args, json_t **result,
				struct pl_error *err)
{
	json_t *answer, *dev;
	enum pl_err rc;

	if ((rc = dev_require_control(ctx, err)))
		return rc;
	rc = dev_request(ctx, "connect", NULL, json_pack("{s:O,s:O,s:O}", "host", json_object_get(args, "host"),
			 "port", json_object_get(args, "port"), "pairing_code", json_object_get(args, "pairing_code")),
			 25000, &answer, err);
	if (rc)
		return rc;
	dev = json_object_get(answer, "device");
	*result = json_pack("{s:o,s:[o]}", "device", dev_brief(dev), "next_steps",
		tool_next_step("list_device_processes", json_pack("{s:O}", "device", json_object_get(dev, "device")),
			       "find the pid to profile on this device"));
	json_decref(answer);
	return PL_OK;
}
