/* get_timeline.c - the get_timeline tool: one event's samples per time
 * bucket (profile/timeline.h), for the whole profile, the threads a tid
 * or comm names (thread_filter.h), and a function's inclusive part.
 *
 * The profile is loaded from the stack table, which holds the samples'
 * times; an analysis without them says which inputs have them.  The
 * timeline may zoom into a window (view.time, read as list_hotspots reads
 * it: view_time.h).  The busiest bucket (by the function's weight when one
 * is asked) becomes the next step: list_hotspots with that bucket as view.time.  With picture,
 * the bars are drawn as a PNG (export/flamepng.h), written atomically as
 * exports/ID.EVENT.timeline.bN[.tidN][.comm-NAME][.fnN].png and returned
 * as an image content block when small enough.
 */
#include "registry.h"
#include "profile/time_window.h"
#include "profile/timeline.h"
#include "store/artifact.h"
#include "export/flamepng.h"
#include "tools/lib/thread_filter.h"
#include "tools/lib/view_time.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a call asks for. */
struct tl_query {
	const char *id, *event, *hotspot_id, *symbol;
	uint32_t buckets;
	bool picture;
	struct tool_thread_filter threads;
	struct tool_view_time zoom;
};

static double round9(double s)
{
	return round(s * 1e9) / 1e9;
}

/* The function asked for, or PL_NOID. */
static enum pl_err pick_function(const struct pl_profile *p, const struct tl_query *q, uint32_t *func,
				 struct pl_error *err)
{
	*func = PL_NOID;
	if (q->hotspot_id)
		return tool_parse_hotspot_id(p, q->hotspot_id, func, err);
	if (q->symbol)
		return tool_find_symbol(p, q->symbol, func, err);
	return PL_OK;
}

static json_t *column(const struct pl_amount *a, size_t n, bool period)
{
	json_t *col = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(col, json_integer((json_int_t)(period ? a[i].period : a[i].samples)));
	return col;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? round((double)part * 100.0 / (double)whole * 1e4) / 1e4 : 0.0;
}

static json_t *function_json(const struct pl_profile *p, const struct pl_timeline *t, uint32_t f)
{
	json_t *shares = json_array();

	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(shares, json_real(pct(t->func[i].period, t->all[i].period)));
	return json_pack("{s:o,s:s,s:I,s:I,s:f,s:o,s:o}", "hotspot_id", json_sprintf("fn%u", f),
		"symbol", pl_str(p, p->funcs[f].symbol), "samples", (json_int_t)t->func_total.samples,
		"period", (json_int_t)t->func_total.period, "percent", pct(t->func_total.period, t->total.period),
		"period_per_bucket", column(t->func, t->n, true), "percent_per_bucket", shares);
}

/* The bucket with the most weight (the function's when there is one);
 * SIZE_MAX when every bucket is empty. */
static size_t busiest_bucket(const struct pl_timeline *t)
{
	const struct pl_amount *a = t->func ? t->func : t->all;
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < t->n; i++)
		if (a[i].period && (best == SIZE_MAX || a[i].period > a[best].period))
			best = i;
	return best;
}

/* {bucket, from_seconds, to_seconds, period} and the step that lists its
 * hotspots (same event, same threads). */
static json_t *busiest_json(const struct tl_query *q, const char *event, const struct pl_timeline *t,
			    json_t *steps)
{
	size_t b = busiest_bucket(t);
	double w = (double)t->width_ns / 1e9, from, to;
	json_t *args;

	double start = (double)(t->start_ns - t->first_ns) / 1e9;

	if (b == SIZE_MAX)
		return json_null();
	from = round9(start + (double)b * w);
	to = round9(start + (double)(b + 1) * w);
	args = tool_thread_filter_args(&q->threads, json_pack("{s:s,s:s,s:{s:{s:f,s:f}}}",
		"analysis_id", q->id, "event", event, "view", "time", "from_seconds", from, "to_seconds", to));
	json_array_append_new(steps, tool_next_step("list_hotspots", args, t->func
		? "the hotspots of the bucket where this function weighs most"
		: "the hotspots of the busiest bucket"));
	return json_pack("{s:I,s:f,s:f,s:I}", "bucket", (json_int_t)b, "from_seconds", from, "to_seconds", to,
			 "period", (json_int_t)(t->func ? t->func : t->all)[b].period);
}

/* A file-name-safe copy (event names hold '/', comms spaces). */
static void safe_add(struct pl_buf *b, const char *s)
{
	for (; *s; s++)
		pl_buf_addc(b, (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			    (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' ? *s : '_');
}

static void picture_name(struct pl_buf *b, const struct tool_ctx *ctx, const struct tl_query *q,
			 const char *event, uint32_t func)
{
	pl_buf_addf(b, "%s/exports/%s.", ctx->artifact_root, q->id);
	safe_add(b, event);
	pl_buf_addf(b, ".timeline.b%u", q->buckets);
	if (q->threads.has_tid)
		pl_buf_addf(b, ".tid%lld", (long long)q->threads.tid);
	if (q->threads.comm) {
		pl_buf_adds(b, ".comm-");
		safe_add(b, q->threads.comm);
	}
	if (func != PL_NOID)
		pl_buf_addf(b, ".fn%u", func);
	if (q->zoom.active)
		pl_buf_addf(b, ".t%.6f-%.6f", q->zoom.from_s, q->zoom.to_s);
	pl_buf_adds(b, ".png");
}

static enum pl_err write_file(const char *path, const struct pl_buf *png, struct pl_error *err)
{
	struct pl_atomic_file af;
	enum pl_err rc;

	if ((rc = pl_atomic_open(&af, path, err)))
		return rc;
	if (fwrite(png->data, 1, png->len, af.fp) != png->len) {
		pl_atomic_abort(&af);
		return pl_fail(err, PL_ERR_OUTPUT, "check the disk space", "cannot write '%s'", path);
	}
	return pl_atomic_commit(&af, err);
}

/* The bars as a PNG file, and its "picture" entry in `res`. */
static enum pl_err draw(const struct tool_ctx *ctx, const struct tl_query *q, const struct pl_profile *p,
			uint32_t ev, const struct pl_timeline *t, uint32_t func, json_t *res,
			struct pl_error *err)
{
	uint64_t *all = pl_xcalloc(t->n + 1, sizeof(uint64_t)), *part = NULL;
	struct pl_buf path = {0}, title = {0}, sub = {0}, png = {0};
	struct pl_png_opts po = {0};
	struct pl_png_stats st;
	enum pl_err rc;

	if (func != PL_NOID)
		part = pl_xcalloc(t->n + 1, sizeof(uint64_t));
	for (size_t i = 0; i < t->n; i++) {
		all[i] = t->all[i].period;
		if (part)
			part[i] = t->func[i].period;
	}
	pl_buf_addf(&title, "Timeline: %s, weight in %s per %g s", pl_str(p, p->events[ev].name),
		    pl_event_unit(p, ev), (double)t->width_ns / 1e9);
	pl_buf_addf(&sub, "%s: %llu samples%s%s", q->id, (unsigned long long)t->total.samples,
		    func != PL_NOID ? "; dark: inclusive in " : "", func != PL_NOID ? pl_str(p, p->funcs[func].symbol) : "");
	po.title = title.data;
	po.subtitle = sub.data;
	picture_name(&path, ctx, q, pl_str(p, p->events[ev].name), func);
	if (!(rc = pl_timeline_png(&png, all, part, t->n, (double)(t->start_ns - t->first_ns) / 1e9,
				   (double)t->width_ns / 1e9, &po, &st, err)) &&
	    !(rc = write_file(path.data, &png, err)))
		json_object_set_new(res, "picture", json_pack("{s:o,s:o,s:I,s:i,s:i,s:b}",
			"path", pl_json_bytes(path.data),
			"uri", json_sprintf("perflens://artifacts/%s", path.data + strlen(ctx->artifact_root) + 1),
			"bytes", (json_int_t)png.len, "width", st.width, "height", st.height,
			"inline", tool_add_picture(res, png.data, png.len)));
	free(all);
	free(part);
	pl_buf_release(&path);
	pl_buf_release(&title);
	pl_buf_release(&sub);
	pl_buf_release(&png);
	return rc;
}

/* "S.NNNNNNNNN", as perf prints a time. */
static json_t *perf_time(uint64_t ns)
{
	return json_sprintf("%llu.%09llu", (unsigned long long)(ns / 1000000000ull),
			    (unsigned long long)(ns % 1000000000ull));
}

static json_t *answer(const struct tl_query *q, const struct pl_profile *p, uint32_t ev,
		      const struct pl_timeline *t, uint32_t func)
{
	const char *event = pl_str(p, p->events[ev].name);
	json_t *steps = json_array(), *res;

	res = json_pack("{s:s,s:s,s:s,s:o,s:f,s:f,s:f,s:{s:I,s:I},s:o,s:o}", "analysis_id", q->id,
		"event", event, "unit", pl_event_unit(p, ev), "first_time", perf_time(t->first_ns),
		"span_seconds", round9((double)(t->last_ns - t->first_ns) / 1e9),
		"start_seconds", round9((double)(t->start_ns - t->first_ns) / 1e9),
		"bucket_seconds", round9((double)t->width_ns / 1e9),
		"total", "samples", (json_int_t)t->total.samples, "period", (json_int_t)t->total.period,
		"samples", column(t->all, t->n, false), "period", column(t->all, t->n, true));
	json_object_set_new(res, "busiest", busiest_json(q, event, t, steps));
	json_object_set_new(res, "timeless_samples", json_integer((json_int_t)(p->timed.past_cap + p->timed.untimed)));
	if (q->threads.active)
		json_object_set_new(res, "thread_filter", tool_thread_filter_json(&q->threads));
	if (func != PL_NOID)
		json_object_set_new(res, "function", function_json(p, t, func));
	json_object_set_new(res, "next_steps", steps);
	return res;
}

enum pl_err tool_get_timeline(const struct tool_ctx *ctx, json_t *args, json_t **result,
			      struct pl_error *err)
{
	struct tl_query q = {
		.id = json_string_value(json_object_get(args, "analysis_id")),
		.event = json_string_value(json_object_get(args, "event")),
		.hotspot_id = json_string_value(json_object_get(args, "hotspot_id")),
		.symbol = json_string_value(json_object_get(args, "symbol")),
		.buckets = (uint32_t)json_integer_value(json_object_get(args, "buckets")),
		.picture = json_is_true(json_object_get(args, "picture")),
	};
	struct pl_profile p;
	struct pl_timeline t = {0};
	uint32_t ev, func = PL_NOID;
	json_t *res = NULL;
	enum pl_err rc;

	tool_thread_filter_init(&q.threads, args);
	if ((rc = tool_view_time_init(&q.zoom, args, err)) ||
	    (q.picture && (rc = tool_require_writes(ctx, err))))
		return rc;
	pl_profile_init(&p, &ctx->limits);
	p.want_timed = true;
	if ((rc = pl_artifact_load_profile(ctx->artifact_root, q.id, &p, err)) ||
	    (rc = tool_pick_event(&p, q.event, false, &ev, err)) ||
	    (rc = pick_function(&p, &q, &func, err)) ||
	    (!p.timed.n && (rc = pl_no_time_error(&p, err))))
		goto out;
	tool_view_time_resolve(&q.zoom, &p);
	if ((rc = tool_thread_filter_apply(&q.threads, &p, ev, err)) ||
	    (rc = pl_timeline_build(&t, &p, ev, q.buckets, func, q.zoom.from_s,
				    q.zoom.active ? q.zoom.to_s : 0, err)))
		goto out;
	res = answer(&q, &p, ev, &t, func);
	if (q.picture && (rc = draw(ctx, &q, &p, ev, &t, func, res, err)))
		goto out;
	*result = res;
	res = NULL;
out:
	json_decref(res);
	pl_timeline_release(&t);
	pl_profile_release(&p);
	return rc;
}
