/* threads.c - two pthreads with different hot functions: the worker runs
 * hash_work, the main thread runs sort_work.  Checks that samples from
 * both threads (same pid, different tid) land in one profile.  qsort
 * puts libc frames (msort_with_tmp.part.0, a name with dots) on top.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink1, sink2, calls;

/* A real call keeps a frame in hash_work, so worker stays in its stacks. */
__attribute__((noinline)) unsigned long checkpoint(unsigned long x)
{
	calls++;
	return x;
}

__attribute__((noinline)) unsigned long hash_work(unsigned long rounds)
{
	unsigned long h = 14695981039346656037UL;
	for (unsigned long i = 0; i < rounds; i++)
		h = (h ^ (i & 0xff)) * 1099511628211UL;
	return checkpoint(h) + 1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) unsigned long sort_work(int reps)
{
	enum { N = 20000 };
	static int v[N];
	unsigned long s = 0, seed = 7;

	for (int r = 0; r < reps; r++) {
		for (int i = 0; i < N; i++) {
			seed = seed * 6364136223846793005UL + 1;
			v[i] = (int)(seed >> 33);
		}
		qsort(v, N, sizeof(v[0]), cmp_int);
		s += (unsigned long)v[N / 2];
	}
	return s;
}

static void *worker(void *arg)
{
	(void)arg;
	sink1 = hash_work(250000000UL);
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	sink2 = sort_work(120);
	pthread_join(t, NULL);
	printf("%lu %lu\n", sink1 & 0xff, sink2 & 0xff);
	return 0;
}
