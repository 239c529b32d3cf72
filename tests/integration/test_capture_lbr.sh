# test_capture_lbr.sh - start_capture(call_graph="lbr") through
# perflens-mcp: refused where the device's capabilities do not list lbr
# (our agent on this VM, which has no branch stack sampling; a seed agent
# before its probe), naming the methods it can do, and sent where they
# do.  capture_lbr.py says what is checked.
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
agent="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$agent" ] || [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	agent=""
fi
WORK="$WORK" timeout 180 python3 tests/integration/capture_lbr.py "$server" $agent
