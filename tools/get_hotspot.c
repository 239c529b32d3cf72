/* get_hotspot.c - the get_hotspot tool: one function's weights with the
 * functions that call it and those it calls, rebuilt from the stack
 * table.
 *
 * A caller (or callee) is counted once per stack even when recursion puts
 * the function in a stack several times, so caller shares add up to at
 * most the function's inclusive weight.  "[root]" stands for "nothing
 * above" (the function starts the stack) and "[self]" for "nothing below"
 * (the samples landed in the function itself).
 *
 * When the analysis made a caller check (profile.h, enum pl_edge), each
 * caller says in how many samples it may not be the function's real
 * caller (caller_may_be_missing: a frame-pointer edge that may skip one),
 * each callee in how many a function may be missing between the two, and
 * both in how many that cannot be told (caller_unknown).  A view (view.h: tid,
 * comm, stack transforms) applies first.
 */
#include "registry.h"
#include "profile/demangle.h"
#include "export/flamepng.h"
#include "profile/aggregate.h"
#include "store/artifact.h"
#include "tools/lib/view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROOT_SLOT 0
#define SELF_SLOT 1

struct edge_set {
	struct pl_amount *w;   /* slot 0 root/self marker, 2.. func + 2 */
	uint32_t *stamp;
	size_t n;
	uint64_t *may, *unk;   /* samples of the slot's edge that may skip a caller, or unknown */
	uint32_t *mark_stamp;  /* the marked entry last counted, + 1 */
};

static void edge_set_init(struct edge_set *e, size_t n)
{
	e->n = n;
	e->w = pl_xcalloc(n, sizeof(struct pl_amount));
	e->stamp = pl_xcalloc(n, sizeof(uint32_t));
	e->may = pl_xcalloc(n, sizeof(uint64_t));
	e->unk = pl_xcalloc(n, sizeof(uint64_t));
	e->mark_stamp = pl_xcalloc(n, sizeof(uint32_t));
}

static void edge_set_release(struct edge_set *e)
{
	free(e->w);
	free(e->stamp);
	free(e->may);
	free(e->unk);
	free(e->mark_stamp);
}

static void edge_mark(struct edge_set *e, size_t slot, uint32_t stamp, enum pl_edge edge,
		      uint64_t samples)
{
	if (edge == PL_EDGE_KEPT || e->mark_stamp[slot] == stamp)
		return;
	e->mark_stamp[slot] = stamp;
	(edge == PL_EDGE_MAY_SKIP ? e->may : e->unk)[slot] += samples;
}

/* The caller check's marks on the edges of `func` (event `event`); the
 * samples in which the edge above it may skip a caller, or is unknown. */
static void mark_edges(const struct pl_profile *p, uint32_t event, uint32_t func,
		       struct edge_set *callers, struct edge_set *callees, uint64_t totals[2])
{
	for (size_t i = 0; i < p->nmarked; i++) {
		const struct pl_marked *m = &p->marked[i];
		const struct pl_stack *st = &p->stacks[m->stack];
		enum pl_edge above = PL_EDGE_KEPT;
		if (m->event != event)
			continue;
		for (uint32_t d = 0; d < st->depth; d++) {
			enum pl_edge e;
			if (p->frames[st->frames[d]].func != func)
				continue;
			e = pl_mark_edge(p, m->mark, d);
			if (e != PL_EDGE_KEPT && above != PL_EDGE_MAY_SKIP)
				above = e;
			edge_mark(callers, d == 0 ? ROOT_SLOT : p->frames[st->frames[d - 1]].func + 2,
				  (uint32_t)i + 1, e, m->samples);
			if (d + 1 < st->depth)
				edge_mark(callees, p->frames[st->frames[d + 1]].func + 2, (uint32_t)i + 1,
					  pl_mark_edge(p, m->mark, d + 1), m->samples);
		}
		if (above != PL_EDGE_KEPT)
			totals[above == PL_EDGE_MAY_SKIP ? 0 : 1] += m->samples;
	}
}

static void edge_add(struct edge_set *e, size_t slot, uint32_t stamp,
		     const struct pl_weight *w)
{
	if (e->stamp[slot] == stamp)
		return;
	e->stamp[slot] = stamp;
	e->w[slot].samples += w->samples;
	e->w[slot].period += w->period;
}

static const struct pl_amount *sort_amounts;

static int cmp_slot(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct pl_amount *ax = &sort_amounts[x], *ay = &sort_amounts[y];

	if (ax->period != ay->period)
		return ax->period > ay->period ? -1 : 1;
	return x < y ? -1 : (x > y);
}

/* `part` as a percentage of `whole`, rounded to 4 decimals. */
static double share(uint64_t part, uint64_t whole)
{
	return whole ? round((double)part * 100.0 / (double)whole * 1e4) / 1e4 : 0.0;
}

static json_t *edges_json(const struct pl_profile *p, const struct pl_view *v,
			  const struct edge_set *e, bool callers, size_t limit,
			  uint64_t incl_period, size_t *total)
{
	size_t *order = pl_xmalloc(e->n * sizeof(size_t)), k = 0;
	json_t *out = json_array();

	for (size_t i = 0; i < e->n; i++)
		if (e->w[i].samples && (callers ? i != SELF_SLOT : i != ROOT_SLOT))
			order[k++] = i;
	sort_amounts = e->w;
	qsort(order, k, sizeof(size_t), cmp_slot);
	*total = k;
	for (size_t i = 0; i < k && i < limit; i++) {
		size_t slot = order[i];
		const struct pl_func *f = slot >= 2 ? &p->funcs[slot - 2] : NULL;
		json_t *edge = json_pack("{s:s,s:o,s:o,s:I,s:I,s:f,s:f}",
			"symbol", f ? pl_str(p, f->symbol) : (slot == ROOT_SLOT ? "[root]" : "[self]"),
			"dso", f && f->dso != PL_NOID ? json_string(pl_str(p, f->dso)) : json_null(),
			"hotspot_id", f ? json_sprintf("fn%zu", slot - 2) : json_null(),
			"samples", (json_int_t)e->w[slot].samples, "period", (json_int_t)e->w[slot].period,
			"percent_of_total", pl_percent(v, e->w[slot].period),
			"percent_of_hotspot", share(e->w[slot].period, incl_period));
		if (e->may[slot])
			json_object_set_new(edge, "caller_may_be_missing", json_integer((json_int_t)e->may[slot]));
		if (e->unk[slot])
			json_object_set_new(edge, "caller_unknown", json_integer((json_int_t)e->unk[slot]));
		json_array_append_new(out, edge);
	}
	free(order);
	return out;
}

/* The hotspot's own caller check, and the remedy when a caller may be
 * missing above it. */
static void add_caller_check(const struct pl_profile *p, uint32_t event, json_t *result,
			     const uint64_t marked[2])
{
	if (!pl_caller_checked(p, event))
		return;
	json_object_set_new(result, "caller_check", json_pack("{s:I,s:I}",
		"samples_caller_may_be_missing", (json_int_t)marked[0],
		"samples_unknown", (json_int_t)marked[1]));
	if (marked[0])
		json_array_append_new(json_object_get(result, "next_steps"), tool_next_step("collect_profile",
			json_pack("{s:s,s:[s],s:s}", "mode", "record", "events", pl_str(p, p->events[event].name),
				  "call_graph", "dwarf"),
			"in caller_check.samples_caller_may_be_missing samples a frame-pointer edge may skip "
			"this function's real caller; DWARF unwinding records it"));
}

/* The callers and callees of `func` over the stacks of `event` (the sets
 * are initialised here; the caller releases them). */
static void collect_edges(const struct pl_profile *p, uint32_t event, uint32_t func,
			  struct edge_set *callers, struct edge_set *callees)
{
	edge_set_init(callers, pl_nfuncs(p) + 2);
	edge_set_init(callees, pl_nfuncs(p) + 2);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		if (!w)
			continue;
		for (uint32_t d = 0; d < st->depth; d++) {
			if (p->frames[st->frames[d]].func != func)
				continue;
			edge_add(callers, d == 0 ? ROOT_SLOT : p->frames[st->frames[d - 1]].func + 2, s + 1, w);
			edge_add(callees, d + 1 == st->depth ? SELF_SLOT : p->frames[st->frames[d + 1]].func + 2, s + 1, w);
		}
	}
}

/* picture: the sandwich PNG of the function (export/flamepng.h), as an
 * image block of the result: its callers from its outermost call in each
 * stack up to the root, its callees from there down to the leaf, asked
 * for with `picture: true`. */
/* Each stack through `func` split at its outermost call: up[i] the
 * callers from there to the root (reversed), down[i] the callees from
 * there to the leaf; both point into *ids (new).  Two passes: the ids
 * first (the array may move), then the stacks.  Their count. */
static size_t sandwich_stacks(const struct pl_profile *p, uint32_t event, uint32_t func,
			      struct pl_flame_stack *up, struct pl_flame_stack *down, uint32_t **ids)
{
	size_t n = 0, nids = 0, ids_cap = 0;

	for (int pass = 0; pass < 2; pass++) {
		n = 0, nids = 0;
		for (uint32_t s = 0; s < pl_nstacks(p); s++) {
			const struct pl_stack *stk = &p->stacks[s];
			const struct pl_weight *w = pl_stack_weight(p, s, event);
			uint32_t d0 = 0;
			while (d0 < stk->depth && p->frames[stk->frames[d0]].func != func)
				d0++;
			if (!w || !w->period || d0 == stk->depth)
				continue;
			if (pass == 0) {
				PL_GROW(*ids, ids_cap, nids + stk->depth + 1);
				nids += stk->depth + 1;
				continue;
			}
			up[n] = (struct pl_flame_stack){*ids + nids, d0 + 1, w->period, 0};
			for (uint32_t d = d0 + 1; d-- > 0;)
				(*ids)[nids++] = p->frames[stk->frames[d]].func;
			down[n] = (struct pl_flame_stack){*ids + nids, stk->depth - d0, w->period, 0};
			for (uint32_t d = d0; d < stk->depth; d++)
				(*ids)[nids++] = p->frames[stk->frames[d]].func;
			n++;
		}
	}
	return n;
}

static enum pl_err add_sandwich(const struct pl_profile *p, const struct pl_view *v, uint32_t event,
				uint32_t func, json_t *result, struct pl_error *err)
{
	const char **names = pl_xmalloc((pl_nfuncs(p) + 1) * sizeof(*names));
	struct pl_flame_stack *up = pl_xcalloc(pl_nstacks(p) + 1, sizeof(*up));
	struct pl_flame_stack *down = pl_xcalloc(pl_nstacks(p) + 1, sizeof(*down));
	uint32_t *ids = NULL;
	size_t n;
	struct pl_png_opts po = {0};
	struct pl_png_stats st;
	struct pl_buf png = {0}, title = {0}, sub = {0};
	const char *unit = pl_event_unit(p, event), *sym = pl_str(p, p->funcs[func].symbol);
	enum pl_err rc;

	for (size_t i = 0; i < pl_nfuncs(p); i++)
		names[i] = pl_str(p, p->funcs[i].symbol);
	n = sandwich_stacks(p, event, func, up, down, &ids);
	pl_buf_addf(&title, "%s: callers and callees, %s in %s", sym, pl_str(p, p->events[event].name), unit);
	pl_buf_addf(&sub, "inclusive %llu %s (%.2f%%), self %llu", (unsigned long long)v->funcs[func].incl.period,
		    unit, pl_percent(v, v->funcs[func].incl.period), (unsigned long long)v->funcs[func].self.period);
	po.title = title.data;
	po.subtitle = sub.data;
	po.unit = unit;
	rc = pl_sandwich_png(&png, up, n, down, n, names, pl_nfuncs(p), &po, &st, err);
	if (!rc)
		json_object_set_new(result, "picture", json_pack("{s:i,s:i,s:i,s:b}", "width", st.width,
			"height", st.height, "levels_cut", st.levels_cut,
			"inline", tool_add_picture(result, png.data, png.len)));
	pl_buf_release(&png);
	pl_buf_release(&title);
	pl_buf_release(&sub);
	free(ids);
	free(up);
	free(down);
	free(names);
	return rc;
}

/* get_call_paths' arguments for this function, with the same view. */
static json_t *step_arguments(const char *id, const char *event, const char *symbol,
			      const struct tool_view *view)
{
	return tool_view_args(view, json_pack("{s:s,s:s,s:s}", "analysis_id", id, "event", event,
							   "symbol", symbol));
}

/* A demangled function's short_name and linkage_name, beside its symbol. */
static void add_names(const struct pl_profile *p, uint32_t func, json_t *result)
{
	char **shorts;

	if (p->funcs[func].linkage == PL_NOID)
		return;
	shorts = pl_profile_short_names(p);
	if (shorts[func])
		json_object_set_new(result, "short_name", json_string(shorts[func]));
	json_object_set_new(result, "linkage_name", json_string(pl_str(p, p->funcs[func].linkage)));
	pl_short_names_free(shorts, pl_nfuncs(p));
}

/* The hotspot's own figures, callers and callees (new). */
static json_t *hotspot_json(const struct pl_profile *p, const struct pl_view *v, uint32_t event, uint32_t func,
			    const char *id, const char *hid, const struct edge_set *callers,
			    const struct edge_set *callees, size_t limit)
{
	const struct pl_func *f = &p->funcs[func];
	size_t ncallers = 0, ncallees = 0;
	json_t *jcallers = edges_json(p, v, callers, true, limit, v->funcs[func].incl.period, &ncallers);
	json_t *jcallees = edges_json(p, v, callees, false, limit, v->funcs[func].incl.period, &ncallees);

	return json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:{s:I,s:I,s:f},s:{s:I,s:I,s:f},s:o,s:I,s:o,s:I}",
		"analysis_id", id, "hotspot_id", hid, "event", pl_str(p, p->events[event].name),
		"symbol", pl_str(p, f->symbol),
		"dso", f->dso != PL_NOID ? json_string(pl_str(p, f->dso)) : json_null(),
		"kind", pl_kind_name(f->kind),
		"self", "samples", (json_int_t)v->funcs[func].self.samples,
		"period", (json_int_t)v->funcs[func].self.period, "percent", pl_percent(v, v->funcs[func].self.period),
		"inclusive", "samples", (json_int_t)v->funcs[func].incl.samples,
		"period", (json_int_t)v->funcs[func].incl.period, "percent", pl_percent(v, v->funcs[func].incl.period),
		"callers", jcallers, "callers_total", (json_int_t)ncallers,
		"callees", jcallees, "callees_total", (json_int_t)ncallees);
}

/* Whole call paths through it, and for the program's own code its lines. */
static json_t *hotspot_steps(const struct pl_profile *p, uint32_t event, uint32_t func, const char *id,
			     const char *hid, const struct tool_view *view)
{
	const struct pl_func *f = &p->funcs[func];
	json_t *steps = json_pack("[o]", tool_next_step("get_call_paths",
		step_arguments(id, pl_str(p, p->events[event].name), pl_str(p, f->symbol), view),
		"whole call paths through this function"));

	if (f->kind == PL_KIND_USER)
		json_array_append_new(steps, tool_next_step("source_context",
			json_pack("{s:s,s:s,s:s}", "analysis_id", id, "hotspot_id", hid,
				  "event", pl_str(p, p->events[event].name)),
			"the source lines its samples fall on"));
	return steps;
}

enum pl_err tool_get_hotspot(const struct tool_ctx *ctx, json_t *args,
			     json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *hid = json_string_value(json_object_get(args, "hotspot_id"));
	const char *event_name = json_string_value(json_object_get(args, "event"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct edge_set callers = {0}, callees = {0};
	struct pl_profile p;
	struct pl_view v = {0};
	uint32_t event = 0, func = 0;
	uint64_t marked[2] = {0, 0};
	struct tool_view view;
	enum pl_err rc;
	json_t *r;

	pl_profile_init(&p, &ctx->limits);
	if ((rc = tool_view_init(&view, args, true, err)) ||
	    (tool_view_prepare(&view, &p), (rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err))) ||
	    (rc = tool_pick_event(&p, event_name, false, &event, err)) ||
	    (rc = tool_parse_hotspot_id(&p, hid, &func, err)) ||
	    (rc = tool_view_apply(&view, &p, event, err)))
		goto out;
	pl_view_build(&v, &p, event);
	collect_edges(&p, event, func, &callers, &callees);
	mark_edges(&p, event, func, &callers, &callees, marked);
	r = hotspot_json(&p, &v, event, func, id, hid, &callers, &callees, limit);
	json_object_set_new(r, "next_steps", hotspot_steps(&p, event, func, id, hid, &view));
	add_caller_check(&p, event, r, marked);
	add_names(&p, func, r);
	if (json_is_true(json_object_get(args, "picture")) && (rc = add_sandwich(&p, &v, event, func, r, err))) {
		json_decref(r);
		goto out;
	}
	tool_view_describe(&view, r);
	tool_view_steps(&view, json_object_get(r, "next_steps"), id);
	*result = r;
out:
	tool_view_release(&view);
	edge_set_release(&callers);
	edge_set_release(&callees);
	pl_view_release(&v);
	pl_profile_release(&p);
	return rc;
}
