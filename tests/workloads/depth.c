/* depth.c - a call chain of known depth: main > depth_1 > ... > depth_12
 * > spin, each a real call (noinline, and a use of the callee's result
 * after it, so no tail call), spinning ~0.5 s of CPU in spin.
 *
 * Built without frame pointers, it tells call-graph modes apart: DWARF
 * unwinding gives the whole chain in (nearly) every sample, a frame
 * pointer walk does not.
 */
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long spin(unsigned long n)
{
	clock_t end = clock() + CLOCKS_PER_SEC / 2;
	unsigned long x = n;

	while (clock() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

#define LEVEL(n, next)                                        \
	__attribute__((noinline)) unsigned long depth_##n(unsigned long x) \
	{                                                         \
		unsigned long r = next(x + 1);                    \
		sink += r;                                        \
		return r ^ x;                                     \
	}
LEVEL(12, spin)
LEVEL(11, depth_12)
LEVEL(10, depth_11)
LEVEL(9, depth_10)
LEVEL(8, depth_9)
LEVEL(7, depth_8)
LEVEL(6, depth_7)
LEVEL(5, depth_6)
LEVEL(4, depth_5)
LEVEL(3, depth_4)
LEVEL(2, depth_3)
LEVEL(1, depth_2)

int main(void)
{
	printf("%lu\n", depth_1(1));
	return 0;
}
