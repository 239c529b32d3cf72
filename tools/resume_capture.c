/* resume_capture.c - the resume_capture tool: resume a device's capture
 * (the session stays open; the agent's own state machine decides). */
#include "registry.h"
#include "tools/lib/device_common.h"

enum pl_err tool_resume_capture(const struct tool_ctx *ctx, json_t *args, json_t **result,
			      struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	json_t *answer, *d;
	enum pl_err rc;

	if ((rc = dev_require_control(ctx, err)))
		return rc;
	/* Resuming runs perf on the device again. */
	if ((rc = dev_require_phrases(args, false, err)))
		return rc;
	if ((rc = dev_request(ctx, "resume", device, json_pack("{s:O}", "authorization",
			      json_object_get(args, "authorization")), 30000, &answer, err)))
		return rc;
	d = json_object_get(answer, "device");
	*result = json_pack("{s:o,s:o}", "device", dev_brief(d), "state", dev_state(d));
	json_decref(answer);
	return PL_OK;
}
