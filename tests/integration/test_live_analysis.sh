# test_live_analysis.sh - --live-analysis-interval-ms: perflens-mcp
# analyzes a live device session again as its chunks land, with no
# client asking, so the viewer's read-only Live page shows the profile as
# it grows.  Our agent with real perf dials the server; live_analysis.py
# says what is checked.  Skips, saying why, without the agent binary,
# root, perf or the zstd command.
# run.sh: slow
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
agent="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$agent" ]; then
	skip "live analysis: $agent is not built (make agent)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	skip "live analysis: needs root and perf (linux-perf)"
	exit 0
fi
if ! command -v zstd >/dev/null 2>&1; then
	skip "live analysis: the zstd command is missing (apt-get install zstd)"
	exit 0
fi
cat > "$WORK/spin.c" <<'C'
static volatile unsigned long sink;
__attribute__((noinline)) static void live_leaf(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i * i;
}
int main(void)
{
	for (;;)
		live_leaf();
}
C
gcc -O1 -fno-omit-frame-pointer -o "$WORK/spin" "$WORK/spin.c" || { notok "live analysis: cc failed"; exit 0; }
# The flag needs the agent link: a usage error naming it.
if "$server" --live-analysis-interval-ms 500 </dev/null >/dev/null 2>"$WORK/usage.err"; then
	notok "live analysis: the flag without the agent link was accepted"
else
	rc=$?
	if [ $rc = 2 ] && grep -q "agent-listen" "$WORK/usage.err"; then
		ok "live analysis: the flag without the agent link is a usage error (exit 2) naming --agent-listen"
	else
		notok "live analysis: without the agent link: exit $rc, $(oneline "$WORK/usage.err")"
	fi
fi
WORK="$WORK" timeout 300 /usr/bin/python3 tests/integration/live_analysis.py "$server" "$agent" "$WORK/spin"
