#!/bin/sh
# test_ab_investigation.sh - an A/B regression investigation an agent runs.
#
# Builds tests/workloads/ab.c twice, the candidate with a planted
# regression in hash_key (-DHASH_ROUNDS=4), and drives perflens-mcp over
# stdio as an agent would (ab_investigation.py): collect each build,
# analyze as next_steps say, compare_profiles page by page against
# perf report's shares of the same perf.data files, follow the
# comparison's next_steps, then hyperfine timings of both builds through
# normalize_benchmark and compare_benchmarks against hyperfine's means.
. tests/integration/lib.sh
name="ab"
need_perf_record "$name"
if ! command -v hyperfine >/dev/null 2>&1; then
	skip "$name: hyperfine is not installed (sh tests/setup.sh)"
	exit 0
fi
mkdir -p "$WORK/bin"
for r in 1 4; do
	if ! gcc -O1 -g -fno-omit-frame-pointer -DHASH_ROUNDS=$r -o "$WORK/bin/ab$r" tests/workloads/ab.c 2>"$WORK/err"; then
		notok "$name: gcc failed: $(oneline "$WORK/err")"
		exit 0
	fi
done
HERE="$REPO/tests/integration" BUILD_DIR="$(cd "$BUILD" && pwd)" WORK="$WORK" \
	AB_BASE="$WORK/bin/ab1" AB_CAND="$WORK/bin/ab4" \
	oracle "$name" /usr/bin/python3 tests/integration/ab_investigation.py
