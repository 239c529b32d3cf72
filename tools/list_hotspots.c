/* list_hotspots.c - the list_hotspots tool: one page of an event's
 * functions, by self or inclusive weight.
 *
 * A page is read from the analysis' hotspot index (hotidx.h) when there
 * is a sound one: then a page costs the same whatever the profile's size.
 * Otherwise it comes from the summary (the stack table is not needed),
 * and, when writes are allowed, the index is built from that summary for
 * the next pages.  Both give the same bytes.  A call with a view (view.h:
 * threads, stack transforms) is answered from the stack table, the only
 * store that keeps each stack's thread and frames, and its answer is kept
 * for the view's next pages (cache/views/, below).  On an off-CPU event the answer
 * also says what self means there and where the stacks block (the first
 * frame above the kernel's, with its caller), read from the stack table.
 */
#include "registry.h"
#include "store/artifact.h"
#include "store/hotidx.h"
#include "profile/demangle.h"
#include "tools/lib/view.h"
#include "base/fsatomic.h"
#include "base/sha256.h"
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
 * a summary's view, or the answer of a view (entries, from the stack
 * table or its cache); one pager serves all three. */
struct hot_list {
	size_t n;
	const struct pl_hotidx *x;
	size_t view, *pos;
	json_t *funcs, **order;
	json_t **entries;   /* a view's hotspots without their rank */
	bool by_incl;
};

static json_t *amount_of(const struct pl_view *v, struct pl_amount a)
{
	return json_pack("{s:I,s:I,s:f}", "samples", (json_int_t)a.samples, "period", (json_int_t)a.period,
			 "percent", pl_percent(v, a.period));
}

/* The entry of function f of a view of the stack table, without its
 * rank (new). */
static json_t *view_hotspot(const struct pl_view *v, char **shorts, uint32_t f)
{
	const struct pl_func *fn = &v->p->funcs[f];

	return json_pack("{s:o,s:s,s:s*,s:s*,s:o,s:s,s:o,s:o}", "hotspot_id", json_sprintf("fn%u", f),
		"symbol", pl_str(v->p, fn->symbol), "short_name", shorts[f],
		"linkage_name", fn->linkage != PL_NOID ? pl_str(v->p, fn->linkage) : NULL,
		"dso", fn->dso == PL_NOID ? json_null() : json_string(pl_str(v->p, fn->dso)),
		"kind", pl_kind_name((enum pl_kind)fn->kind),
		"self", amount_of(v, v->funcs[f].self), "inclusive", amount_of(v, v->funcs[f].incl));
}

/* A view's entry with its rank second, as every list gives it (new). */
static json_t *ranked(json_t *entry, size_t rank)
{
	json_t *out = json_pack("{s:O,s:I}", "hotspot_id", json_object_get(entry, "hotspot_id"), "rank", (json_int_t)rank);
	const char *key;
	json_t *v;

	json_object_foreach(entry, key, v)
		if (strcmp(key, "hotspot_id") != 0)
			json_object_set(out, key, v);
	return out;
}

/* The entry ranked i + 1 (new), or NULL when the index is malformed. */
static json_t *hot_at(const struct hot_list *l, size_t i)
{
	assert(i < l->n);
	if (l->x)
		return pl_hotidx_hotspot(l->x, l->view, l->by_incl, l->pos[i], i + 1);
	if (l->entries)
		return ranked(l->entries[i], i + 1);
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
		   const struct hot_list *l, json_t *parts, json_t **result, enum pl_err *rc,
		   struct pl_error *err)
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
		if (page && parts)
			json_object_update(*result, parts);
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
	served = answer(q, json_string_value(event), unit, total, &l, NULL, result, rc, err);
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
	       json_object_get(view, "total"), &l, NULL, result, &rc, err);
	free(l.order);
out:
	json_decref(summary);
	return rc;
}

/* ------------------------------------------------------- a view's answer
 *
 * A view is answered from the stack table, which costs a load of it.  The
 * answer (every hotspot with weight, in both orders, with the totals and
 * what the view kept) is a small document; when writes are allowed it is
 * kept under ARTIFACT_ROOT/cache/views/, named by a hash of its key
 * (analysis, event asked, normalized view), so the next page of the same
 * view reads it instead.  An analysis never changes under its id, so the
 * document stays true; it is used only when its key is the call's and
 * every part of it checks, else it is computed again.  The first page and
 * the later ones are built from the same document: the same bytes. */

#define VIEW_CACHE_VERSION "1"   /* in the key: bump it when what a view computes changes */
/* Past this many hotspots, reading the kept answer back costs about what
 * computing it does (measured: 200k functions in 200k stacks), so it is
 * not kept. */
#define VIEW_CACHE_MAX_HOTSPOTS 50000

/* The key of a call's view (pl_buf_release it). */
static void view_key(const struct query *q, struct pl_buf *key)
{
	pl_buf_addf(key, "v" VIEW_CACHE_VERSION "|%s|%s|%s", q->id, q->event ? q->event : "", q->view.key);
}

static void view_cache_path(const struct tool_ctx *ctx, const char *key, struct pl_buf *path)
{
	char hex[65];

	pl_sha256_hex(key, strlen(key), hex);
	pl_buf_addf(path, "%s/cache/views/%.32s.json", ctx->artifact_root, hex);
}

/* Does `doc` hold a view's answer for `key`, whole? */
static bool view_doc_sound(json_t *doc, const char *key)
{
	json_t *hot = json_object_get(doc, "hotspots"), *incl = json_object_get(doc, "inclusive_order"), *x;
	size_t i, n = json_array_size(hot);

	if (!json_is_string(json_object_get(doc, "key")) || strcmp(json_string_value(json_object_get(doc, "key")), key) != 0 ||
	    !json_is_string(json_object_get(doc, "event")) || !json_is_string(json_object_get(doc, "unit")) ||
	    !json_is_object(json_object_get(doc, "total")) || !json_is_object(json_object_get(doc, "parts")) ||
	    !json_is_array(hot) || !json_is_array(incl) || json_array_size(incl) != n)
		return false;
	json_array_foreach(hot, i, x)
		if (!json_is_string(json_object_get(x, "hotspot_id")) || !json_is_number(json_object_get(json_object_get(x, "self"), "percent")) ||
		    !json_is_number(json_object_get(json_object_get(x, "inclusive"), "percent")))
			return false;
	json_array_foreach(incl, i, x)
		if (!json_is_integer(x) || json_integer_value(x) < 0 || (size_t)json_integer_value(x) >= n)
			return false;
	return true;
}

/* The kept answer of `key` (new), or NULL. */
static json_t *view_cache_read(const struct tool_ctx *ctx, const char *key)
{
	struct pl_buf path = {0};
	json_t *doc;

	view_cache_path(ctx, key, &path);
	doc = json_load_file(path.data, 0, NULL);
	pl_buf_release(&path);
	if (doc && !view_doc_sound(doc, key)) {
		json_decref(doc);
		doc = NULL;
	}
	return doc;
}

/* Keep `doc` for the next calls (a failure changes nothing: a cache). */
static void view_cache_write(const struct tool_ctx *ctx, const char *key, json_t *doc)
{
	struct pl_buf path = {0};
	struct pl_error ignored;
	char *text = json_dumps(doc, JSON_COMPACT);

	view_cache_path(ctx, key, &path);
	if (text)
		pl_write_file_atomic(path.data, text, strlen(text), &ignored);
	free(text);
	pl_buf_release(&path);
}

/* The view's answer computed from the stack table (new, in *doc). */
static enum pl_err view_compute(const struct tool_ctx *ctx, struct query *q, const char *key, json_t **doc,
				struct pl_error *err)
{
	struct pl_profile p;
	struct pl_view v = {0};
	json_t *hot, *incl, *parts;
	uint32_t ev, *pos = NULL;
	char **shorts;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	tool_view_prepare(&q->view, &p);
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, q->id, &p, err)) ||
	    (rc = tool_pick_event(&p, q->event, false, &ev, err)) ||
	    (rc = tool_view_apply(&q->view, &p, ev, err)))
		goto out;
	pl_view_build(&v, &p, ev);
	pl_view_sort(&v, PL_SORT_SELF);
	shorts = pl_profile_short_names(&p);
	hot = json_array();
	incl = json_array();
	pos = pl_xmalloc((pl_nfuncs(&p) + 1) * sizeof(*pos));
	for (size_t i = 0; i < v.nhot; i++) {
		pos[v.hot_order[i]] = (uint32_t)i;
		json_array_append_new(hot, view_hotspot(&v, shorts, v.hot_order[i]));
	}
	pl_view_sort(&v, PL_SORT_INCLUSIVE);
	for (size_t i = 0; i < v.nhot; i++)
		json_array_append_new(incl, json_integer(pos[v.hot_order[i]]));
	parts = json_object();
	tool_view_describe(&q->view, parts);
	*doc = json_pack("{s:s,s:s,s:s,s:{s:I,s:I},s:o,s:o,s:o}", "key", key,
		"event", pl_str(&p, p.events[ev].name), "unit", pl_event_unit(&p, ev),
		"total", "samples", (json_int_t)v.total.samples, "period", (json_int_t)v.total.period,
		"parts", parts, "hotspots", hot, "inclusive_order", incl);
	pl_short_names_free(shorts, pl_nfuncs(&p));
out:
	free(pos);
	pl_view_release(&v);
	pl_profile_release(&p);
	return rc;
}

/* The call answered for a view: from its kept answer, else computed (and
 * kept when writes are allowed). */
static enum pl_err from_view(const struct tool_ctx *ctx, struct query *q, json_t **result,
			     struct pl_error *err)
{
	struct pl_buf kb = {0};
	const char *key = (view_key(q, &kb), kb.data);
	json_t *doc = view_cache_read(ctx, key), *hot, *incl;
	struct hot_list l = {.by_incl = q->by_incl};
	enum pl_err rc = PL_OK;
	size_t n;

	if (!doc) {
		if ((rc = view_compute(ctx, q, key, &doc, err)))
			goto out;
		if (ctx->allow_writes && json_array_size(json_object_get(doc, "hotspots")) <= VIEW_CACHE_MAX_HOTSPOTS)
			view_cache_write(ctx, key, doc);
	}
	hot = json_object_get(doc, "hotspots");
	incl = json_object_get(doc, "inclusive_order");
	n = json_array_size(hot);
	l.entries = pl_xmalloc((n + 1) * sizeof(*l.entries));
	for (size_t i = 0; i < n; i++) {
		json_t *h = json_array_get(hot, q->by_incl ? (size_t)json_integer_value(json_array_get(incl, i)) : i);
		if (percent_of(h, q->by_incl ? "inclusive" : "self") >= q->min_pct)
			l.entries[l.n++] = h;
	}
	answer(q, json_string_value(json_object_get(doc, "event")), json_object_get(doc, "unit"),
	       json_object_get(doc, "total"), &l, json_object_get(doc, "parts"), result, &rc, err);
	free(l.entries);
out:
	json_decref(doc);
	pl_buf_release(&kb);
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
	tool_view_prepare(&q->view, &p);
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
		rc = from_view(ctx, &q, result, err);
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
