# test_agent_perfdata.sh - extension 4 ("perf_data"): our agent sends
# perf.data chunks (perf record's pipe output, cut at record boundaries,
# zstd) and our server reads them with the native perf.data reader; seed
# peers and peers told not to keep perf script text.  agent_perfdata.py
# says what is checked (negotiation, hotspots against perf script of the
# same chunks, lines from the server's --binary copy by build-id, DWARF
# callers of a no-frame-pointer build, the device's CPU and wire bytes
# at 99 and 999 Hz, text against perf.data).  Skips, saying why, without
# the agent binary, root, perf or the zstd command.
# run.sh: slow
. tests/integration/lib.sh
server="$(cd "$BUILD" && pwd)/perflens-mcp"
agent="$(cd "$BUILD" && pwd)/perflens-agent"
if [ ! -x "$agent" ]; then
	skip "agent perf.data: $agent is not built (make agent)"
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v perf >/dev/null 2>&1; then
	skip "agent perf.data: needs root and perf (linux-perf)"
	exit 0
fi
if ! command -v zstd >/dev/null 2>&1; then
	skip "agent perf.data: the zstd command is missing (apt-get install zstd)"
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
gcc -O2 -g -fomit-frame-pointer -o "$WORK/nofp" "$WORK/nofp.c" || { notok "agent perf.data: cc failed"; exit 0; }
WORK="$WORK" timeout 500 /usr/bin/python3 tests/integration/agent_perfdata.py "$server" "$agent" "$WORK/nofp"
