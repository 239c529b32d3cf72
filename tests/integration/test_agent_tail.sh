# test_agent_tail.sh - a device capture loses nothing silently and its
# numbers add up: fake agents (a seed's that discards the chunk in flight
# at a stop, ours with a late or lost last chunk, a crafted session), then
# our agent with real perf, whose session must hold every sample its perf
# script printed (agent_tail.py says what is checked).  The live part
# skips, saying why, without the agent binary, root or perf.
# run.sh: slow
. tests/integration/lib.sh
need_shared "agent tail"
if ! command -v zstd >/dev/null 2>&1; then
	skip "agent tail: the zstd command is missing (apt-get install zstd)"
	exit 0
fi
zcat "$SHARED/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz" > "$WORK/chunk.txt"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
agent="$(cd "$BUILD" && pwd)/perflens-agent"
set --
if [ ! -x "$agent" ]; then
	skip "agent tail, our agent: $agent is not built (make agent)"
elif [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	skip "agent tail, our agent: needs root and perf (linux-perf)"
else
	printf 'static volatile unsigned long s;\nint main(void){for(;;)s++;}\n' > "$WORK/spin.c"
	gcc -O1 -o "$WORK/spin" "$WORK/spin.c" && set -- "$agent" "$WORK/spin"
fi
WORK="$WORK" timeout 300 /usr/bin/python3 tests/integration/agent_tail.py "$server" "$WORK/chunk.txt" "$@"
