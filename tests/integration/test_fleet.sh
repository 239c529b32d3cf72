# test_fleet.sh - the fleet store on a real ClickHouse (Debian's
# clickhouse-server, started here on loopback): device agents' chunks are
# published, per-device totals and the fleet's top functions equal what
# the spooled chunks hold (counted by fleet.py from their text), a
# replay counts once, a store killed mid-ingest loses nothing, two shards
# behind a Distributed table answer as one, and the viewer's Fleet page
# shows fleet_compare's verdicts in Chromium.
# Skips, saying why, without clickhouse-server or the shared peers.
# run.sh: slow no-asan
. tests/integration/lib.sh
need_shared "fleet"
CH=/usr/sbin/clickhouse-server
if [ ! -x "$CH" ]; then
	skip "fleet: $CH is missing (apt-get install clickhouse-server)"
	exit 0
fi
if ! command -v zstd >/dev/null 2>&1; then
	skip "fleet: the zstd command is missing (apt-get install zstd)"
	exit 0
fi
zcat "$SHARED/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz" > "$WORK/chunk.txt"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
NODE=$(sh tests/mcp/setup-node.sh --check 2>"$WORK/node.err") || NODE=""
NODE_WHY=$(cat "$WORK/node.err")
case $BUILD in /*) OUT="$BUILD/test-output/fleet" ;; *) OUT="$REPO/$BUILD/test-output/fleet" ;; esac
mkdir -p "$OUT"
export NODE NODE_WHY OUT
WORK="$WORK" CH="$CH" timeout 400 /usr/bin/python3 tests/integration/fleet.py "$server" "$WORK/chunk.txt"
