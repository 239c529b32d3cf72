/* known_chain.c - the workload's entry (see known_chain.h): the fp chain,
 * then the no-fp chain, each for COLL_CHAIN_CPU_MS of CPU time.  CPU time,
 * not wall time, so a loaded machine still gives as many cpu-clock
 * samples.  Nothing is read or written: it runs inside the probe's
 * sandboxed perf, with only the system calls a starting program makes and
 * clock_gettime. */
#include "known_chain.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int coll_known_chain_main(int argc, char **argv)
{
	const uint64_t budget = (uint64_t)COLL_CHAIN_CPU_MS * 1000000u;
	uint64_t r;

	if (argc != 2 || strcmp(argv[1], COLL_CHAIN_FLAG) != 0)
		return -1;
	r = coll_chain_fp_1(coll_chain_cpu_ns() + budget);
	r += coll_chain_nofp_1(coll_chain_cpu_ns() + budget);
	return r == 0 ? 1 : 0;  /* practically never 0; keeps r alive */
}
