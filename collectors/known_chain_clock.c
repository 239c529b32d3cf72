/* known_chain_clock.c - the CPU clock the known-depth chains spin on
 * (known_chain.h's coll_chain_cpu_ns), in a file of its own: the fp and
 * no-fp chains and the workload's entry all use it, and it uses none of
 * them. */
#include "known_chain.h"

#include <time.h>

uint64_t coll_chain_cpu_ns(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
		return UINT64_MAX;  /* no clock: stop at once rather than spin forever */
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
