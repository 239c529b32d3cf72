/* yield.c - a busy wait: one thread computes for a CPU-time budget while
 * another waits for it by spinning on sched_yield (no sleep, no lock).
 * classify_hotspots must give it busy_wait (the spinner's stacks), and
 * not system_calls, whose advice (batching, a vDSO call) does not apply
 * to a yield loop (test_classify.sh).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define BUDGET_S 1.5  /* seconds of CPU time (both threads): about 1,500 samples at 999 Hz */

static atomic_int done;
static volatile unsigned long sink;

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long mix(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

/* The waiter: spins until the worker is done, yielding each turn. */
__attribute__((noinline)) static void *wait_for_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&done))
		sched_yield();
	return NULL;
}

int main(void)
{
	pthread_t waiter;
	unsigned long x = 1;

	pthread_create(&waiter, NULL, wait_for_worker, NULL);
	while (cpu_seconds() < BUDGET_S)
		x = mix(100000, x);
	atomic_store(&done, 1);
	pthread_join(waiter, NULL);
	sink = x;
	printf("%lu\n", x & 1);
	return 0;
}
