/* sched_json.c - the per-task scheduling table as JSON (sched_json.h).
 *
 * Tasks are ordered by the time accounted to them (run + wait),
 * then tid, those with a preferred comm (the collected target's) first,
 * so the same input gives the same bytes; every figure is in ns, as the tracepoints' times
 * are.  What could not be counted is counted: samples whose fields were
 * unreadable and intervals still open when the recording ended.  A task
 * no sample of its own named (neither pid nor comm: seen only in other
 * tasks' switch and wakeup fields), or one given more run time than the
 * recording lasted (a task runs on one CPU at a time), is no row: both
 * are counted under tasks_left_out with why.
 */
#include <stdlib.h>
#include <string.h>

#include "sched_json.h"
#include "profile/sched.h"

struct ranked {
	const struct pl_sched_task *k;
	bool preferred;
	uint64_t total;
};

static int by_time(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->preferred != y->preferred)
		return x->preferred ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return (x->k->tid > y->k->tid) - (x->k->tid < y->k->tid);
}

static json_t *task_json(const struct pl_profile *p, const struct pl_sched_task *k)
{
	return json_pack("{s:o,s:I,s:o,s:I,s:I,s:I,s:I,s:I}",
		"pid", k->pid >= 0 ? json_integer(k->pid) : json_null(), "tid", (json_int_t)k->tid,
		"comm", k->comm != PL_NOID ? json_string(pl_str(p, k->comm)) : json_null(),
		"run_ns", (json_int_t)k->run_ns, "wait_ns", (json_int_t)k->wait_ns,
		"sch_delay_ns", (json_int_t)k->delay_ns, "max_sch_delay_ns", (json_int_t)k->max_delay_ns,
		"switches_in", (json_int_t)k->switches_in);
}

json_t *pl_sched_json(const struct pl_profile *p, size_t limit, const char *prefer_comm)
{
	const struct pl_sched *s = p->sched;
	struct ranked *order;
	json_t *tasks;
	size_t n, kept = 0, unnamed = 0, impossible = 0;
	uint64_t window;

	if (!s)
		return NULL;
	window = s->last_ns - s->first_ns;
	order = pl_xcalloc(s->ntasks + 1, sizeof(*order));
	for (size_t i = 0; i < s->ntasks; i++) {
		const struct pl_sched_task *k = &s->tasks[i];
		if (k->pid < 0 && k->comm == PL_NOID) {
			unnamed++;
			continue;
		}
		if (k->run_ns > window) {
			impossible++;
			continue;
		}
		order[kept++] = (struct ranked){k, prefer_comm && k->comm != PL_NOID &&
						strcmp(pl_str(p, k->comm), prefer_comm) == 0,
						k->run_ns + k->wait_ns};
	}
	qsort(order, kept, sizeof(*order), by_time);
	n = limit && limit < kept ? limit : kept;
	tasks = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(tasks, task_json(p, order[i].k));
	free(order);
	return json_pack("{s:s,s:s,s:I,s:I,s:I,s:o,s:{s:I,s:I,s:s},s:I,s:I,s:I,s:I}",
		"unit", "ns",
		"split", "as perf sched timehist counts: run from switch-in to switch-out; wait from switch-out to the next switch-in (all time off the CPU); sch_delay, the part of wait from the wakeup (or a preempted switch-out) to the switch-in",
		"window_ns", (json_int_t)window,
		"tasks_total", (json_int_t)kept, "tasks_shown", (json_int_t)n, "tasks", tasks,
		"tasks_left_out", "unnamed", (json_int_t)unnamed, "run_past_window", (json_int_t)impossible,
		"why", "unnamed: tasks no sample of their own named (no pid, no comm), seen only in other tasks' "
		       "switch and wakeup fields, whose times are bounds from those events, not measurements; "
		       "run_past_window: tasks given more run time than the recording lasted, which one task cannot "
		       "have (it runs on one CPU at a time)",
		"switches", (json_int_t)s->switches, "wakeups", (json_int_t)s->wakeups,
		"unreadable_samples", (json_int_t)s->unreadable,
		"open_intervals_left_out", (json_int_t)pl_sched_open_intervals(s));
}
