/* sleepspin.c - a busy wait on a zero sleep: the waiter calls nanosleep
 * or clock_nanosleep (argv[1]: nanosleep, clock) with a zero interval in
 * a loop until the worker is done.  The thread's timer slack is set to
 * 1 ns (as a SCHED_FIFO thread has it 0), so each call returns at once
 * instead of sleeping the default 50 us slack: the loop spins.
 * classify_hotspots must give it busy_wait.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "common.h"

static const char *how = "nanosleep";

__attribute__((noinline)) static void *wait_for_worker(void *arg)
{
	struct timespec zero = {0, 0};

	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	while (!atomic_load(&done)) {
		if (strcmp(how, "clock") == 0)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &zero, NULL);
		else
			nanosleep(&zero, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t waiter;

	if (argc > 1)
		how = argv[1];
	pthread_create(&waiter, NULL, wait_for_worker, NULL);
	work();
	pthread_join(waiter, NULL);
	printf("%lu\n", sink & 1);
	return 0;
}
