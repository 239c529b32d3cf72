# agent_lib.sh - what test_agent.sh and test_agent_server.sh share: the
# agent binary, the checks that let them run, a spinning workload with
# frame pointers, and how an agent is stopped.  Sourced in lib.sh's stead
# (it sources lib.sh).
. tests/integration/lib.sh
AGENT="${PERFLENS_AGENT:-$(cd "$BUILD" && pwd)/perflens-agent}"
HERE="$REPO/tests/integration"
if [ ! -x "$AGENT" ]; then
	skip "device agent: $AGENT is not built (make agent: needs musl-tools and libzstd-dev)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! perf stat -e cpu-clock true >/dev/null 2>&1; then
	skip "device agent: needs root and a working perf (cpu-clock)"
	exit 0
fi
if ! command -v zstd >/dev/null || ! command -v readelf >/dev/null; then
	skip "device agent: needs the zstd and readelf commands (zstd, binutils)"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/art"
gcc -O1 -g -fno-omit-frame-pointer -Wl,--build-id -o "$WORK/bin/spin" "$REPO/tests/workloads/agent_spin.c" ||
	{ notok "device agent: build the workload"; exit 0; }
"$WORK/bin/spin" 600 &
spin=$!
agent_pid=""
stop_agent() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	agent_pid=""
}
trap 'stop_agent; kill $spin 2>/dev/null; cleanup' EXIT
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
