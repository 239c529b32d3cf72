/* agent_spin.c - a CPU-bound target for the device-agent tests: runs for
 * argv[1] seconds (default 30) through a fixed call chain
 * main -> spin_outer -> spin_inner, so samples have a known stack and the
 * binary's own mapping (and build-id) shows in /proc/PID/maps. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long spin_inner(unsigned long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) unsigned long spin_outer(unsigned long x)
{
	for (int i = 0; i < 50; i++)
		x = spin_inner(x);
	return x;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 30;
	struct timespec t0, t;
	unsigned long x = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = spin_outer(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	sink = x;
	return 0;
}
