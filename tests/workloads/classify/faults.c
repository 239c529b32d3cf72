/* faults.c - maps fresh anonymous memory and touches every page, then
 * unmaps it: the kernel's page-fault path carries the samples, the
 * page_faults candidate of classify_hotspots (test_classify.sh), on
 * cpu-clock and on the page-faults event.
 */
#include <stdio.h>
#include <time.h>
#include <sys/mman.h>

#define LEN (8UL << 20)
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

__attribute__((noinline)) unsigned long touch_fresh(void)
{
	unsigned char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long t;

	if (p == MAP_FAILED)
		return 0;
	for (unsigned long i = 0; i < LEN; i += 4096)
		p[i] = (unsigned char)i;
	t = p[LEN / 2];
	munmap(p, LEN);
	return t;
}

int main(void)
{
	unsigned long t = 0;

	while (cpu_seconds() < BUDGET_S)
		t += touch_fresh();
	sink = t;
	printf("%lu\n", t & 1);
	return 0;
}
