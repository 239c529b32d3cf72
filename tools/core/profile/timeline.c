/* timeline.c - bucketing timed samples (see timeline.h).
 *
 * One pass over the timed samples; a function's inclusive share needs to
 * know which stacks hold it, found once per stack beforehand.
 */
#include "timeline.h"
#include "time_window.h"

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

enum pl_err pl_timeline_build(struct pl_timeline *t, const struct pl_profile *p, uint32_t event,
			      uint32_t buckets, uint32_t func, struct pl_error *err)
{
	const struct pl_timed_table *tt = &p->timed;
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
	t->width_ns = pl_timeline_width(t->last_ns - t->first_ns, buckets);
	t->n = (size_t)((t->last_ns - t->first_ns) / t->width_ns) + 1;
	t->all = pl_xcalloc(t->n, sizeof(*t->all));
	has = stacks_with(p, func);
	if (has)
		t->func = pl_xcalloc(t->n, sizeof(*t->func));
	for (size_t i = 0; i < tt->n; i++) {
		const struct pl_timed *s = &tt->v[i];
		size_t b = (size_t)((s->time_ns - t->first_ns) / t->width_ns);
		if (s->event != event || !pl_stack_weight(p, s->stack, event))
			continue;
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
