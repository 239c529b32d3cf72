/* fleet_compare.c - the fleet_compare tool: two label sets of the fleet
 * (e.g. firmware=1.4.1 against firmware=1.4.2) under one event and time
 * range: the functions whose share of the samples changed, each with the
 * spread of its share across the devices of each side, so that one noisy
 * board does not make a regression.
 *
 * The measure is a function's self samples per second of capture
 * ("samples_per_second": its CPU time at the capture's frequency) when
 * the store knows every selected chunk's seconds, else its share of all
 * samples ("percent").  Shares move together (one function's growth
 * lowers every other's share), rates do not: a firmware that makes one
 * function hotter changes that function's rate only.  Each is pooled over
 * a side's devices and taken per device.  The functions that moved (a
 * rate by min_change of itself, a share by min_delta_pp), among those
 * holding min_delta_pp of either side, are tested: the two sides'
 * per-device values are compared by a two-sided Mann-Whitney U test
 * (normal approximation with the tie correction), which ranks devices
 * and so is not moved by one device's size.  A function is "changed"
 * when p < alpha (default 0.01) and "noisy" when it moved as much pooled
 * but its devices do not agree.
 */
#include "registry.h"
#include "tools/lib/fleet_agg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TESTED 200

struct side {
	struct fleet_agg agg;
	uint64_t *device_total;   /* per device number */
	double *device_seconds;   /* per device number, from the chunks table */
	double seconds;           /* all of them */
	bool seconds_known;       /* every selected chunk says its seconds */
	double *shares;           /* [tested][device], a function's measure per device */
};

static bool rate_measure;  /* this call's measure (set once per call) */

/* sel with `labels` replaced by the side's (new). */
static json_t *side_selection(json_t *args, json_t *labels)
{
	json_t *sel = json_deep_copy(args), *all = json_array(), *l;
	size_t i;

	json_array_foreach(json_object_get(args, "labels"), i, l)
		json_array_append(all, l);
	json_array_foreach(labels, i, l)
		json_array_append(all, l);
	json_object_set_new(sel, "labels", all);
	json_object_del(sel, "a");
	json_object_del(sel, "b");
	json_object_del(sel, "min_delta_pp");
	json_object_del(sel, "alpha");
	json_object_del(sel, "limit");
	json_object_del(sel, "min_change");
	json_object_del(sel, "view");
	return sel;
}

/* The pooled self share (percent) of the function named `key` on a side. */
static double pooled_share(const struct fleet_agg *a, const char *key, size_t keylen)
{
	uint32_t id = pl_strtab_find(&a->keys, key, keylen);

	return id == PL_NOID || !a->total ? 0 : 100.0 * (double)a->fns[id].self / (double)a->total;
}

/* The pooled measure of the function named `key` on a side. */
static double pooled(const struct side *s, const char *key, size_t keylen)
{
	uint32_t id = pl_strtab_find(&s->agg.keys, key, keylen);

	if (!rate_measure)
		return pooled_share(&s->agg, key, keylen);
	return id == PL_NOID || s->seconds <= 0 ? 0 : (double)s->agg.fns[id].self / s->seconds;
}

struct candidate {
	const char *key;   /* "function\0dso", borrowed from a side's table */
	size_t keylen;
	double a, b;       /* pooled measures */
};

/* How far a candidate moved: a share in points, a rate relative to a. */
static double moved(const struct candidate *c)
{
	if (!rate_measure)
		return fabs(c->b - c->a);
	return fabs(c->b - c->a) / (c->a > 0 ? c->a : (c->b > 0 ? c->b : 1));
}

static int by_delta(const void *x, const void *y)
{
	const struct candidate *p = x, *q = y;
	double dp = moved(p), dq = moved(q);

	if (dp != dq)
		return dp > dq ? -1 : 1;
	return strcmp(p->key, q->key);
}

/* Add every function of `from` holding min_pp of either side that moved
 * by min_pp (a share) or min_change of itself (a rate), skipping those
 * already listed (found through `seen`). */
static void add_candidates(const struct fleet_agg *from, const struct side *a, const struct side *b,
			   double min_pp, double min_change, struct pl_strtab *seen, struct candidate **c,
			   size_t *n, size_t *cap)
{
	for (uint32_t id = 0; id < from->keys.count; id++) {
		const char *key = fleet_agg_name(from, id);
		size_t len = strlen(key) + 1 + strlen(key + strlen(key) + 1);
		double pa = pooled_share(&a->agg, key, len), pb = pooled_share(&b->agg, key, len);
		struct candidate cand = {key, len, pooled(a, key, len), pooled(b, key, len)};
		if ((pa < min_pp && pb < min_pp) || moved(&cand) < (rate_measure ? min_change : min_pp) ||
		    pl_strtab_find(seen, key, len) != PL_NOID)
			continue;
		pl_strtab_intern(seen, key, len);
		PL_GROW(*c, *cap, *n + 1);
		(*c)[(*n)++] = cand;
	}
}

/* Per-device measures of the tested functions on one side. */
static void device_shares(struct side *s, const struct candidate *c, size_t n)
{
	struct fleet_agg *a = &s->agg;
	size_t nd = a->devices ? a->devices : 1;
	uint32_t *tested = pl_xcalloc(a->keys.count ? a->keys.count : 1, sizeof(uint32_t));

	s->device_total = pl_xcalloc(nd, sizeof(uint64_t));
	s->shares = pl_xcalloc((n ? n : 1) * nd, sizeof(double));
	for (size_t i = 0; i < n; i++) {
		uint32_t id = pl_strtab_find(&a->keys, c[i].key, c[i].keylen);
		if (id != PL_NOID)
			tested[id] = (uint32_t)i + 1;
	}
	for (size_t r = 0; r < a->nleaves; r++)
		s->device_total[a->leaves[r].device] += a->leaves[r].samples;
	for (size_t r = 0; r < a->nleaves; r++) {
		uint32_t leaf = a->leaves[r].leaf;
		size_t d = a->leaves[r].device;
		double v = (double)a->leaves[r].samples;
		if (leaf == PL_NOID || !tested[leaf])
			continue;
		s->shares[(tested[leaf] - 1) * nd + d] += rate_measure
			? v / (s->device_seconds[d] > 0 ? s->device_seconds[d] : 1)
			: 100.0 * v / (double)(s->device_total[d] ? s->device_total[d] : 1);
	}
	free(tested);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* {devices, min, median, max} of n shares. */
static json_t *spread_json(const double *v, size_t n)
{
	double *s = pl_xcalloc(n ? n : 1, sizeof(double));
	json_t *j;

	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	j = json_pack("{s:I,s:f,s:f,s:f}", "devices", (json_int_t)n, "min", n ? s[0] : 0.0,
		      "median", n ? (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : 0.0, "max", n ? s[n - 1] : 0.0);
	free(s);
	return j;
}

struct ranked {
	double v;
	int side;
};

static int by_value(const void *x, const void *y)
{
	return cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

/* Two-sided p of the Mann-Whitney U test of a (na values) against b (nb),
 * normal approximation with the tie correction; 1 when it cannot say. */
static double mann_whitney_p(const double *a, size_t na, const double *b, size_t nb)
{
	size_t n = na + nb, i = 0;
	struct ranked *r = pl_xcalloc(n ? n : 1, sizeof(*r));
	double rank_a = 0, ties = 0, u, mu, sigma, z;

	if (!na || !nb) {
		free(r);
		return 1;
	}
	for (size_t k = 0; k < na; k++)
		r[k] = (struct ranked){a[k], 0};
	for (size_t k = 0; k < nb; k++)
		r[na + k] = (struct ranked){b[k], 1};
	qsort(r, n, sizeof(*r), by_value);
	while (i < n) {
		size_t j = i;
		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double mid = (double)(i + j) / 2 + 1, t = (double)(j - i + 1);
		for (size_t k = i; k <= j; k++)
			if (r[k].side == 0)
				rank_a += mid;
		ties += t * t * t - t;
		i = j + 1;
	}
	free(r);
	u = rank_a - (double)na * ((double)na + 1) / 2;
	mu = (double)na * (double)nb / 2;
	sigma = sqrt((double)na * (double)nb / 12 * (((double)n + 1) - ties / ((double)n * ((double)n - 1))));
	if (sigma <= 0)
		return 1;
	z = (fabs(u - mu) - 0.5) / sigma;  /* continuity correction */
	return z <= 0 ? 1 : erfc(z / sqrt(2));
}

static json_t *change_json(const struct candidate *c, const struct side *a, const struct side *b, size_t i,
			   double alpha)
{
	size_t na = a->agg.devices, nb = b->agg.devices;
	double p = mann_whitney_p(a->shares + i * (na ? na : 1), na, b->shares + i * (nb ? nb : 1), nb);

	return json_pack("{s:s,s:s,s:f,s:f,s:f,s:o,s:o,s:f,s:s}", "function", c->key, "dso", c->key + strlen(c->key) + 1,
			 "a", c->a, "b", c->b, "delta", c->b - c->a,
			 "a_devices", spread_json(a->shares + i * (na ? na : 1), na),
			 "b_devices", spread_json(b->shares + i * (nb ? nb : 1), nb), "p_value", p,
			 "verdict", p < alpha ? "changed" : "noisy");
}

static void side_release(struct side *s)
{
	fleet_agg_release(&s->agg);
	free(s->device_total);
	free(s->device_seconds);
	free(s->shares);
}

/* Each device's seconds of capture in the side's selection, from the
 * chunks table, numbered as the side's rows number their devices (a
 * device a view left out counts no seconds). */
static enum pl_err side_seconds(const struct tool_ctx *ctx, json_t *sel, struct side *s, struct pl_error *err)
{
	struct fleet_agg *a = &s->agg;
	struct pl_buf sql = {0};
	json_t *rows = NULL, *row;
	char t[64];
	size_t i;
	enum pl_err e;

	s->device_seconds = pl_xcalloc(a->devices ? a->devices : 1, sizeof(double));
	s->seconds_known = true;
	fleet_table(&ctx->fleet, "chunks", t, sizeof(t));
	pl_buf_addf(&sql, "SELECT device, sum(seconds) AS device_seconds, countIf(seconds <= 0) AS unknown "
		    "FROM %s FINAL", t);
	e = fleet_where(sel, false, "minute", &sql, err);
	pl_buf_adds(&sql, " GROUP BY device FORMAT JSONEachRow");
	if (!e)
		e = fleet_rows_query(ctx, sql.data, 1000000, "narrow the selection", &rows, err);
	json_array_foreach(rows, i, row) {
		const char *dev = json_string_value(json_object_get(row, "device"));
		double secs = json_number_value(json_object_get(row, "device_seconds"));
		if (json_is_string(json_object_get(row, "device_seconds")))
			secs = strtod(json_string_value(json_object_get(row, "device_seconds")), NULL);
		if (fleet_u64(json_object_get(row, "unknown")))
			s->seconds_known = false;
		size_t d = dev ? fleet_agg_device(a, dev) : (size_t)-1;
		if (d != (size_t)-1) {
			s->device_seconds[d] = secs;
			s->seconds += secs;
		}
	}
	for (size_t d = 0; d < a->devices; d++)
		if (s->device_seconds[d] <= 0)
			s->seconds_known = false;
	json_decref(rows);
	pl_buf_release(&sql);
	return e;
}

/* The view's figures of both sides: side a's (st_a, total_a) added to
 * side b's, which the view holds. */
static void sum_view_stats(struct tool_view *v, const struct pl_transform_stats *st_a,
			   const struct pl_amount *total_a)
{
	v->st.before.samples += st_a->before.samples;
	v->st.before.period += st_a->before.period;
	v->st.kept.samples += st_a->kept.samples;
	v->st.kept.period += st_a->kept.period;
	v->st.stacks_rewritten += st_a->stacks_rewritten;
	v->st.caller_checks_dropped |= st_a->caller_checks_dropped;
	for (int f = 0; f < PL_TF_NFIELDS; f++)
		v->st.matched[f] |= st_a->matched[f];
	v->event_total.samples += total_a->samples;
	v->event_total.period += total_a->period;
}

/* Both sides loaded under one event (the a side's most sampled when the
 * call names none), each cut by the view when one is given. */
static enum pl_err load_sides(const struct tool_ctx *ctx, json_t *args, struct tool_view *view, struct side *a,
			      struct side *b, json_t **event, struct pl_error *err)
{
	json_t *sa = side_selection(args, json_object_get(args, "a"));
	json_t *sb = side_selection(args, json_object_get(args, "b")), *events = NULL;
	enum pl_err e = PL_OK;

	if (!json_object_get(sa, "event")) {
		if (!(e = fleet_events(ctx, sa, &events, err)) && !json_array_size(events))
			e = pl_fail(err, PL_ERR_INPUT, "see fleet_devices for the labels the store holds",
				    "the fleet store holds no samples with the labels of side a");
		if (!e) {
			json_object_set(sa, "event", json_object_get(json_array_get(events, 0), "event"));
			json_object_set(sb, "event", json_object_get(json_array_get(events, 0), "event"));
		}
	}
	if (!e)
		*event = json_incref(json_object_get(sa, "event"));
	if (!e && !(e = fleet_agg_load(ctx, sa, &a->agg, err)) && !(e = fleet_agg_load(ctx, sb, &b->agg, err)) &&
	    view->active && a->agg.total && b->agg.total &&
	    !(e = fleet_agg_view(ctx, &a->agg, view, json_string_value(*event), err))) {
		struct pl_transform_stats st_a = view->st;
		struct pl_amount total_a = view->event_total;
		if (!(e = fleet_agg_view(ctx, &b->agg, view, json_string_value(*event), err)))
			sum_view_stats(view, &st_a, &total_a);
	}
	if (!e && (!a->agg.total || !b->agg.total))
		e = pl_fail(err, PL_ERR_INPUT, "see fleet_devices for the labels the store holds",
			    "side %s holds no samples of this event in the selection", a->agg.total ? "b" : "a");
	if (!e && !(e = side_seconds(ctx, sa, a, err)))
		e = side_seconds(ctx, sb, b, err);
	json_decref(events);
	json_decref(sa);
	json_decref(sb);
	return e;
}

/* Side b as an analysis: the changed functions' call paths there. */
static json_t *side_b_step(json_t *args, json_t *event)
{
	json_t *sel = side_selection(args, json_object_get(args, "b"));

	json_object_set(sel, "event", event);
	return json_pack("[o]", tool_next_step("fleet_analyze", sel,
			 "side b as an analysis: the call paths of the functions that changed"));
}

enum pl_err tool_fleet_compare(const struct tool_ctx *ctx, json_t *args, json_t **result, struct pl_error *err)
{
	double min = json_number_value(json_object_get(args, "min_delta_pp"));
	double alpha = json_number_value(json_object_get(args, "alpha"));
	double min_change = json_number_value(json_object_get(args, "min_change"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct side a = {0}, b = {0};
	struct candidate *c = NULL;
	size_t n = 0, cap = 0;
	struct pl_strtab seen;
	struct tool_view view;
	json_t *event = NULL, *changes;
	enum pl_err e;

	pl_strtab_init(&seen);
	if ((e = fleet_view_init(&view, args, err)) || (e = fleet_ready(ctx, err)) ||
	    (e = load_sides(ctx, args, &view, &a, &b, &event, err)))
		goto out;
	rate_measure = a.seconds_known && b.seconds_known;
	add_candidates(&a.agg, &a, &b, min, min_change, &seen, &c, &n, &cap);
	add_candidates(&b.agg, &a, &b, min, min_change, &seen, &c, &n, &cap);
	if (n)
		qsort(c, n, sizeof(*c), by_delta);
	if (n > MAX_TESTED)
		n = MAX_TESTED;
	if (n > limit)
		n = limit;
	device_shares(&a, c, n);
	device_shares(&b, c, n);
	changes = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(changes, change_json(&c[i], &a, &b, i, alpha));
	*result = json_pack("{s:O,s:s,s:{s:I,s:I,s:f},s:{s:I,s:I,s:f},s:o,s:o}", "event", event,
			    "measure", rate_measure ? "samples_per_second" : "percent",
			    "a", "samples", (json_int_t)a.agg.total, "devices", (json_int_t)a.agg.devices,
			    "seconds", a.seconds,
			    "b", "samples", (json_int_t)b.agg.total, "devices", (json_int_t)b.agg.devices,
			    "seconds", b.seconds, "changes", changes, "next_steps", side_b_step(args, event));
	if (view.active)
		json_object_set_new(*result, "view", tool_view_json(&view));
out:
	tool_view_release(&view);
	side_release(&a);
	side_release(&b);
	pl_strtab_release(&seen);
	free(c);
	json_decref(event);
	return e;
}
