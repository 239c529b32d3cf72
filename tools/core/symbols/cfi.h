/* cfi.h - frame-pointer chains that may skip a caller, found from CFI.
 *
 * perf's frame-pointer unwinding on x86-64 stores the sampled ip, then
 * walks rbp: each step reads a return address at [rbp + 8] and the next
 * rbp at [rbp].  That names a frame's real caller only when the frame's
 * function has made rbp its frame pointer at the pc in question; in a
 * frameless function (assembly such as strlen, a leaf GCC built without a
 * frame, code built with -fomit-frame-pointer) or in a prologue or an
 * epilogue, rbp still holds the caller's frame, so the return address
 * read belongs to the caller's caller and the caller is skipped.  perf
 * adds nothing for the leaf on x86, and the same holds deeper: a frameless
 * function in the middle of a chain hides its own caller.  The module's
 * CFI says which case a pc is: a CFA rule of rbp + offset there (DWARF
 * register 6) means the frame is set up; any other rule (rsp + offset,
 * an expression) means the next frame may skip a caller.
 *
 * The leaf-most user frame is judged at its pc (the sampled ip, or where
 * a system call entered the kernel), every other frame at its return
 * address minus one (the call).  A frame whose module is not found
 * locally by build-id (as recover.h finds modules), whose load base no
 * mmap record verifies, or whose address no CFI covers stays unknown, with
 * the reason in p->caller_check; nothing is guessed.
 *
 * Ownership: a pl_cfi owns its open files and cached rules; the answers
 * are plain values.
 */
#ifndef PL_CFI_H
#define PL_CFI_H

#include <stdbool.h>
#include <stdint.h>

#include "debuginfod.h"
#include "base/error.h"
#include "profile/profile.h"
#include "symcfg.h"

#define PL_CFI_MAX_MODULES 256         /* files kept open per pl_cfi */
#define PL_CFI_MAX_RANGES (1u << 16)   /* cached CFI rows per module */

struct pl_cfi;

/* New, empty; pl_cfi_free(NULL) is a no-op. */
struct pl_cfi *pl_cfi_new(void);
void pl_cfi_free(struct pl_cfi *c);

/* The edge above a frame whose code is at file offset `offset` of the ELF
 * file `path` (for a caller frame, its return address minus one): KEPT
 * when the CFA rule there is rbp-based, MAY_SKIP when it is not, UNKNOWN
 * with `*why` set when the file cannot be read, is not x86-64,
 * maps no segment there or has no CFI row for it. */
enum pl_edge pl_cfi_edge(struct pl_cfi *c, const char *path, uint64_t offset,
			 enum pl_unknown_why *why);

/* Judge every site of `p` (profile.h) and turn them into marked weights;
 * modules are found by their recorded build-id through a symbolizer
 * made with `cfg` and `dbg` (both borrowed; `dbg` may be NULL).  Does
 * nothing for a profile without sites.  Errors: none today but
 * PL_ERR_LIMIT from the symbolizer, which the profile survives unmarked. */
enum pl_err pl_cfi_check_callers(struct pl_profile *p, const struct pl_sym_cfg *cfg,
				 const struct pl_debuginfod *dbg, struct pl_error *err);

#endif
