/* timeline.c - bucketing timed samples (see timeline.h).
 *
 * One pass over the timed samples; a function's inclusive share needs to
 * know which stacks hold it, found once per stack beforehand.
 */
#include "timeline.h"
#include "time_window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t pl_timeline_width(uint64_t span_ns, uint32_t buckets)
{
	static const uint64_t steps[] = {1, 2, 5};
	uint64_t scale = 1;

	if (buckets == 0)
		buckets = 1;
	for (;;) {
		for (size_t i = 0; i < PL_ARRAY_LEN(steps); i++) {
			uint64_t w = steps[i] * scale;
			if (span_ns / w + 1 <= buckets)
				return w;
		}
		if (scale > UINT64_MAX / 100)
			return UINT64_MAX;
		scale *= 10;
	}
}

/* Which stacks hold `func` (NULL for PL_NOID). */
static bool *stacks_with(const struct pl_profile *p, uint32_t func)
{
	bool *has;

	if (func == PL_NOID)
		return NULL;
	has = pl_xcalloc(pl_nstacks(p) + 1, 1);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_stack *st = &p->stacks[s];
		for (uint32_t d = 0; d < st->depth && !has[s]; d++)
			has[s] = p->frames[st->frames[d]].func == func;
	}
	return has;
}

static void add(struct pl_amount *a, uint64_t period)
{
	a->samples++;
	a->period += period;
}

/* The range bucketed: [start, end] in ns, the whole span or a zoom. */
static enum pl_err zoom(struct pl_timeline *t, double from_s, double to_s, uint64_t *end,
			struct pl_error *err)
{
	uint64_t from, to;

	t->start_ns = t->first_ns;
	*end = t->last_ns;
	if (to_s <= 0)
		return PL_OK;
	if (!(from_s >= 0) || !(to_s > from_s) || !(to_s < 9.2e9))
		return pl_fail(err, PL_ERR_USAGE, "pass 0 <= from_seconds < to_seconds",
			       "time window [%g, %g) is empty or out of range", from_s, to_s);
	from = t->first_ns + (uint64_t)llround(from_s * 1e9);
	to = t->first_ns + (uint64_t)llround(to_s * 1e9);
	if (from > t->last_ns)
		return pl_fail(err, PL_ERR_USAGE, "pick a window inside the span (span_seconds)",
			       "time window [%g, %g) starts after the last sample", from_s, to_s);
	t->start_ns = from;
	if (to - 1 < *end)
		*end = to - 1;
	return PL_OK;
}

enum pl_err pl_timeline_build(struct pl_timeline *t, const struct pl_profile *p, uint32_t event,
			      uint32_t buckets, uint32_t func, double from_s, double to_s,
			      struct pl_error *err)
{
	const struct pl_timed_table *tt = &p->timed;
	uint64_t end;
	enum pl_err rc;
	bool *has;

	memset(t, 0, sizeof(*t));
	if (!pl_timed_first(p, &t->first_ns))
		return pl_no_time_error(p, err);
	if (buckets < 1 || buckets > PL_TIMELINE_MAX_BUCKETS)
		return pl_fail(err, PL_ERR_USAGE, "ask for 1 to 500 buckets", "%u buckets asked", buckets);
	t->last_ns = t->first_ns;
	for (size_t i = 0; i < tt->n; i++)
		if (tt->v[i].time_ns > t->last_ns)
			t->last_ns = tt->v[i].time_ns;
	if ((rc = zoom(t, from_s, to_s, &end, err)))
		return rc;
	t->width_ns = pl_timeline_width(end - t->start_ns, buckets);
	t->n = (size_t)((end - t->start_ns) / t->width_ns) + 1;
	t->all = pl_xcalloc(t->n, sizeof(*t->all));
	has = stacks_with(p, func);
	if (has)
		t->func = pl_xcalloc(t->n, sizeof(*t->func));
	for (size_t i = 0; i < tt->n; i++) {
		const struct pl_timed *s = &tt->v[i];
		size_t b;
		if (s->event != event || s->time_ns < t->start_ns || s->time_ns > end ||
		    !pl_stack_weight(p, s->stack, event))
			continue;
		b = (size_t)((s->time_ns - t->start_ns) / t->width_ns);
		add(&t->all[b], s->period);
		add(&t->total, s->period);
		if (has && has[s->stack]) {
			add(&t->func[b], s->period);
			add(&t->func_total, s->period);
		}
	}
	free(has);
	return PL_OK;
}

void pl_timeline_release(struct pl_timeline *t)
{
	free(t->all);
	free(t->func);
	memset(t, 0, sizeof(*t));
}
