/* common.h - shared by the busy-wait workloads: a worker that computes
 * for a CPU-time budget of its own thread, and a flag the waiter watches.
 * Each workload's waiter waits for the worker in its own way (the
 * shapes test_classify_busy.sh records). */
#ifndef BUSYWAIT_COMMON_H
#define BUSYWAIT_COMMON_H

#include <stdatomic.h>
#include <time.h>

#define BUDGET_S 1.5  /* seconds of the worker's CPU time */

static atomic_int done;
static volatile unsigned long sink;

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long mix(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

/* The worker: BUDGET_S seconds of its own CPU, then done. */
__attribute__((noinline, unused)) static void work(void)
{
	unsigned long x = 1;

	while (thread_cpu_seconds() < BUDGET_S)
		x = mix(100000, x);
	sink = x;
	atomic_store(&done, 1);
}

#endif
