# test_agent_modes.sh - device capture modes and capabilities: our agent
# with real perf reports what perf can do before any capture (against
# this machine's own answers), captures with call_graph dwarf / fp / none
# and in counting mode (perf stat only) on a build without frame
# pointers, and start_capture refuses what a device cannot do (a perf
# without DWARF unwinding; a seed agent's counting), naming what it can.
# agent_modes.py says what is checked.  Skips, saying why, without the
# agent binary, root, perf or the zstd command.
# run.sh: slow
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
agent="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$agent" ]; then
	skip "agent modes: $agent is not built (make agent)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	skip "agent modes: needs root and perf (linux-perf)"
	exit 0
fi
if ! command -v zstd >/dev/null 2>&1; then
	skip "agent modes: the zstd command is missing (apt-get install zstd)"
	exit 0
fi
cat > "$WORK/nofp.c" <<'C'
static volatile unsigned long sink;
__attribute__((noinline)) static void hot_leaf(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i * i;
}
__attribute__((noinline)) static void outer_caller(void)
{
	for (;;) {
		hot_leaf();
		sink ^= 1;
	}
}
int main(void)
{
	outer_caller();
	return 0;
}
C
gcc -O2 -g -fomit-frame-pointer -o "$WORK/nofp" "$WORK/nofp.c" || { notok "agent modes: cc failed"; exit 0; }
WORK="$WORK" timeout 400 /usr/bin/python3 tests/integration/agent_modes.py "$server" "$agent" "$WORK/nofp"
