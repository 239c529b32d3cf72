/* fleet_agg.c - a fleet selection's functions (see fleet_agg.h).
 *
 * The store sums the samples per (stack, device) (FINAL: a chunk written
 * twice counts once); the stacks and frames those rows name come in two
 * more queries; the functions' self and inclusive samples are summed
 * here, a function counted once per stack however often it recurs.  A
 * function is its name and DSO, as in every other PerfLens analysis.
 */
#include "fleet_agg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 2000000u
#define NARROW "narrow the selection: labels, devices, from_unix/to_unix"


static void table(const struct tool_ctx *ctx, const char *base, char *out)
{
	fleet_table(&ctx->fleet, base, out, 64);
}

/* The selection's events, most samples first ({event, samples}). */
enum pl_err fleet_events(const struct tool_ctx *ctx, json_t *args, json_t **events, struct pl_error *err)
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
	if (!e) {
		size_t k;
		json_t *ev;
		json_array_foreach(*events, k, ev)  /* ClickHouse quotes 64-bit counts */
			json_object_set_new(ev, "samples", json_integer((json_int_t)fleet_u64(json_object_get(ev, "samples"))));
	}
	json_decref(sel);
	pl_buf_release(&sql);
	return e;
}

enum pl_err fleet_pick_event(const struct tool_ctx *ctx, json_t *args, json_t *sel, json_t **events,
			     struct pl_error *err)
{
	enum pl_err e = fleet_events(ctx, args, events, err);

	if (e)
		return e;
	if (!json_array_size(*events))
		return pl_fail(err, PL_ERR_INPUT, "see fleet_devices for the devices and labels the store holds",
			       "the fleet store holds no samples in this selection");
	if (!json_object_get(sel, "event"))
		json_object_set(sel, "event", json_object_get(json_array_get(*events, 0), "event"));
	return PL_OK;
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

static uint32_t fn_of(struct fleet_agg *a, const char *function, const char *dso)
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

static void load_frames(struct fleet_agg *a, json_t *rows)
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

static void load_stacks(struct fleet_agg *a, json_t *rows)
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
static void add_row(struct fleet_agg *a, json_t *row, size_t row_no, size_t device_no)
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
		struct fleet_fn *fn = &a->fns[a->frame_fn[f]];
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

/* The function a row's stack ends in, or PL_NOID. */
static uint32_t row_leaf(const struct fleet_agg *a, json_t *row)
{
	size_t s = find_u64(a->stack_ids, a->nstacks, fleet_u64(json_object_get(row, "stack_id")));
	json_t *frames = s == (size_t)-1 ? NULL : a->stack_frames[s];
	size_t depth = json_array_size(frames), f;

	if (!depth)
		return PL_NOID;
	f = find_u64(a->frame_ids, a->nframes, fleet_u64(json_array_get(frames, depth - 1)));
	return f == (size_t)-1 ? PL_NOID : a->frame_fn[f];
}

static void free_devices(struct fleet_agg *a)
{
	for (size_t d = 0; a->device_names && d < a->devices; d++)
		free(a->device_names[d]);
	free(a->device_names);
	free(a->leaves);
	a->device_names = NULL;
	a->leaves = NULL;
	a->nleaves = 0;
}

static void aggregate(struct fleet_agg *a, json_t *rows)
{
	size_t n = json_array_size(rows), device_no = 0;

	a->rows = sorted_rows(rows, by_device);
	a->row_device = pl_xcalloc(n ? n : 1, sizeof(size_t));
	a->leaves = pl_xcalloc(n ? n : 1, sizeof(*a->leaves));
	a->device_names = pl_xcalloc(n ? n : 1, sizeof(char *));
	a->nrows = a->nleaves = n;
	for (size_t i = 0; i < n; i++) {
		const char *dev = json_string_value(json_object_get(a->rows[i], "device"));
		if (i && by_device(&a->rows[i - 1], &a->rows[i]) != 0)
			device_no++;
		if (!a->device_names[device_no])
			a->device_names[device_no] = pl_xstrdup(dev ? dev : "");
		a->row_device[i] = device_no;
		a->leaves[i] = (struct fleet_leaf){device_no, row_leaf(a, a->rows[i]),
						   fleet_u64(json_object_get(a->rows[i], "samples"))};
		add_row(a, a->rows[i], i, device_no);
	}
	a->devices = n ? device_no + 1 : 0;
}

size_t fleet_agg_device(const struct fleet_agg *a, const char *name)
{
	size_t lo = 0, hi = a->devices;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(a->device_names[mid], name);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (size_t)-1;
}

const char *fleet_agg_name(const struct fleet_agg *a, uint32_t id)
{
	return pl_strtab_get(&a->keys, id);
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
	pl_buf_addf(&sql, "SELECT stack_id, device, sum(samples) AS samples, sum(period) AS period FROM %s FINAL", t);
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

void fleet_agg_release(struct fleet_agg *a)
{
	pl_strtab_release(&a->keys);
	free(a->fns);
	free(a->frame_ids);
	free(a->frame_fn);
	free(a->stack_ids);
	free(a->stack_frames);
	free(a->rows);
	free(a->row_device);
	free_devices(a);
	json_decref(a->sums);
	json_decref(a->stacks);
	json_decref(a->frames);
	memset(a, 0, sizeof(*a));
}

enum pl_err fleet_agg_load(const struct tool_ctx *ctx, json_t *sel, struct fleet_agg *a, struct pl_error *err)
{
	enum pl_err e;

	pl_strtab_init(&a->keys);
	if ((e = fetch(ctx, sel, &a->sums, &a->stacks, &a->frames, err)))
		return e;
	load_frames(a, a->frames);
	load_stacks(a, a->stacks);
	aggregate(a, a->sums);
	return PL_OK;
}

/* ------------------------------------------------- as a profile, and back */

/* The frames of a stack row as the profile's frame ids (root first). */
static uint32_t stack_of(struct pl_profile *p, const struct fleet_agg *a, json_t *row, uint32_t thread,
			 uint32_t *fids, struct pl_error *err)
{
	json_t *frames = NULL;
	uint64_t sid = fleet_u64(json_object_get(row, "stack_id"));
	uint32_t depth = 0;

	for (size_t lo = 0, hi = a->nstacks; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->stack_ids[mid] == sid) {
			frames = a->stack_frames[mid];
			break;
		}
		if (a->stack_ids[mid] < sid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = 0; i < json_array_size(frames) && depth < 1024; i++) {
		uint64_t id = fleet_u64(json_array_get(frames, i));
		size_t lo = 0, hi = a->nframes;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (a->frame_ids[mid] < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == a->nframes || a->frame_ids[lo] != id)
			continue;
		const char *name = fleet_agg_name(a, a->frame_fn[lo]);
		const char *dso = name + strlen(name) + 1;
		uint32_t fn = pl_intern_func(p, pl_intern_text(p, name, strlen(name)),
					     *dso ? pl_intern_text(p, dso, strlen(dso)) : PL_NOID);
		fids[depth++] = pl_intern_frame(p, fn, false, 0, PL_NOID, err);
	}
	return depth ? pl_intern_stack(p, thread, fids, depth, err) : PL_NOID;
}

enum pl_err fleet_agg_profile(const struct fleet_agg *a, const char *event, struct pl_profile *p,
			      struct pl_error *err)
{
	uint32_t ev = pl_intern_event(p, event, strlen(event));
	uint32_t *fids = pl_xcalloc(1024, sizeof(uint32_t));

	for (size_t r = 0; r < a->nrows; r++) {
		const char *dev = json_string_value(json_object_get(a->rows[r], "device"));
		uint32_t thread = pl_intern_thread(p, -1, -1, pl_intern_text(p, dev ? dev : "", dev ? strlen(dev) : 0));
		uint32_t s = stack_of(p, a, a->rows[r], thread, fids, err);
		if (s == PL_NOID)
			continue;
		pl_add_weight(p, s, ev, fleet_u64(json_object_get(a->rows[r], "samples")),
			      fleet_u64(json_object_get(a->rows[r], "period")), true);
	}
	free(fids);
	return PL_OK;
}

/* The stacks of `p` that hold `event`, grouped by thread (a device),
 * the devices in name order as the store's rows are. */
static int by_thread(const void *x, const void *y, void *arg)
{
	const struct pl_profile *p = arg;
	uint32_t sx = *(const uint32_t *)x, sy = *(const uint32_t *)y;
	uint32_t a = p->stacks[sx].thread, b = p->stacks[sy].thread;
	int c = a == b ? 0 : strcmp(pl_str(p, p->threads[a].comm), pl_str(p, p->threads[b].comm));

	if (c)
		return c;
	if (a != b)
		return a < b ? -1 : 1;
	return (sx > sy) - (sx < sy);
}

void fleet_agg_from_profile(struct fleet_agg *a, const struct pl_profile *p, uint32_t event)
{
	size_t n = 0, devices = 0;
	uint32_t *order = pl_xcalloc(pl_nstacks(p) ? pl_nstacks(p) : 1, sizeof(uint32_t));
	uint32_t last_thread = PL_NOID;

	memset(a->fns, 0, a->cap * sizeof(*a->fns));
	free_devices(a);
	a->total = 0;
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		if (w && w->samples)
			order[n++] = s;
	}
	qsort_r(order, n, sizeof(*order), by_thread, (void *)p);
	a->leaves = pl_xcalloc(n ? n : 1, sizeof(*a->leaves));
	a->device_names = pl_xcalloc(n ? n : 1, sizeof(char *));
	a->nleaves = n;
	for (size_t i = 0; i < n; i++) {
		const struct pl_stack *st = &p->stacks[order[i]];
		uint64_t w = pl_stack_weight(p, order[i], event)->samples;
		uint32_t leaf = PL_NOID;
		if (st->thread != last_thread) {
			last_thread = st->thread;
			a->device_names[devices++] = pl_xstrdup(pl_str(p, p->threads[st->thread].comm));
		}
		a->total += w;
		for (uint32_t d = 0; d < st->depth; d++) {
			const struct pl_func *f = &p->funcs[p->frames[st->frames[d]].func];
			const char *name = pl_str(p, f->symbol), *dso = f->dso == PL_NOID ? "" : pl_str(p, f->dso);
			uint32_t id = fn_of(a, name, dso);
			struct fleet_fn *fn = &a->fns[id];
			if (d == st->depth - 1) {
				fn->self += w;
				leaf = id;
			}
			if (fn->last_stack != i + 1) {
				fn->last_stack = i + 1;
				fn->inclusive += w;
			}
			if (fn->last_device != devices) {
				fn->last_device = devices;
				fn->devices++;
			}
		}
		a->leaves[i] = (struct fleet_leaf){devices - 1, leaf, w};
	}
	a->devices = devices;
	free(order);
}

/* ------------------------------------------------------------ a view */

enum pl_err fleet_view_init(struct tool_view *v, json_t *args, struct pl_error *err)
{
	json_t *view = json_object_get(args, "view");
	static const char *const not_here[][2] = {
		{"tid", "a device is one thread, named by its device: use view.comm"},
		{"time", "a fleet selection's time is from_unix/to_unix"},
	};

	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < PL_ARRAY_LEN(not_here); i++)
		if (json_object_get(view, not_here[i][0]))
			return pl_fail(err, PL_ERR_USAGE, "a fleet view knows " FLEET_VIEW_FIELDS,
				       "view.%s does not apply to fleet rows (%s)", not_here[i][0], not_here[i][1]);
	return tool_view_init(v, args, false, err);
}

enum pl_err fleet_agg_view(const struct tool_ctx *ctx, struct fleet_agg *a, struct tool_view *view,
			   const char *event, struct pl_error *err)
{
	struct pl_profile p;
	uint32_t ev;
	enum pl_err e;

	pl_profile_init(&p, &ctx->limits);
	if (!(e = fleet_agg_profile(a, event, &p, err))) {
		ev = pl_intern_event(&p, event, strlen(event));
		if (!(e = tool_view_apply(view, &p, ev, err)))
			fleet_agg_from_profile(a, &p, ev);
	}
	pl_profile_release(&p);
	return e;
}
