/* callsite.c - caller lines that differ from the line after the call.
 *
 * In caller() the call to work() is on one line and the next statement
 * (a volatile store) on the next, so a caller frame looked up at its
 * return address lands on the line after the call, and at the return
 * address minus one on the call itself.  helper() is inlined into
 * work() (always_inline, static) so that the lines of a perf.data also
 * carry an inline frame; work() ends in a real call (store) so that gcc
 * gives it a frame and the frame-pointer unwinder keeps its caller.
 * Fixed iteration counts: deterministic work.
 */
#include <stdio.h>

static volatile unsigned long sink, after;

static inline __attribute__((always_inline)) unsigned long helper(unsigned long x)
{
	for (int i = 0; i < 200; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void store(unsigned long x)
{
	sink = x;
}

__attribute__((noinline)) unsigned long work(unsigned long x)
{
	x = helper(x);
	store(x);
	return x;
}

__attribute__((noinline)) unsigned long caller(unsigned long n)
{
	unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++) {
		x = work(x + i);
		after = i;
	}
	return x;
}

int main(void)
{
	unsigned long t = 0;

	for (int r = 0; r < 10; r++)
		t += caller(200000);
	printf("%lu\n", t);
	return 0;
}
