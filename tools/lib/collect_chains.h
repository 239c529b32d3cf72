/* collect_chains.h - DWARF user call chains of a collected perf.data from
 * PerfLens's own unwinder, for the collections (collectors/collect.h's
 * user_chains_open, user_chain and user_chains_close).
 */
#ifndef TOOL_COLLECT_CHAINS_H
#define TOOL_COLLECT_CHAINS_H

#include <stddef.h>
#include <stdint.h>

#include "collectors/collect.h"

/* Read `data` (a perf.data) with the native reader; NULL when it cannot
 * or no sample has a user frame. */
struct pl_user_chains *tool_user_chains_open(const char *data, const char *kallsyms);
/* Append the user frames of the sample of `tid` at `time_ns`, leaf first,
 * as perf script --no-demangle prints them; how many (0: none known). */
size_t tool_user_chain(const struct pl_user_chains *c, int64_t tid, uint64_t time_ns, struct pl_buf *out);
void tool_user_chains_close(struct pl_user_chains *c);

#endif
