# test_agent_perfdata_header.sh - nothing silent in perf.data mode
# (extension 4): our agent whose perf record gives no perf.data header
# (stuck, exits at once with an error, exits 0 having written nothing)
# notices within a bounded time, says what happened and the fix in its
# status and stop answers (capture_problems), and goes on with text
# chunks; perflens-mcp puts it in list_devices, stop_capture,
# list_sessions and analyze_profile's data quality, and a good capture
# beside them has no such note.  agent_perfdata_header.py says what is
# checked.  Skips, saying why, without the agent binary, root, perf or
# the zstd command.
# run.sh: slow
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
agent="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$agent" ]; then
	skip "agent perf.data header: $agent is not built (make agent)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	skip "agent perf.data header: needs root and perf (linux-perf)"
	exit 0
fi
if ! command -v zstd >/dev/null 2>&1; then
	skip "agent perf.data header: the zstd command is missing (apt-get install zstd)"
	exit 0
fi
gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/spin" "$REPO/tests/workloads/agent_spin.c" ||
	{ notok "agent perf.data header: cc failed"; exit 0; }
WORK="$WORK" timeout 400 /usr/bin/python3 tests/integration/agent_perfdata_header.py "$server" "$agent" "$WORK/spin"
