/* phases.c - a two-phase workload for the timeline test (test_timeline.sh):
 * phase A burns CPU in a() for the first PHASE_MS milliseconds, then
 * phase B in b() for as long, so a timeline shows a() in the first half
 * and b() in the second.  Built with -O0 -fno-omit-frame-pointer, so both
 * stay functions of their own with frame pointers.
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spin until `end` (ms), checking the clock every few thousand steps. */
__attribute__((noinline)) void a(double end)
{
	do {
		for (int i = 0; i < 20000; i++)
			sink += (unsigned long)i * 3u;
	} while (now_ms() < end);
}

__attribute__((noinline)) void b(double end)
{
	do {
		for (int i = 0; i < 20000; i++)
			sink ^= (unsigned long)i * 7u;
	} while (now_ms() < end);
}

int main(int argc, char **argv)
{
	double phase = argc > 1 ? atof(argv[1]) : 600, start = now_ms();

	a(start + phase);
	b(start + 2 * phase);
	return 0;
}
