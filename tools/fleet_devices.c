/* fleet_devices.c - the fleet_devices tool: the devices the fleet store
 * holds chunks of (every ingest server's), with their labels, when they
 * were last seen, and their samples, ordered by device, paged. */
#include "registry.h"
#include "tools/lib/fleet_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_DEVICES 100000

static int by_string(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* The labels as a sorted array (groupUniqArray's order is the store's). */
static json_t *sorted_labels(json_t *labels)
{
	size_t n = json_array_size(labels), i, k = 0;
	json_t **items = pl_xcalloc(n ? n : 1, sizeof(*items)), *out = json_array(), *l;

	json_array_foreach(labels, i, l)
		if (json_is_string(l))
			items[k++] = l;
	qsort(items, k, sizeof(*items), by_string);
	for (i = 0; i < k; i++)
		json_array_append(out, items[i]);
	free(items);
	return out;
}

static json_t *device_json(json_t *row)
{
	time_t last = (time_t)fleet_u64(json_object_get(row, "last_seen"));
	char iso[32];
	struct tm tm;

	gmtime_r(&last, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{s:O,s:o,s:s,s:I,s:I,s:I}", "device", json_object_get(row, "device"),
			 "labels", sorted_labels(json_object_get(row, "device_labels")), "last_seen", iso,
			 "samples", (json_int_t)fleet_u64(json_object_get(row, "samples")),
			 "chunks", (json_int_t)fleet_u64(json_object_get(row, "chunks")),
			 "sessions", (json_int_t)fleet_u64(json_object_get(row, "sessions")));
}

enum pl_err tool_fleet_devices(const struct tool_ctx *ctx, json_t *args, json_t **result,
			       struct pl_error *err)
{
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct pl_buf sql = {0}, query = {0};
	char table[64];
	struct tool_page pg;
	json_t *rows = NULL, *devices = json_array(), *steps = json_array();
	enum pl_err e;

	fleet_table(&ctx->fleet, "chunks", table, sizeof(table));
	pl_buf_addf(&sql, "SELECT device, groupUniqArrayArray(labels) AS device_labels, toUInt32(max(arrived)) "
		    "AS last_seen, sum(samples) AS samples, count() AS chunks, uniqExact(session) AS sessions "
		    "FROM %s FINAL", table);
	e = fleet_where(args, false, "minute", &sql, err);
	pl_buf_adds(&sql, " GROUP BY device ORDER BY device FORMAT JSONEachRow");
	{
		char *q = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
		pl_buf_addf(&query, "fleet_devices|%s", q ? q : "");
		free(q);
	}
	if (!e)
		e = fleet_ready(ctx, err);
	if (!e)
		e = tool_page_open(&pg, query.data, cursor, 0, limit, err);
	if (!e)
		e = fleet_rows_query(ctx, sql.data, MAX_DEVICES, "filter by labels", &rows, err);
	if (!e) {
		size_t i;
		json_t *row;
		tool_page_bound(&pg, json_array_size(rows));
		json_array_foreach(rows, i, row)
			if (i >= pg.start && i < pg.end) {
				json_t *d = device_json(row);
				json_array_append_new(devices, d);
			}
		if (json_array_size(devices))
			json_array_append_new(steps, tool_next_step("fleet_hotspots", json_object(),
								    "the fleet's top functions"));
		*result = json_pack("{s:o,s:o,s:o}", "devices", devices, "next_steps", steps,
				    "page", tool_page_json(&pg, tool_page_call(&pg, "fleet_devices", args, NULL)));
	} else {
		json_decref(devices);
		json_decref(steps);
	}
	json_decref(rows);
	pl_buf_release(&sql);
	pl_buf_release(&query);
	return e;
}
