# test_agent_live.sh - our device agent ($BUILD/perflens-agent, make agent)
# against our server's agent link with real perf (root, cpu-clock), through
# perflens-mcp as an agent would: on loopback, then three agents as
# separate hosts in network namespaces this test creates (agent_live.py
# says what is checked).  Skips, saying why, without the agent binary,
# root, perf, or ip netns.
# run.sh: slow
. tests/integration/lib.sh
agent="$(cd "$BUILD" && pwd)/perflens-agent"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
if [ ! -x "$agent" ]; then
	skip "agent link live: $agent is not built (make agent)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	skip "agent link live: needs root and perf (linux-perf)"
	exit 0
fi
# A workload that runs until killed, with a leaf function of its own.
cat > "$WORK/spin.c" <<'C'
static volatile unsigned long sink;
__attribute__((noinline)) unsigned long spin_leaf(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}
int main(void)
{
	for (unsigned long i = 0;; i++)
		sink += spin_leaf(i);
}
C
gcc -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$WORK/spin" "$WORK/spin.c" &&
	strip -o "$WORK/spin-stripped" "$WORK/spin" || { notok "agent link live: cannot build the workload"; exit 0; }
WORK="$WORK" timeout 300 /usr/bin/python3 tests/integration/agent_live.py "$server" "$agent" "$WORK/spin-stripped" "$WORK/spin"
if ! command -v ip >/dev/null 2>&1 || ! ip netns add "pl-probe-$$" 2>/dev/null; then
	skip "agent link live, three hosts: ip netns is not available (apt-get install iproute2; needs root)"
	exit 0
fi
ip netns del "pl-probe-$$"
WORK="$WORK" timeout 400 /usr/bin/python3 tests/integration/agent_live.py "$server" "$agent" "$WORK/spin-stripped" "$WORK/spin" netns
