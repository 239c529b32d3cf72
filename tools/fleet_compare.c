/* fleet_compare.c - the fleet_compare tool: two label sets of the fleet
 * (e.g. firmware=1.4.1 against firmware=1.4.2) under one event and time
 * range: the functions whose share of the samples changed, each with the
 * spread of its share across the devices of each side, so that one noisy
 * board does not make a regression.
 *
 * A function's share is its self samples over all samples, pooled over a
 * side's devices (what fleet_hotspots would say of that side) and per
 * device.  The functions whose pooled share moved by at least
 * min_delta_pp are tested: the two sides' per-device shares are compared
 * by a two-sided Mann-Whitney U test (normal approximation with the tie
 * correction), which ranks devices and so is not moved by one device's
 * size.  A function is "changed" when p < alpha (default 0.01) and
 * "noisy" when it moved as much pooled but its devices do not agree.
 */
#include "registry.h"
#include "fleet_agg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TESTED 200

struct side {
	struct fleet_agg agg;
	uint64_t *device_total;   /* per device number */
	double *shares;           /* [tested][device], a function's self share per device */
};

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
	return sel;
}

/* The pooled self share (percent) of the function named `key` on a side. */
static double pooled_share(const struct fleet_agg *a, const char *key, size_t keylen)
{
	uint32_t id = pl_strtab_find(&a->keys, key, keylen);

	return id == PL_NOID || !a->total ? 0 : 100.0 * (double)a->fns[id].self / (double)a->total;
}

struct candidate {
	const char *key;   /* "function\0dso", borrowed from a side's table */
	size_t keylen;
	double a, b;       /* pooled shares */
};

static int by_delta(const void *x, const void *y)
{
	const struct candidate *p = x, *q = y;
	double dp = fabs(p->b - p->a), dq = fabs(q->b - q->a);

	if (dp != dq)
		return dp > dq ? -1 : 1;
	return strcmp(p->key, q->key);
}

/* Add every function of `from` whose pooled share moved by min pp
 * (skipping those already listed, found through `seen`). */
static void add_candidates(const struct fleet_agg *from, const struct fleet_agg *a, const struct fleet_agg *b,
			   double min, struct pl_strtab *seen, struct candidate **c, size_t *n, size_t *cap)
{
	for (uint32_t id = 0; id < from->keys.count; id++) {
		const char *key = fleet_agg_name(from, id);
		size_t len = strlen(key) + 1 + strlen(key + strlen(key) + 1);
		double sa = pooled_share(a, key, len), sb = pooled_share(b, key, len);
		if (fabs(sb - sa) < min || pl_strtab_find(seen, key, len) != PL_NOID)
			continue;
		pl_strtab_intern(seen, key, len);
		PL_GROW(*c, *cap, *n + 1);
		(*c)[(*n)++] = (struct candidate){key, len, sa, sb};
	}
}

/* Per-device self shares of the tested functions on one side. */
static void device_shares(struct side *s, const struct candidate *c, size_t n)
{
	struct fleet_agg *a = &s->agg;
	size_t nd = a->devices ? a->devices : 1;

	s->device_total = pl_xcalloc(nd, sizeof(uint64_t));
	s->shares = pl_xcalloc((n ? n : 1) * nd, sizeof(double));
	for (size_t r = 0; r < a->nrows; r++)
		s->device_total[a->row_device[r]] += fleet_u64(json_object_get(a->rows[r], "samples"));
	for (size_t r = 0; r < a->nrows; r++) {
		uint32_t leaf = fleet_agg_leaf(a, a->rows[r]);
		const char *key = leaf == PL_NOID ? NULL : fleet_agg_name(a, leaf);
		if (!key)
			continue;
		for (size_t i = 0; i < n; i++)
			if (c[i].keylen == strlen(key) + 1 + strlen(key + strlen(key) + 1) &&
			    memcmp(c[i].key, key, c[i].keylen) == 0) {
				size_t d = a->row_device[r];
				s->shares[i * nd + d] += 100.0 * (double)fleet_u64(json_object_get(a->rows[r], "samples")) /
							 (double)(s->device_total[d] ? s->device_total[d] : 1);
				break;
			}
	}
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
			 "a_percent", c->a, "b_percent", c->b, "delta_pp", c->b - c->a,
			 "a_devices", spread_json(a->shares + i * (na ? na : 1), na),
			 "b_devices", spread_json(b->shares + i * (nb ? nb : 1), nb), "p_value", p,
			 "verdict", p < alpha ? "changed" : "noisy");
}

static void side_release(struct side *s)
{
	fleet_agg_release(&s->agg);
	free(s->device_total);
	free(s->shares);
}

/* Both sides loaded under one event (the a side's most sampled when the
 * call names none). */
static enum pl_err load_sides(const struct tool_ctx *ctx, json_t *args, struct side *a, struct side *b,
			      json_t **event, struct pl_error *err)
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
	    (!a->agg.total || !b->agg.total))
		e = pl_fail(err, PL_ERR_INPUT, "see fleet_devices for the labels the store holds",
			    "side %s holds no samples of this event in the selection", a->agg.total ? "b" : "a");
	json_decref(events);
	json_decref(sa);
	json_decref(sb);
	return e;
}

enum pl_err tool_fleet_compare(const struct tool_ctx *ctx, json_t *args, json_t **result, struct pl_error *err)
{
	double min = json_number_value(json_object_get(args, "min_delta_pp"));
	double alpha = json_number_value(json_object_get(args, "alpha"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct side a = {0}, b = {0};
	struct candidate *c = NULL;
	size_t n = 0, cap = 0;
	struct pl_strtab seen;
	json_t *event = NULL, *changes;
	enum pl_err e;

	pl_strtab_init(&seen);
	if ((e = fleet_ready(ctx, err)) || (e = load_sides(ctx, args, &a, &b, &event, err)))
		goto out;
	add_candidates(&a.agg, &a.agg, &b.agg, min, &seen, &c, &n, &cap);
	add_candidates(&b.agg, &a.agg, &b.agg, min, &seen, &c, &n, &cap);
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
	*result = json_pack("{s:O,s:{s:I,s:I},s:{s:I,s:I},s:o,s:o}", "event", event,
			    "a", "samples", (json_int_t)a.agg.total, "devices", (json_int_t)a.agg.devices,
			    "b", "samples", (json_int_t)b.agg.total, "devices", (json_int_t)b.agg.devices,
			    "changes", changes, "next_steps", json_array());
out:
	side_release(&a);
	side_release(&b);
	pl_strtab_release(&seen);
	free(c);
	json_decref(event);
	return e;
}
