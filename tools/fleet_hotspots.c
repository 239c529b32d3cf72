/* fleet_hotspots.c - the fleet_hotspots tool: the top functions across
 * the devices and time a selection names (labels, devices, a time range),
 * under one event, with how many devices each is seen on.
 *
 * The store sums the samples per (stack, device) (FINAL: a chunk written
 * twice counts once); the stacks and frames those rows name come in two
 * more queries; the functions' self and inclusive samples are summed
 * here, a function counted once per stack however often it recurs.  A
 * function is its name and DSO, as in every other PerfLens analysis.
 */
#include "registry.h"
#include "fleet_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 2000000u
#define NARROW "narrow the selection: labels, devices, from_unix/to_unix"

struct fn {
	uint64_t self, inclusive, devices;
	size_t last_stack, last_device;  /* +1; 0: none yet */
};

struct agg {
	struct pl_strtab keys;   /* "function\0dso" -> fn index */
	struct fn *fns;
	size_t cap;
	uint64_t *frame_ids;     /* sorted, with frame_fn beside */
	uint32_t *frame_fn;
	size_t nframes;
	uint64_t *stack_ids;     /* sorted, with stack_frames beside */
	json_t **stack_frames;
	size_t nstacks;
	uint64_t total;
	size_t devices;
};

static void table(const struct tool_ctx *ctx, const char *base, char *out)
{
	fleet_table(&ctx->fleet, base, out, 64);
}

/* The selection's events, most samples first ({event, samples}). */
static enum pl_err events_of(const struct tool_ctx *ctx, json_t *args, json_t **events, struct pl_error *err)
{
	struct pl_buf sql = {0};
	char t[64];
	json_t *sel = json_deep_copy(args);
	enum pl_err e;

	json_object_del(sel, "event");
	table(ctx, "samples", t);
	pl_buf_addf(&sql, "SELECT event, sum(samples) AS samples FROM %s FINAL", t);
	e = fleet_where(sel, true, "minute", &sql, err);
	pl_buf_adds(&sql, " GROUP BY event ORDER BY samples DESC, event FORMAT JSONEachRow");
	if (!e)
		e = fleet_rows_query(ctx, sql.data, 1000, NARROW, events, err);
	json_decref(sel);
	pl_buf_release(&sql);
	return e;
}

/* "SELECT stack_id FROM samples... WHERE ..." for the IN of the others. */
static enum pl_err stack_subquery(const struct tool_ctx *ctx, json_t *args, struct pl_buf *sql,
				  struct pl_error *err)
{
	char t[64];

	table(ctx, "samples", t);
	pl_buf_addf(sql, "SELECT stack_id FROM %s", t);
	return fleet_where(args, true, "minute", sql, err);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int by_frame_id(const void *a, const void *b)
{
	return cmp_u64(fleet_u64(json_object_get(*(json_t *const *)a, "frame_id")),
		       fleet_u64(json_object_get(*(json_t *const *)b, "frame_id")));
}

static int by_stack_id(const void *a, const void *b)
{
	return cmp_u64(fleet_u64(json_object_get(*(json_t *const *)a, "stack_id")),
		       fleet_u64(json_object_get(*(json_t *const *)b, "stack_id")));
}

/* Rows of a JSON array as a sorted C array (borrowed). */
static json_t **sorted_rows(json_t *rows, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(rows), i;
	json_t **v = pl_xcalloc(n ? n : 1, sizeof(*v)), *r;

	json_array_foreach(rows, i, r)
		v[i] = r;
	qsort(v, n, sizeof(*v), cmp);
	return v;
}

static uint32_t fn_of(struct agg *a, const char *function, const char *dso)
{
	struct pl_buf key = {0};
	uint32_t id;

	pl_buf_adds(&key, function);
	pl_buf_addc(&key, '\0');
	pl_buf_adds(&key, dso);
	id = pl_strtab_intern(&a->keys, key.data, key.len);
	pl_buf_release(&key);
	if (id != PL_NOID && id >= a->cap) {
		size_t old = a->cap;
		PL_GROW(a->fns, a->cap, (size_t)id + 1);
		memset(a->fns + old, 0, (a->cap - old) * sizeof(*a->fns));
	}
	return id;
}

static void load_frames(struct agg *a, json_t *rows)
{
	json_t **v = sorted_rows(rows, by_frame_id);

	a->nframes = json_array_size(rows);
	a->frame_ids = pl_xcalloc(a->nframes ? a->nframes : 1, sizeof(uint64_t));
	a->frame_fn = pl_xcalloc(a->nframes ? a->nframes : 1, sizeof(uint32_t));
	for (size_t i = 0; i < a->nframes; i++) {
		const char *f = json_string_value(json_object_get(v[i], "function"));
		const char *d = json_string_value(json_object_get(v[i], "dso"));
		a->frame_ids[i] = fleet_u64(json_object_get(v[i], "frame_id"));
		a->frame_fn[i] = fn_of(a, f ? f : "[unknown]", d ? d : "");
	}
	free(v);
}

static void load_stacks(struct agg *a, json_t *rows)
{
	json_t **v = sorted_rows(rows, by_stack_id);

	a->nstacks = json_array_size(rows);
	a->stack_ids = pl_xcalloc(a->nstacks ? a->nstacks : 1, sizeof(uint64_t));
	a->stack_frames = pl_xcalloc(a->nstacks ? a->nstacks : 1, sizeof(json_t *));
	for (size_t i = 0; i < a->nstacks; i++) {
		a->stack_ids[i] = fleet_u64(json_object_get(v[i], "stack_id"));
		a->stack_frames[i] = json_object_get(v[i], "frames");
	}
	free(v);
}

static size_t find_u64(const uint64_t *ids, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo] == id ? lo : (size_t)-1;
}

static int by_device(const void *x, const void *y)
{
	const char *a = json_string_value(json_object_get(*(json_t *const *)x, "device"));
	const char *b = json_string_value(json_object_get(*(json_t *const *)y, "device"));

	return strcmp(a ? a : "", b ? b : "");
}

/* One (stack, device, samples) row into the functions' sums. */
static void add_row(struct agg *a, json_t *row, size_t row_no, size_t device_no)
{
	size_t s = find_u64(a->stack_ids, a->nstacks, fleet_u64(json_object_get(row, "stack_id")));
	uint64_t n = fleet_u64(json_object_get(row, "samples"));
	json_t *frames = s == (size_t)-1 ? NULL : a->stack_frames[s];
	size_t depth = json_array_size(frames);

	a->total += n;
	for (size_t i = 0; i < depth; i++) {
		size_t f = find_u64(a->frame_ids, a->nframes, fleet_u64(json_array_get(frames, i)));
		if (f == (size_t)-1)
			continue;
		struct fn *fn = &a->fns[a->frame_fn[f]];
		if (i == depth - 1)
			fn->self += n;
		if (fn->last_stack != row_no + 1) {
			fn->last_stack = row_no + 1;
			fn->inclusive += n;
		}
		if (fn->last_device != device_no + 1) {
			fn->last_device = device_no + 1;
			fn->devices++;
		}
	}
}

static void aggregate(struct agg *a, json_t *rows)
{
	json_t **v = sorted_rows(rows, by_device);
	size_t n = json_array_size(rows), device_no = 0;

	for (size_t i = 0; i < n; i++) {
		if (i && by_device(&v[i - 1], &v[i]) != 0)
			device_no++;
		add_row(a, v[i], i, device_no);
	}
	a->devices = n ? device_no + 1 : 0;
	free(v);
}

static struct agg *sort_agg;
static bool sort_inclusive;

static int by_weight(const void *x, const void *y)
{
	const struct fn *a = &sort_agg->fns[*(const uint32_t *)x], *b = &sort_agg->fns[*(const uint32_t *)y];
	uint64_t wa = sort_inclusive ? a->inclusive : a->self, wb = sort_inclusive ? b->inclusive : b->self;

	if (wa != wb)
		return wa > wb ? -1 : 1;
	return strcmp(pl_strtab_get(&sort_agg->keys, *(const uint32_t *)x),
		      pl_strtab_get(&sort_agg->keys, *(const uint32_t *)y));
}

static json_t *hotspot_json(const struct agg *a, uint32_t id)
{
	const struct fn *f = &a->fns[id];
	const char *name = pl_strtab_get(&a->keys, id);
	double t = a->total ? (double)a->total : 1;

	return json_pack("{s:s,s:s,s:I,s:f,s:I,s:f,s:I}", "function", name, "dso", name + strlen(name) + 1,
			 "self_samples", (json_int_t)f->self, "self_percent", 100.0 * (double)f->self / t,
			 "inclusive_samples", (json_int_t)f->inclusive,
			 "inclusive_percent", 100.0 * (double)f->inclusive / t, "devices", (json_int_t)f->devices);
}

/* The selection's rows: (stack, device) sums, the stacks, the frames. */
static enum pl_err fetch(const struct tool_ctx *ctx, json_t *args, json_t **sums, json_t **stacks,
			 json_t **frames, struct pl_error *err)
{
	struct pl_buf sql = {0}, sub = {0};
	const char *in = ctx->fleet.cluster ? "GLOBAL IN" : "IN";
	char t[64], ts[64], tf[64];
	enum pl_err e;

	table(ctx, "samples", t);
	table(ctx, "stacks", ts);
	table(ctx, "frames", tf);
	pl_buf_addf(&sql, "SELECT stack_id, device, sum(samples) AS samples FROM %s FINAL", t);
	if ((e = fleet_where(args, true, "minute", &sql, err)) || (e = stack_subquery(ctx, args, &sub, err)))
		goto out;
	pl_buf_adds(&sql, " GROUP BY stack_id, device FORMAT JSONEachRow");
	if ((e = fleet_rows_query(ctx, sql.data, MAX_ROWS, NARROW, sums, err)))
		goto out;
	pl_buf_reset(&sql);
	pl_buf_addf(&sql, "SELECT DISTINCT stack_id, frames FROM %s WHERE stack_id %s (%s) FORMAT JSONEachRow",
		    ts, in, sub.data);
	if ((e = fleet_rows_query(ctx, sql.data, MAX_ROWS, NARROW, stacks, err)))
		goto out;
	pl_buf_reset(&sql);
	pl_buf_addf(&sql, "SELECT DISTINCT frame_id, function, dso FROM %s WHERE frame_id %s (SELECT "
		    "arrayJoin(frames) FROM %s WHERE stack_id %s (%s)) FORMAT JSONEachRow", tf, in, ts, in, sub.data);
	e = fleet_rows_query(ctx, sql.data, MAX_ROWS, NARROW, frames, err);
out:
	pl_buf_release(&sql);
	pl_buf_release(&sub);
	return e;
}

static void agg_release(struct agg *a)
{
	pl_strtab_release(&a->keys);
	free(a->fns);
	free(a->frame_ids);
	free(a->frame_fn);
	free(a->stack_ids);
	free(a->stack_frames);
}

/* The page of hotspots, ordered, into `out` (new). */
static json_t *ranked_page(struct agg *a, bool inclusive, struct tool_page *pg)
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

enum pl_err tool_fleet_hotspots(const struct tool_ctx *ctx, json_t *args, json_t **result,
				struct pl_error *err)
{
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	const char *order = json_string_value(json_object_get(args, "order"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	json_t *events = NULL, *sums = NULL, *stacks = NULL, *frames = NULL, *sel = json_deep_copy(args);
	struct agg a = {0};
	struct pl_buf query = {0};
	struct tool_page pg;
	char *q;
	enum pl_err e;

	pl_strtab_init(&a.keys);
	json_object_del(sel, "cursor");
	json_object_del(sel, "limit");
	q = json_dumps(sel, JSON_COMPACT | JSON_SORT_KEYS);
	pl_buf_addf(&query, "fleet_hotspots|%s", q ? q : "");
	free(q);
	if ((e = fleet_ready(ctx, err)) || (e = tool_page_open(&pg, query.data, cursor, 0, limit, err)) ||
	    (e = events_of(ctx, args, &events, err)))
		goto out;
	if (!json_array_size(events)) {
		e = pl_fail(err, PL_ERR_INPUT, "see fleet_devices for the devices and labels the store holds",
			    "the fleet store holds no samples in this selection");
		goto out;
	}
	if (!json_object_get(sel, "event"))
		json_object_set(sel, "event", json_object_get(json_array_get(events, 0), "event"));
	if ((e = fetch(ctx, sel, &sums, &stacks, &frames, err)))
		goto out;
	load_frames(&a, frames);
	load_stacks(&a, stacks);
	aggregate(&a, sums);
	*result = json_pack("{s:O,s:O,s:I,s:I,s:o}", "event", json_object_get(sel, "event"), "events", events,
			    "total_samples", (json_int_t)a.total, "devices", (json_int_t)a.devices,
			    "hotspots", ranked_page(&a, order && strcmp(order, "inclusive") == 0, &pg));
	json_object_set_new(*result, "next_steps", json_array());
	json_object_set_new(*result, "page", tool_page_json(&pg, tool_page_call(&pg, "fleet_hotspots", args, NULL)));
out:
	agg_release(&a);
	json_decref(events);
	json_decref(sums);
	json_decref(stacks);
	json_decref(frames);
	json_decref(sel);
	pl_buf_release(&query);
	return e;
}
