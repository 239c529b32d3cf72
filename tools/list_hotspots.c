/* list_hotspots.c - the list_hotspots tool: one page of an event's
 * functions, by self or inclusive weight.
 *
 * A page is read from the analysis' hotspot index (hotidx.h) when there
 * is a sound one: then a page costs the same whatever the profile's size.
 * Otherwise it comes from the summary (the stack table is not needed),
 * and, when writes are allowed, the index is built from that summary for
 * the next pages.  Both give the same bytes.  A call with a view (view.h:
 * threads, stack transforms) is answered from the stack table, the only
 * store that keeps each stack's thread and frames.  On an off-CPU event the answer
 * also says what self means there and where the stacks block (the first
 * frame above the kernel's, with its caller), read from the stack table.
 */
#include "registry.h"
#include "store/artifact.h"
#include "store/hotidx.h"
#include "profile/demangle.h"
#include "view.h"
#include "evidence/classify.h"
#include "evidence/threads.h"

#include <assert.h>
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
	return json_pack("{s:s,s:I,s:O,s:O*,s:O*,s:O,s:O,s:O,s:O}", "hotspot_id", id,
			 "rank", (json_int_t)rank, "symbol", json_object_get(fn, "symbol"),
			 "short_name", json_object_get(fn, "short_name"),
			 "linkage_name", json_object_get(fn, "linkage_name"),
			 "dso", json_object_get(fn, "dso"), "kind", json_object_get(fn, "kind"),
			 "self", json_object_get(h, "self"), "inclusive", json_object_get(h, "inclusive"));
}

/* What a call asks for. */
struct query {
	const char *id, *event, *sort, *cursor;
	size_t limit, offset;
	double min_pct;
	bool by_incl;
	json_t *args;   /* the call's own arguments, for next_call */
	struct tool_view view;
};

/* The hotspots a call lists, filtered and in order, from the index (x),
 * a summary's view, or a view of the stack table (v, for a thread
 * filter); one pager serves all three. */
struct hot_list {
	size_t n;
	const struct pl_hotidx *x;
	size_t view, *pos;
	json_t *funcs, **order;
	const struct pl_view *v;
	uint32_t *ids;
	char **shorts;   /* the view's functions' short names (demangle.h) */
	bool by_incl;
};

static json_t *amount_of(const struct pl_view *v, struct pl_amount a)
{
	return json_pack("{s:I,s:I,s:f}", "samples", (json_int_t)a.samples, "period", (json_int_t)a.period,
			 "percent", pl_percent(v, a.period));
}

/* Entry `rank` for function f of a view of the stack table (new). */
static json_t *view_hotspot(const struct pl_view *v, char **shorts, uint32_t f, size_t rank)
{
	const struct pl_func *fn = &v->p->funcs[f];

	return json_pack("{s:o,s:I,s:s,s:s*,s:s*,s:o,s:s,s:o,s:o}", "hotspot_id", json_sprintf("fn%u", f),
		"rank", (json_int_t)rank, "symbol", pl_str(v->p, fn->symbol), "short_name", shorts[f],
		"linkage_name", fn->linkage != PL_NOID ? pl_str(v->p, fn->linkage) : NULL,
		"dso", fn->dso == PL_NOID ? json_null() : json_string(pl_str(v->p, fn->dso)),
		"kind", pl_kind_name((enum pl_kind)fn->kind),
		"self", amount_of(v, v->funcs[f].self), "inclusive", amount_of(v, v->funcs[f].incl));
}

/* The entry ranked i + 1 (new), or NULL when the index is malformed. */
static json_t *hot_at(const struct hot_list *l, size_t i)
{
	assert(i < l->n);
	if (l->x)
		return pl_hotidx_hotspot(l->x, l->view, l->by_incl, l->pos[i], i + 1);
	if (l->v)
		return view_hotspot(l->v, l->shorts, l->ids[i], i + 1);
	return hotspot_json(l->funcs, l->order[i], i + 1);
}

static json_t *page_of(const struct hot_list *l, const struct tool_page *pg)
{
	json_t *page = json_array(), *h;

	for (size_t i = pg->start; i < pg->end; i++) {
		if (!(h = hot_at(l, i))) {
			json_decref(page);
			return NULL;
		}
		json_array_append_new(page, h);
	}
	return page;
}

/* How many of a page's first hotspots get a get_hotspot step. */
#define STEPS_PER_PAGE 3

/* get_hotspot for the page's first hotspots (same event, same threads),
 * then the next page as a call ready to send. */
static json_t *page_steps(const struct query *q, const char *event, json_t *page,
			  const struct tool_page *pg)
{
	json_t *steps = json_array(), *h, *args;
	size_t i;

	json_array_foreach(page, i, h) {
		if (i == STEPS_PER_PAGE)
			break;
		args = tool_view_args(&q->view, json_pack("{s:s,s:O,s:s}", "analysis_id", q->id,
				"hotspot_id", json_object_get(h, "hotspot_id"), "event", event));
		json_array_append_new(steps, tool_next_step("get_hotspot", args, i == 0
			? "who calls the heaviest function on this page and what it calls"
			: "the callers and callees of the next heaviest one"));
	}
	if ((args = tool_page_step(pg, "list_hotspots", q->args, event, "the next page")))
		json_array_append_new(steps, args);
	return steps;
}

/* The result for the hotspots `l` of `event` into *result, *rc the call's
 * outcome (a bad cursor is an error of its own); false when the index
 * turned out malformed on the way. */
static bool answer(const struct query *q, const char *event, json_t *unit, json_t *total,
		   const struct hot_list *l, json_t **result, enum pl_err *rc, struct pl_error *err)
{
	struct pl_buf query = {0};
	struct tool_page pg;
	json_t *page = NULL;

	pl_buf_addf(&query, "%s|%s|%s|%g", q->id, event, q->sort, q->min_pct);
	tool_view_query(&q->view, &query);
	if (!(*rc = tool_page_open(&pg, query.data, q->cursor, q->offset, q->limit, err))) {
		tool_page_bound(&pg, l->n);
		if ((page = page_of(l, &pg)))
			*result = json_pack("{s:s,s:s,s:O,s:s,s:O,s:o,s:o}",
				"analysis_id", q->id, "event", event, "unit", unit, "sort", q->sort,
				"total", total, "hotspots", page, "page", tool_page_json(&pg,
					tool_page_call(&pg, "list_hotspots", q->args, json_pack("{s:s}", "event", event))));
		if (page)
			json_object_set_new(*result, "next_steps", page_steps(q, event, page, &pg));
		if (page)
			tool_view_describe(&q->view, *result);
	}
	pl_buf_release(&query);
	return *rc || page;
}

/* The event asked for among the index's views. */
static enum pl_err pick_view(const struct pl_hotidx *x, const char *event, size_t *view,
			     struct pl_error *err)
{
	size_t n = pl_hotidx_nviews(x);
	char **names = pl_xmalloc((n + 1) * sizeof(*names));
	enum pl_err rc;

	for (size_t i = 0; i < n; i++)
		names[i] = pl_hotidx_event_name(x, i);
	rc = tool_pick_name((const char *const *)names, n, event, false, "analysis", view, err);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* The call answered from the index: true with *rc its outcome (PL_OK or
 * an error of the call's own: a wrong event, a bad cursor); false when
 * the index cannot serve it. */
static bool from_index(const struct pl_hotidx *x, const struct query *q, json_t **result,
		       enum pl_err *rc, struct pl_error *err)
{
	struct hot_list l = {.x = x, .by_incl = q->by_incl};
	json_t *event, *unit, *total;
	bool served;

	if ((*rc = pick_view(x, q->event, &l.view, err)))
		return true;
	if (!pl_hotidx_view(x, l.view, &event, &unit, &total))
		return false;
	l.n = pl_hotidx_select(x, l.view, q->by_incl, q->min_pct, &l.pos);
	served = answer(q, json_string_value(event), unit, total, &l, result, rc, err);
	free(l.pos);
	json_decref(event);
	json_decref(unit);
	json_decref(total);
	return served;
}

/* The hotspots of summary view `vi` at or above the filter, in order. */
static void summary_list(json_t *summary, size_t vi, const struct query *q, struct hot_list *l)
{
	json_t *hot = json_object_get(json_array_get(json_object_get(summary, "views"), vi), "hotspots");
	json_t *h;
	size_t i;

	l->funcs = json_object_get(summary, "functions");
	l->order = pl_xmalloc((json_array_size(hot) + 1) * sizeof(*l->order));
	l->n = 0;
	json_array_foreach(hot, i, h)
		if (percent_of(h, q->by_incl ? "inclusive" : "self") >= q->min_pct)
			l->order[l->n++] = h;
	if (q->by_incl)
		pl_hotidx_sort_inclusive(l->funcs, l->order, l->n);
}

/* The call answered from the summary; with writes allowed, the index is
 * built for the next calls (a failure there changes nothing). */
static enum pl_err from_summary(const struct tool_ctx *ctx, const struct query *q, json_t **result,
				struct pl_error *err)
{
	struct pl_error ignored;
	struct hot_list l = {0};
	json_t *summary, *view;
	size_t vi;
	enum pl_err rc;

	if ((rc = pl_artifact_load_summary(ctx->artifact_root, q->id, &summary, err)))
		return rc;
	if (ctx->allow_writes)
		pl_hotidx_write(ctx->artifact_root, q->id, summary, &ignored);
	if ((rc = tool_pick_summary_event(summary, q->event, &vi, err)))
		goto out;
	view = json_array_get(json_object_get(summary, "views"), vi);
	summary_list(summary, vi, q, &l);
	answer(q, json_string_value(json_object_get(view, "event")), json_object_get(view, "unit"),
	       json_object_get(view, "total"), &l, result, &rc, err);
	free(l.order);
out:
	json_decref(summary);
	return rc;
}

/* The call answered from the stack table, for a view. */
static enum pl_err from_stacks(const struct tool_ctx *ctx, struct query *q, json_t **result,
			       struct pl_error *err)
{
	struct pl_profile p;
	struct pl_view v = {0};
	struct hot_list l = {.v = &v, .by_incl = q->by_incl};
	json_t *unit, *total;
	uint32_t ev;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, q->id, &p, err)) ||
	    (rc = tool_pick_event(&p, q->event, false, &ev, err)) ||
	    (rc = tool_view_apply(&q->view, &p, ev, err)))
		goto out;
	pl_view_build(&v, &p, ev);
	pl_view_sort(&v, q->by_incl ? PL_SORT_INCLUSIVE : PL_SORT_SELF);
	l.ids = pl_xmalloc((v.nhot + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < v.nhot; i++) {
		uint32_t f = v.hot_order[i];
		if (pl_percent(&v, (q->by_incl ? v.funcs[f].incl : v.funcs[f].self).period) >= q->min_pct)
			l.ids[l.n++] = f;
	}
	unit = json_string(pl_event_unit(&p, ev));
	total = json_pack("{s:I,s:I}", "samples", (json_int_t)v.total.samples, "period", (json_int_t)v.total.period);
	l.shorts = pl_profile_short_names(&p);
	answer(q, pl_str(&p, p.events[ev].name), unit, total, &l, result, &rc, err);
	json_decref(unit);
	json_decref(total);
	pl_short_names_free(l.shorts, pl_nfuncs(&p));
	free(l.ids);
out:
	pl_view_release(&v);
	pl_profile_release(&p);
	return rc;
}

/* The "off_cpu" part of an answer on an off-CPU event (rules' off_cpu set). */
static enum pl_err add_off_cpu(const struct tool_ctx *ctx, struct query *q, json_t *result,
			       struct pl_error *err)
{
	const char *event = json_string_value(json_object_get(result, "event"));
	struct pl_profile p;
	struct pl_view v = {0};
	uint32_t ev;
	enum pl_err rc;

	/* Only the event sets: the rules' own patterns cost a worker about
	 * 2 ms of regcomp and 2 MB of heap, for nothing here. */
	if (!pl_rules_builtin_event_in_set("off_cpu", event))
		return PL_OK;
	pl_profile_init(&p, &ctx->limits);
	if (!(rc = pl_artifact_load_profile(ctx->artifact_root, q->id, &p, err)) &&
	    !(rc = tool_pick_event(&p, event, false, &ev, err)) &&
	    !(rc = tool_view_apply(&q->view, &p, ev, err))) {
		pl_view_build(&v, &p, ev);
		json_object_set_new(result, "off_cpu", json_pack("{s:s,s:o,s:[o]}",
			"self_means", "on an off-CPU event a stack's leaf is where the task left the CPU (the "
				      "scheduler, e.g. __schedule, or its [state X] frame), so self weight piles up there "
				      "whatever the task waited for: read blocking_frames (the first frame above the "
				      "kernel's, with its caller) and sort=\"inclusive\"",
			"blocking_frames", pl_blocking_frames(&p, &v),
			"next_steps", tool_next_step("list_hotspots", tool_view_args(&q->view, json_pack("{s:s,s:s,s:s}",
				"analysis_id", q->id, "event", event, "sort", "inclusive")), "functions by inclusive blocked time")));
	}
	pl_view_release(&v);
	pl_profile_release(&p);
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
		.args = args,
	};
	struct pl_hotidx *x = NULL;
	enum pl_err rc = PL_OK;
	bool served = false;

	q.by_incl = strcmp(q.sort, "inclusive") == 0;
	if ((rc = tool_view_init(&q.view, args, true, err)))
		goto out;
	if (q.view.active) {
		rc = from_stacks(ctx, &q, result, err);
	} else {
		x = pl_hotidx_open(ctx->artifact_root, q.id);
		served = x && from_index(x, &q, result, &rc, err);
		pl_hotidx_close(x);
		if (!served)
			rc = from_summary(ctx, &q, result, err);
	}
	if (rc == PL_OK && (rc = add_off_cpu(ctx, &q, *result, err))) {
		json_decref(*result);
		*result = NULL;
	}
out:
	tool_view_release(&q.view);
	return rc;
}
