/* fleet_hotspots.c - the fleet_hotspots tool: the top functions across
 * the devices and time a selection names (labels, devices, a time range),
 * under one event, with how many devices each is seen on.
 *
 * The functions come from fleet_agg.h; here they are ranked by self (or
 * inclusive) samples, then by name, and paged.
 */
#include "registry.h"
#include "tools/lib/fleet_agg.h"
#include "tools/lib/view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NARROW "narrow the selection: labels, devices, from_unix/to_unix"

static struct fleet_agg *sort_agg;
static bool sort_inclusive;

static int by_weight(const void *x, const void *y)
{
	const struct fleet_fn *a = &sort_agg->fns[*(const uint32_t *)x], *b = &sort_agg->fns[*(const uint32_t *)y];
	uint64_t wa = sort_inclusive ? a->inclusive : a->self, wb = sort_inclusive ? b->inclusive : b->self;

	if (wa != wb)
		return wa > wb ? -1 : 1;
	return strcmp(pl_strtab_get(&sort_agg->keys, *(const uint32_t *)x),
		      pl_strtab_get(&sort_agg->keys, *(const uint32_t *)y));
}

static json_t *hotspot_json(const struct fleet_agg *a, uint32_t id)
{
	const struct fleet_fn *f = &a->fns[id];
	const char *name = pl_strtab_get(&a->keys, id);
	double t = a->total ? (double)a->total : 1;

	return json_pack("{s:s,s:s,s:I,s:f,s:I,s:f,s:I}", "function", name, "dso", name + strlen(name) + 1,
			 "self_samples", (json_int_t)f->self, "self_percent", 100.0 * (double)f->self / t,
			 "inclusive_samples", (json_int_t)f->inclusive,
			 "inclusive_percent", 100.0 * (double)f->inclusive / t, "devices", (json_int_t)f->devices);
}

/* The page of hotspots, ordered, into `out` (new). */
static json_t *ranked_page(struct fleet_agg *a, bool inclusive, struct tool_page *pg)
{
	size_t n = a->keys.count;
	uint32_t *order = pl_xcalloc(n ? n : 1, sizeof(*order));
	json_t *out = json_array();

	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	sort_agg = a;
	sort_inclusive = inclusive;
	qsort(order, n, sizeof(*order), by_weight);
	tool_page_bound(pg, n);
	for (size_t i = pg->start; i < pg->end; i++)
		json_array_append_new(out, hotspot_json(a, order[i]));
	free(order);
	return out;
}

/* The selection as an analysis, for every tool that reads one. */
static json_t *analyze_step(json_t *sel)
{
	json_t *args = json_deep_copy(sel);

	json_object_del(args, "order");
	return json_pack("[o]", tool_next_step("fleet_analyze", args,
			 "this selection as an analysis: call paths, flame graphs and candidates of the fleet's samples"));
}

enum pl_err tool_fleet_hotspots(const struct tool_ctx *ctx, json_t *args, json_t **result,
				struct pl_error *err)
{
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	const char *order = json_string_value(json_object_get(args, "order"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	json_t *events = NULL, *sel = json_deep_copy(args);
	struct fleet_agg a = {0};
	struct pl_buf query = {0};
	struct tool_page pg;
	struct tool_view view;
	char *q;
	enum pl_err e;

	memset(&view, 0, sizeof(view));
	json_object_del(sel, "cursor");
	json_object_del(sel, "view");
	json_object_del(sel, "limit");
	q = json_dumps(sel, JSON_COMPACT | JSON_SORT_KEYS);
	pl_buf_addf(&query, "fleet_hotspots|%s", q ? q : "");
	free(q);
	if ((e = fleet_view_init(&view, args, err)))
		goto out;
	tool_view_query(&view, &query);
	if ((e = fleet_ready(ctx, err)) || (e = tool_page_open(&pg, query.data, cursor, 0, limit, err)) ||
	    (e = fleet_pick_event(ctx, args, sel, &events, err)))
		goto out;
	if ((e = fleet_agg_load(ctx, sel, &a, err)) ||
	    (view.active && (e = fleet_agg_view(ctx, &a, &view, json_string_value(json_object_get(sel, "event")), err))))
		goto out;
	*result = json_pack("{s:O,s:O,s:I,s:I,s:o}", "event", json_object_get(sel, "event"), "events", events,
			    "total_samples", (json_int_t)a.total, "devices", (json_int_t)a.devices,
			    "hotspots", ranked_page(&a, order && strcmp(order, "inclusive") == 0, &pg));
	json_object_set_new(*result, "next_steps", analyze_step(sel));
	json_object_set_new(*result, "page", tool_page_json(&pg, tool_page_call(&pg, "fleet_hotspots", args, NULL)));
	if (view.active)
		json_object_set_new(*result, "view", tool_view_json(&view));
out:
	tool_view_release(&view);
	fleet_agg_release(&a);
	json_decref(events);
	json_decref(sel);
	pl_buf_release(&query);
	return e;
}
