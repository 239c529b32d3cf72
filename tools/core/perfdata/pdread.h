/* pdread.h - perf.data read natively into a profile, exactly as the
 * `perf script` text path would have it.
 *
 * The reader replays what perf 6.1's `perf script` does for the fields
 * collectors/perf_data.c asks of it (comm, pid, tid, time, event,
 * period, ip, sym, symoff, dso, with --show-mmap-events and
 * --no-inline): threads and their maps from COMM, FORK, MMAP and MMAP2
 * records in perf's delivery order, each callchain walked with its
 * context markers, each address turned into the symbol, DSO and printed
 * address perf would show (pdsyms.h), and the profile filled through the
 * same calls the perf script parser makes.  So the same file gives the
 * same profile either way, but where a module's recorded file is gone or
 * another build and the binary finder (pd_read_set_binary_finder) has
 * it: read from there, as perf with --symfs would, its frames are named
 * here and unwound through (perf script leaves them [unknown]).
 *
 * Callchains are frame-pointer ones, LBR call stacks (--call-graph
 * lbr: the user frames from the branch stack, pdlbr.h) or DWARF ones
 * (--call-graph dwarf: the kernel part from the callchain, the user part
 * unwound from the sample's registers and stack copy with libdw,
 * pdunwind.h, as perf's post-unwinding gives it).  What it does
 * not reproduce, it refuses with PL_ERR_UNSUPPORTED, the error's text
 * saying what (the caller then runs perf script): tracepoints, user
 * registers or stacks other than --call-graph dwarf's, branch stacks without the LBR call stack (-b/-j), an empty
 * LBR stack whose leaf perf reads from memory the file does not hold
 * (pipe mode, -z), sample-read groups, guest samples, kernel modules,
 * JIT map files, AUX tracing, events it cannot name.  Kernel names come from kallsyms only when the recording's
 * kernel build-id is the running kernel's (or, with none recorded, when
 * its release and _text address are); otherwise kernel frames stay
 * [unknown] and the provenance says why.
 */
#ifndef PD_READ_H
#define PD_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "profile/parse.h"

/* Read `path` into `p` (empty, limits and keep_addrs set).  On
 * PL_ERR_UNSUPPORTED `p` is left empty again (same limits) and err's
 * text is what the native reader does not support, a phrase the caller
 * puts in its own sentence ("tracepoint events"), its hint the fix
 * (perf script).  `kallsyms`
 * is the kallsyms file to use (NULL: /proc/kallsyms); `notes` the file of
 * the running kernel's build-id (NULL: /sys/kernel/notes). */
enum pl_err pd_read_profile(struct pl_profile *p, const char *path, const char *kallsyms,
			    const char *notes, struct pl_error *err);
/* The same, reading a JIT's /tmp/perf-PID.map only when its real path is
 * beneath one of `roots` (nroots 0: anywhere); one outside leaves its
 * frames [unknown] and the provenance (perf_data.jit_maps) says so. */
enum pl_err pd_read_profile_in(struct pl_profile *p, const char *path, const char *kallsyms,
			       const char *notes, const char *const *roots, size_t nroots,
			       struct pl_error *err);
/* A device session's perf.data chunk (a pipe-mode image decompressed in
 * memory, n bytes), read into `p` after the chunks read before it: events,
 * threads and frames are shared by name, and its source (named `name`)
 * counts its own records.  A refusal leaves the earlier chunks in `p`
 * (the caller fails the whole).  The rest as pd_read_profile_in. */
enum pl_err pd_read_chunk(struct pl_profile *p, const void *data, size_t n, const char *name,
			  const char *kallsyms, const char *notes, const char *const *roots, size_t nroots,
			  struct pl_error *err);
/* Where perf's build-id cache is (its --buildid-dir, NULL: none): the
 * DWARF unwinder reads a module's copy there when the recorded file is
 * gone or another build, as perf does.  For the next read of this thread. */
void pd_read_set_buildid_dir(const char *dir);
/* Where the input's SHA-256 is kept by file identity (NULL: nowhere, the
 * file is always hashed); see base/digest_cache.h.  For the next read of
 * this thread. */
void pd_read_set_digest_cache(const char *dir);

/* Called for each sample as the reader resolves it: its pid, tid, time
 * (ns) and its frames, leaf first, as profile frame ids with the
 * addresses perf script would print. */
typedef void (*pd_sample_hook)(void *arg, int32_t pid, int32_t tid, uint64_t time,
			       const uint32_t *frames, const uint64_t *pcs, size_t n);
/* For the next reads of this thread: call `hook` (NULL: none) for each
 * sample, and read tracepoint events too, as plain samples whose fields
 * are not parsed (the caller reads them from perf script: the off-CPU
 * collection takes only the call chains from here). */
void pd_read_set_sample_hook(pd_sample_hook hook, void *arg);

/* Where else a module's file may be, for its symbols and the DWARF
 * unwinder's CFI (as perf with --symfs, not as perf script without): the
 * caller's lookup by recorded path and build-id (the symbolizer's
 * --binary, --sysroot, debuginfod), a file path valid until the next
 * call, or NULL.  Asked once per module the chains reach, before the
 * recorded path when `first` (a sysroot or module map is set), else
 * when the recorded file and perf's cache copy are gone or another
 * build.  NULL: none.  For the next read of this thread. */
typedef const char *(*pd_binary_finder)(void *arg, const char *path, const char *build_id);
void pd_read_set_binary_finder(pd_binary_finder fn, void *arg, bool first);

/* Walk the records of a perf.data image in memory and count them (no
 * symbols, no profile): the floor the benchmark compares against, and
 * what the fuzz harness drives.  Returns the walk's result. */
enum pl_err pd_walk_image(const void *data, size_t n, uint64_t *records, uint64_t *samples,
			  struct pl_error *err);

/* The same reading over an image in memory (the fuzz harness): no
 * provenance hash, no files but what the recording names; a refusal's
 * error as pd_read_profile's. */
enum pl_err pd_read_image(struct pl_profile *p, const void *data, size_t n, const char *name,
			  struct pl_error *err);

#endif
