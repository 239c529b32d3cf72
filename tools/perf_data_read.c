/* perf_data_read.c - the native perf.data reader, with perf script as its
 * fallback (see perf_data_read.h).
 */
#include <stdlib.h>
#include <string.h>

#include "perf_data_read.h"
#include "collectors/perf_data.h"
#include "base/escape.h"
#include "base/util.h"
#include "perfdata/pdread.h"

/* Mark the perf script result with the reason the native reader gave. */
static void mark_fallback(struct pl_profile *p, const char *why)
{
	for (size_t i = 0; i < p->nsources; i++) {
		p->sources[i].reader = "perf script";
		free(p->sources[i].reader_reason);
		p->sources[i].reader_reason = why ? pl_xstrdup(why) : NULL;
	}
}

enum pl_err tool_perf_data_read(struct pl_profile *p, const char *path,
				const struct pl_perf_data_opts *o, struct pl_error *err)
{
	const char *force = getenv("PERFLENS_PERF_DATA_READER");
	char why[512];
	enum pl_err rc;

	if (force && strcmp(force, "perf-script") == 0) {
		snprintf(why, sizeof(why), "PERFLENS_PERF_DATA_READER=perf-script asked for it");
	} else {
		/* With srcline every frame keeps its address, as perf_data.c does. */
		p->keep_addrs = o->srcline;
		rc = pd_read_profile(p, path, o->kallsyms, NULL, why, sizeof(why), err);
		if (rc != PL_ERR_UNSUPPORTED || (force && strcmp(force, "native") == 0))
			return rc;
	}
	if (!o->perf_path)
		return pl_fail(err, PL_ERR_UNSUPPORTED,
			       o->refusal ? o->refusal : "install linux-perf or start with --perf-path FILE",
			       "'%s' needs perf script: the native reader does not support %s",
			       PL_ESC_MSG(path), why);
	rc = coll_perf_data_read(p, path, o, err);
	if (rc == PL_OK)
		mark_fallback(p, why);
	return rc;
}
