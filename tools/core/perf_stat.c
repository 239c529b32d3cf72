/* perf_stat.c - placeholder until the parser lands (see perf_stat.h). */
#include "perf_stat.h"
#include <stdlib.h>
void pl_stat_block_free(struct pl_stat_block *b) { free(b); }
