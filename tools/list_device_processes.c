/* list_device_processes.c - the list_device_processes tool: the processes
 * a device's agent lists (list_processes, busiest first), filtered by a
 * substring of comm or cmdline, paged.  Read-only: it needs the agent
 * link, not --allow-device-control. */
#include "registry.h"
#include "tools/lib/device_common.h"

#include <math.h>
#include <string.h>

/* A process as the schema has it (new), or NULL for an entry without a
 * pid: the agent's list is a stranger's JSON.  The agent's cpu is a share
 * of all its CPUs (the seed's list_processes): times `cpus`, the count our
 * agent gives beside the list, it is percent of one CPU (DEV_CPU_UNIT);
 * null when the count is unknown. */
static json_t *process_brief(json_t *p, json_int_t cpus)
{
	json_t *cpu = dev_typed(p, "cpu", DEV_NUMBER);

	if (!dev_typed(p, "pid", DEV_INT))
		return NULL;
	return json_pack("{s:O,s:o,s:o,s:o}", "pid", json_object_get(p, "pid"),
			 "comm", dev_typed_or_null(p, "comm", DEV_STRING),
			 "cmdline", dev_typed_or_null(p, "cmdline", DEV_STRING),
			 "cpu_pct", cpu && cpus > 0 && cpus <= 65536
				 ? json_real(round(json_number_value(cpu) * (double)cpus * 10) / 10) : json_null());
}

enum pl_err tool_list_device_processes(const struct tool_ctx *ctx, json_t *args, json_t **result,
				       struct pl_error *err)
{
	const char *device = json_string_value(json_object_get(args, "device"));
	const char *match = json_string_value(json_object_get(args, "match"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	json_t *answer, *kept = json_array(), *page, *p, *steps = json_array();
	struct pl_buf query = {0};
	struct tool_page pg;
	enum pl_err rc;
	size_t i;

	pl_buf_addf(&query, "processes|%s|%s", device, match ? match : "");
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err)) ||
	    (rc = dev_request(ctx, "list_processes", device, NULL, 50000, &answer, err))) {
		pl_buf_release(&query);
		json_decref(kept);
		json_decref(steps);
		return rc;
	}
	json_t *cpus = dev_typed(json_object_get(answer, "answer"), "cpus", DEV_INT);
	json_array_foreach(json_object_get(json_object_get(answer, "answer"), "processes"), i, p) {
		json_t *b = process_brief(p, cpus ? json_integer_value(cpus) : 0);
		const char *comm = json_string_value(json_object_get(b, "comm"));
		const char *cmd = json_string_value(json_object_get(b, "cmdline"));
		if (b && (!match || (comm && strstr(comm, match)) || (cmd && strstr(cmd, match))))
			json_array_append(kept, b);
		json_decref(b);
	}
	page = dev_page_slice(kept, &pg);
	if (json_array_size(page) && ctx->allow_device_control)
		/* The phrases are the user's to give: needs names them. */
		json_array_append_new(steps, tool_next_step("start_capture", json_pack("{s:s,s:O}",
			"device", device, "pid", json_object_get(json_array_get(page, 0), "pid")),
			"profile the busiest listed process, once the user has said you may"));
	*result = json_pack("{s:s,s:o,s:s,s:o,s:o}", "device", device, "processes", page, "cpu_unit", DEV_CPU_UNIT,
			    "next_steps", steps,
			    "page", tool_page_json(&pg, tool_page_call(&pg, "list_device_processes", args, NULL)));
	json_decref(answer);
	json_decref(kept);
	pl_buf_release(&query);
	return PL_OK;
}
