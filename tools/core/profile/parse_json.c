/* parse_json.c - speedscope and V8 .cpuprofile readers: not written yet;
 * format auto never picks them (pl_json_profile_sniff says neither). */
#include "parse_pprof.h"

static enum pl_err not_yet(struct pl_error *err, const char *source)
{
	return pl_fail(err, PL_ERR_UNSUPPORTED, "convert the profile to folded stacks",
		       "'%s': this format is not read yet", source);
}

enum pl_err pl_parse_speedscope(struct pl_profile *p, const void *data, size_t n,
				const char *source, struct pl_error *err)
{
	(void)p, (void)data, (void)n;
	return not_yet(err, source);
}

enum pl_err pl_parse_cpuprofile(struct pl_profile *p, const void *data, size_t n,
				const char *source, struct pl_error *err)
{
	(void)p, (void)data, (void)n;
	return not_yet(err, source);
}

enum pl_format pl_json_profile_sniff(const char *head, size_t n)
{
	(void)head, (void)n;
	return PL_FMT_AUTO;
}
