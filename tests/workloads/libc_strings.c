/* libc_strings.c - memcpy/strlen/memset-heavy loop so that libc symbols
 * (a second DSO) show up among the hotspots, each called from two
 * different local functions.
 */
#include <stdio.h>
#include <string.h>

#define LEN (1 << 16)
static char src[LEN + 1], dst[LEN + 1];
static volatile unsigned long sink;

__attribute__((noinline)) unsigned long copy_round(int fill)
{
	memset(dst, fill, LEN);
	memcpy(dst, src, LEN);
	return (unsigned char)dst[fill & 0xff];
}

__attribute__((noinline)) unsigned long measure_round(int off)
{
	unsigned long n = strlen(src + (off & 0xfff));
	for (int i = 0; i < 64; i++)
		n += (unsigned char)src[(off + i * 97) & (LEN - 1)];
	return n;
}

int main(void)
{
	unsigned long t = 0;

	memset(src, 'a', LEN);
	src[LEN] = 0;
	for (int r = 0; r < 400000; r++) {
		t += copy_round(r);
		t += measure_round(r);
	}
	sink = t;
	printf("%lu\n", t & 0xff);
	return 0;
}
