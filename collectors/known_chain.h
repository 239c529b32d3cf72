/* known_chain.h - a workload of known call depth, for the call-graph
 * probe (callgraph_probe.h).
 *
 * Every PerfLens binary carries it: run as `BINARY --perflens-known-chain`
 * it spends a fixed budget of CPU time at the bottom of a chain of
 * COLL_CHAIN_DEPTH named functions, coll_chain_fp_1 > ... > _8, built with
 * frame pointers, and then at the bottom of the same chain built without
 * them, coll_chain_nofp_1 > ... > _8.  A call-graph mode that recovers the
 * first chain produces real chains; one that also recovers the second
 * does not need frame pointers.  Re-executing the binary itself needs no
 * extra file at run time: the probe's perf starts the binary it is part of.
 *
 * Each chain lives in its own file with fixed frame-pointer flags (see the
 * Makefile), its functions are noinline and never tail-call, so the chain
 * has exactly the depth its names say whatever the build's -O level.
 */
#ifndef PL_KNOWN_CHAIN_H
#define PL_KNOWN_CHAIN_H

#include <stdint.h>

/* The one argument that selects the workload. */
#define COLL_CHAIN_FLAG "--perflens-known-chain"
/* Frames of each chain, and their names' prefixes (then 1..DEPTH, the
 * outermost first). */
#define COLL_CHAIN_DEPTH 8
#define COLL_CHAIN_FP_PREFIX "coll_chain_fp_"
#define COLL_CHAIN_NOFP_PREFIX "coll_chain_nofp_"
/* CPU time spent at the bottom of each chain. */
#define COLL_CHAIN_CPU_MS 150

/* Call first in main(): when argv is exactly {BINARY, COLL_CHAIN_FLAG},
 * run the workload and return its exit status (0); else return -1 and
 * touch nothing. */
int coll_known_chain_main(int argc, char **argv);

/* The chains' entry points (known_chain_fp.c, known_chain_nofp.c): spin
 * at the bottom until the process has used `until_cpu_ns` of CPU time;
 * returns a value only so that the work is not optimised away. */
uint64_t coll_chain_fp_1(uint64_t until_cpu_ns);
uint64_t coll_chain_nofp_1(uint64_t until_cpu_ns);

/* The process's CPU time in ns (known_chain.c). */
uint64_t coll_chain_cpu_ns(void);

/* One link of a chain: calls the next and does something after the call,
 * so the compiler can neither inline it nor turn the call into a jump. */
#define COLL_CHAIN_LINK(prefix, n, next)                                         \
	__attribute__((noinline)) uint64_t prefix##n(uint64_t until)             \
	{                                                                        \
		volatile uint64_t mark = n;                                      \
		uint64_t r = prefix##next(until);                                \
		__asm__ volatile("" ::: "memory");                               \
		return r + mark;                                                 \
	}

/* The bottom of a chain: the loop where the samples land. */
#define COLL_CHAIN_LEAF(prefix, n)                                               \
	__attribute__((noinline)) uint64_t prefix##n(uint64_t until)             \
	{                                                                        \
		volatile uint64_t sink = n;                                      \
		do {                                                             \
			for (uint32_t i = 0; i < (1u << 18); i++)                \
				sink = sink * 2862933555777941757ull + i;        \
		} while (coll_chain_cpu_ns() < until);                           \
		return sink;                                                     \
	}

/* The whole chain of DEPTH (8) frames under `prefix`. */
#define COLL_CHAIN(prefix)                                                       \
	uint64_t prefix##1(uint64_t until);                                      \
	uint64_t prefix##2(uint64_t until);                                      \
	uint64_t prefix##3(uint64_t until);                                      \
	uint64_t prefix##4(uint64_t until);                                      \
	uint64_t prefix##5(uint64_t until);                                      \
	uint64_t prefix##6(uint64_t until);                                      \
	uint64_t prefix##7(uint64_t until);                                      \
	uint64_t prefix##8(uint64_t until);                                      \
	COLL_CHAIN_LEAF(prefix, 8)                                               \
	COLL_CHAIN_LINK(prefix, 7, 8)                                            \
	COLL_CHAIN_LINK(prefix, 6, 7)                                            \
	COLL_CHAIN_LINK(prefix, 5, 6)                                            \
	COLL_CHAIN_LINK(prefix, 4, 5)                                            \
	COLL_CHAIN_LINK(prefix, 3, 4)                                            \
	COLL_CHAIN_LINK(prefix, 2, 3)                                            \
	COLL_CHAIN_LINK(prefix, 1, 2)

#endif
