/* sched.c - per-task scheduling times from sched tracepoints (sched.h).
 *
 * Each task is in one of three states since a time: running (switched
 * in), waiting (switched out not runnable) or runnable (woken, or
 * preempted).  An event moves it to the next state and adds the time
 * since to the bucket of the state it leaves.  Tasks are found by tid
 * through an open-addressed table; their order is that of first
 * appearance, so the same input gives the same table.
 */
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "sched.h"

enum { ST_UNKNOWN = 0, ST_RUNNING, ST_WAITING, ST_RUNNABLE };

static size_t slot_of(const struct pl_sched *s, int64_t tid)
{
	uint64_t h = (uint64_t)tid * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & s->slots_mask;

	while (s->slots[i] && s->tasks[s->slots[i] - 1].tid != tid)
		i = (i + 1) & s->slots_mask;
	return i;
}

static void grow_slots(struct pl_sched *s)
{
	size_t cap = s->slots_mask ? (s->slots_mask + 1) * 2 : 64;

	free(s->slots);
	s->slots = pl_xcalloc(cap, sizeof(*s->slots));
	s->slots_mask = cap - 1;
	for (size_t k = 0; k < s->ntasks; k++)
		s->slots[slot_of(s, s->tasks[k].tid)] = (uint32_t)k + 1;
}

static struct pl_sched_task *task(struct pl_sched *s, int64_t tid, uint64_t t)
{
	size_t i;

	if ((s->ntasks + 1) * 2 > s->slots_mask + 1)
		grow_slots(s);
	i = slot_of(s, tid);
	if (!s->slots[i]) {
		PL_GROW(s->tasks, s->tasks_cap, s->ntasks + 1);
		s->tasks[s->ntasks] = (struct pl_sched_task){.pid = -1, .tid = tid, .comm = PL_NOID,
							      .since = t};
		s->slots[i] = (uint32_t)++s->ntasks;
	}
	return &s->tasks[s->slots[i] - 1];
}

/* The task enters `state` at t: the time since its last change goes to
 * the bucket of the state it leaves. */
static void move(struct pl_sched_task *k, uint8_t state, uint64_t t)
{
	uint64_t dt = t > k->since ? t - k->since : 0;

	if (k->state == ST_RUNNING)
		k->run_ns += dt;
	else if (k->state == ST_WAITING)
		k->wait_ns += dt;
	else if (k->state == ST_RUNNABLE) {
		k->wait_ns += dt;
		k->delay_ns += dt;
		if (dt > k->max_delay_ns)
			k->max_delay_ns = dt;
	}
	if (state == ST_RUNNING && k->state != ST_RUNNING)
		k->switches_in++;
	k->state = state;
	k->since = t;
}

/* "key=VALUE" in the tracepoint text, VALUE up to the next blank. */
static bool field(const char *s, size_t n, const char *key, const char **v, size_t *vn)
{
	size_t kn = strlen(key);

	for (size_t i = 0; i + kn <= n; i++) {
		if ((i && s[i - 1] != ' ') || memcmp(s + i, key, kn) != 0)
			continue;
		*v = s + i + kn;
		for (*vn = 0; i + kn + *vn < n && (*v)[*vn] != ' '; (*vn)++)
			;
		return *vn > 0;
	}
	return false;
}

static bool field_tid(const char *s, size_t n, const char *key, int64_t *tid)
{
	const char *v;
	size_t vn;
	uint64_t x;

	if (!field(s, n, key, &v, &vn) || !pl_parse_u64(v, vn, &x))
		return false;
	*tid = (int64_t)x;
	return true;
}

static bool is_event(const char *event, size_t en, const char *name)
{
	return strlen(name) == en && memcmp(event, name, en) == 0;
}

static void on_switch(struct pl_sched *s, uint64_t t, const char *trace, size_t n)
{
	const char *state;
	size_t sn;
	int64_t prev, next;

	if (!field_tid(trace, n, "prev_pid=", &prev) || !field_tid(trace, n, "next_pid=", &next) ||
	    !field(trace, n, "prev_state=", &state, &sn)) {
		s->unreadable++;
		return;
	}
	s->switches++;
	if (prev)
		move(task(s, prev, t), state[0] == 'R' ? ST_RUNNABLE : ST_WAITING, t);
	if (next)
		move(task(s, next, t), ST_RUNNING, t);
}

static void on_wakeup(struct pl_sched *s, uint64_t t, const char *trace, size_t n)
{
	int64_t tid;
	struct pl_sched_task *k;

	if (!field_tid(trace, n, "pid=", &tid)) {
		s->unreadable++;
		return;
	}
	s->wakeups++;
	k = task(s, tid, t);
	/* A wakeup of a task already running or runnable changes nothing. */
	if (tid && (k->state == ST_WAITING || k->state == ST_UNKNOWN))
		move(k, ST_RUNNABLE, t);
}

void pl_sched_note(struct pl_profile *p, const char *event, size_t en, int64_t pid,
		   int64_t tid, uint32_t comm, uint64_t t_ns, const char *trace, size_t n)
{
	struct pl_sched *s = p->sched;

	if (!s)
		s = p->sched = pl_xcalloc(1, sizeof(*s));
	if (!s->first_ns || t_ns < s->first_ns)
		s->first_ns = t_ns;
	if (t_ns > s->last_ns)
		s->last_ns = t_ns;
	if (is_event(event, en, "sched:sched_switch"))
		on_switch(s, t_ns, trace, n);
	else if (is_event(event, en, "sched:sched_wakeup") || is_event(event, en, "sched:sched_waking") ||
		 is_event(event, en, "sched:sched_wakeup_new"))
		on_wakeup(s, t_ns, trace, n);
	/* The sample's own task: its pid and comm, as the header gives them. */
	if (tid > 0) {
		struct pl_sched_task *k = task(s, tid, t_ns);
		if (pid >= 0)
			k->pid = pid;
		k->comm = comm;
		/* A task seen on the CPU runs from there: first seen, or its
		 * switch-in lost (perf drops events under load). */
		if (k->state != ST_RUNNING && !is_event(event, en, "sched:sched_switch"))
			move(k, ST_RUNNING, t_ns);
	}
}

size_t pl_sched_open_intervals(const struct pl_sched *s)
{
	size_t open = 0;

	for (size_t i = 0; s && i < s->ntasks; i++)
		open += s->tasks[i].state != ST_UNKNOWN;
	return open;
}

void pl_sched_free(struct pl_sched *s)
{
	if (!s)
		return;
	free(s->tasks);
	free(s->slots);
	free(s);
}
