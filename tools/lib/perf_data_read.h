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

/* What a perf.data file says perf lost while recording: its
 * PERF_RECORD_LOST records, the events they count and its
 * PERF_RECORD_LOST_SAMPLES (one walk of the native reader's record
 * parser over the file).  False when the file cannot be walked.  Both
 * readers report it: a loss is the recording's, whichever reader reads. */
bool tool_perf_data_count_lost(const char *path, uint64_t *records, uint64_t *lost, uint64_t *lost_samples);

/* The kallsyms file a CLI analysis reads: a copy of /proc/kallsyms kept
 * per boot under ARTIFACT_ROOT/cache/ (the kernel's own symbols do not
 * change within a boot, and generating /proc/kallsyms costs the kernel
 * about 0.1 s of every analysis), made on first use; "/proc/kallsyms"
 * when no copy can be made.  `buf` holds the path (cap bytes). */
const char *tool_kallsyms_copy(const char *artifact_root, char *buf, size_t cap);

/* Make the index of a kallsyms copy (perfdata/pdkindex.h) beside it, as
 * COPY.index, unless one newer than the copy is there: the native reader
 * then maps the kernel's table instead of parsing the copy.  False when
 * none could be made (the reader parses the copy, as without one). */
bool tool_kallsyms_index(const char *kallsyms_path);

#endif
