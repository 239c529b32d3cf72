/* fuzz_artifact.c - damaged analysis artifacts read back by the tools: a
 * summary (ID.json), a stack table (ID.stacks.json) and a hotspot index
 * (cache/hotidx/ID.idx), as a disk or another process may leave them.
 * Nothing checks an analysis' content id when it is read, so every reader
 * must refuse what does not hold together, never trust it.
 *
 * Input: the first byte picks the tool call (see calls[]); the rest is cut
 * at each line "#--" into the summary, the stack table and the index.  An
 * index of at least a header's size gets its header's id, sizes and
 * checksum made right (the layout of hotidx.c's struct hi_header), so the
 * fuzzer reaches the bounds checks behind them instead of the checksum.
 */
#include "fuzz.h"
#include "tools/registry.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ID "an-00000000000000000001"
#define SEP "\n#--\n"

/* hotidx.c's header: keep in step with it (a mismatch only makes this
 * harness weaker, every index then failing its checksum). */
struct hi_header {
	char magic[8];
	uint32_t version, endian;
	uint32_t nviews, nfuncs;
	uint64_t nentries;
	uint64_t summary_size;
	uint64_t file_size;
	uint64_t pool_size;
	uint64_t checksum;
	char id[32];
};

static const char *const calls[] = {
	"list_hotspots", "{\"analysis_id\":\"" ID "\"}",
	"list_hotspots", "{\"analysis_id\":\"" ID "\",\"sort\":\"inclusive\",\"min_percent\":0.5,\"limit\":3}",
	"get_hotspot", "{\"analysis_id\":\"" ID "\",\"hotspot_id\":\"fn1\"}",
	"get_call_paths", "{\"analysis_id\":\"" ID "\"}",
	"list_threads", "{\"analysis_id\":\"" ID "\"}",
	"get_perf_stat", "{\"analysis_id\":\"" ID "\"}",
	"classify_hotspots", "{\"analysis_id\":\"" ID "\"}",
	"compare_profiles", "{\"baseline_id\":\"" ID "\",\"candidate_id\":\"" ID "\"}",
	"export_profile", "{\"analysis_id\":\"" ID "\",\"format\":\"folded\"}",
	"export_profile", "{\"analysis_id\":\"" ID "\",\"format\":\"svg\"}",
	"export_profile", "{\"analysis_id\":\"" ID "\",\"format\":\"speedscope\"}",
	"export_profile", "{\"analysis_id\":\"" ID "\",\"format\":\"pprof\"}",
	"build_report", "{\"analysis_id\":\"" ID "\",\"problem\":\"slow\",\"metric\":\"wall time\"}",
	"get_hotspot", "{\"analysis_id\":\"" ID "\",\"hotspot_id\":\"fn0\",\"tid\":1}",
	"get_call_paths", "{\"analysis_id\":\"" ID "\",\"symbol\":\"main\"}",
	"read_artifact_page", "{\"artifact\":\"analyses/" ID ".json\",\"offset\":3,\"limit_bytes\":100}",
	"get_timeline", "{\"analysis_id\":\"" ID "\",\"symbol\":\"main\",\"buckets\":7}",
	"list_hotspots", "{\"analysis_id\":\"" ID "\",\"view\":{\"time\":{\"from_seconds\":0.1,\"to_seconds\":0.3}}}",
};
#define NCALLS (sizeof(calls) / sizeof(calls[0]) / 2)

static char root[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	snprintf(root, sizeof(root), "%s/root", fuzz_dir());
	return 0;
}

/* The next part of the input, up to SEP or the end. */
static const char *part(const char **s, const char *end, size_t *n)
{
	const char *p = *s, *cut;

	if (p > end) {
		*n = 0;
		return p;
	}
	cut = memmem(p, (size_t)(end - p), SEP, strlen(SEP));
	*n = cut ? (size_t)(cut - p) : (size_t)(end - p);
	*s = cut ? cut + strlen(SEP) : end + 1;
	return p;
}

static void seal_index(char *idx, size_t n, size_t summary_size)
{
	struct hi_header h;

	if (n < sizeof(h))
		return;
	memcpy(&h, idx, sizeof(h));
	memset(h.id, 0, sizeof(h.id));
	memcpy(h.id, ID, strlen(ID));
	h.summary_size = summary_size;
	h.file_size = n;
	h.checksum = pl_hash(idx + sizeof(h), n - sizeof(h), h.version);
	memcpy(idx, &h, sizeof(h));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned pick = fuzz_take_byte(&data, &size) % NCALLS;
	const char *s = (const char *)data, *end = s + size, *sum, *stk, *idx;
	size_t nsum, nstk, nidx;
	const struct tool_def *t = tool_find(calls[2 * pick]);
	struct tool_ctx ctx = {0};
	struct pl_error err;
	json_t *args, *result = NULL;
	char *sealed;

	if (!root[0])
		LLVMFuzzerInitialize(NULL, NULL);
	sum = part(&s, end, &nsum);
	stk = part(&s, end, &nstk);
	idx = part(&s, end, &nidx);
	fuzz_clean("root");
	fuzz_file("root/analyses/" ID ".json", sum, nsum);
	fuzz_file("root/analyses/" ID ".stacks.json", stk, nstk);
	if (nidx) {
		sealed = malloc(nidx);
		memcpy(sealed, idx, nidx);
		seal_index(sealed, nidx, nsum);
		fuzz_file("root/cache/hotidx/" ID ".idx", sealed, nidx);
		free(sealed);
	}
	ctx.artifact_root = root;
	ctx.allow_writes = true;
	pl_limits_default(&ctx.limits);
	ctx.limits.max_frames = ctx.limits.max_stacks = 20000;
	args = json_loads(calls[2 * pick + 1], 0, NULL);
	if (!t || !args)
		abort();
	if (tool_call(t, &ctx, args, &result, &err) != PL_OK && getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "fuzz: %s: %s\n", calls[2 * pick], err.text);
	json_decref(result);
	json_decref(args);
	return 0;
}
