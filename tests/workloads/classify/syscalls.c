/* syscalls.c - one-byte writes to /dev/null and getppid calls in a loop:
 * the samples are in the system-call path, the system_calls and
 * kernel_time candidates of classify_hotspots (test_classify.sh).
 */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef BUDGET_S  /* -DBUDGET_S=0.3: a shorter run (test_crawl_steps runs it often) */
#define BUDGET_S 1.5  /* seconds of CPU time: about 1,500 samples at 999 Hz */
#endif

static volatile unsigned long sink;

/* Process CPU time in seconds: the loop runs for a CPU-time budget, so a
 * busy machine changes the wall time, not the number of samples. */
static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long poke(int fd, int r)
{
	char c = (char)r;
	unsigned long t = (unsigned long)write(fd, &c, 1);

	t += (unsigned long)syscall(SYS_getppid);
	return t;
}

int main(void)
{
	int fd = open("/dev/null", O_WRONLY);
	unsigned long t = 0;

	if (fd < 0)
		return 1;
	for (int r = 0; cpu_seconds() < BUDGET_S; r += 256)
		for (int k = 0; k < 256; k++)
			t += poke(fd, r + k);
	close(fd);
	sink = t;
	printf("%lu\n", t & 1);
	return 0;
}
