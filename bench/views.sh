#!/bin/sh
# views.sh - speed of list_hotspots under a view (tools/lib/view.h): the first
# page (the stack table loaded, the view applied, its answer kept under
# cache/views/) and the next pages (read from what was kept), against a
# page of the whole profile (the hotspot index).
# Measurements, not tests: figures and whether the target was met; exit 0.
#
#   BUILD=/tmp/x sh bench/views.sh      (run.sh runs it at its end)
#
# The input: FlameGraph's example perf script capture made into
# BENCH_VIEW_VARIANTS copies whose comms differ (gen_inputs.py
# perf-script: unique stacks grow, functions do not, as in a real
# program's threads), analyzed, exported as folded stacks per process, and
# repeated to BENCH_VIEW_MB MB (gen_inputs.py folded-repeat: the samples
# grow, the stacks do not).  Default: ~28k unique stacks, ~500 functions,
# ~1 million samples.  Target: a later page of a view <= 0.1 s.
# Each figure is the best of BENCH_RUNS (default 3) runs of the CLI (the
# same handler the server's worker runs).
set -u
BUILD=${BUILD:-build}
REPO=$(pwd)
. "$REPO/bench/lib.sh"
bench_setup
RUNS=${BENCH_RUNS:-3}
P=$PL
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perflens-bench-views.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
calc() { awk "BEGIN { x = ($*); print x }"; }
best() {   # best N CMD...: B_WALL, the least wall time of N runs
	_n=$1
	shift
	B_WALL=''
	for _i in $(seq "$_n"); do
		/usr/bin/time -f '%e' -o "$TMP/t" "$@" >"$TMP/out" 2>"$TMP/err" || { B_WALL=fail; return; }
		_w=$(cat "$TMP/t")
		{ [ -z "$B_WALL" ] || [ "$(calc "$_w < $B_WALL")" = 1 ]; } && B_WALL=$_w
	done
}
idof() { python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])'; }

base="$SHARED/peers/flamegraph/example-perf-stacks.txt.gz"
[ -f "$base" ] || { echo "views: skip: $base is missing"; exit 0; }
python3 "$REPO/bench/gen_inputs.py" perf-script --base "$base" --out "$TMP/v.txt" --size-mb 120 \
	--variants "${BENCH_VIEW_VARIANTS:-150}" >/dev/null || exit 0
id=$("$P" analyze --input "$TMP/v.txt" --artifact-root "$TMP/a1" | idof)
"$P" export --analysis-id "$id" --artifact-root "$TMP/a1" --format folded --pid --output "$TMP/v.folded" >/dev/null
python3 "$REPO/bench/gen_inputs.py" folded-repeat --input "$TMP/v.folded" --out "$TMP/r.folded" \
	--size-mb "${BENCH_VIEW_MB:-500}" >/dev/null
rm -f "$TMP/v.txt"
"$P" analyze --input "$TMP/r.folded" --artifact-root "$TMP/a" >"$TMP/a.json"
id=$(idof <"$TMP/a.json")
facts=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d["views"][0]
print("%d samples, %d unique stacks, %d functions" % (v["total"]["samples"], v["unique_stacks"], len(d["functions"])))' "$TMP/a/analyses/$id.json")
echo "views: $facts"
best "$RUNS" "$P" hotspots --analysis-id "$id" --artifact-root "$TMP/a" --limit 20
echo "views: whole profile, a page: ${B_WALL} s"
for v in '{"focus":"Interpreter"}' '{"hide":"^(__libc_write|system_call_fastpath)$","collapse_recursion":true}' \
	'{"ignore":"^java","merge":"Interpreter","show_from":"start_thread"}'; do
	rm -rf "$TMP/a/cache/views"
	/usr/bin/time -f '%e' -o "$TMP/t" "$P" hotspots --analysis-id "$id" --artifact-root "$TMP/a" --limit 20 --view "$v" >/dev/null 2>&1
	first=$(cat "$TMP/t")
	best "$RUNS" "$P" hotspots --analysis-id "$id" --artifact-root "$TMP/a" --limit 20 --offset 20 --view "$v"
	echo "views: $v: first page ${first} s, a later page ${B_WALL} s (target <= 0.1 s: $( [ "$B_WALL" != fail ] && [ "$(calc "$B_WALL <= 0.1")" = 1 ] && echo met || echo MISSED))"
done
exit 0
