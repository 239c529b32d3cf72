/* contend.c - three threads contending on one pthread mutex, then the
 * program's own metric on stdout and a chosen end.
 *
 * Each worker takes the mutex 2,000 times and holds it for ~50 us of
 * work, so the others sleep on it (futex_wait in the kernel: a user-space
 * lock, invisible to perf lock).  Then main prints "ops_per_second N" and
 * "done" on stderr, and ends with exit status argv[1] (default 0), or by
 * SIGSEGV when argv[2] is "segv".
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void critical(void)
{
	double end = now() + 50e-6;
	while (now() < end)
		shared++;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&lock);
		critical();
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	double t0 = now();

	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("ops_per_second %.0f\n", 6000 / (now() - t0));
	fprintf(stderr, "done\n");
	fflush(NULL);
	if (argc > 2 && strcmp(argv[2], "segv") == 0)
		raise(SIGSEGV);
	return argc > 1 ? atoi(argv[1]) : 0;
}
