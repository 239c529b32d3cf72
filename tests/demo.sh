#!/bin/sh
# demo.sh - the main job on a bundled real profile (make demo): analyze a
# device-agent capture from fixtures/, print its top hotspots, write its
# flame graph and say where everything went.
set -eu
BUILD=${1:-build}
PERFLENS="$BUILD/perflens"
OUT=${PERFLENS_DEMO_OUT:-perflens-results}
INPUT=fixtures/device-x86/chunk_000.txt.gz
echo "== analyzing $INPUT (a real device-agent capture: perf script text + perf stat)"
"$PERFLENS" analyze --input "$INPUT" --artifact-root "$OUT" --format table
id=$("$PERFLENS" analyze --input "$INPUT" --artifact-root "$OUT" | sed -n 's/^  "analysis_id": "\(.*\)",$/\1/p')
echo
echo "== top self hotspots of event cycles"
"$PERFLENS" hotspots --analysis-id "$id" --artifact-root "$OUT" --event cycles --limit 10 --format table
echo
echo "== heaviest call paths of event cycles"
"$PERFLENS" callpaths --analysis-id "$id" --artifact-root "$OUT" --event cycles --limit 3 --format table
echo
svg=$("$PERFLENS" export --analysis-id "$id" --artifact-root "$OUT" --event cycles --format svg |
	sed -n 's/^  "path": "\(.*\)",$/\1/p')
echo "== flame graph of event cycles: $svg"
echo "== analysis artifact: $OUT/analyses/$id.json"
