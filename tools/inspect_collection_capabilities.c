/* inspect_collection_capabilities.c - the inspect_collection_capabilities
 * tool: what perf can collect here.
 *
 * The gates (collection, writes, process execution) and perf's presence
 * are checked here; the probes and their cache are collectors/capabilities.
 * The answer's next_steps are collect_profile calls made of what the
 * probes found to work.
 */
#include "registry.h"
#include "collectors/capabilities.h"

#include <string.h>

static const char *field(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

/* The first probed event that records here (the probe tries cycles before
 * the software clocks), else cpu-clock. */
static const char *recording_event(json_t *caps)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(caps, "events"), i, e)
		if (strcmp(field(e, "record"), "works") == 0)
			return field(e, "event");
	return "cpu-clock";
}

static bool graph_works(json_t *caps, const char *mode)
{
	json_t *g;
	size_t i;

	json_array_foreach(json_object_get(caps, "call_graphs"), i, g)
		if (strcmp(field(g, "mode"), mode) == 0)
			return strcmp(field(g, "status"), "real_chains") == 0;
	return false;
}

static bool tracepoint_available(json_t *caps, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(caps, "tracepoints"), i, t)
		if (strcmp(field(t, "name"), name) == 0)
			return json_is_true(json_object_get(t, "available"));
	return false;
}

/* collect_profile calls built from what was found to work: a record with
 * an event that records, by frame pointers and, when it yields chains, by
 * DWARF; a stat of the events that count; off-CPU when sched_switch is
 * there.  Each still needs what to profile and the phrase (needs says). */
static json_t *next_steps(json_t *caps)
{
	json_t *steps = json_array(), *counted = json_array(), *e;
	const char *ev = recording_event(caps);
	size_t i;

	json_array_append_new(steps, tool_next_step("collect_profile", json_pack("{s:s,s:[s],s:s}", "mode", "record",
		"events", ev, "call_graph", "fp"),
		"where the time goes, sampled with an event that records here (fp chains need code built with "
		"-fno-omit-frame-pointer)"));
	if (graph_works(caps, "dwarf"))
		json_array_append_new(steps, tool_next_step("collect_profile", json_pack("{s:s,s:[s],s:s}", "mode",
			"record", "events", ev, "call_graph", "dwarf"),
			"the same with DWARF unwinding, for code without frame pointers"));
	json_array_foreach(json_object_get(caps, "events"), i, e)
		if (strcmp(field(e, "count"), "counted") == 0)
			json_array_append_new(counted, json_string(field(e, "event")));
	if (json_array_size(counted))
		json_array_append_new(steps, tool_next_step("collect_profile", json_pack("{s:s,s:O}", "mode", "stat",
			"events", counted), "the counters that count here, for a before/after comparison"));
	json_decref(counted);
	if (tracepoint_available(caps, "sched:sched_switch"))
		json_array_append_new(steps, tool_next_step("collect_profile", json_pack("{s:s}", "mode", "off_cpu"),
			"where the threads wait off the CPU, when the samples show less CPU than wall time"));
	return steps;
}

enum pl_err tool_inspect_collection_capabilities(const struct tool_ctx *ctx, json_t *args,
						 json_t **result, struct pl_error *err)
{
	if (!ctx->allow_collection || !ctx->allow_writes || !ctx->artifact_root ||
	    !ctx->allow_process_execution)
		return pl_fail(err, PL_ERR_PATH,
			       "restart perflens-mcp with --allow-collection --allow-writes --allow-process-execution --artifact-root DIR (the CLI: --authorize-target PHRASE)",
			       "probing collection needs the collection flags at server start");
	if (!ctx->perf.path)
		return pl_fail(err, PL_ERR_UNSUPPORTED, "install linux-perf or pass --perf-path FILE",
			       "no perf was found");
	enum pl_err rc = coll_capabilities(ctx->perf.path, ctx->perf.probe_workload, ctx->artifact_root,
					   json_is_true(json_object_get(args, "refresh")), result, err);

	if (rc == PL_OK)
		json_object_set_new(*result, "next_steps", next_steps(*result));
	return rc;
}
