/* perf_data.h - perf.data read by running the allowlisted `perf script`.
 *
 * The profile parser takes this reader through pl_parse_opts.perf_data.read:
 * collectors/ runs perf, profile/ only parses the text it prints.
 */
#ifndef COLL_PERF_DATA_H
#define COLL_PERF_DATA_H

#include "base/error.h"
#include "profile/parse.h"

/* Run perf script on a perf.data and parse its text into `p`, which must
 * be empty: a pl_perf_data_reader. */
enum pl_err coll_perf_data_read(struct pl_profile *p, const char *path,
				const struct pl_perf_data_opts *o, struct pl_error *err);

#endif
