/* capabilities.h - what perf can collect on this machine, probed once per
 * boot and cached under the artifact root.
 *
 * Events are counted (perf stat) and sampled (perf record), each call
 * graph mode is measured on a chain of known depth (callgraph_probe.h),
 * and the tracepoints the
 * sched, lock and off-CPU modes need are looked up.  The caller checks
 * that collection is allowed; this only runs the allowlisted perf.
 */
#ifndef PL_CAPABILITIES_H
#define PL_CAPABILITIES_H

#include <stdbool.h>

#include <jansson.h>

#include "base/error.h"

/* Probe with `perf_path` and the known-depth `workload` (this binary, see
 * callgraph_probe.h; may be NULL), scratch files and the cache in
 * ARTIFACT_ROOT/collections/; the cached answer is returned (with
 * "cached": true) while the boot id and the path, size and mtime of perf
 * and the workload are unchanged, unless `refresh`.  On PL_OK *result is
 * a new reference. */
enum pl_err coll_capabilities(const char *perf_path, const char *workload, const char *artifact_root,
			      bool refresh, json_t **result, struct pl_error *err);

/* The answer coll_capabilities() last cached under ARTIFACT_ROOT, if it
 * was probed on boot `boot_id` (coll_boot_id()) with `perf_path`; NULL
 * otherwise (never probed, another boot, another perf, unreadable: then
 * nothing is known).  Reads one file and runs nothing, so a sandboxed
 * worker may call it (it reads the artifact root; the boot id it cannot
 * read is the one its parent took, see coll_boot_id).  New reference. */
json_t *coll_capabilities_cached(const char *perf_path, const char *artifact_root, const char *boot_id);

/* This boot's id (/proc/sys/kernel/random/boot_id), read once per process
 * and kept; NULL when it cannot be read.  Call it before forking workers
 * that cannot read /proc: they inherit the copy. */
const char *coll_boot_id(void);

/* One event: counted with perf stat (over `perf version`) and, for
 * cpu-clock and cycles, sampled with perf record into `scratch` (the file
 * is removed): {event, count, record, detail}, new.  What `perflens
 * doctor` asks to tell hardware events from software only. */
json_t *coll_probe_event(const char *perf, const char *scratch, const char *event);

/* Where tracefs is mounted (the tracepoint modes need it: off_cpu,
 * sched, lock), from /proc/self/mounts: {"mounted", "path" (or null),
 * "via" ("tracefs", "debugfs" or null), "events_readable",
 * "mount_command", "needed_by", "detail"}, new. */
json_t *coll_tracefs_json(void);

#define COLL_TRACEFS_MOUNT "mount -t tracefs nodev /sys/kernel/tracing"

#endif
