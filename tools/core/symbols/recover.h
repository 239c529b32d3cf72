/* recover.h - name the user frames perf left "[unknown]", from local
 * binaries that are verifiably the ones profiled.
 *
 * A frame is named only when every link holds: an mmap record of its
 * module (in its process) verifies the load base, so the address becomes
 * a module offset without guessing; the recording gives the module's
 * build-id and a local file has the same one (--binary, --module-map,
 * --sysroot, the path itself, /usr/lib/debug, debuginfod); and the
 * symbol table and the line table agree on the function there.  Every
 * frame that stays unknown is counted under the first link that failed,
 * in p->recovery, which the analysis reports.
 */
#ifndef PL_RECOVER_H
#define PL_RECOVER_H

#include "debuginfod.h"
#include "base/error.h"
#include "profile/profile.h"
#include "symcfg.h"

/* Rename what can be renamed; `dbg` may be NULL.  Errors only for limits
 * (the profile is then unchanged in meaning: unnamed frames stay so).
 * `index_dir` (may be NULL): where modules' symbol indexes are kept
 * (symbolize.h, PL_SYM_INDEX_AUTO): a module looked up there once is
 * answered from its index afterwards, without loading (and inflating)
 * its DWARF again; the answers are the same.  Only modules whose files
 * take at most PL_RECOVER_INDEX_MAX_SOURCE bytes get one built here
 * (libc and its debug file: 6 MB, 0.3 s); a bigger one stays on libdw,
 * whose few lookups cost less than indexing it whole in an analysis.
 * Nor does a module with fewer than PL_RECOVER_INDEX_MIN_FRAMES frames
 * to name: the JVM's libjvm.so (21 MB, 57,000 mostly local symbols whose
 * gaps libdw's linear search must settle) took the build's whole 60 s
 * for the 6 frames of a Java profile. */
#define PL_RECOVER_INDEX_MAX_SOURCE (32ull << 20)
#define PL_RECOVER_INDEX_MIN_FRAMES 64
enum pl_err pl_recover_frames(struct pl_profile *p, const struct pl_sym_cfg *cfg,
			      const struct pl_debuginfod *dbg, const char *index_dir,
			      struct pl_error *err);

/* The file offset of `addr` (as perf printed it) in module `dso` (string
 * id) for process `pid`, from the profile's mappings; false when no
 * mapping verifies it.  Shared with the caller check (cfi.c). */
bool pl_module_file_offset(const struct pl_profile *p, int64_t pid, uint32_t dso, uint64_t addr,
			   uint64_t *off);

#endif
