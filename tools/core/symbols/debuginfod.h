/* debuginfod.h - fetch debug information by build-id from debuginfod servers.
 *
 * The client is libcurl, loaded with dlopen() on first need (see
 * pl_debuginfod_preload): GET URL/buildid/HEX/debuginfo (or /executable)
 * from each server of the space-separated list in turn, with a total
 * timeout per fetch and a size cap.  An answer is handed over as an open
 * read-only descriptor (a file in the cache folder when there is one, else
 * an anonymous memory file), so libdw can read it like any other ELF.
 * An unknown build-id (HTTP 404 everywhere) is PL_ERR_INPUT "not found",
 * never a hang; an unreachable or slow server is PL_ERR_TIMEOUT or
 * PL_ERR_EXTERNAL naming the server.
 */
#ifndef PL_DEBUGINFOD_H
#define PL_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct pl_debuginfod {
	const char *urls;       /* space-separated server URLs; NULL/"" = off */
	uint32_t timeout_ms;    /* per fetch, across all servers (each gets
				 * an equal share of what is left); 0 = 10 s */
	const char *cache_dir;  /* writable folder for answers, kept as
				 * cache_dir/HEX/KIND and looked up there
				 * first; NULL = no cache (a sealed memfd) */
	uint64_t max_bytes;     /* cap on one answer; 0 = 1 GiB */
};

/* `kind` is "debuginfo" or "executable"; `build_id_hex` lowercase hex
 * (2 to 128 digits, an even count).
 * On PL_OK *fd is open read-only (the caller closes it) and `source`
 * (if not NULL) names where it came from (URL or cached path).
 * Errors: PL_ERR_USAGE for a bad build-id, kind or server URL (only
 * http:// and https://), PL_ERR_UNSUPPORTED when no server is set and the
 * cache has no answer or libcurl cannot be loaded (the text names the
 * package), PL_ERR_INPUT when every server answered 404,
 * PL_ERR_TIMEOUT, PL_ERR_LIMIT (answer over max_bytes), PL_ERR_EXTERNAL
 * (any other server or network failure), PL_ERR_OUTPUT (cache folder not
 * writable). */
enum pl_err pl_debuginfod_fetch(const struct pl_debuginfod *d, const char *build_id_hex,
				const char *kind, int *fd, char *source, size_t source_cap,
				struct pl_error *err);

/* Load libcurl now (once per process; later calls only report): true
 * when it is usable.  For sandboxed workers that may fetch: call it
 * before confinement (sbx_set_preconfine), since a confined worker may not
 * read the library's files.  Elsewhere the first fetch loads it.  Thread-
 * safe; reads no input. */
bool pl_debuginfod_preload(void);

#endif
