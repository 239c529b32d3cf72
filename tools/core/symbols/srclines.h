/* srclines.h - source lines and inline frames for a perf.data's frames,
 * from PerfLens's own libdw symbolizer instead of perf's addr2line.
 *
 * The profile must have been parsed with keep_addrs (every frame keeps
 * its address) and with its mappings and build-ids.  Each user frame's
 * runtime address becomes a module offset through the mmap record of its
 * process (no guessed base), the module is the one with the recorded
 * build-id (--binary, --module-map, --sysroot, the path, /usr/lib/debug,
 * debuginfod: symbolize.h), and the lookup is made at the address for
 * the leaf and at the address minus one for every caller, whose address
 * is a return address (perf does the same for unwound frames; a DWARF
 * chain's caller address, already decremented by perf, stays on the same
 * call instruction).  A frame becomes its function with the line of its
 * outermost location, followed by one frame per inlined call (module as
 * DSO, the inlined flag set), each with its own line, innermost last.
 * Srclines are "FULL/PATH:LINE": the line table's directory and file (or
 * the CU's comp_dir for a relative one), so --path-map applies to them.
 * A leaf's innermost frame also keeps its module offset as its address,
 * so that a function's hot addresses can be listed and handed to
 * symbolize (stacks then differ by their leaf's address; callers stay one
 * frame per line).
 * Frames that get no line stay as they were (unknown ones keep their
 * address) and are counted per module in p->recovery's missing list.
 */
#ifndef PL_SRCLINES_H
#define PL_SRCLINES_H

#include "debuginfod.h"
#include "base/error.h"
#include "profile/profile.h"
#include "symcfg.h"

/* Give every user frame its line and inline frames, rebuilding the
 * stacks (pl_profile_restack); `dbg` may be NULL.  Sets p->srclines to
 * the frames (unique by address, role and process) that got a line.
 * Errors only for limits. */
enum pl_err pl_srclines_apply(struct pl_profile *p, const struct pl_sym_cfg *cfg,
			      const struct pl_debuginfod *dbg, struct pl_error *err);

#endif
