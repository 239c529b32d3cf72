/* parse_pprof.h - pprof profiles (profile.proto) and the JSON profiles of
 * speedscope and V8 (.cpuprofile) into the profile model.
 *
 * Each takes the whole decompressed file (parse.c reads it through
 * base/input.h, which applies the input limit) and fills `p` as the line
 * parsers do: records parsed, skipped and malformed (with previews), every
 * limit of p->limits enforced.  What each keeps and how it names events is
 * told at the top of parse_pprof.c and parse_json.c.  `source` names the
 * file in messages.
 */
#ifndef PL_PARSE_PPROF_H
#define PL_PARSE_PPROF_H

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

enum pl_err pl_parse_pprof(struct pl_profile *p, const void *data, size_t n,
			   const char *source, struct pl_error *err);
enum pl_err pl_parse_speedscope(struct pl_profile *p, const void *data, size_t n,
				const char *source, struct pl_error *err);
enum pl_err pl_parse_cpuprofile(struct pl_profile *p, const void *data, size_t n,
				const char *source, struct pl_error *err);

/* Do these first decompressed bytes look like a protobuf Profile? */
bool pl_pprof_sniff(const unsigned char *head, size_t n);
/* Is this JSON text (white space, then '{') a speedscope file or a V8
 * cpuprofile, from the keys in its first bytes?  PL_FMT_AUTO when neither. */
enum pl_format pl_json_profile_sniff(const char *head, size_t n);

#endif
