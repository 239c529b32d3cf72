/* start_capture.c - the start_capture tool: the device's agent runs perf
 * on one of its processes and streams chunks into a new session.
 *
 * Gates, in the worker before anything is sent (and again in the link):
 * --allow-device-control, the collection phrase and the pid-attach phrase
 * (a device capture always attaches to a pid), exactly as collect_profile
 * checks them.  Ranges: frequency 1 to the device's max sample rate (when
 * its agent reported one), interval 1..300 s (the schema).  duration_seconds
 * makes the link stop the capture by itself. */
#include "registry.h"
#include "device_common.h"

enum pl_err tool_start_capture(const struct tool_ctx *ctx, json_t *args, json_t **result,
			       struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	json_int_t freq = json_integer_value(json_object_get(args, "frequency_hz"));
	json_t *dev, *answer, *req, *max, *events = json_object_get(args, "events"), *d, *steps;
	enum pl_err rc;

	if ((rc = dev_require_control(ctx, err)) || (rc = dev_require_phrases(args, true, err)) ||
	    (rc = dev_load_device(ctx, device, &dev, err)))
		return rc;
	max = json_object_get(dev, "max_sample_rate");
	if (json_integer_value(max) > 0 && freq > json_integer_value(max)) {
		rc = pl_fail(err, PL_ERR_USAGE, "pass frequency_hz within the device's perf_event_max_sample_rate",
			     "frequency_hz %lld is over device '%s''s max sample rate of %lld", (long long)freq,
			     device, (long long)json_integer_value(max));
		json_decref(dev);
		return rc;
	}
	json_decref(dev);
	req = json_pack("{s:O,s:I,s:O,s:O,s:O}", "pid", json_object_get(args, "pid"), "frequency", freq,
			"duration", json_object_get(args, "interval_seconds"),
			"authorization", json_object_get(args, "authorization"),
			"pid_authorization", json_object_get(args, "pid_authorization"));
	if (events)
		json_object_set(req, "events", events);
	if (json_object_get(args, "duration_seconds"))
		json_object_set(req, "auto_stop_seconds", json_object_get(args, "duration_seconds"));
	if ((rc = dev_request(ctx, "start", device, req, 50000, &answer, err)))
		return rc;
	d = json_object_get(answer, "device");
	/* stop_capture last: it ends what the others look at. */
	steps = json_pack("[o]", tool_next_step("list_devices", json_object(), "watch chunks and samples arrive"));
	if (json_is_string(json_object_get(d, "session")))
		json_array_append_new(steps, tool_next_step("get_device_metrics",
			json_pack("{s:s,s:s}", "device", device, "type", "process"), "the process's health while profiled"));
	json_array_append_new(steps, tool_next_step("stop_capture", json_pack("{s:s}", "device", device),
		"stop when enough was captured; its next step analyzes the session"));
	*result = json_pack("{s:o,s:o,s:o,s:o}", "device", dev_brief(d),
			    "session", dev_typed_or_null(d, "session", DEV_STRING),
			    "capture", dev_typed_or_null(answer, "answer", DEV_OBJECT), "next_steps", steps);
	json_decref(answer);
	return PL_OK;
}
