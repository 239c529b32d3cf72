/* view.c - the `view` argument (view.h): parsed once, applied to a loaded
 * profile as threads, then time, then the stack transforms.
 *
 * The normalized view lists the parts given in one fixed order, so two
 * calls asking the same thing get the same key (cursors) and the same
 * echo whatever order their JSON had.
 */
#include "view.h"
#include "base/sha256.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The transforms' fields in the order the normalized view lists them. */
static const enum pl_tf_field pattern_order[] = {
	PL_TF_FOCUS, PL_TF_UNDER, PL_TF_IGNORE, PL_TF_HIDE, PL_TF_SHOW_FROM, PL_TF_MERGE
};

/* tid or comm from the view, else from the older top-level argument; two
 * different values are an error. */
static enum pl_err thread_part(json_t *view, json_t *args, const char *key, json_t *into, bool *at_top,
			       struct pl_error *err)
{
	json_t *in_view = json_object_get(view, key), *top = json_object_get(args, key);

	if (in_view && top && !json_equal(in_view, top))
		return pl_fail(err, PL_ERR_USAGE, "pass it once, in view",
			       "%s is given both in view and as an argument, with two values", key);
	if (in_view || top)
		json_object_set(into, key, in_view ? in_view : top);
	*at_top = top != NULL;
	return PL_OK;
}

static enum pl_err parse_time(struct tool_view *v, json_t *time, struct pl_error *err)
{
	json_t *from = json_object_get(time, "from_seconds"), *to = json_object_get(time, "to_seconds");
	json_t *abs = json_object_get(time, "perf_time");

	v->has_time = true;
	if (abs) {
		if (from || to || !json_is_string(abs) || json_object_size(time) != 1)
			return pl_fail(err, PL_ERR_USAGE, "pass view.time as {\"perf_time\": \"START,END\"} alone, "
				       "or as {\"from_seconds\": A, \"to_seconds\": B}", "view.time mixes its two forms");
		v->time_absolute = true;
		v->perf_time = json_string_value(abs);
		return pl_perf_time_parse(v->perf_time, &v->from_ns, &v->to_ns, err);
	}
	v->from_seconds = from ? json_number_value(from) : 0.0;
	v->to_seconds = to ? json_number_value(to) : INFINITY;
	if (!json_is_object(time) || (from && !json_is_number(from)) || (to && !json_is_number(to)) ||
	    !(v->from_seconds >= 0) || !(v->to_seconds > v->from_seconds))
		return pl_fail(err, PL_ERR_USAGE, "pass view.time as {\"from_seconds\": A, \"to_seconds\": B} with "
			       "0 <= A < B, seconds from the first sample, or as {\"perf_time\": \"START,END\"} on "
			       "the recording's clock", "view.time is not a window");
	return PL_OK;
}

/* The view as answered, in one order (new). */
static json_t *normalize(const struct tool_view *v, json_t *view)
{
	json_t *n = json_object();

	if (v->has_time && v->time_absolute) {
		json_object_set_new(n, "time", json_pack("{s:s}", "perf_time", v->perf_time));
	} else if (v->has_time) {
		json_t *t = json_object();
		json_object_set_new(t, "from_seconds", json_real(v->from_seconds));
		if (isfinite(v->to_seconds))
			json_object_set_new(t, "to_seconds", json_real(v->to_seconds));
		json_object_set_new(n, "time", t);
	}
	json_object_update(n, v->thread_args);
	for (size_t i = 0; i < sizeof(pattern_order) / sizeof(*pattern_order); i++) {
		const char *name = pl_tf_field_names[pattern_order[i]];
		if (v->tf.given[pattern_order[i]])
			json_object_set(n, name, json_object_get(view, name));
	}
	if (v->tf.collapse_recursion)
		json_object_set_new(n, "collapse_recursion", json_true());
	return n;
}

#define KNOWN "tid, comm, time, focus, under, ignore, hide, show_from, merge, collapse_recursion"

/* The tool's schema says only "an object": each key and its type here. */
static enum pl_err check_keys(json_t *view, struct pl_error *err)
{
	static const struct { const char *key; json_type type; } known[] = {
		{"tid", JSON_INTEGER}, {"comm", JSON_STRING}, {"time", JSON_OBJECT},
		{"collapse_recursion", JSON_TRUE},
	};
	const char *key;
	json_t *val;

	json_object_foreach(view, key, val) {
		bool found = false, typed = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(*known) && !found; i++)
			if ((found = strcmp(key, known[i].key) == 0))
				typed = known[i].type == JSON_TRUE ? json_is_boolean(val) : json_typeof(val) == known[i].type;
		for (int f = 0; f < PL_TF_NFIELDS && !found; f++)
			if ((found = strcmp(key, pl_tf_field_names[f]) == 0))   /* no NUL cutting it short */
				typed = json_is_string(val) && strlen(json_string_value(val)) == json_string_length(val);
		if (!found)
			return pl_fail(err, PL_ERR_USAGE, "remove it; a view knows " KNOWN, "unknown view key '%s'", key);
		if (!typed)
			return pl_fail(err, PL_ERR_USAGE, "tid is an integer, time an object, collapse_recursion a "
				       "boolean, the others strings (without NUL)", "view.%s has the wrong type", key);
	}
	if (json_is_string(json_object_get(view, "comm")) &&
	    (json_string_length(json_object_get(view, "comm")) == 0 ||
	     json_string_length(json_object_get(view, "comm")) > 64))
		return pl_fail(err, PL_ERR_USAGE, "pass a comm as list_threads shows it (1 to 64 bytes)",
			       "view.comm is empty or too long");
	return PL_OK;
}

enum pl_err tool_view_init(struct tool_view *v, json_t *args, bool older_threads, struct pl_error *err)
{
	json_t *view = json_object_get(args, "view"), *pat;
	enum pl_err rc;

	memset(v, 0, sizeof(*v));
	pl_transform_init(&v->tf);
	v->older_threads = older_threads;
	v->thread_args = json_object();
	if (view && !json_is_object(view))
		return pl_fail(err, PL_ERR_USAGE, "pass view as an object, e.g. {\"focus\": \"^parse\"}",
			       "view is not an object");
	if ((rc = check_keys(view, err)) ||
	    (rc = thread_part(view, older_threads ? args : NULL, "tid", v->thread_args, &v->top_tid, err)) ||
	    (rc = thread_part(view, older_threads ? args : NULL, "comm", v->thread_args, &v->top_comm, err)))
		return rc;
	if (json_object_get(view, "time") && (rc = parse_time(v, json_object_get(view, "time"), err)))
		return rc;
	for (int f = 0; f < PL_TF_NFIELDS; f++) {
		if (!(pat = json_object_get(view, pl_tf_field_names[f])))
			continue;
		if ((rc = pl_transform_set(&v->tf, (enum pl_tf_field)f, json_string_value(pat), err)))
			return rc;
	}
	v->tf.collapse_recursion = json_is_true(json_object_get(view, "collapse_recursion"));
	if (v->tf.given[PL_TF_UNDER] && !v->tf.given[PL_TF_FOCUS])
		return pl_fail(err, PL_ERR_USAGE, "pass view.focus with view.under: under names the callers of the "
			       "focused function", "view.under is given without view.focus");
	tool_thread_filter_init(&v->threads, v->thread_args);
	v->active = v->threads.active || v->has_time || pl_transform_active(&v->tf);
	v->normalized = normalize(v, view);
	v->key = json_dumps(v->normalized, JSON_COMPACT | JSON_SORT_KEYS);
	return PL_OK;
}

void tool_view_release(struct tool_view *v)
{
	pl_transform_release(&v->tf);
	json_decref(v->thread_args);
	json_decref(v->normalized);
	free(v->key);
	free(v->event);
	memset(v, 0, sizeof(*v));
}

void tool_view_prepare(const struct tool_view *v, struct pl_profile *p)
{
	p->want_timed = v->has_time;
}

/* The time window: the stack weights rebuilt from the samples inside it
 * (time_window.h); an open end is the end of the recording. */
static enum pl_err view_time(struct tool_view *v, struct pl_profile *p, uint32_t event,
			     struct pl_error *err)
{
	(void)event;
	if (!v->has_time)
		return PL_OK;
	if (v->time_absolute)
		return pl_profile_time_window_abs(p, v->from_ns, v->to_ns, &v->time_st, err);
	return pl_profile_time_window(p, v->from_seconds, isfinite(v->to_seconds) ? v->to_seconds : 9.0e9,
				      &v->time_st, err);
}

/* "S.NNNNNNNNN" as perf prints a time, for perf report --time. */
static void perf_time(char *out, size_t cap, uint64_t ns)
{
	snprintf(out, cap, "%llu.%09llu", (unsigned long long)(ns / 1000000000ull),
		 (unsigned long long)(ns % 1000000000ull));
}

/* The window as the recording's clock says it, and the samples in none. */
static json_t *time_window_json(const struct tool_view *v)
{
	char from[32], to[32], both[72];

	perf_time(from, sizeof(from), v->time_st.from_ns);
	perf_time(to, sizeof(to), v->time_st.to_ns);
	snprintf(both, sizeof(both), "%s,%s", from, to);
	/* After the first sample (a perf_time may start before it). */
	double from_s = v->time_st.from_ns > v->time_st.first_ns
		? (double)(v->time_st.from_ns - v->time_st.first_ns) / 1e9 : 0.0;
	double to_s = v->time_st.to_ns > v->time_st.first_ns
		? (double)(v->time_st.to_ns - v->time_st.first_ns) / 1e9 : 0.0;

	if (v->time_absolute && v->to_ns == UINT64_MAX)
		snprintf(both, sizeof(both), "%s,", from);
	return json_pack("{s:f,s:f,s:s,s:I}", "from_seconds", v->time_absolute ? from_s : v->from_seconds,
			 "to_seconds", to_s, "perf_time", both,
			 "timeless_samples", (json_int_t)(v->time_st.past_cap + v->time_st.untimed));
}

static struct pl_amount event_weight(const struct pl_profile *p, uint32_t event)
{
	struct pl_amount a = {0, 0};

	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		if (w) {
			a.samples += w->samples;
			a.period += w->period;
		}
	}
	return a;
}

/* Nothing kept: which steps took the samples. */
static enum pl_err kept_nothing(const struct tool_view *v, struct pl_error *err)
{
	const struct pl_transform_stats *st = &v->st;
	struct pl_buf b = {0};
	enum pl_err rc;

	if (v->tf.given[PL_TF_FOCUS] && !st->matched[PL_TF_FOCUS]) {
		rc = pl_fail(err, PL_ERR_USAGE, "list_hotspots without view.focus names the functions there are; "
			     "a pattern matches anywhere in a full symbol",
			     "view.focus '%s' matches no function of the %llu samples of this event%s%s",
			     json_string_value(json_object_get(v->normalized, "focus")),
			     (unsigned long long)st->before.samples, v->threads.active ? " in these threads" : "",
			     v->tf.given[PL_TF_IGNORE] ? " that ignore left" : "");
		return rc;
	}
	for (int f = 0; f < PL_TF_NFIELDS; f++)
		if (st->dropped[f].samples)
			pl_buf_addf(&b, "%s%s dropped %llu", b.len ? ", " : "", pl_tf_field_names[f],
				    (unsigned long long)st->dropped[f].samples);
	rc = pl_fail(err, PL_ERR_USAGE, "loosen the view: list_hotspots without it names the functions there are",
		     "the view keeps none of the %llu samples of this event (%s)",
		     (unsigned long long)st->before.samples, b.len ? b.data : "none to keep");
	pl_buf_release(&b);
	return rc;
}

enum pl_err tool_view_apply(struct tool_view *v, struct pl_profile *p, uint32_t event,
			    struct pl_error *err)
{
	enum pl_err rc;

	if (!v->active)
		return PL_OK;
	free(v->event);
	v->event = pl_xstrdup(pl_str(p, p->events[event].name));
	v->event_total = event_weight(p, event);
	if ((rc = tool_thread_filter_apply(&v->threads, p, event, err)) ||
	    (rc = view_time(v, p, event, err)) ||
	    (rc = pl_transform_apply(&v->tf, p, event, &v->st, err)))
		return rc;
	if (!v->st.kept.samples)
		return kept_nothing(v, err);
	/* what a file's header or a subtitle counts */
	p->events[event].samples = v->st.kept.samples;
	p->events[event].period = v->st.kept.period;
	return PL_OK;
}

void tool_view_query(const struct tool_view *v, struct pl_buf *query)
{
	if (v->active)
		pl_buf_addf(query, "|view=%s", v->key);
}

void tool_view_file_suffix(const struct tool_view *v, struct pl_buf *path)
{
	char hex[65];

	if (!v->active)
		return;
	pl_sha256_hex(v->key, strlen(v->key), hex);
	pl_buf_addf(path, ".view-%.12s", hex);
}

/* The tools whose schema takes a view. */
static const char *const viewed_tools[] = {
	"list_hotspots", "get_call_paths", "get_hotspot", "list_threads", "export_profile",
	"source_context", "classify_hotspots",
};

static bool takes_view(const char *tool)
{
	for (size_t i = 0; tool && i < sizeof(viewed_tools) / sizeof(*viewed_tools); i++)
		if (strcmp(tool, viewed_tools[i]) == 0)
			return true;
	return false;
}

/* A step's arguments with the view.  On the tools with the older tid and
 * comm, those the call gave at the top stay there, and a step's own ones
 * go into the view otherwise; a view left empty is left out. */
static void step_with_view(const struct tool_view *v, const char *tool, json_t *args)
{
	static const char *const thread_keys[] = {"tid", "comm"};
	const bool at_top[] = {v->top_tid, v->top_comm};
	bool older = strcmp(tool, "list_hotspots") == 0 || strcmp(tool, "get_call_paths") == 0 ||
		     strcmp(tool, "get_hotspot") == 0;
	json_t *view = json_copy(v->normalized);

	for (size_t i = 0; older && i < 2; i++) {
		json_t *in_view = json_object_get(view, thread_keys[i]), *in_step = json_object_get(args, thread_keys[i]);
		if (at_top[i] && in_view) {
			if (!in_step)
				json_object_set(args, thread_keys[i], in_view);
			json_object_del(view, thread_keys[i]);
		} else if (!at_top[i] && in_step) {
			json_object_set(view, thread_keys[i], in_step);
			json_object_del(args, thread_keys[i]);
		}
	}
	if (json_object_size(view)) {
		json_object_set_new(args, "view", view);
		/* a view is of one event: a step that names none (classify_hotspots'
		 * default is every event) gets the one the view answered */
		if (v->event && !json_object_get(args, "event"))
			json_object_set_new(args, "event", json_string(v->event));
	} else {
		json_object_del(args, "view");
		json_decref(view);
	}
}

json_t *tool_view_args(const struct tool_view *v, json_t *args)
{
	if (v->active)
		step_with_view(v, "list_hotspots", args);
	return args;
}

void tool_view_steps(const struct tool_view *v, json_t *result, const char *id)
{
	json_t *args = json_object_get(result, "arguments"), *x;
	const char *tool = json_string_value(json_object_get(result, "tool"));
	const char *step_id = json_string_value(json_object_get(args, "analysis_id"));
	const char *key;
	size_t i;

	if (!v->active)
		return;
	if (json_is_object(args) && takes_view(tool) && step_id && strcmp(step_id, id) == 0)
		step_with_view(v, tool, args);
	if (json_is_object(result))
		json_object_foreach(result, key, x)
			tool_view_steps(v, x, id);
	else if (json_is_array(result))
		json_array_foreach(result, i, x)
			tool_view_steps(v, x, id);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? round((double)part * 100.0 / (double)whole * 1e4) / 1e4 : 0.0;
}

json_t *tool_view_json(const struct tool_view *v)
{
	json_t *j, *unmatched = json_array();

	if (!v->active) {
		json_decref(unmatched);
		return NULL;
	}
	for (int f = 0; f < PL_TF_NFIELDS; f++)
		if (v->tf.given[f] && !v->st.matched[f])
			json_array_append_new(unmatched, json_string(pl_tf_field_names[f]));
	j = json_pack("{s:O,s:I,s:I,s:f,s:f}", "applied", v->normalized,
		"samples", (json_int_t)v->st.kept.samples, "period", (json_int_t)v->st.kept.period,
		"percent_of_samples", share(v->st.kept.samples, v->event_total.samples),
		"percent_of_period", share(v->st.kept.period, v->event_total.period));
	if (json_array_size(unmatched))
		json_object_set(j, "unmatched", unmatched);
	if (v->st.stacks_rewritten)
		json_object_set_new(j, "stacks_rewritten", json_integer((json_int_t)v->st.stacks_rewritten));
	if (v->has_time)
		json_object_set_new(j, "time_window", time_window_json(v));
	if (v->st.caller_checks_dropped)
		json_object_set_new(j, "note", json_string("the view rewrote stacks: the frame-pointer caller checks, "
							   "made on the stacks as recorded, are left out"));
	json_decref(unmatched);
	return j;
}

void tool_view_describe(const struct tool_view *v, json_t *result)
{
	if (!v->active)
		return;
	json_object_set_new(result, "view", tool_view_json(v));
	if (v->threads.active && v->older_threads)
		json_object_set_new(result, "thread_filter", tool_thread_filter_json(&v->threads));
}
