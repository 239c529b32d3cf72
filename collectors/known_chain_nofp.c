/* known_chain_nofp.c - the known-depth chain built WITHOUT frame pointers
 * (the Makefile compiles this file with -fomit-frame-pointer, after any
 * build-wide flag); see known_chain.h. */
#include "known_chain.h"

COLL_CHAIN(coll_chain_nofp_)
