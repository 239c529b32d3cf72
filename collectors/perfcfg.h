/* perfcfg.h - which perf PerfLens runs, and what it gives perf.
 *
 * The operator fixes these when starting perflens-mcp or perflens, with
 * the same flags on both (pl_perf_options):
 *
 *   --perf-path FILE     the perf binary tools may run (absolute,
 *                        executable); else the first of
 *                        pl_perf_default_paths
 *   --perf-timeout S     seconds one perf run may take (default 50)
 *
 * and a sandboxed server takes a copy of /proc/kallsyms before its
 * workers drop CAP_SYSLOG (perf and the native perf.data reader use it).  Strings are kept for the process
 * lifetime; a worker inherits them by fork.
 */
#ifndef PL_PERFCFG_H
#define PL_PERFCFG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/options.h"

struct pl_perf_cfg {
	const char *path;          /* resolved; NULL when no perf was found */
	uint32_t timeout_ms;       /* one perf run */
	/* A copy of /proc/kallsyms made by the server before its workers
	 * drop CAP_SYSLOG (without which the kernel shows every address as
	 * 0), handed to perf as --kallsyms; NULL: perf reads /proc itself. */
	const char *kallsyms_path;
	/* This very binary (resolved from /proc/self/exe at start), which
	 * the call-graph probe has perf run as its known-depth workload
	 * (known_chain.h); NULL when it cannot be resolved. */
	const char *probe_workload;
	/* perf's build-id cache ($PERF_BUILDID_DIR, else $HOME/.debug of the
	 * server's user, resolved at start; NULL when absent), passed to perf
	 * script as --buildid-dir: perf runs with no HOME, and without the
	 * cache it names every [vdso] frame [unknown]. */
	const char *buildid_dir;
};

/* Where perf is looked for when --perf-path is not given (NULL-ended). */
extern const char *const pl_perf_default_paths[];

/* The perf flags over a struct pl_perf_cfg. */
extern const struct pl_option pl_perf_options[];

/* Fill the defaults once every flag is in: perf from the fixed list, the
 * timeout, the probe workload. */
void pl_perf_cfg_finish(struct pl_perf_cfg *c);

/* Make the kallsyms copy in a private temporary folder (servers whose
 * workers run perf); false when /proc/kallsyms cannot be read. */
bool pl_perf_cfg_snapshot_kallsyms(struct pl_perf_cfg *c);
void pl_perf_cfg_remove_kallsyms(const struct pl_perf_cfg *c);

/* What perf reads besides the profile (its libraries, the kernel's
 * symbols and PMU names, the build-id cache perf record fills), and what
 * perf record -a, perf sched and tracepoints read on top; NULL-ended.  A
 * confined worker that runs perf gets the ones that exist. */
extern const char *const pl_perf_reads[];
/* What the native perf.data reader reads besides the profile (the
 * modules the recording names, the running kernel's build-id; the
 * kallsyms copy is added apart), with or without perf. */
extern const char *const pl_perf_data_reads[];
extern const char *const pl_perf_collection_reads[];

#endif
