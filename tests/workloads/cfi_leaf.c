/* cfi_leaf.c - leaves with and without a frame, each under a helper, for
 * the skipped-caller test (test_cfi.sh).
 *
 * Built with -fno-omit-frame-pointer, so every function keeps a frame
 * except frameless_leaf (omit-frame-pointer for it alone, though GCC 12
 * leaves any leaf that needs no stack frameless) and libc's strlen
 * (assembly).  With frame-pointer unwinding the caller of a
 * frameless leaf is read through the frame pointer its caller set up, so
 * perf names format_record (or measure_record) as the leaf's caller and
 * skips append_field (or measure_field); DWARF unwinding shows them.  The
 * framed leaf under framed_helper keeps its caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 4096
static char text[LEN + 1];
static volatile unsigned long sink;

__attribute__((noinline, optimize("omit-frame-pointer")))
unsigned long frameless_leaf(const char *s, int n)
{
	unsigned long h = 0;

	for (int r = 0; r < 4; r++)
		for (int i = 0; i < n; i++)
			h = h * 31 + (unsigned char)s[i];
	return h;
}

__attribute__((noinline)) unsigned long append_field(const char *s, int n)
{
	return frameless_leaf(s, n) + 1;
}

__attribute__((noinline)) unsigned long format_record(int round)
{
	return append_field(text + (round & 7), LEN - 8) ^ (unsigned long)round;
}

/* The stack buffer makes GCC set up a frame (a leaf that needs no stack
 * gets none, even with -fno-omit-frame-pointer). */
__attribute__((noinline)) unsigned long framed_leaf(const char *s, int n)
{
	volatile unsigned char buf[16];
	unsigned long h = 7;

	for (int r = 0; r < 4; r++)
		for (int i = 0; i < n; i++) {
			buf[i & 15] = (unsigned char)s[i];
			h = h * 33 + buf[i & 7];
		}
	return h;
}

__attribute__((noinline)) unsigned long framed_helper(const char *s, int n)
{
	return framed_leaf(s, n) + 3;
}

__attribute__((noinline)) unsigned long check_record(int round)
{
	return framed_helper(text + (round & 7), LEN - 8) ^ (unsigned long)round;
}

__attribute__((noinline)) unsigned long measure_field(int round)
{
	return strlen(text + (round & 15)) + 1;
}

__attribute__((noinline)) unsigned long measure_record(int round)
{
	unsigned long n = 0;

	for (int i = 0; i < 64; i++)
		n += measure_field(round + i);
	return n;
}

int main(int argc, char **argv)
{
	unsigned long t = 0;
	int rounds = argc > 1 ? atoi(argv[1]) : 20000;

	memset(text, 'a', LEN);
	for (int r = 0; r < rounds; r++) {
		t += format_record(r);
		t += check_record(r);
		t += measure_record(r);
	}
	sink = t;
	printf("%lu\n", t & 0xff);
	return 0;
}
