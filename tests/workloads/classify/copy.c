/* copy.c - large memcpy/memmove rounds between two static buffers: most
 * samples land in libc's copy routines, the memory_copy candidate of
 * classify_hotspots (test_classify.sh).
 */
#include <stdio.h>
#include <time.h>
#include <string.h>

#define LEN (1 << 20)
static char a[LEN], b[LEN];
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

__attribute__((noinline)) unsigned long shuffle(int r)
{
	memcpy(b, a, LEN);
	memmove(a + 1, b, LEN - 1);
	return (unsigned char)a[r & (LEN - 1)];
}

int main(void)
{
	unsigned long t = 0;

	memset(a, 7, LEN);
	for (int r = 0; cpu_seconds() < BUDGET_S; r++)
		t += shuffle(r);
	sink = t;
	printf("%lu\n", t & 1);
	return 0;
}
