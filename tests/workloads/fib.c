/* fib.c - deep recursion: fib() appears many times in each stack, so an
 * inclusive share counted per frame instead of once per sample would
 * exceed 100%.  A leaf helper (leaf_work) gives fib a distinct self share.
 */
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf_work(unsigned long n)
{
	unsigned long x = n;
	for (int i = 0; i < 8; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x & 1;
}

__attribute__((noinline)) unsigned long fib(unsigned long n)
{
	if (n < 2)
		return n + leaf_work(n);
	return fib(n - 1) + fib(n - 2);
}

int main(void)
{
	unsigned long t = 0;

	for (int r = 0; r < 4; r++)
		t += fib(35);
	sink = t;
	printf("%lu\n", t);
	return 0;
}
