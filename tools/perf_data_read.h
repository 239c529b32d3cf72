/* perf_data_read.h - perf.data for analyze_profile: the native reader
 * first, `perf script` for what it does not support.
 *
 * tool_perf_data_read is a pl_perf_data_reader.  The native reader
 * (perfdata/pdread.h) runs in the process itself, with no perf and no
 * permission beyond reading; a file it does not support goes to the perf
 * script path (collectors/perf_data.h) when perf may run, and the
 * provenance says which reader ran and why.  PERFLENS_PERF_DATA_READER
 * in the environment ("native" or "perf-script") forces one reader (tests
 * and benchmarks compare the two).
 */
#ifndef TOOL_PERF_DATA_READ_H
#define TOOL_PERF_DATA_READ_H

#include "profile/parse.h"

enum pl_err tool_perf_data_read(struct pl_profile *p, const char *path,
				const struct pl_perf_data_opts *o, struct pl_error *err);

#endif
