/* start_capture.c - the start_capture tool: the device's agent runs perf
 * on one of its processes and streams chunks into a new session.
 *
 * Gates, in the worker before anything is sent (and again in the link):
 * --allow-device-control, the collection phrase and the pid-attach phrase
 * (a device capture always attaches to a pid), exactly as collect_profile
 * checks them.  Ranges: frequency 1 to the device's max sample rate (when
 * its agent reported one), interval 1..300 s (the schema).  duration_seconds
 * makes the link stop the capture by itself.  call_graph and counting
 * are checked against what the device said it can do (its capabilities'
 * perf: our agent's at pairing, a seed's from its hello and probe) and a
 * mode it cannot do is refused, naming those it can.  lbr (the CPU's last
 * branch records: callers without frame pointers or stack copies) only
 * runs where the device's perf_caps list it: a device whose methods are
 * not known yet (a seed before its probe) may pass fp or dwarf, which its
 * agent answers for, but not lbr, which few CPUs and no VM have. */
#include "registry.h"
#include "tools/lib/device_common.h"

/* "fp, dwarf, none" from the device's perf.call_graphs (or "unknown"). */
static void list_methods(json_t *perf, char *out, size_t cap)
{
	json_t *m = json_object_get(perf, "call_graphs"), *v;
	size_t i, len = 0;

	snprintf(out, cap, "unknown");
	json_array_foreach(m, i, v)
		if (json_is_string(v) && len < cap)
			len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", json_string_value(v));
}

/* A call_graph or counting the device cannot do is refused here, before
 * anything is sent, naming what it can. */
static enum pl_err check_mode(const char *device, json_t *dev, json_t *args, struct pl_error *err)
{
	json_t *perf = json_object_get(json_object_get(dev, "capabilities"), "perf");
	json_t *methods = json_object_get(perf, "call_graphs"), *v;
	const char *cg = json_string_value(json_object_get(args, "call_graph"));
	bool counting = json_is_true(json_object_get(args, "counting"));
	const char *source = json_string_value(json_object_get(perf, "source"));
	char can[64], hint[200];
	size_t i;

	list_methods(perf, can, sizeof(can));
	if (counting && !json_is_true(json_object_get(perf, "counting"))) {
		snprintf(hint, sizeof(hint), "start_capture without counting: the device samples (call graphs: %s)", can);
		return pl_fail(err, PL_ERR_UNSUPPORTED, hint, "device '%s' cannot count without sampling (%s)",
			       device, source ? source : "it reported no perf capabilities");
	}
	if (counting && cg)
		return pl_fail(err, PL_ERR_USAGE, "pass counting or call_graph, not both",
			       "counting takes no samples, so no call graph");
	if (!counting && json_is_false(json_object_get(perf, "sampling")))
		return pl_fail(err, PL_ERR_UNSUPPORTED, json_is_true(json_object_get(perf, "counting"))
			       ? "pass counting=true (perf stat only), or fix sampling on the device (its sampling_error)"
			       : "fix perf on the device (its capabilities.perf)",
			       "device '%s' cannot sample: perf_event_open of cpu-clock failed there (%s)", device,
			       json_string_value(json_object_get(perf, "sampling_error"))
			       ? json_string_value(json_object_get(perf, "sampling_error")) : "no reason given");
	if (!cg || (!json_is_array(methods) && strcmp(cg, "lbr") != 0))
		return PL_OK;
	if (!json_is_array(methods))
		return pl_fail(err, PL_ERR_UNSUPPORTED, "pass call_graph as one of: fp, dwarf, none (the device's "
			       "own methods are known after its probe: list_devices' capabilities.perf)",
			       "device '%s' does not say it can record call_graph lbr (%s)", device,
			       source ? source : "no perf capabilities");
	json_array_foreach(methods, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), cg) == 0)
			return PL_OK;
	snprintf(hint, sizeof(hint), "pass call_graph as one of: %s%s", can,
		 json_is_true(json_object_get(perf, "counting")) ? "; or counting=true" : "");
	return pl_fail(err, PL_ERR_UNSUPPORTED, hint, "device '%s' cannot record call_graph %s (%s)", device, cg,
		       source ? source : "its capabilities");
}

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
	if ((rc = check_mode(device, dev, args, err))) {
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
	if (json_object_get(args, "call_graph"))
		json_object_set(req, "call_graph", json_object_get(args, "call_graph"));
	if (json_is_true(json_object_get(args, "counting")))
		json_object_set_new(req, "counting", json_true());
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
