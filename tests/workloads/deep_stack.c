/* deep_stack.c - CPU spent under a user stack of known size: main calls
 * descend(DEPTH), each level keeping a FRAME-byte buffer on its stack
 * (noinline, the buffer used after the call, so no tail call and no
 * shrinking), and the innermost level spins ~0.6 s (with the argument
 * "sleep": sleeps 1 ms at a time for as long, so off-CPU waits have the
 * same deep stack).
 *
 * With DEPTH 40 and FRAME 1024 the spinning code is about 42 KB below
 * main's frame: a --call-graph dwarf copy of perf's default 8 KB holds
 * only the innermost levels, so no chain reaches main, while a 64 KB copy
 * (dwarf,65528) holds the whole stack and every chain reaches main.  That
 * is what the truncated-stack rules are checked against.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef DEPTH
#define DEPTH 40
#endif
#ifndef FRAME
#define FRAME 1024
#endif
#ifndef SECONDS
#define SECONDS 0.6
#endif

static volatile unsigned long sink;
static int sleeping;

__attribute__((noinline)) static unsigned long spin(unsigned long n)
{
	clock_t end = clock() + (clock_t)(CLOCKS_PER_SEC * SECONDS);
	unsigned long x = n;

	for (int i = 0; sleeping && i < (int)(SECONDS * 1000); i++)
		usleep(1000);
	while (!sleeping && clock() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) static unsigned long descend(int level, unsigned long x)
{
	volatile unsigned char buf[FRAME];
	unsigned long r;

	memset((void *)buf, level, sizeof(buf));
	r = level == 0 ? spin(x) : descend(level - 1, x + buf[level % FRAME]);
	sink += buf[(r + (unsigned long)level) % FRAME];
	return r ^ (unsigned long)level;
}

int main(int argc, char **argv)
{
	sleeping = argc > 1 && strcmp(argv[1], "sleep") == 0;
	printf("%lu\n", descend(DEPTH, 7));
	return 0;
}
