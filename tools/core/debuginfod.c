/* debuginfod.c - placeholder until the libcurl client lands: every fetch
 * answers "unsupported", so callers already handle the no-server case. */
#include "debuginfod.h"

enum pl_err pl_debuginfod_fetch(const struct pl_debuginfod *d, const char *build_id_hex,
				const char *kind, int *fd, char *source, size_t source_cap,
				struct pl_error *err)
{
	(void)d, (void)kind, (void)fd, (void)source, (void)source_cap;
	return pl_fail(err, PL_ERR_UNSUPPORTED, "this build has no debuginfod client yet",
		       "cannot fetch build-id %s", build_id_hex);
}
