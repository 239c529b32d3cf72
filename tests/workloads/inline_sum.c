/* inline_sum.c - an optimized build whose hot loop is inlined library
 * code: vec_sum (inline_sum.h) is inlined into work at one line, so every
 * sample's srcline is the header's and the program's own line is only
 * the inline chain's call site.  source_context must credit that line
 * (inlined_samples), checked against eu-addr2line -i. */
#include <stdio.h>
#include <stdlib.h>

#include "inline_sum.h"

static unsigned v[4096];

static unsigned long __attribute__((noinline)) work(int rounds)
{
	unsigned long t = 0;

	for (int r = 0; r < rounds; r++)
		t += vec_sum(v, 4096);   /* the call site */
	return t;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 100000;

	for (int i = 0; i < 4096; i++)
		v[i] = (unsigned)i;
	printf("%lu\n", work(rounds));
	return 0;
}
