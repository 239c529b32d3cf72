#!/bin/sh
# demo.sh - the evidence workflow on two bundled real captures (make demo).
#
# 1. fixtures/device-x86: a device-agent capture (six events, perf stat):
#    data quality first (what the capture cannot tell), hotspots of one
#    event, the classification candidates with their missing evidence,
#    the Markdown report and a flame graph.
# 2. fixtures/investigation-x86: perf record -g of tests/workloads/
#    investigation/app.c with source lines: named frames, call paths, the
#    threads, and per-line samples in the source of the hottest function.
# Everything goes under $PERFLENS_DEMO_OUT (default perflens-results/).
set -eu
BUILD=${1:-build}
PERFLENS="$BUILD/perflens"
OUT=${PERFLENS_DEMO_OUT:-perflens-results}
P() { "$PERFLENS" --artifact-root "$OUT" "$@"; }
# field KEY: the first "KEY": "value" of the JSON on stdin.
field() { sed -n "s/^ *\"$1\": \"\\(.*\\)\",\{0,1\}\$/\\1/p" | head -1; }

DEVICE=fixtures/device-x86/chunk_000.txt.gz
echo "== 1. $DEVICE: a real device-agent capture (perf script text + perf stat)"
echo "-- analysis, data quality first: what the capture cannot tell is said, not guessed"
P analyze --input "$DEVICE" --format table
id=$(P analyze --input "$DEVICE" | field analysis_id)
echo
echo "-- top self hotspots of event cycles (one event: events are never summed)"
P hotspots --analysis-id "$id" --event cycles --limit 8 --format table
echo
echo "-- candidate causes, each with the evidence it still lacks (candidates, not findings)"
P classify --analysis-id "$id" --limit 6 --format table
echo
report=$(P report --analysis-id "$id" --problem "the device workload is slow" \
	--metric "wall time, s, lower is better" | field path)
svg=$(P export --analysis-id "$id" --event cycles --format svg | field path)
echo "-- the Markdown evidence report: $report"
echo "-- the flame graph of cycles: $svg"
echo

APP=fixtures/investigation-x86/capture.txt.gz
echo "== 2. $APP: perf record -g of tests/workloads/investigation/app.c, with source lines"
P analyze --input "$APP" --format table
aid=$(P analyze --input "$APP" | field analysis_id)
echo
echo "-- hotspots (named frames of the program and of libc)"
P hotspots --analysis-id "$aid" --limit 6 --format table
echo
echo "-- the heaviest call paths, root to leaf"
P callpaths --analysis-id "$aid" --limit 4 --format table
echo
echo "-- threads: where each thread's samples go"
P threads --analysis-id "$aid" --limit 6 --format table
echo
echo "-- the source of app.c around its hottest lines, samples per line (self, total)"
P source --analysis-id "$aid" --file investigation/app.c --path-map "/perflens=$PWD" --hot-lines 3 \
	--before 1 --after 1 --format table
echo
echo "== results under $OUT/: analyses/$id.json and analyses/$aid.json, the report $report, the flame graph $svg"
