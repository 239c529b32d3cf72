/* list_threads.c - the list_threads tool: one page of an event's threads,
 * heaviest first, each with what it does.
 *
 * The order and the weights come from the analysis summary (sorted there);
 * what each thread of the page does (its heaviest functions, the rules
 * whose functions cover its weight, its blocked time by task state on
 * off-CPU data) is read from the stack table (evidence/threads.h).  On a
 * CPU-time event, a thread with a tiny fraction of the busiest thread's
 * samples is marked probably_blocked: on-CPU samples cannot show where it
 * waits, and the answer names the off-CPU collection that would.  Under a
 * view (view.h) the order and the weights are the view's, from the stack
 * table.
 */
#include "registry.h"
#include "tools/lib/view.h"
#include "store/artifact.h"
#include "evidence/classify.h"
#include "evidence/threads.h"

#include <stdlib.h>
#include <string.h>

/* A thread is nearly idle below 1/IDLE_RATIO of the busiest thread's
 * samples, once the busiest has IDLE_MIN_BUSY samples (fewer say nothing). */
#define IDLE_RATIO 20
#define IDLE_MIN_BUSY 100

/* What a page needs besides the summary. */
struct page_facts {
	bool cpu_time;            /* the event measures CPU time */
	uint64_t busiest;         /* samples of the heaviest thread */
	json_t *described;        /* pl_threads_describe of the page, or NULL */
	size_t blocked;           /* threads marked probably_blocked */
};

static json_t *thread_json(json_t *threads, json_t *entry, size_t rank, json_t *described,
			   struct page_facts *pf)
{
	json_t *t = json_array_get(threads, (size_t)json_integer_value(json_object_get(entry, "thread")));
	json_t *w = json_object_get(entry, "weight");
	json_int_t samples = json_integer_value(json_object_get(w, "samples"));
	bool idle = pf->cpu_time && pf->busiest >= IDLE_MIN_BUSY &&
		    (uint64_t)samples * IDLE_RATIO < pf->busiest;
	json_t *out = json_pack("{s:I,s:O,s:O,s:O,s:O,s:O,s:O,s:o}", "rank", (json_int_t)rank,
			 "pid", json_object_get(t, "pid"), "tid", json_object_get(t, "tid"),
			 "comm", json_object_get(t, "comm"), "samples", json_object_get(w, "samples"),
			 "period", json_object_get(w, "period"), "percent", json_object_get(w, "percent"),
			 "probably_blocked", pf->cpu_time ? json_boolean(idle) : json_null());

	pf->blocked += idle;
	json_object_update(out, described);
	return out;
}

/* The page's descriptions from the stack table, parallel to the page. */
static enum pl_err describe_page(const struct tool_ctx *ctx, const char *id, const char *event,
				 struct tool_view *view, json_t *list, size_t offset, size_t end,
				 struct page_facts *pf, struct pl_error *err)
{
	const struct pl_rules *rules;
	struct pl_classifier c;
	struct pl_profile p;
	struct pl_view v;
	uint32_t ev, *ids = pl_xmalloc((end - offset + 1) * sizeof(uint32_t));
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	tool_view_prepare(view, &p);
	p.want_timed = true;  /* the thread gates' share of one CPU (classify.c) */
	if ((rc = pl_rules_builtin(&rules, err)) ||
	    (rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) ||
	    (rc = tool_pick_event(&p, event, false, &ev, err)) ||
	    (rc = tool_view_apply(view, &p, ev, err)))
		goto out;
	for (size_t i = offset; i < end; i++)
		ids[i - offset] = (uint32_t)json_integer_value(json_object_get(json_array_get(list, i), "thread"));
	pf->cpu_time = pl_rules_event_in_set(rules, "cpu_time", event);
	pl_classifier_init(&c, rules, &p, id);
	pl_view_build(&v, &p, ev);
	pf->described = pl_threads_describe(&c, &v, ids, end - offset);
	pl_view_release(&v);
	pl_classifier_release(&c);
out:
	free(ids);
	pl_profile_release(&p);
	return rc;
}

/* Said once for the page when some thread is probably blocked. */
static json_t *blocked_hint(const struct page_facts *pf)
{
	if (!pf->blocked)
		return json_null();
	return json_pack("{s:I,s:s,s:o}", "threads", (json_int_t)pf->blocked,
		"why", "these threads ran a tiny fraction of the busiest thread's time: they were probably blocked or "
		       "sleeping for most of the capture (or lived only briefly); on-CPU samples cannot show where they wait",
		"next_step", tool_next_step("collect_profile", json_pack("{s:s}", "mode", "off_cpu"),
			"blocked time per stack and task state for the same program (give executable or pid and the "
			"authorization); then list_threads on its analysis"));
}

/* list_hotspots' arguments for thread `t`: its tid, in the view if any. */
static json_t *thread_hotspots(const char *id, const char *event, json_t *t, const struct tool_view *view)
{
	json_t *v;

	if (!view->active)
		return json_pack("{s:s,s:s,s:O}", "analysis_id", id, "event", event, "tid", json_object_get(t, "tid"));
	v = json_copy(view->normalized);
	json_object_set(v, "tid", json_object_get(t, "tid"));
	return json_pack("{s:s,s:s,s:o}", "analysis_id", id, "event", event, "view", v);
}

/* list_hotspots of the page's first two threads, the heaviest thread's
 * own candidates when the event has several threads (its causes apart
 * from the others': a writer's fsync waits, the workers' CPU), then the
 * next page. */
static json_t *next_steps(const char *id, const char *event, json_t *page, const struct tool_page *pg,
			  json_t *args, const struct tool_view *view, bool several)
{
	json_t *steps = json_array(), *t, *next;
	size_t i;

	json_array_foreach(page, i, t) {
		if (i == 2)
			break;
		if (i == 0 && several && json_is_integer(json_object_get(t, "tid")))
			json_array_append_new(steps, tool_next_step("classify_hotspots",
				thread_hotspots(id, event, t, view),
				"the candidate causes of the heaviest thread alone, apart from the other threads'"));
		json_array_append_new(steps, tool_next_step("list_hotspots", thread_hotspots(id, event, t, view),
			i == 0 ? "where the heaviest thread spends its time (shares of that thread)"
			       : "the same for the next thread"));
	}
	if ((next = tool_page_step(pg, "list_threads", args, event, "the next page of threads")))
		json_array_append_new(steps, next);
	return steps;
}

/* The event's threads under a view, heaviest first, as the summary lists
 * them ({thread, weight}) (new, in *list). */
static enum pl_err viewed_threads(const struct tool_ctx *ctx, const char *id, const char *event,
				  struct tool_view *view, json_t **list, struct pl_error *err)
{
	struct pl_profile p;
	struct pl_view v = {0};
	uint32_t ev;
	enum pl_err rc;

	pl_profile_init(&p, &ctx->limits);
	tool_view_prepare(view, &p);
	if (!(rc = pl_artifact_load_profile(ctx->artifact_root, id, &p, err)) &&
	    !(rc = tool_pick_event(&p, event, false, &ev, err)) &&
	    !(rc = tool_view_apply(view, &p, ev, err))) {
		pl_view_build(&v, &p, ev);
		pl_view_sort(&v, PL_SORT_SELF);
		*list = json_array();
		for (size_t i = 0; i < v.nthread_order; i++) {
			struct pl_amount a = v.threads[v.thread_order[i]];
			json_array_append_new(*list, json_pack("{s:I,s:{s:I,s:I,s:f}}", "thread",
				(json_int_t)v.thread_order[i], "weight", "samples", (json_int_t)a.samples,
				"period", (json_int_t)a.period, "percent", pl_percent(&v, a.period)));
		}
	}
	pl_view_release(&v);
	pl_profile_release(&p);
	return rc;
}

/* Whether the event's threads are more than one tid (a thread renamed
 * while sampled is listed once per comm, and stays one thread). */
static bool several_tids(json_t *threads, json_t *list)
{
	json_t *first = NULL, *e;
	size_t i;

	json_array_foreach(list, i, e) {
		json_t *t = json_array_get(threads, (size_t)json_integer_value(json_object_get(e, "thread")));
		json_t *tid = json_object_get(t, "tid");
		if (!first)
			first = tid;
		else if (!json_equal(first, tid))
			return true;
	}
	return false;
}

enum pl_err tool_list_threads(const struct tool_ctx *ctx, json_t *args,
			      json_t **result, struct pl_error *err)
{
	const char *id = json_string_value(json_object_get(args, "analysis_id"));
	const char *event = json_string_value(json_object_get(args, "event"));
	const char *cursor = json_string_value(json_object_get(args, "cursor"));
	size_t limit = (size_t)json_integer_value(json_object_get(args, "limit"));
	struct pl_buf query = {0};
	struct tool_page pg;
	struct page_facts pf = {0};
	struct tool_view tv;
	json_t *summary = NULL, *view, *list = NULL, *page;
	size_t vi;
	enum pl_err rc;

	if ((rc = tool_view_init(&tv, args, false, err)) ||
	    (rc = pl_artifact_load_summary(ctx->artifact_root, id, &summary, err)))
		goto out;
	if ((rc = tool_pick_summary_event(summary, event, &vi, err)))
		goto out;
	view = json_array_get(json_object_get(summary, "views"), vi);
	event = json_string_value(json_object_get(view, "event"));
	pl_buf_addf(&query, "threads|%s|%s", id, event);
	tool_view_query(&tv, &query);
	if ((rc = tool_page_open(&pg, query.data, cursor, 0, limit, err)))
		goto out;
	if (!tv.active)
		list = json_incref(json_object_get(view, "threads"));
	else if ((rc = viewed_threads(ctx, id, event, &tv, &list, err)))
		goto out;
	tool_page_bound(&pg, json_array_size(list));
	pf.busiest = (uint64_t)json_integer_value(json_object_get(json_object_get(json_array_get(list, 0), "weight"), "samples"));
	if ((rc = describe_page(ctx, id, event, &tv, list, pg.start, pg.end, &pf, err)))
		goto out;
	page = json_array();
	for (size_t i = pg.start; i < pg.end; i++)
		json_array_append_new(page, thread_json(json_object_get(summary, "threads"), json_array_get(list, i),
							i + 1, json_array_get(pf.described, i - pg.start), &pf));
	*result = json_pack("{s:s,s:s,s:O,s:o,s:o,s:o}", "analysis_id", id,
		"event", event, "unit", json_object_get(view, "unit"), "threads", page,
		"blocked_threads", blocked_hint(&pf),
		"page", tool_page_json(&pg, tool_page_call(&pg, "list_threads", args,
			json_pack("{s:s}", "event", event))));
	json_object_set_new(*result, "next_steps", next_steps(id, event, page, &pg, args, &tv,
		several_tids(json_object_get(summary, "threads"), list)));
	tool_view_describe(&tv, *result);
out:
	tool_view_release(&tv);
	json_decref(list);
	json_decref(pf.described);
	pl_buf_release(&query);
	json_decref(summary);
	return rc;
}
