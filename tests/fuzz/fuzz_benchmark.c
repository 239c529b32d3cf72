/* fuzz_benchmark.c - the benchmark producers' files: hyperfine
 * --export-json, Google Benchmark JSON, pyperf JSON and plain values (a
 * JSON array or one number a line).  The first input byte picks the
 * format (0 auto, 1 hyperfine, 2 Google Benchmark, 3 pyperf, 4 values);
 * a set that parses is written as an artifact and loaded back, which must
 * succeed (PerfLens refusing its own artifact is a defect). */
#include "fuzz.h"
#include "base/limits.h"
#include "evidence/benchmark.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static void write_and_load(const struct pl_bench_set *s)
{
	char root[512], id[32], path[PATH_MAX];
	struct pl_error err;
	json_t *doc = NULL, *back = NULL;

	fuzz_clean("root");
	snprintf(root, sizeof(root), "%s/root", fuzz_dir());
	if (pl_bench_write(s, root, id, path, sizeof(path), &doc, &err) != PL_OK)
		return;  /* e.g. a name too long for the artifact: refused, fine */
	if (pl_bench_load(root, id, &back, &err) != PL_OK) {
		fprintf(stderr, "fuzz: benchmark artifact %s does not load back: %s\n", id, err.text);
		abort();
	}
	json_decref(doc);
	json_decref(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode = fuzz_take_byte(&data, &size) % 5;
	const char *path = fuzz_file("bench.json", data, size);
	struct pl_bench_set s;
	struct pl_limits lim;
	struct pl_error err;
	enum pl_err rc;

	pl_limits_default(&lim);
	lim.max_input_bytes = 1u << 20;
	pl_bench_set_init(&s);
	if (mode == 4)
		rc = pl_bench_parse_values_file(&s, path, "fuzz", "ops/s", PL_HIGHER_IS_BETTER, &lim, &err);
	else
		rc = pl_bench_parse_file(&s, path, (enum pl_bench_format)mode, &lim, &err);
	if (rc == PL_OK)
		write_and_load(&s);
	pl_bench_set_release(&s);
	return 0;
}
