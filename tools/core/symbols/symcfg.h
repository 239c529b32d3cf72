/* symcfg.h - where symbols, debug information and perf come from.
 *
 * The operator fixes these when starting perflens-mcp or perflens, with
 * the same flags on both:
 *
 *   --perf-path FILE         the perf binary tools may run (absolute,
 *                            executable); else the first of a fixed list
 *   --binary FILE            a local copy of a profiled binary, matched by
 *                            build-id (repeatable)
 *   --sysroot DIR            a device's root file system copied locally:
 *                            /usr/lib/x.so is looked for as DIR/usr/lib/x.so
 *   --module-map DEV=LOCAL   a module path as the device named it, and the
 *                            local file to use for it (repeatable)
 *   --path-map FROM=TO       source paths recorded at build time (FROM...) and
 *                            where they are on this machine (repeatable)
 *   --debuginfod URLS        debuginfod servers (space-separated); default
 *                            $DEBUGINFOD_URLS; "" switches it off
 *   --debuginfod-timeout S   seconds per fetch (default 10)
 *   --perf-timeout S         seconds one perf run may take (default 50)
 *
 * Paths given here are trusted as readable by the operator who passed
 * them: sandboxed workers get read access to them.  Everything is plain
 * data (strings kept for the process lifetime); a worker inherits it by
 * fork, fixed before the first one.
 */
#ifndef PL_SYMCFG_H
#define PL_SYMCFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define PL_SYM_MAX_PATHS 32

/* One FROM=TO rewrite: a path starting with `from` (at a '/' boundary)
 * continues under `to`. */
struct pl_path_map {
	const char *from;
	const char *to;
};

struct pl_sym_cfg {
	const char *perf_path; /* resolved; NULL when no perf was found */
	const char *binaries[PL_SYM_MAX_PATHS];
	size_t nbinaries;
	const char *sysroot;
	struct pl_path_map module_maps[PL_SYM_MAX_PATHS];
	size_t nmodule_maps;
	struct pl_path_map path_maps[PL_SYM_MAX_PATHS];
	size_t npath_maps;
	const char *debuginfod_urls; /* NULL or "" = off */
	uint32_t debuginfod_timeout_ms;
	bool debuginfod_set;         /* --debuginfod given (even "") */
	uint32_t perf_timeout_ms;
	/* A copy of /proc/kallsyms made by the server before its workers
	 * drop CAP_SYSLOG (without which the kernel shows every address as
	 * 0), handed to perf as --kallsyms; NULL: perf reads /proc itself. */
	const char *kallsyms_path;
};

/* Where perf is looked for when --perf-path is not given. */
extern const char *const pl_perf_default_paths[];

/* Take one flag: 1 when it was ours (and `value` was used), 0 when it is
 * not a symbol flag, -1 with `err` set when its value is wrong.  `flag`
 * is given without its leading dashes ("binary"). */
int pl_sym_cfg_option(struct pl_sym_cfg *c, const char *flag, const char *value,
		      struct pl_error *err);

/* Fill the defaults once every flag is in: perf from the fixed list,
 * debuginfod from the environment, the fetch timeout. */
void pl_sym_cfg_finish(struct pl_sym_cfg *c);

/* Make the kallsyms copy in a private temporary folder (servers whose
 * workers run perf); false when /proc/kallsyms cannot be read. */
bool pl_sym_cfg_snapshot_kallsyms(struct pl_sym_cfg *c);
void pl_sym_cfg_remove_kallsyms(const struct pl_sym_cfg *c);

/* Rewrite `path` with the first matching map into `out`; false (and
 * `out` untouched) when none matches or the result does not fit. */
bool pl_path_map_apply(const struct pl_path_map *maps, size_t n, const char *path,
		       char *out, size_t cap);

/* The help lines for these flags, shared by both binaries' --help. */
extern const char pl_sym_cfg_help[];

#endif
