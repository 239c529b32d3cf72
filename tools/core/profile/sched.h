/* sched.h - per-task run, wait and scheduling delay from the scheduler's
 * tracepoint samples (what perf sched record records).
 *
 * The perf script parser hands every sched:* sample here, with its time
 * and its tracepoint text, besides counting it as a sample of its own
 * event (tracepoints are never merged into one another).  The fields read
 * are those perf prints:
 *   sched:sched_switch   prev_pid=N prev_state=S ==> next_pid=M
 *   sched:sched_wakeup, sched:sched_waking, sched:sched_wakeup_new   pid=N
 * Time is counted as perf sched timehist counts it:
 *   run    from switch-in to switch-out
 *   wait   from switch-out to the next switch-in: all the time off the CPU,
 *          the scheduling delay included
 *   delay  the part of wait from the wakeup, or from a switch-out while
 *          runnable (R: preempted), to the switch-in
 * A task's first interval starts at its first event, so time before the
 * recording never counts; an interval still open at the end is left out
 * and counted.  The idle task (tid 0) is no task.
 *
 * Ownership: the table belongs to the profile (p->sched, NULL until a
 * sched tracepoint is seen) and is freed by pl_profile_release.
 */
#ifndef PL_SCHED_H
#define PL_SCHED_H

#include <stddef.h>
#include <stdint.h>

struct pl_profile;

struct pl_sched_task {
	int64_t pid;             /* -1 until a sample of the task says it */
	int64_t tid;
	uint32_t comm;           /* string id of the last comm seen, PL_NOID */
	uint64_t run_ns, wait_ns, delay_ns, max_delay_ns;
	uint64_t switches_in;
	uint8_t state;           /* internal: what the task is doing since `since` */
	uint64_t since;
};

struct pl_sched {
	struct pl_sched_task *tasks;   /* in order of first appearance */
	size_t ntasks, tasks_cap;
	uint32_t *slots;               /* tid hash -> task index + 1 */
	size_t slots_mask;
	uint64_t switches, wakeups, unreadable;
	uint64_t first_ns, last_ns;
};

/* One sched:* sample: `event` (n bytes, e.g. "sched:sched_switch") of the
 * task pid/tid named `comm` (string id) at t_ns, with its tracepoint text. */
void pl_sched_note(struct pl_profile *p, const char *event, size_t en, int64_t pid,
		   int64_t tid, uint32_t comm, uint64_t t_ns, const char *trace, size_t n);

/* Intervals still open at the end of the recording (not counted). */
size_t pl_sched_open_intervals(const struct pl_sched *s);

void pl_sched_free(struct pl_sched *s);

#endif
