/* get_hotspot.c - the get_hotspot tool: one function's weights with the
 * functions that call it and those it calls, rebuilt from the stack
 * table.
 *
 * A caller (or callee) is counted once per stack even when recursion puts
 * the function in a stack several times, so caller shares add up to at
 * most the function's inclusive weight.  "[root]" stands for "nothing
 * above" (the function starts the stack) and "[self]" for "nothing below"
 * (the samples landed in the function itself).
 */
#include "registry.h"
#include "profile/aggregate.h"
#include "store/artifact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROOT_SLOT 0
#define SELF_SLOT 1

struct edge_set {
	struct pl_amount *w;   /* slot 0 root/self marker, 2.. func + 2 */
	uint32_t *stamp;
	size_t n;
};

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
		json_array_append_new(out, json_pack("{s:s,s:o,s:o,s:I,s:I,s:f,s:f}",
			"symbol", f ? pl_str(p, f->symbol) : (slot == ROOT_SLOT ? "[root]" : "[self]"),
			"dso", f && f->dso != PL_NOID ? json_string(pl_str(p, f->dso)) : json_null(),
			"hotspot_id", f ? json_sprintf("fn%zu", slot - 2) : json_null(),
			"samples", (json_int_t)e->w[slot].samples, "period", (json_int_t)e->w[slot].period,
			"percent_of_total", pl_percent(v, e->w[slot].period),
			"percent_of_hotspot", share(e->w[slot].period, incl_period)));
	}
	free(order);
	return out;
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
	size_t ncallers = 0, ncallees = 0;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) ||
	    (rc = tool_pick_event(&p, event_name, false, &event, err)) ||
	    (rc = tool_parse_hotspot_id(&p, hid, &func, err)))
		goto out;
	pl_view_build(&v, &p, event);
	callers.n = callees.n = pl_nfuncs(&p) + 2;
	callers.w = pl_xcalloc(callers.n, sizeof(struct pl_amount));
	callees.w = pl_xcalloc(callees.n, sizeof(struct pl_amount));
	callers.stamp = pl_xcalloc(callers.n, sizeof(uint32_t));
	callees.stamp = pl_xcalloc(callees.n, sizeof(uint32_t));
	for (uint32_t s = 0; s < pl_nstacks(&p); s++) {
		const struct pl_stack *st = &p.stacks[s];
		const struct pl_weight *w = pl_stack_weight(&p, s, event);
		if (!w)
			continue;
		for (uint32_t d = 0; d < st->depth; d++) {
			if (p.frames[st->frames[d]].func != func)
				continue;
			edge_add(&callers, d == 0 ? ROOT_SLOT : p.frames[st->frames[d - 1]].func + 2, s + 1, w);
			edge_add(&callees, d + 1 == st->depth ? SELF_SLOT : p.frames[st->frames[d + 1]].func + 2, s + 1, w);
		}
	}
	{
		const struct pl_func *f = &p.funcs[func];
		json_t *jcallers = edges_json(&p, &v, &callers, true, limit, v.funcs[func].incl.period, &ncallers);
		json_t *jcallees = edges_json(&p, &v, &callees, false, limit, v.funcs[func].incl.period, &ncallees);
		*result = json_pack("{s:s,s:s,s:s,s:s,s:o,s:s,s:{s:I,s:I,s:f},s:{s:I,s:I,s:f},s:o,s:I,s:o,s:I,s:o}",
			"analysis_id", id, "hotspot_id", hid, "event", pl_str(&p, p.events[event].name),
			"symbol", pl_str(&p, f->symbol),
			"dso", f->dso != PL_NOID ? json_string(pl_str(&p, f->dso)) : json_null(),
			"kind", pl_kind_name(f->kind),
			"self", "samples", (json_int_t)v.funcs[func].self.samples,
			"period", (json_int_t)v.funcs[func].self.period, "percent", pl_percent(&v, v.funcs[func].self.period),
			"inclusive", "samples", (json_int_t)v.funcs[func].incl.samples,
			"period", (json_int_t)v.funcs[func].incl.period, "percent", pl_percent(&v, v.funcs[func].incl.period),
			"callers", jcallers, "callers_total", (json_int_t)ncallers,
			"callees", jcallees, "callees_total", (json_int_t)ncallees,
			"next_steps", json_pack("[o]", tool_next_step("get_call_paths",
				json_pack("{s:s,s:s,s:s}", "analysis_id", id, "event", pl_str(&p, p.events[event].name),
					  "symbol", pl_str(&p, f->symbol)),
				"whole call paths through this function")));
	}
out:
	free(callers.w);
	free(callers.stamp);
	free(callees.w);
	free(callees.stamp);
	pl_view_release(&v);
	pl_profile_release(&p);
	return rc;
}
