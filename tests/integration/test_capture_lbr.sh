# test_capture_lbr.sh - start_capture(call_graph="lbr") through
# perflens-mcp: our agent's probe lists lbr only where perf records with
# it; refused where the device's capabilities do not list lbr (our agent
# on this VM, which has no branch stack sampling; a seed agent before its
# probe), naming the methods it can do, and sent where they do (a fake
# agent; our agent with a perf shim that takes lbr, which runs it).
# capture_lbr.py says what is checked.
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
agent="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$agent" ] || [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	agent=""
fi
if [ -n "$agent" ]; then
	gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/spin" "$REPO/tests/workloads/agent_spin.c" || notok "capture lbr: cc failed"
fi
WORKLOAD="$([ -x "$WORK/spin" ] && echo "$WORK/spin")" WORK="$WORK" timeout 300 python3 tests/integration/capture_lbr.py "$server" $agent
