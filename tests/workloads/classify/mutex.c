/* mutex.c - two threads taking one pthread mutex around a short critical
 * section: the samples are in locking (pthread_mutex_lock, __lll_lock_wait,
 * futex), the synchronization candidate of classify_hotspots; recorded
 * with sched:sched_switch, its threads block on the futex (lock_wait).
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifndef BUDGET_S  /* -DBUDGET_S=0.3: a shorter run (test_crawl_steps runs it often) */
#define BUDGET_S 1.5  /* seconds of CPU time: about 1,500 samples at 999 Hz */
#endif

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared, sink;

/* Process CPU time in seconds: the loop runs for a CPU-time budget, so a
 * busy machine changes the wall time, not the number of samples. */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void critical(void)
{
	for (int i = 0; i < 8; i++)
		shared = shared * 31 + (unsigned long)i;
}

static void *worker(void *arg)
{
	(void)arg;
	while (cpu_seconds() < BUDGET_S)
		for (int r = 0; r < 4096; r++) {
			pthread_mutex_lock(&lock);
			critical();
			pthread_mutex_unlock(&lock);
		}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sink = shared;
	printf("%lu\n", shared & 1);
	return 0;
}
