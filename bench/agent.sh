#!/bin/sh
# agent.sh - the device agent's figures: its stripped size (x86_64 and,
# when built, aarch64), its own CPU beyond perf and its RSS during a
# continuous capture at 99 Hz (utime+stime of the agent process itself
# from /proc/PID/stat, children excluded), and the compressed/raw ratio
# of what it sent on a real capture (the agent's counters, which the
# fake server's received bytes equal: see test_agent.sh).
# Measurements, not tests: prints figures, exits 0.
#
#   BUILD=/tmp/b sh bench/agent.sh           (make agent first)
#   AGENT_BENCH_SECONDS=60 (default)  AGENT_BENCH_HZ=99 (default)
set -u
BUILD=${BUILD:-build}
REPO=$(pwd)
AGENT="$BUILD/perflens-agent"
SECS=${AGENT_BENCH_SECONDS:-60}
HZ=${AGENT_BENCH_HZ:-99}
if [ ! -x "$AGENT" ]; then
	echo "agent bench: $AGENT is not built (make agent)" >&2
	exit 2
fi
size=$(stat -c %s "$AGENT")
echo "agent size: x86_64 stripped $size bytes ($(awk "BEGIN{printf \"%.4f\", $size/1e6}") MB; target <= 0.6 MB; the seed's 0.12: 0.67 MB): $(awk "BEGIN{print ($size <= 600000) ? \"met\" : \"not met\"}")"
if [ -x "$BUILD/perflens-agent-aarch64" ]; then
	echo "agent size: aarch64 stripped $(stat -c %s "$BUILD/perflens-agent-aarch64") bytes (static glibc)"
fi
if [ "$(id -u)" -ne 0 ] || ! perf stat -e cpu-clock true >/dev/null 2>&1; then
	echo "agent bench: CPU and wire figures need root and a working perf: skipped"
	exit 0
fi
W=$(mktemp -d /tmp/perflens-agent-bench.XXXXXX)
gcc -O1 -g -fno-omit-frame-pointer -o "$W/spin" "$REPO/tests/workloads/agent_spin.c"
"$W/spin" $((SECS + 120)) &
spin=$!
code=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
PERFLENS_TOKEN=$code "$AGENT" --listen --bind 127.0.0.1 --port 0 2>"$W/agent.err" &
agent=$!
trap 'kill $agent $spin 2>/dev/null; rm -rf "$W"' EXIT
port=""
for _ in $(seq 100); do
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/agent.err")
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "agent bench: the agent did not start: $(cat "$W/agent.err")"; exit 0; }
echo "agent bench: continuous capture of a CPU-bound workload at $HZ Hz for $SECS s (8 s chunks)..."
python3 "$REPO/tests/integration/agent_peer.py" bench "$port" "$code" $spin $agent "$SECS" "$HZ"
