# test_fleet.sh - the fleet store on a real ClickHouse (Debian's
# clickhouse-server, started here on loopback): device agents' chunks are
# published, per-device totals and the fleet's top functions equal what
# the spooled chunks hold (counted by fleet.py from their text), a
# replay counts once, a view cuts both sides of fleet_compare as it cuts
# fleet_hotspots, chunks that reach the spool late land in the minutes of
# their samples' times, a named agent reconnecting is one device, a store
# killed mid-ingest loses nothing, an old month's partition drops alone,
# two shards behind a Distributed table answer as one, and the viewer's
# Fleet page shows fleet_compare's verdicts in Chromium.
# Skips, saying why, without clickhouse-server or the shared peers.
# run.sh: slow
# (In the sanitized half as well: it drives the server's fleet code, its
# ClickHouse client and the agent link with real inputs.)
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
# Our agent with real perf, from network namespaces as separate hosts
# (fleet.py's last part), when the agent, root, perf and ip netns are here.
AGENT="" AGENT_WHY=""
agent_bin="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$agent_bin" ]; then
	AGENT_WHY="$agent_bin is not built (make agent)"
elif [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	AGENT_WHY="needs root and perf (linux-perf)"
elif ! command -v ip >/dev/null 2>&1 || ! ip netns add "pl-fprobe-$$" 2>/dev/null; then
	AGENT_WHY="ip netns is not available (apt-get install iproute2; needs root)"
else
	ip netns del "pl-fprobe-$$"
	printf 'static volatile unsigned long s;\n__attribute__((noinline)) void fleet_leaf(void){for(int i=0;i<4096;i++)s++;}\nint main(void){for(;;)fleet_leaf();}\n' > "$WORK/spin.c"
	gcc -O1 -fno-omit-frame-pointer -o "$WORK/spin" "$WORK/spin.c" && AGENT=$agent_bin || AGENT_WHY="cannot build the workload"
fi
export AGENT AGENT_WHY
WORK="$WORK" CH="$CH" timeout 500 /usr/bin/python3 tests/integration/fleet.py "$server" "$WORK/chunk.txt"
