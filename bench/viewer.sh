#!/bin/sh
# viewer.sh - the web viewer's speed, measured in Debian's Chromium.
#
# The bundled device capture and a 100,000-stack profile (the real
# captures of ../shared/peers/flamegraph as folded stacks, made unique by
# gen_inputs.py folded-unique exactly as bench 4 does) are analyzed, perflens-mcp --http serves them on loopback, and
# viewer_bench.mjs (puppeteer-core) prints: the bundled capture's analysis
# page interactive from navigation (target <= 500 ms), the 100k-stack
# flame graph's first draw (<= 1 s) and a zoom redraw (<= 100 ms).
# Figures, not tests: exit 0 whatever they are.
#
#   BUILD=/tmp/b sh bench/viewer.sh      (BENCH_VIEWER_STACKS=100000, BENCH_RUNS=5)
set -u
BUILD=${BUILD:-build}
REPO=$(pwd)
. "$REPO/bench/lib.sh"
bench_setup
MCP=$(dirname "$PL")/perflens-mcp
STACKS=${BENCH_VIEWER_STACKS:-100000}
RUNS=${BENCH_RUNS:-5}
node=$(sh tests/mcp/setup-node.sh --check 2>/dev/null) || { echo "viewer bench: Node 22 and puppeteer-core are not installed (sh tests/mcp/setup-node.sh)"; exit 0; }
[ -x /usr/bin/chromium ] || { echo "viewer bench: /usr/bin/chromium is not installed"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/perflens-viewer-bench.XXXXXX")
srv=""
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$T"' EXIT
art=$T/art
id_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["analysis_id"])'; }
bundled=$("$PL" --artifact-root "$art" --allowed-root "$REPO" --allowed-root "$T" analyze --input "$REPO/fixtures/device-x86/chunk_000.txt.gz" | id_of)
# The real captures bench 4 builds its 100k-stack input from.
export_base_folded "$PL" "$T/art-base" "$T/base" "$PEERDATA/example-perf-stacks.txt.gz" "$PEERDATA"/test/*.txt
set -- "$T"/base/*.folded
[ -f "$1" ] || { echo "viewer bench: no real captures in $PEERDATA to build the 100k-stack profile from"; exit 0; }
echo "viewer bench: $($GEN folded-unique --out "$T/big.folded" --stacks "$STACKS" "$@")"
big=$("$PL" --artifact-root "$art" --allowed-root "$T" analyze --input "$T/big.folded" | id_of)
echo "viewer bench: stack table $(wc -c < "$art/analyses/$big.stacks.json") bytes"
PERFLENS_TOKEN="bench-$$" "$MCP" --http 127.0.0.1:0 --allowed-root "$T" --artifact-root "$art" 2>"$T/server.err" &
srv=$!
login=""
for _ in $(seq 100); do
	login=$(sed -n 's#^perflens-mcp: viewer (one-time login): ##p' "$T/server.err")
	[ -n "$login" ] && break
	sleep 0.1
done
[ -n "$login" ] || { echo "viewer bench: the server did not start: $(cat "$T/server.err")"; exit 0; }
base=$(echo "$login" | sed 's#\(http://[^/]*\)/.*#\1#')
printf '{"login": "%s", "base": "%s", "chromium": "/usr/bin/chromium", "bundled": "%s", "big": "%s", "runs": %s}\n' \
	"$login" "$base" "$bundled" "$big" "$RUNS" > "$T/cfg.json"
HOME=$T "$node" "$REPO/bench/viewer_bench.mjs" "$T/cfg.json"
exit 0
