/* list_hotspots.c - the list_hotspots tool: one page of an event's
 * functions, by self or inclusive weight, read from the analysis summary
 * (the stack table is not needed, which keeps a page cheap).
 */
#include "registry.h"
#include "artifact.h"

#include <stdlib.h>
#include <string.h>

static double percent_of(json_t *h, const char *which)
{
	return json_number_value(json_object_get(json_object_get(h, which), "percent"));
}

static json_int_t period_of(json_t *h, const char *which)
{
	return json_integer_value(json_object_get(json_object_get(h, which), "period"));
}

static json_int_t samples_of(json_t *h, const char *which)
{
	return json_integer_value(json_object_get(json_object_get(h, which), "samples"));
}

static json_t *g_funcs;

/* The summary stores hotspots by self weight; inclusive order is made
 * here with the same tie-breaks as the engine's. */
static int cmp_inclusive(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t px = period_of(x, "inclusive"), py = period_of(y, "inclusive");
	json_int_t fx = json_integer_value(json_object_get(x, "function"));
	json_int_t fy = json_integer_value(json_object_get(y, "function"));
	int c;

	if (px != py)
		return px > py ? -1 : 1;
	if (samples_of(x, "inclusive") != samples_of(y, "inclusive"))
		return samples_of(x, "inclusive") > samples_of(y, "inclusive") ? -1 : 1;
	if (period_of(x, "self") != period_of(y, "self"))
		return period_of(x, "self") > period_of(y, "self") ? -1 : 1;
	c = strcmp(json_string_value(json_object_get(json_array_get(g_funcs, (size_t)fx), "symbol")),
		   json_string_value(json_object_get(json_array_get(g_funcs, (size_t)fy), "symbol")));
	return c ? c : (fx < fy ? -1 : (fx > fy));
}

static json_t *hotspot_json(json_t *funcs, json_t *h, size_t rank)
{
	json_int_t f = json_integer_value(json_object_get(h, "function"));
	json_t *fn = json_array_get(funcs, (size_t)f);
	char id[32];

	snprintf(id, sizeof(id), "fn%lld", (long long)f);
	return json_pack("{s:s,s:I,s:O,s:O,s:O,s:O,s:O}", "hotspot_id", id,
			 "rank", (json_int_t)rank, "symbol", json_object_get(fn, "symbol"),
			 "dso", json_object_get(fn, "dso"), "kind", json_object_get(fn, "kind"),
			 "self", json_object_get(h, "self"), "inclusive", json_object_get(h, "inclusive"));
}

enum pl_err tool_list_hotspots(const struct tool_ctx *ctx, json_t *args,
			       json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *event = json_string_value(json_object_get(args, "event"));
	const char *sort = json_string_value(json_object_get(args, "sort"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	size_t offset = (size_t)json_integer_value(json_object_get(args, "offset"));
	double min_pct = json_number_value(json_object_get(args, "min_percent"));
	bool by_incl = strcmp(sort, "inclusive") == 0;
	json_t *summary, *view, *hot, *page, *h;
	json_t **order = NULL;
	size_t vi, n = 0, end, i;
	struct pl_buf query = {0};
	char next[64], call[256];
	enum pl_err rc;

	if ((rc = pl_artifact_load_summary(ctx->artifact_root, id, &summary, err)))
		return rc;
	if ((rc = tool_pick_summary_event(summary, event, &vi, err)))
		goto out;
	view = json_array_get(json_object_get(summary, "views"), vi);
	event = json_string_value(json_object_get(view, "event"));
	hot = json_object_get(view, "hotspots");
	order = malloc((json_array_size(hot) + 1) * sizeof(*order));
	json_array_foreach(hot, i, h)
		if (percent_of(h, by_incl ? "inclusive" : "self") >= min_pct)
			order[n++] = h;
	if (by_incl) {
		g_funcs = json_object_get(summary, "functions");
		qsort(order, n, sizeof(*order), cmp_inclusive);
	}
	pl_buf_addf(&query, "%s|%s|%s|%g", id, event, sort, min_pct);
	if (cursor && (rc = tool_cursor_parse(cursor, query.data, &offset, err)))
		goto out;
	if (offset > n)
		offset = n;
	end = offset + limit < n ? offset + limit : n;
	page = json_array();
	for (i = offset; i < end; i++)
		json_array_append_new(page, hotspot_json(json_object_get(summary, "functions"), order[i], i + 1));
	tool_cursor_make(next, sizeof(next), end, query.data);
	snprintf(call, sizeof(call), "list_hotspots(analysis_id=\"%s\", event=\"%s\", sort=\"%s\", cursor=\"%s\")",
		 id, event, sort, next);
	*result = json_pack("{s:s,s:s,s:O,s:s,s:O,s:o,s:o}",
		"analysis_id", id, "event", event, "unit", json_object_get(view, "unit"),
		"sort", sort, "total", json_object_get(view, "total"), "hotspots", page,
		"page", tool_page_new(offset, end, n, next, json_string(call)));
out:
	free(order);
	pl_buf_release(&query);
	json_decref(summary);
	return rc;
}
