/* thread_filter.c - tid and comm filters over a loaded profile
 * (thread_filter.h).
 *
 * Filtering unlinks the weight chain of every stack whose thread does not
 * match: pl_stack_weight then finds nothing for it, so every view skips it
 * without knowing about filters.  The profile is the handler's own copy,
 * loaded from the stack table for this call.
 */
#include "thread_filter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAMED_MAX 12   /* threads named in a "no such thread" error */

void tool_thread_filter_init(struct tool_thread_filter *f, json_t *args)
{
	json_t *tid = json_object_get(args, "tid");

	memset(f, 0, sizeof(*f));
	f->has_tid = json_is_integer(tid);
	f->tid = json_integer_value(tid);
	f->comm = json_string_value(json_object_get(args, "comm"));
	f->active = f->has_tid || f->comm;
}

static bool thread_matches(const struct tool_thread_filter *f, const struct pl_profile *p,
			   const struct pl_thread *t)
{
	if (f->has_tid && t->tid != f->tid)
		return false;
	return !f->comm || (t->comm != PL_NOID && strcmp(pl_str(p, t->comm), f->comm) == 0);
}

/* The error when nothing matched: the threads that have weight. */
static enum pl_err no_thread(const struct tool_thread_filter *f, const struct pl_profile *p,
			     const bool *weighted, struct pl_error *err)
{
	struct pl_buf b = {0}, want = {0};
	size_t named = 0;
	enum pl_err rc;

	for (uint32_t t = 0; t < pl_nthreads(p) && named < NAMED_MAX; t++) {
		const struct pl_thread *th = &p->threads[t];
		if (!weighted[t])
			continue;
		pl_buf_addf(&b, "%s%lld '%s'", named++ ? ", " : "", (long long)th->tid,
			    th->comm == PL_NOID ? "?" : pl_str(p, th->comm));
	}
	if (f->has_tid)
		pl_buf_addf(&want, "tid %lld", (long long)f->tid);
	if (f->comm)
		pl_buf_addf(&want, "%scomm '%s'", f->has_tid ? " and " : "", f->comm);
	rc = pl_fail(err, PL_ERR_USAGE, "pass a tid or comm that list_threads shows for this event",
		     "no thread with %s has samples of this event (threads: %s%s)", want.data,
		     named ? b.data : "none", named == NAMED_MAX ? ", ..." : "");
	pl_buf_release(&b);
	pl_buf_release(&want);
	return rc;
}

enum pl_err tool_thread_filter_apply(struct tool_thread_filter *f, struct pl_profile *p,
				     uint32_t event, struct pl_error *err)
{
	size_t nt = pl_nthreads(p);
	bool *keep = pl_xcalloc(nt + 1, 1), *weighted = pl_xcalloc(nt + 1, 1), *counted = pl_xcalloc(nt + 1, 1);
	enum pl_err rc = PL_OK;

	if (!f->active)
		goto out;
	for (uint32_t t = 0; t < nt; t++)
		keep[t] = thread_matches(f, p, &p->threads[t]);
	for (uint32_t s = 0; s < pl_nstacks(p); s++) {
		struct pl_stack *st = &p->stacks[s];
		const struct pl_weight *w = pl_stack_weight(p, s, event);
		if (!w)
			continue;
		weighted[st->thread] = true;
		f->event_total.samples += w->samples;
		f->event_total.period += w->period;
		if (!keep[st->thread]) {
			st->first_weight = PL_NOID;
			continue;
		}
		f->kept.samples += w->samples;
		f->kept.period += w->period;
		f->matched += !counted[st->thread];
		counted[st->thread] = true;
	}
	if (f->matched == 0)
		rc = no_thread(f, p, weighted, err);
out:
	free(keep);
	free(weighted);
	free(counted);
	return rc;
}

void tool_thread_filter_query(const struct tool_thread_filter *f, struct pl_buf *query)
{
	if (!f->active)
		return;
	pl_buf_addf(query, "|tid=%lld|comm=%s", f->has_tid ? (long long)f->tid : -1LL, f->comm ? f->comm : "");
}

void tool_thread_filter_call(const struct tool_thread_filter *f, struct pl_buf *call)
{
	if (f->has_tid)
		pl_buf_addf(call, ", tid=%lld", (long long)f->tid);
	if (f->comm) {
		json_t *s = json_string(f->comm);
		char *q = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
		pl_buf_addf(call, ", comm=%s", q ? q : "\"\"");
		free(q);
		json_decref(s);
	}
}

json_t *tool_thread_filter_json(const struct tool_thread_filter *f)
{
	double pct = f->event_total.period ? (double)f->kept.period * 100.0 / (double)f->event_total.period : 0.0;

	if (!f->active)
		return NULL;
	return json_pack("{s:o,s:o,s:I,s:I,s:I,s:f}",
		"tid", f->has_tid ? json_integer(f->tid) : json_null(),
		"comm", f->comm ? json_string(f->comm) : json_null(),
		"threads", (json_int_t)f->matched, "samples", (json_int_t)f->kept.samples,
		"period", (json_int_t)f->kept.period, "percent_of_event", round(pct * 1e4) / 1e4);
}

json_t *tool_thread_filter_args(const struct tool_thread_filter *f, json_t *args)
{
	if (f->has_tid)
		json_object_set_new(args, "tid", json_integer(f->tid));
	if (f->comm)
		json_object_set_new(args, "comm", json_string(f->comm));
	return args;
}
