/* pdunwind.h - DWARF call graphs (--call-graph dwarf) unwound natively:
 * a sample's user registers and its copy of the user stack, walked with
 * libdw's CFI unwinder (dwfl_attach_state, dwfl_getthread_frames) over
 * the modules of the sample's address space.
 *
 * One pd_unwind_space per address space, reused across its samples: it
 * holds a Dwfl of the executable file mappings (rebuilt only when that
 * set changes, not on data mmaps) attached to a state whose callbacks
 * read the current sample.  Memory reads are served from the stack copy
 * only within its recorded size, else from the loaded part of a reported
 * module's file; anything else ends the chain.  The chain is the pcs perf
 * 6.1 hands to its symbol lookup: the sampled pc, then each caller's
 * return address minus one (a signal frame's pc as it is), at most `max`.
 * x86_64 rules of plain frames are kept per pc with the Dwfl, so a hot
 * path's steps are looked up in libdw once.
 * Registers are taken in the recording's architecture (x86_64, aarch64),
 * not the host's.
 */
#ifndef PD_UNWIND_H
#define PD_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pd_unwind_arch { PD_UW_ARCH_NONE, PD_UW_ARCH_X86_64, PD_UW_ARCH_AARCH64 };

/* Why a chain ended. */
enum pd_unwind_stop {
	PD_UW_END,          /* the outermost frame: its return address is undefined */
	PD_UW_MAX,          /* the frame cap */
	PD_UW_NO_REGS,      /* registers missing from the sample (abi 0, or not in the mask) */
	PD_UW_MEMORY,       /* a read outside the stack copy and every module's file */
	PD_UW_NO_MODULE,    /* a caller's pc in no reported module (JIT, a file not found or of
			     * another build-id): the chain ended there, or went on by libdw's
			     * frame-pointer fallback */
	PD_UW_NO_CFI,       /* libdw found no unwind rule for a pc, or another unwind error */
	PD_UW_NSTOPS
};

/* The stop's short name (data quality keys). */
const char *pd_unwind_stop_name(enum pd_unwind_stop s);

/* The recording's architecture from the ARCH feature ("x86_64",
 * "aarch64", "arm64"); PD_UW_ARCH_NONE for others or NULL. */
enum pd_unwind_arch pd_unwind_arch_of(const char *arch);

/* An executable file mapping of the address space. */
struct pd_unwind_module {
	const char *path;      /* borrowed, opened at the first unwind after a change */
	const char *build_id;  /* recorded build-id (hex), "" or NULL: any */
	uint64_t start, end, pgoff;
	const char *cached;    /* borrowed: perf's build-id cache copy of it
				* (BUILDID_DIR/.build-id/xx/rest/elf), tried when
				* path is gone or another build; NULL: none */
	void *key;             /* the caller's, handed to the locator */
};

/* Where else a module's file may be: the caller's lookup by path and
 * build-id (--binary, --sysroot, debuginfod), a file path or NULL; the
 * file is checked against the recorded build-id here all the same. */
typedef const char *(*pd_unwind_locate)(void *arg, const struct pd_unwind_module *m);

/* The sample: registers by perf register number (regs[i] valid when bit
 * i of `have` is set), the stack copy starting at the stack pointer. */
struct pd_unwind_sample {
	int32_t pid, tid;
	const uint64_t *regs;
	uint64_t have;
	const uint8_t *stack;
	size_t stack_size;
	bool swap;             /* stack words in the other byte order */
};

struct pd_unwind_space;

/* A new space (caller frees with pd_unwind_space_free), NULL for an
 * architecture it cannot unwind. */
struct pd_unwind_space *pd_unwind_space_new(enum pd_unwind_arch arch);
void pd_unwind_space_free(struct pd_unwind_space *s);

/* Set the executable mappings (copied; `sig` names this set: the same
 * sig as the current one keeps the Dwfl). */
void pd_unwind_space_set_modules(struct pd_unwind_space *s, const struct pd_unwind_module *m, size_t n,
				 uint64_t sig);
/* The locator (NULL: none), asked when a module is first reached:
 * before the recorded path when `first` (a sysroot or module map names
 * the profiled machine's files, which the local path may not be), else
 * after the recorded path and perf's cache copy.  Keeps the Dwfl. */
void pd_unwind_space_set_locator(struct pd_unwind_space *s, pd_unwind_locate fn, void *arg, bool first);

/* The sig last set (0 for none). */
uint64_t pd_unwind_space_sig(const struct pd_unwind_space *s);

/* Unwind one sample into pcs[0..max): returns the count, *stop why it
 * ended.  Never reads the stack copy outside [stack, stack+stack_size). */
size_t pd_unwind_sample(struct pd_unwind_space *s, const struct pd_unwind_sample *smp, uint64_t *pcs,
			size_t max, enum pd_unwind_stop *stop);

/* Did the last sample's chain pass a module whose file was not its
 * recorded path (perf's cache copy, the locator's)?  perf script, given
 * neither, ends such a chain there. */
bool pd_unwind_through_elsewhere(const struct pd_unwind_space *s);

#endif
