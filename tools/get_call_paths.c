/* get_call_paths.c - the get_call_paths tool: the heaviest root-to-leaf
 * function sequences of one event, threads merged, rebuilt from the
 * analysis's stack table.  Long paths keep both ends and count what was
 * elided in between, so a page stays small however deep the stacks are.
 * When the analysis made a caller check (profile.h, enum pl_edge), each
 * path says in how many of its samples some frame-pointer edge may skip a
 * caller, and each shown frame in how many the frame above it may not be
 * its caller (caller_may_be_missing) or cannot be told (caller_unknown).
 * A view (view.h: tid, comm, stack transforms) applies first.
 */
#include "registry.h"
#include "profile/demangle.h"
#include "profile/aggregate.h"
#include "store/artifact.h"
#include "tools/lib/view.h"

#include <string.h>

static json_t *frame_json(const struct pl_profile *p, uint32_t func)
{
	const struct pl_func *f = &p->funcs[func];

	return json_pack("{s:s,s:o}", "symbol", pl_str(p, f->symbol),
			 "dso", f->dso == PL_NOID ? json_null() : json_string(pl_str(p, f->dso)));
}

/* The caller-check counts of the paths of a page: per frame, samples
 * whose edge to the frame above may skip a caller (may) or is unknown
 * (unk); per path, samples with some such edge (may_total), or with only
 * unknown ones (unk_total). */
struct path_marks {
	uint64_t *may, *unk;
	uint64_t may_total, unk_total;
};

static void mark_path(const struct pl_profile *p, const struct pl_marked *m,
		      struct path_marks *pm)
{
	size_t n;
	const uint32_t *w = pl_mark_words(p, m->mark, &n);
	bool skip = false;

	for (size_t k = 0; k < n; k++) {
		bool may = PL_MARK_EDGE(w[k]) == PL_EDGE_MAY_SKIP;
		(may ? pm->may : pm->unk)[PL_MARK_INDEX(w[k])] += m->samples;
		skip |= may;
	}
	*(skip ? &pm->may_total : &pm->unk_total) += m->samples;
}

/* Counts for the paths ranked [offset, end), or NULL when the analysis
 * made no caller check; free with marks_free. */
static struct path_marks *marks_for_page(const struct pl_profile *p, const struct pl_callpaths *cps,
					 uint32_t event, size_t offset, size_t end)
{
	struct path_marks *pm;
	uint32_t *rank = NULL, *buf = NULL;
	size_t buf_cap = 0;

	if (!pl_caller_checked(p, event))
		return NULL;
	pm = pl_xcalloc(end - offset + 1, sizeof(*pm));
	rank = pl_xmalloc((cps->keys.count + 1) * sizeof(uint32_t));
	memset(rank, 0xff, (cps->keys.count + 1) * sizeof(uint32_t));
	for (size_t i = offset; i < end; i++) {
		uint32_t id = pl_strtab_find(&cps->keys, (const char *)cps->paths[i].funcs,
					     cps->paths[i].depth * 4u);
		rank[id] = (uint32_t)(i - offset);
		pm[i - offset].may = pl_xcalloc(cps->paths[i].depth + 1, sizeof(uint64_t));
		pm[i - offset].unk = pl_xcalloc(cps->paths[i].depth + 1, sizeof(uint64_t));
	}
	for (size_t i = 0; i < p->nmarked; i++) {
		const struct pl_stack *st = &p->stacks[p->marked[i].stack];
		uint32_t id;
		if (p->marked[i].event != event)
			continue;
		PL_GROW(buf, buf_cap, st->depth + 1);
		for (uint32_t d = 0; d < st->depth; d++)
			buf[d] = p->frames[st->frames[d]].func;
		id = pl_strtab_find(&cps->keys, (const char *)buf, st->depth * 4u);
		if (id != PL_NOID && rank[id] != PL_NOID)
			mark_path(p, &p->marked[i], &pm[rank[id]]);
	}
	free(buf);
	free(rank);
	return pm;
}

static void marks_free(struct path_marks *pm, size_t n)
{
	for (size_t i = 0; pm && i < n; i++) {
		free(pm[i].may);
		free(pm[i].unk);
	}
	free(pm);
}

static json_t *marked_frame_json(const struct pl_profile *p, const struct pl_callpath *cp,
				 uint32_t i, const struct path_marks *pm)
{
	json_t *f = frame_json(p, cp->funcs[i]);

	if (pm && pm->may[i])
		json_object_set_new(f, "caller_may_be_missing", json_integer((json_int_t)pm->may[i]));
	if (pm && pm->unk[i])
		json_object_set_new(f, "caller_unknown", json_integer((json_int_t)pm->unk[i]));
	return f;
}

static json_t *path_json(const struct pl_profile *p, const struct pl_view *v,
			 const struct pl_callpath *cp, size_t rank, uint32_t max_frames,
			 const struct path_marks *pm)
{
	json_t *frames = json_array(), *out;
	uint32_t head = cp->depth, tail = 0;

	if (cp->depth > max_frames) {
		head = max_frames / 2;
		tail = max_frames - head;
	}
	for (uint32_t i = 0; i < head; i++)
		json_array_append_new(frames, marked_frame_json(p, cp, i, pm));
	for (uint32_t i = cp->depth - tail; i < cp->depth && tail; i++)
		json_array_append_new(frames, marked_frame_json(p, cp, i, pm));
	out = json_pack("{s:I,s:I,s:I,s:o,s:I,s:I,s:f}", "rank", (json_int_t)rank,
			 "depth", (json_int_t)cp->depth,
			 "elided_frames", (json_int_t)(cp->depth - head - tail), "frames", frames,
			 "samples", (json_int_t)cp->w.samples, "period", (json_int_t)cp->w.period,
			 "percent", pl_percent(v, cp->w.period));
	if (pm)
		json_object_set_new(out, "caller_check", json_pack("{s:I,s:I}",
			"samples_caller_may_be_missing", (json_int_t)pm->may_total,
			"samples_unknown", (json_int_t)pm->unk_total));
	return out;
}

/* What the page says of the caller check, and the remedy when a path on
 * it may miss a caller. */
static json_t *caller_check_json(const struct pl_profile *p, uint32_t event,
				 const struct path_marks *pm, size_t n)
{
	bool flagged = false;

	for (size_t i = 0; pm && i < n; i++)
		flagged |= pm[i].may_total > 0;
	if (!pl_caller_checked(p, event))
		return json_pack("{s:b,s:s}", "checked", false, "note",
				 "frame-pointer edges were not checked: only stacks unwound by frame "
				 "pointers can be, from perf.data (or perf script --header text with mmap records)");
	return json_pack("{s:b,s:s?}", "checked", true, "remedy", flagged ?
			 "a caller may be missing where caller_may_be_missing counts samples: "
			 "collect_profile(call_graph=\"dwarf\") records the real callers" : NULL);
}

/* The paths ranked [offset, end), with their caller-check counts (*pm,
 * for caller_check_json; free with marks_free). */
static json_t *page_json(const struct pl_profile *p, const struct pl_view *v,
			 const struct pl_callpaths *cps, uint32_t event, size_t offset, size_t end,
			 uint32_t max_frames, struct path_marks **pm)
{
	json_t *paths = json_array();

	*pm = marks_for_page(p, cps, event, offset, end);
	for (size_t i = offset; i < end; i++)
		json_array_append_new(paths, path_json(p, v, &cps->paths[i], i + 1, max_frames,
						       *pm ? &(*pm)[i - offset] : NULL));
	return paths;
}

/* Keep the paths through any function with func's symbol: several
 * functions may share a symbol (one per DSO). */
static void keep_through(const struct pl_profile *p, struct pl_callpaths *cps, uint32_t func)
{
	uint32_t sid = p->funcs[func].symbol;
	size_t kept = 0;

	for (size_t i = 0; i < cps->n; i++) {
		bool hit = false;
		for (uint32_t d = 0; d < cps->paths[i].depth && !hit; d++)
			hit = p->funcs[cps->paths[i].funcs[d]].symbol == sid;
		if (hit)
			cps->paths[kept++] = cps->paths[i];
	}
	cps->n = kept;
}

/* get_hotspot of the function asked for (else the heaviest path's leaf),
 * with source_context when it is user code, then the next page. */
static json_t *next_steps(const struct pl_profile *p, const char *id, uint32_t event, uint32_t func,
			  const struct tool_view *view, const struct tool_page *pg,
			  json_t *args)
{
	const char *ev = pl_str(p, p->events[event].name);
	json_t *steps = json_array(), *next;

	if (func != PL_NOID) {
		json_array_append_new(steps, tool_next_step("get_hotspot", tool_view_args(view,
			json_pack("{s:s,s:o,s:s}", "analysis_id", id, "hotspot_id", json_sprintf("fn%u", func),
				  "event", ev)), "its callers and callees, one edge at a time, with their weights"));
		if (p->funcs[func].kind == PL_KIND_USER)
			json_array_append_new(steps, tool_next_step("source_context",
				json_pack("{s:s,s:o,s:s}", "analysis_id", id, "hotspot_id", json_sprintf("fn%u", func),
					  "event", ev), "the source lines its samples fall on"));
	}
	if ((next = tool_page_step(pg, "get_call_paths", args, ev, "the next page of paths")))
		json_array_append_new(steps, next);
	return steps;
}

enum pl_err tool_get_call_paths(const struct tool_ctx *ctx, json_t *args,
				json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *event_name = json_string_value(json_object_get(args, "event"));
	const char *symbol = json_string_value(json_object_get(args, "symbol"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	size_t offset = (size_t)json_integer_value(json_object_get(args, "offset"));
	uint32_t max_frames = (uint32_t)json_integer_value(json_object_get(args, "max_frames"));
	struct pl_profile p;
	struct pl_callpaths cps = {0};
	struct pl_view v = {0};
	struct pl_buf query = {0};
	struct tool_page pg;
	struct tool_view view;
	uint32_t event, func = PL_NOID;
	json_t *paths;
	struct path_marks *pm;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	if ((rc = tool_view_init(&view, args, true, err)) ||
	    (tool_view_prepare(&view, &p), (rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err))) ||
	    (rc = tool_pick_event(&p, event_name, false, &event, err)) ||
	    (symbol && (rc = tool_find_symbol(&p, symbol, &func, err))) ||
	    (rc = tool_view_apply(&view, &p, event, err)))
		goto out;
	pl_view_build(&v, &p, event);
	pl_callpaths_build(&cps, &p, event, PL_NOID);
	if (symbol)
		keep_through(&p, &cps, func);
	pl_buf_addf(&query, "%s|%s|%s|%u", id, pl_str(&p, p.events[event].name), symbol ? symbol : "", max_frames);
	tool_view_query(&view, &query);
	if ((rc = tool_page_open(&pg, query.data, cursor, offset, limit, err)))
		goto out;
	tool_page_bound(&pg, cps.n);
	paths = page_json(&p, &v, &cps, event, pg.start, pg.end, max_frames, &pm);
	*result = json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o}",
		"analysis_id", id, "event", pl_str(&p, p.events[event].name),
		"unit", pl_event_unit(&p, event), "symbol", symbol ? json_string(symbol) : json_null(),
		"paths", paths, "caller_check", caller_check_json(&p, event, pm, pg.end - pg.start),
		"page", tool_page_json(&pg, tool_page_call(&pg, "get_call_paths", args,
			json_pack("{s:s}", "event", pl_str(&p, p.events[event].name)))));
	if (func == PL_NOID && pg.end > pg.start)
		func = cps.paths[pg.start].funcs[cps.paths[pg.start].depth - 1];
	json_object_set_new(*result, "next_steps", next_steps(&p, id, event, func, &view, &pg, args));
	marks_free(pm, pg.end - pg.start);
	tool_view_describe(&view, *result);
	tool_view_steps(&view, json_object_get(*result, "next_steps"), id);
out:
	tool_view_release(&view);
	pl_buf_release(&query);
	pl_callpaths_release(&cps);
	pl_view_release(&v);
	pl_profile_release(&p);
	return rc;
}
