/* nested.c - nested compute calls with distinct self and inclusive shares.
 *
 * main -> outer -> middle -> inner, each level doing its own loop, so
 * self% differs from inclusive% at every level (inner ~ 1/2 of the work,
 * middle ~ 1/4, outer ~ 1/8, main ~ 1/8).  Fixed iteration counts: the
 * work is deterministic; only the sample timing varies.  Each hot loop
 * ends in a real call (checkpoint) so gcc gives it a frame and the
 * frame-pointer unwinder keeps its caller (frameless leaves hide theirs).
 */
#include <stdio.h>

static volatile unsigned long sink, calls;

__attribute__((noinline)) unsigned long checkpoint(unsigned long x)
{
	calls++;
	return x;
}

__attribute__((noinline)) static unsigned long spin(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return checkpoint(x) + 1;
}

__attribute__((noinline)) unsigned long inner(unsigned long x)
{
	for (unsigned long i = 0; i < 4000; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return checkpoint(x) + 1;
}

__attribute__((noinline)) unsigned long middle(unsigned long x)
{
	for (unsigned long i = 0; i < 2000; i++)
		x = x * 3202034522624059733UL + 1UL;
	return inner(x);
}

__attribute__((noinline)) unsigned long outer(unsigned long x)
{
	for (unsigned long i = 0; i < 1000; i++)
		x = x * 1103515245UL + 12345UL;
	return middle(x);
}

int main(void)
{
	unsigned long x = 1;

	for (int r = 0; r < 60000; r++) {
		x = outer(x);
		x = spin(1000, x);
	}
	sink = x;
	printf("%lu\n", x & 0xff);
	return 0;
}
