/* view_time.c - view.time on list_hotspots (see view_time.h).
 *
 * The argument is checked here, by hand, since the registry checks only
 * top-level arguments: an object {"time": {"from_seconds", "to_seconds"}}
 * and nothing else.  Applying it is the engine's pl_profile_time_window.
 */
#include "view_time.h"

#include <math.h>
#include <string.h>

enum pl_err tool_view_time_init(struct tool_view_time *t, json_t *args, struct pl_error *err)
{
	json_t *view = json_object_get(args, "view"), *time;
	json_error_t je;

	memset(t, 0, sizeof(*t));
	if (!view)
		return PL_OK;
	const char *perf_time;
	if (!json_unpack_ex(view, &je, JSON_STRICT, "{s:o}", "time", &time) &&
	    !json_unpack_ex(time, &je, JSON_STRICT, "{s:s}", "perf_time", &perf_time)) {
		t->absolute = t->active = true;
		return pl_perf_time_parse(perf_time, &t->from_ns, &t->to_ns, err);
	}
	if (json_unpack_ex(view, &je, JSON_STRICT, "{s:o}", "time", &time) ||
	    json_unpack_ex(time, &je, JSON_STRICT, "{s:F,s:F}", "from_seconds", &t->from_s,
			   "to_seconds", &t->to_s))
		return pl_fail(err, PL_ERR_USAGE,
			       "pass view={\"time\": {\"from_seconds\": A, \"to_seconds\": B}} (seconds after the first sample; get_timeline shows them) or {\"time\": {\"perf_time\": \"START,END\"}} on the recording's clock",
			       "bad 'view': %s", je.text);
	if (!(t->from_s >= 0) || !(t->to_s > t->from_s))
		return pl_fail(err, PL_ERR_USAGE, "pass 0 <= from_seconds < to_seconds",
			       "view.time [%g, %g) is an empty window", t->from_s, t->to_s);
	t->active = true;
	return PL_OK;
}

static void event_weight(const struct pl_profile *p, uint32_t event, struct pl_amount *a)
{
	a->samples = a->period = 0;
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		if (w) {
			a->samples += w->samples;
			a->period += w->period;
		}
	}
}

enum pl_err tool_view_time_apply(struct tool_view_time *t, struct pl_profile *p, uint32_t event,
				 struct pl_error *err)
{
	enum pl_err rc;

	if (!t->active)
		return PL_OK;
	event_weight(p, event, &t->before);
	rc = t->absolute ? pl_profile_time_window_abs(p, t->from_ns, t->to_ns, &t->st, err)
			 : pl_profile_time_window(p, t->from_s, t->to_s, &t->st, err);
	if (rc)
		return rc;
	if (t->absolute) {  /* in seconds after the first sample from here on */
		t->from_s = t->st.from_ns > t->st.first_ns ? (double)(t->st.from_ns - t->st.first_ns) / 1e9 : 0;
		t->to_s = t->st.to_ns > t->st.first_ns ? (double)(t->st.to_ns - t->st.first_ns) / 1e9 : 0;
	}
	event_weight(p, event, &t->after);
	if (t->after.samples == 0)
		return pl_fail(err, PL_ERR_USAGE, "pick a window with samples (get_timeline shows where they are)",
			       "no sample of this event in view.time [%g, %g) s", t->from_s, t->to_s);
	return PL_OK;
}

void tool_view_time_resolve(struct tool_view_time *t, const struct pl_profile *p)
{
	uint64_t first;

	if (!t->active || !t->absolute || !pl_timed_first(p, &first))
		return;
	t->from_s = t->from_ns > first ? (double)(t->from_ns - first) / 1e9 : 0;
	/* an open end is the end of the recording (0 for pl_timeline_build) */
	t->to_s = t->to_ns == UINT64_MAX ? 0 : t->to_ns > first ? (double)(t->to_ns - first) / 1e9 : 1e-9;
}

void tool_view_time_query(const struct tool_view_time *t, struct pl_buf *query)
{
	if (t->active && t->absolute)
		pl_buf_addf(query, "|perf_time=%llu,%llu", (unsigned long long)t->from_ns, (unsigned long long)t->to_ns);
	else if (t->active)
		pl_buf_addf(query, "|time=%.17g,%.17g", t->from_s, t->to_s);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? round((double)part * 100.0 / (double)whole * 1e4) / 1e4 : 0.0;
}

/* "S.NNNNNNNNN" as perf prints a time (seconds, 9 decimals). */
static void perf_time(char *out, size_t cap, uint64_t ns)
{
	snprintf(out, cap, "%llu.%09llu", (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull));
}

json_t *tool_view_time_json(const struct tool_view_time *t)
{
	char from[32], to[32], both[72];

	if (!t->active)
		return NULL;
	perf_time(from, sizeof(from), t->st.from_ns);
	perf_time(to, sizeof(to), t->st.to_ns);
	snprintf(both, sizeof(both), "%s,%s", from, to);
	return json_pack("{s:f,s:f,s:s,s:I,s:I,s:f,s:f,s:I}", "from_seconds", t->from_s,
		"to_seconds", t->to_s, "perf_time", both, "samples", (json_int_t)t->after.samples,
		"period", (json_int_t)t->after.period, "percent_of_samples", pct(t->after.samples, t->before.samples),
		"percent_of_period", pct(t->after.period, t->before.period),
		"timeless_samples", (json_int_t)(t->st.past_cap + t->st.untimed));
}
