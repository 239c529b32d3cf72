/* known_chain_fp.c - the known-depth chain built WITH frame pointers
 * (the Makefile compiles this file with -fno-omit-frame-pointer); see
 * known_chain.h. */
#include "known_chain.h"

COLL_CHAIN(coll_chain_fp_)
