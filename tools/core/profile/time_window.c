/* time_window.c - cutting a loaded profile to a time window (see
 * time_window.h).
 *
 * Every weight entry is zeroed, the timed samples inside the window are
 * added back to their (stack, event) entries, and entries left empty are
 * unlinked from their stacks, so pl_stack_weight finds nothing there and
 * views skip them as they skip a thread filter's.  Nothing is allocated
 * but a per-weight copy of the old amounts, for the marks' shares.
 */
#include "time_window.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool pl_timed_first(const struct pl_profile *p, uint64_t *first_ns)
{
	const struct pl_timed_table *t = &p->timed;

	if (!t->n)
		return false;
	*first_ns = t->v[0].time_ns;
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i].time_ns < *first_ns)
			*first_ns = t->v[i].time_ns;
	return true;
}

enum pl_err pl_no_time_error(const struct pl_profile *p, struct pl_error *err)
{
	(void)p;
	return pl_fail(err, PL_ERR_UNSUPPORTED,
		       "analyze an input with sample times: " PL_TIMED_INPUTS,
		       "this analysis has no sample times: folded stacks carry none, nor do speedscope "
		       "profiles in bytes or counts, nor pprof samples without a timestamp label (Go's CPU "
		       "profiles: time_nanos and duration_nanos say when the profile ran, not when each "
		       "sample was), nor an analysis made before PerfLens kept them");
}

/* The weight entry of (stack, event), writable; NULL when none. */
static struct pl_weight *weight_of(struct pl_profile *p, uint32_t stack, uint32_t event)
{
	for (uint32_t i = p->stacks[stack].first_weight; i != PL_NOID; i = p->weights[i].next)
		if (p->weights[i].event == event)
			return &p->weights[i];
	return NULL;
}

/* Unlink the entries the window left empty. */
static void unlink_empty(struct pl_profile *p)
{
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		uint32_t *link = &p->stacks[s].first_weight;
		while (*link != PL_NOID) {
			if (p->weights[*link].samples == 0)
				*link = p->weights[*link].next;
			else
				link = &p->weights[*link].next;
		}
	}
}

/* A part of `whole` in the ratio now / before (rounded down). */
static uint64_t share(uint64_t part, uint64_t now, uint64_t before)
{
	return before ? (uint64_t)((long double)part * now / before) : 0;
}

/* Marks keep their share of their stack's weight; tails stay while their
 * stack's weight still holds them. */
static void cut_marks_and_tails(struct pl_profile *p, const struct pl_weight *old)
{
	size_t kept = 0;

	for (size_t i = 0; i < p->nmarked; i++) {
		struct pl_marked *m = &p->marked[i];
		struct pl_weight *w = weight_of(p, m->stack, m->event);
		const struct pl_weight *o = w ? &old[w - p->weights] : NULL;
		if (!w)
			continue;
		m->samples = share(m->samples, w->samples, o->samples);
		m->period = share(m->period, w->period, o->period);
		if (m->samples)
			p->marked[kept++] = *m;
	}
	p->nmarked = kept;
	kept = 0;
	for (size_t i = 0; i < p->ntails; i++) {
		const struct pl_tail *t = &p->tails[i];
		const struct pl_weight *w = pl_stack_weight(p, t->stack, t->event);
		if (w && w->period >= t->period)
			p->tails[kept++] = *t;
	}
	p->ntails = kept;
}

static enum pl_err window_ns(double from_s, double to_s, uint64_t first, uint64_t *from,
			     uint64_t *to, struct pl_error *err)
{
	if (!(from_s >= 0) || !(to_s > from_s) || !(to_s < 9.2e9))
		return pl_fail(err, PL_ERR_USAGE, "pass 0 <= from_seconds < to_seconds (get_timeline shows the span)",
			       "time window [%g, %g) is empty or out of range", from_s, to_s);
	*from = first + (uint64_t)llround(from_s * 1e9);
	*to = first + (uint64_t)llround(to_s * 1e9);
	return PL_OK;
}

/* Rebuild the weights from the timed samples in [st->from_ns, st->to_ns). */
static void cut_to(struct pl_profile *p, struct pl_window_stats *st)
{
	struct pl_weight *old = pl_xmalloc((p->nweights + 1) * sizeof(*old));

	if (p->nweights)
		memcpy(old, p->weights, p->nweights * sizeof(*old));
	for (size_t i = 0; i < p->nweights; i++)
		p->weights[i].samples = p->weights[i].period = 0;
	for (size_t e = 0; e < p->nevents; e++)
		p->events[e].samples = p->events[e].period = 0;
	for (size_t i = 0; i < p->timed.n; i++) {
		const struct pl_timed *t = &p->timed.v[i];
		struct pl_weight *w;
		if (t->time_ns < st->from_ns || t->time_ns >= st->to_ns ||
		    !(w = weight_of(p, t->stack, t->event)))
			continue;
		w->samples++;
		w->period += t->period;
		p->events[t->event].samples++;
		p->events[t->event].period += t->period;
		st->kept++;
	}
	unlink_empty(p);
	cut_marks_and_tails(p, old);
	free(old);
}

/* The stats' counts of the whole profile; false when nothing is timed. */
static bool window_begin(const struct pl_profile *p, struct pl_window_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->past_cap = p->timed.past_cap;
	st->untimed = p->timed.untimed;
	st->samples = p->timed.n;
	return pl_timed_first(p, &st->first_ns);
}

enum pl_err pl_profile_time_window(struct pl_profile *p, double from_s, double to_s,
				   struct pl_window_stats *st, struct pl_error *err)
{
	struct pl_window_stats local;
	enum pl_err rc;

	if (!st)
		st = &local;
	if (!window_begin(p, st))
		return pl_no_time_error(p, err);
	if ((rc = window_ns(from_s, to_s, st->first_ns, &st->from_ns, &st->to_ns, err)))
		return rc;
	cut_to(p, st);
	return PL_OK;
}

enum pl_err pl_profile_time_window_abs(struct pl_profile *p, uint64_t from_ns, uint64_t to_ns,
				       struct pl_window_stats *st, struct pl_error *err)
{
	struct pl_window_stats local;

	if (!st)
		st = &local;
	if (!window_begin(p, st))
		return pl_no_time_error(p, err);
	if (to_ns <= from_ns)
		return pl_fail(err, PL_ERR_USAGE, "pass perf_time as \"START,END\" with START < END",
			       "the time window is empty");
	st->from_ns = from_ns;
	st->to_ns = to_ns;
	cut_to(p, st);
	return PL_OK;
}

/* One side of perf's "START,END": seconds with up to 9 decimals, exact
 * in nanoseconds (no floating point); empty is `dflt`. */
static bool perf_seconds(const char *s, size_t n, uint64_t dflt, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, digits = 0, decimals = 0;

	if (n == 0) {
		*ns = dflt;
		return true;
	}
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		if (sec > 9000000000ull)
			return false;
		sec = sec * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, decimals++) {
			if (decimals >= 9)
				return false;
			frac = frac * 10 + (uint64_t)(s[i] - '0');
		}
	if (i != n || (digits == 0 && decimals == 0))
		return false;
	for (; decimals < 9; decimals++)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return true;
}

enum pl_err pl_perf_time_parse(const char *text, uint64_t *from_ns, uint64_t *to_ns, struct pl_error *err)
{
	const char *comma = text ? strchr(text, ',') : NULL;

	if (!comma || strchr(comma + 1, ',') ||
	    !perf_seconds(text, (size_t)(comma - text), 0, from_ns) ||
	    !perf_seconds(comma + 1, strlen(comma + 1), UINT64_MAX, to_ns) || *to_ns <= *from_ns)
		return pl_fail(err, PL_ERR_USAGE,
			       "pass perf_time as perf report --time takes it: \"START,END\", seconds on the "
			       "recording's clock as perf script prints them (9 decimals at most; either side may be empty)",
			       "perf_time '%.60s' is not a window", text ? text : "");
	return PL_OK;
}
