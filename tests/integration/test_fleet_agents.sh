# test_fleet_agents.sh - the fleet with our agent, as the issue's shape
# asks: two ingest servers and 24 perflens-agent processes (4 in network
# namespaces as separate hosts), fed a peer's recorded capture through a
# perf shim (fleet_agents.py), two firmware builds: per-device totals equal
# what each agent says it sent, fleet_hotspots equals the sum of the
# per-session analyses, fleet_compare names the one function that changed.
# Skips, saying why, without clickhouse-server, the agent or the peers.
# run.sh: slow
# (In the sanitized half as well: it drives the server's fleet code, its
# ClickHouse client and the agent link with real inputs.)
. tests/integration/lib.sh
need_shared "fleet with our agents"
CH=/usr/sbin/clickhouse-server
agent_bin="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$CH" ]; then
	skip "fleet with our agents: $CH is missing (apt-get install clickhouse-server)"
	exit 0
fi
if [ ! -x "$agent_bin" ]; then
	skip "fleet with our agents: $agent_bin is not built (make agent)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "fleet with our agents: needs root (the agents attach to the build's processes)"
	exit 0
fi
if ! command -v ss >/dev/null 2>&1; then
	skip "fleet with our agents: ss is missing (apt-get install iproute2): it tells which agent holds which link"
	exit 0
fi
NETNS=0
if command -v ip >/dev/null 2>&1 && ip netns add "pl-faprobe-$$" 2>/dev/null; then
	ip netns del "pl-faprobe-$$"
	NETNS=1
else
	skip "fleet with our agents, from network namespaces: ip netns is not available (all on loopback)"
fi
zcat "$SHARED/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz" > "$WORK/chunk.txt"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
WORK="$WORK" CH="$CH" NETNS="$NETNS" timeout 400 /usr/bin/python3 tests/integration/fleet_agents.py \
	"$server" "$WORK/chunk.txt" "$agent_bin"
