/* compute.c - a pure compute loop: no allocation, no copies, no system
 * calls, no locks.  classify_hotspots must give it no hotspot candidate
 * but program_code, whose figure is mix()'s self share (test_classify.sh).  mix() ends in a real call so that gcc keeps its
 * frame and the frame-pointer unwinder keeps main above it.
 */
#include <stdio.h>
#include <time.h>

#define BUDGET_S 1.5  /* seconds of CPU time: about 1,500 samples at 999 Hz */

static volatile unsigned long sink, calls;

/* Process CPU time in seconds: the loop runs for a CPU-time budget, so a
 * busy machine changes the wall time, not the number of samples. */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long checkpoint(unsigned long x)
{
	calls++;
	return x;
}

__attribute__((noinline)) unsigned long mix(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return checkpoint(x);
}

int main(void)
{
	unsigned long x = 1;

	while (cpu_seconds() < BUDGET_S)
		for (int r = 0; r < 64; r++)
			x = mix(5000, x);
	sink = x;
	printf("%lu\n", x & 1);
	return 0;
}
