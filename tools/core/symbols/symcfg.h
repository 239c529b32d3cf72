/* symcfg.h - where symbols and debug information come from.
 *
 * The operator fixes these when starting perflens-mcp or perflens, with
 * the same flags on both:
 *
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
 *
 * (perf's own flags are collectors/perfcfg.h.)
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
#include "base/options.h"

#define PL_SYM_MAX_PATHS 32

/* One FROM=TO rewrite: a path starting with `from` (at a '/' boundary)
 * continues under `to`. */
struct pl_path_map {
	const char *from;
	const char *to;
};

struct pl_sym_cfg {
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
};

/* The symbol flags over a struct pl_sym_cfg (both binaries). */
extern const struct pl_option pl_sym_options[];

/* Fill the defaults once every flag is in: debuginfod from the
 * environment, the fetch timeout. */
void pl_sym_cfg_finish(struct pl_sym_cfg *c);

/* Rewrite `path` with the first matching map into `out`; false (and
 * `out` untouched) when none matches or the result does not fit. */
bool pl_path_map_apply(const struct pl_path_map *maps, size_t n, const char *path,
		       char *out, size_t cap);

#endif
