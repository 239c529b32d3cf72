#!/bin/sh
# agent_link.sh - speed of the server's agent link: MB/s of decompressed
# perf script text one link checks and spools, and the delay from a 10 MB
# chunk's arrival to list_hotspots through analyze_profile (target <= 1 s).
# Measurements, not tests (bench/agent_link.py; exit 0 whatever the
# figures).  bench/run.sh runs it at its end unless BENCH_SKIP_LINK=1.
#
#   BUILD=/tmp/build-bench sh bench/agent_link.sh
#
# Environment: BUILD (default build), SHARED (default ../shared: the text is
# the device fixture's chunk), BENCH_LINK_CHUNKS (default 8),
# BENCH_LINK_CHUNK_MB (default 10).
set -u
BUILD=${BUILD:-build}
SHARED=${SHARED:-$(cd .. && pwd)/shared}
server="$(cd "$BUILD" && pwd)/perflens-mcp"
fixture="$SHARED/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz"
[ -x "$server" ] || { echo "agent link bench: $server is not built" >&2; exit 2; }
if [ ! -f "$fixture" ] || ! command -v zstd >/dev/null 2>&1; then
	echo "agent link bench: skipped (needs $fixture and the zstd command)"
	exit 0
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/perflens-bench-link.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
zcat "$fixture" > "$work/chunk.txt"
WORK="$work" timeout 600 /usr/bin/python3 bench/agent_link.py "$server" "$work/chunk.txt" || true
