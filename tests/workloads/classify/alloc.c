/* alloc.c - malloc/free churn of mixed sizes: most samples land in the
 * allocator (malloc, _int_malloc, _int_free...), the memory_allocation
 * candidate of classify_hotspots (test_classify.sh).
 */
#include <stdio.h>
#include <time.h>
#include <stdlib.h>

#define BUDGET_S 1.5  /* seconds of CPU time: about 1,500 samples at 999 Hz */

static volatile unsigned long sink;

/* Process CPU time in seconds: the loop runs for a CPU-time budget, so a
 * busy machine changes the wall time, not the number of samples. */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long churn(unsigned long seed)
{
	void *p[64];
	unsigned long t = 0;

	for (int i = 0; i < 64; i++) {
		size_t n = 16 + ((seed + (unsigned long)i * 2654435761UL) % 4000);
		p[i] = malloc(n);
		if (!p[i])
			abort();
		((char *)p[i])[0] = (char)i;
	}
	for (int i = 0; i < 64; i++)
		t += ((unsigned char *)p[(i * 7) & 63])[0];
	for (int i = 0; i < 64; i++)
		free(p[(i * 7) & 63]);
	return t;
}

int main(void)
{
	unsigned long t = 0;

	for (unsigned long r = 0; cpu_seconds() < BUDGET_S; r += 64)
		for (unsigned long k = 0; k < 64; k++)
			t += churn(r + k);
	sink = t;
	printf("%lu\n", t & 1);
	return 0;
}
