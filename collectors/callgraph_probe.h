/* callgraph_probe.h - which call-graph modes recover real chains here,
 * measured on a workload of known depth (known_chain.h).
 *
 * For each of fp, dwarf and lbr: perf record --call-graph MODE of the
 * workload (this binary, re-run with --perflens-known-chain), then perf
 * script of that recording; every sample that landed at the bottom of a
 * chain is walked towards the root and the named frames found in order
 * are counted.  The evidence per mode is the depth found against the
 * depth expected, for the chain built with frame pointers and the one
 * built without.  One implementation for the inspect_collection_capabilities
 * tool (capabilities.c) and `perflens doctor`.
 */
#ifndef PL_CALLGRAPH_PROBE_H
#define PL_CALLGRAPH_PROBE_H

#include <stdint.h>

#include <jansson.h>

/* Probe every mode with `perf` (absolute), starting `workload` (an
 * absolute path of a PerfLens binary; NULL when it could not be found,
 * then every mode says so), recording into `scratch` (a folder the
 * caller owns and removes; the files made here are removed), each perf
 * run bounded by `timeout_ms`.  Returns a new array of
 *   {mode, status, expected_depth, depth_found, samples,
 *    with_frame_pointers: {samples, full_chains, depth_found},
 *    without_frame_pointers: {...}, needs_frame_pointers, detail, command}
 * where status is real_chains (the chain built with frame pointers came
 * back whole in at least half of its samples), shallow_chains, no_samples
 * or failed (perf record refused the mode; detail has perf's reason);
 * command is the perf record argv that was run (its perf.data is gone). */
json_t *coll_probe_call_graphs(const char *perf, const char *workload, const char *scratch,
			       uint32_t timeout_ms);

/* The probe's reader on a whole perf script -F ip,sym text (for tests
 * and the fuzz harness): {samples, with_frame_pointers: {samples,
 * full_chains, depth_found}, without_frame_pointers: {...}}, new.  The
 * text need not be NUL-terminated. */
json_t *coll_chains_from_script(const char *text, size_t len);

#endif
