/* list_hotspots.c - the list_hotspots tool: one page of an event's
 * functions, by self or inclusive weight.
 *
 * A page is read from the analysis' hotspot index (hotidx.h) when there
 * is a sound one: then a page costs the same whatever the profile's size.
 * Otherwise it comes from the summary (the stack table is not needed),
 * and, when writes are allowed, the index is built from that summary for
 * the next pages.  Both give the same bytes.
 */
#include "registry.h"
#include "store/artifact.h"
#include "store/hotidx.h"

#include <stdlib.h>
#include <string.h>

static double percent_of(json_t *h, const char *which)
{
	return json_number_value(json_object_get(json_object_get(h, which), "percent"));
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

/* What a call asks for. */
struct query {
	const char *id, *event, *sort, *cursor;
	size_t limit, offset;
	double min_pct;
	bool by_incl;
};

/* The page (new), from offset on, and *n, from the summary's view `vi`. */
static json_t *summary_page(json_t *summary, size_t vi, const struct query *q, size_t *n)
{
	json_t *view = json_array_get(json_object_get(summary, "views"), vi);
	json_t *hot = json_object_get(view, "hotspots");
	json_t *funcs = json_object_get(summary, "functions");
	json_t **order = pl_xmalloc((json_array_size(hot) + 1) * sizeof(*order));
	json_t *page = json_array(), *h;
	size_t i, end;

	*n = 0;
	json_array_foreach(hot, i, h)
		if (percent_of(h, q->by_incl ? "inclusive" : "self") >= q->min_pct)
			order[(*n)++] = h;
	if (q->by_incl)
		pl_hotidx_sort_inclusive(funcs, order, *n);
	end = q->offset + q->limit < *n ? q->offset + q->limit : *n;
	for (i = q->offset; i < end; i++)
		json_array_append_new(page, hotspot_json(funcs, order[i], i + 1));
	free(order);
	return page;
}

/* The result around a page: the event's name, unit and total, the page,
 * and how to get the next one. */
static json_t *result_of(const struct query *q, const char *event, json_t *unit, json_t *total,
			 json_t *page, size_t offset, size_t n, const char *query)
{
	size_t end = offset + q->limit < n ? offset + q->limit : n;
	char next[64], call[256];

	tool_cursor_make(next, sizeof(next), end, query);
	snprintf(call, sizeof(call), "list_hotspots(analysis_id=\"%s\", event=\"%s\", sort=\"%s\", cursor=\"%s\")",
		 q->id, event, q->sort, next);
	return json_pack("{s:s,s:s,s:O,s:s,s:O,s:o,s:o}",
		"analysis_id", q->id, "event", event, "unit", unit, "sort", q->sort, "total", total,
		"hotspots", page, "page", tool_page_new(offset, end, n, next, json_string(call)));
}

/* The cursor, checked against this query, into q->offset. */
static enum pl_err apply_cursor(struct query *q, const char *event, struct pl_buf *query,
				struct pl_error *err)
{
	pl_buf_addf(query, "%s|%s|%s|%g", q->id, event, q->sort, q->min_pct);
	return q->cursor ? tool_cursor_parse(q->cursor, query->data, &q->offset, err) : PL_OK;
}

/* The call answered from the index: PL_OK or an error of the call's own
 * (a wrong event, a bad cursor); -1 when the index cannot serve it. */
static int from_index(struct pl_hotidx *x, struct query q, json_t **result, struct pl_error *err)
{
	json_t *events = pl_hotidx_events(x), *event = NULL, *unit = NULL, *total = NULL, *page = NULL;
	struct pl_buf query = {0};
	size_t vi, n;
	int rc = tool_pick_summary_event(events, q.event, &vi, err);

	if (rc == PL_OK && !pl_hotidx_view(x, vi, &event, &unit, &total))
		rc = -1;
	if (rc == PL_OK)
		rc = apply_cursor(&q, json_string_value(event), &query, err);
	if (rc == PL_OK && !pl_hotidx_page(x, vi, q.by_incl, q.min_pct, q.offset, q.limit, &n, &page))
		rc = -1;
	if (rc == PL_OK)
		*result = result_of(&q, json_string_value(event), unit, total, page,
				    q.offset > n ? n : q.offset, n, query.data);
	json_decref(events);
	json_decref(event);
	json_decref(unit);
	json_decref(total);
	pl_buf_release(&query);
	return rc;
}

/* The call answered from the summary; with writes allowed, the index is
 * built for the next calls (a failure there changes nothing). */
static enum pl_err from_summary(const struct tool_ctx *ctx, struct query q, json_t **result,
				struct pl_error *err)
{
	struct pl_buf query = {0};
	struct pl_error ignored;
	json_t *summary, *view, *page;
	const char *event;
	size_t vi, n;
	enum pl_err rc;

	if ((rc = pl_artifact_load_summary(ctx->artifact_root, q.id, &summary, err)))
		return rc;
	if (ctx->allow_writes)
		pl_hotidx_write(ctx->artifact_root, q.id, summary, &ignored);
	if ((rc = tool_pick_summary_event(summary, q.event, &vi, err)))
		goto out;
	view = json_array_get(json_object_get(summary, "views"), vi);
	event = json_string_value(json_object_get(view, "event"));
	if ((rc = apply_cursor(&q, event, &query, err)))
		goto out;
	page = summary_page(summary, vi, &q, &n);
	*result = result_of(&q, event, json_object_get(view, "unit"), json_object_get(view, "total"),
			    page, q.offset > n ? n : q.offset, n, query.data);
out:
	pl_buf_release(&query);
	json_decref(summary);
	return rc;
}

enum pl_err tool_list_hotspots(const struct tool_ctx *ctx, json_t *args,
			       json_t **result, struct pl_error *err)
{
	struct query q = {
		.id = json_string_value(json_object_get(args, "analysis_id")),
		.event = json_string_value(json_object_get(args, "event")),
		.sort = json_string_value(json_object_get(args, "sort")),
		.cursor = json_string_value(json_object_get(args, "cursor")),
		.limit = (size_t)json_integer_value(json_object_get(args, "limit")),
		.offset = (size_t)json_integer_value(json_object_get(args, "offset")),
		.min_pct = json_number_value(json_object_get(args, "min_percent")),
	};
	struct pl_hotidx *x = pl_hotidx_open(ctx->artifact_root, q.id);
	int rc = -1;

	q.by_incl = strcmp(q.sort, "inclusive") == 0;
	if (x)
		rc = from_index(x, q, result, err);
	pl_hotidx_close(x);
	return rc >= 0 ? (enum pl_err)rc : from_summary(ctx, q, result, err);
}
