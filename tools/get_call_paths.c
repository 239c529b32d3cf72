/* get_call_paths.c - the get_call_paths tool: the heaviest root-to-leaf
 * function sequences of one event, threads merged, rebuilt from the
 * analysis's stack table.  Long paths keep both ends and count what was
 * elided in between, so a page stays small however deep the stacks are.
 */
#include "registry.h"
#include "profile/aggregate.h"
#include "store/artifact.h"

#include <string.h>

static json_t *frame_json(const struct pl_profile *p, uint32_t func)
{
	const struct pl_func *f = &p->funcs[func];

	return json_pack("{s:s,s:o}", "symbol", pl_str(p, f->symbol),
			 "dso", f->dso == PL_NOID ? json_null() : json_string(pl_str(p, f->dso)));
}

static json_t *path_json(const struct pl_profile *p, const struct pl_view *v,
			 const struct pl_callpath *cp, size_t rank, uint32_t max_frames)
{
	json_t *frames = json_array();
	uint32_t head = cp->depth, tail = 0;

	if (cp->depth > max_frames) {
		head = max_frames / 2;
		tail = max_frames - head;
	}
	for (uint32_t i = 0; i < head; i++)
		json_array_append_new(frames, frame_json(p, cp->funcs[i]));
	for (uint32_t i = cp->depth - tail; i < cp->depth && tail; i++)
		json_array_append_new(frames, frame_json(p, cp->funcs[i]));
	return json_pack("{s:I,s:I,s:I,s:o,s:I,s:I,s:f}", "rank", (json_int_t)rank,
			 "depth", (json_int_t)cp->depth,
			 "elided_frames", (json_int_t)(cp->depth - head - tail), "frames", frames,
			 "samples", (json_int_t)cp->w.samples, "period", (json_int_t)cp->w.period,
			 "percent", pl_percent(v, cp->w.period));
}

/* PL_NOID with an error when no function carries `symbol`. */
static enum pl_err find_symbol(const struct pl_profile *p, const char *symbol,
			       uint32_t *func, struct pl_error *err)
{
	uint32_t sid = pl_strtab_find(&p->strs, symbol, strlen(symbol));

	*func = PL_NOID;
	for (uint32_t f = 0; sid != PL_NOID && f < pl_nfuncs(p); f++)
		if (p->funcs[f].symbol == sid) {
			*func = f;
			return PL_OK;
		}
	return pl_fail(err, PL_ERR_USAGE, "pass a symbol exactly as list_hotspots shows it",
		       "no function named '%s' in this analysis", symbol);
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
	uint32_t event, func = PL_NOID;
	json_t *paths;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) ||
	    (rc = tool_pick_event(&p, event_name, false, &event, err)) ||
	    (symbol && (rc = find_symbol(&p, symbol, &func, err))))
		goto out;
	/* Several functions may share a symbol (one per DSO): keep paths
	 * through any of them. */
	pl_view_build(&v, &p, event);
	pl_callpaths_build(&cps, &p, event, PL_NOID);
	if (symbol) {
		size_t kept = 0;
		uint32_t sid = p.funcs[func].symbol;
		for (size_t i = 0; i < cps.n; i++) {
			bool hit = false;
			for (uint32_t d = 0; d < cps.paths[i].depth && !hit; d++)
				hit = p.funcs[cps.paths[i].funcs[d]].symbol == sid;
			if (hit)
				cps.paths[kept++] = cps.paths[i];
		}
		cps.n = kept;
	}
	pl_buf_addf(&query, "%s|%s|%s|%u", id, pl_str(&p, p.events[event].name), symbol ? symbol : "", max_frames);
	if ((rc = tool_page_open(&pg, query.data, cursor, offset, limit, err)))
		goto out;
	tool_page_bound(&pg, cps.n);
	paths = json_array();
	for (size_t i = pg.start; i < pg.end; i++)
		json_array_append_new(paths, path_json(&p, &v, &cps.paths[i], i + 1, max_frames));
	*result = json_pack("{s:s,s:s,s:s,s:o,s:o,s:o}",
		"analysis_id", id, "event", pl_str(&p, p.events[event].name),
		"unit", pl_event_unit(&p, event), "symbol", symbol ? json_string(symbol) : json_null(),
		"paths", paths, "page", tool_page_json(&pg, tool_page_call(&pg, "get_call_paths", args,
			json_pack("{s:s}", "event", pl_str(&p, p.events[event].name)))));
out:
	pl_buf_release(&query);
	pl_callpaths_release(&cps);
	pl_view_release(&v);
	pl_profile_release(&p);
	return rc;
}
