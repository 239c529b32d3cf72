# test_agent_aarch64.sh - the aarch64 agent (make agent-cross: static glibc,
# libzstd-dev:arm64) under qemu-aarch64-static: --version, the handshake
# with hmac proofs both ways against the fake server (agent_peer.py), and
# a headless round with real perf (qemu-user runs the agent; the perf it
# executes is this machine's own, which profiles a native workload), and
# perf.data mode through perflens-mcp (agent_aarch64_perfdata.py: a shim
# perf replays a recording as perf record -o - prints it; the server's
# sample count and top function against perf script and perf report).
# run.sh: no-asan: the aarch64 agent under qemu is not built with ASan
. tests/integration/lib.sh
AGENT="$(cd "$BUILD" && pwd)/perflens-agent-aarch64"
HERE="$REPO/tests/integration"
if [ ! -x "$AGENT" ]; then
	skip "aarch64 agent: $AGENT is not built (make agent-cross: gcc-aarch64-linux-gnu, libzstd-dev:arm64)"
	exit 0
fi
if ! command -v qemu-aarch64-static >/dev/null; then
	skip "aarch64 agent: qemu-aarch64-static is missing (qemu-user-static)"
	exit 0
fi
file "$AGENT" | grep -q "ARM aarch64.*statically linked" && ok "aarch64 agent: a static aarch64 ELF" ||
	notok "aarch64 agent: $(file "$AGENT")"
v=$(qemu-aarch64-static "$AGENT" --version 2>&1)
case "$v" in "perflens-agent "*) ok "aarch64 agent under qemu: --version: $v" ;; *) notok "aarch64 agent --version: $v" ;; esac

code=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
PERFLENS_TOKEN=$code qemu-aarch64-static "$AGENT" --listen --bind 127.0.0.1 --port 0 2>"$WORK/listen.err" &
agent_pid=$!
trap 'kill $agent_pid 2>/dev/null; [ -n "${spin:-}" ] && kill $spin 2>/dev/null; cleanup' EXIT
port=""
for _ in $(seq 150); do
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$WORK/listen.err")
	[ -n "$port" ] && break
	sleep 0.1
done
if [ -z "$port" ]; then
	notok "aarch64 agent: --listen did not start: $(oneline "$WORK/listen.err")"
else
	python3 "$HERE/agent_peer.py" handshake "$port" "$code"
fi
kill $agent_pid 2>/dev/null
wait $agent_pid 2>/dev/null

if [ "$(id -u)" -ne 0 ] || ! perf stat -e cpu-clock true >/dev/null 2>&1; then
	skip "aarch64 agent: headless round needs root and a working perf"
	exit 0
fi
mkdir -p "$WORK/bin" "$WORK/art"
gcc -O1 -g -fno-omit-frame-pointer -o "$WORK/bin/spin" "$REPO/tests/workloads/agent_spin.c"
"$WORK/bin/spin" 400 &
spin=$!
if qemu-aarch64-static "$AGENT" --output "$WORK/out.txt" --pid $spin --duration 1 --rounds 1 2>"$WORK/headless.err"; then
	ok "aarch64 agent: a headless round with real perf exits 0"
else
	notok "aarch64 agent: headless round: $(oneline "$WORK/headless.err")"
fi
"$PERFLENS" analyze --input "$WORK/out.txt" --artifact-root "$WORK/art" > "$WORK/an.json" 2>"$WORK/err"
python3 - "$WORK/out.txt" "$WORK/an.json" <<'PY'
import json, sys
sys.path.insert(0, "tests/integration")
from agent_peer import check, count_samples
text = open(sys.argv[1], errors="replace").read()
try:
    got = sum(e["samples"] for e in json.load(open(sys.argv[2]))["events"])
except (ValueError, KeyError):
    got = None
want = count_samples(text)
check("aarch64 agent: the round analyzes to its %d samples, with the workload's stack" % want,
      got == want and want > 0 and "spin_inner" in text, (got, text[:200]))
check("aarch64 agent: the round carries its PERF_STAT section", "### PERF_STAT ###" in text, text[-200:])
PY

# perf.data mode (extension 4): the aarch64 agent chunks a recording this
# machine's perf made the way the agent runs it (perf record -o -: pipe
# mode, --buildid-mmap), and the server reads the chunks natively; the
# oracle is perf script / perf report on the same recording.
if ! command -v zstd >/dev/null 2>&1; then
	skip "aarch64 agent perf.data mode: the zstd command is missing (apt-get install zstd)"
	exit 0
fi
bid=""
perf record -o - --buildid-mmap -e cpu-clock -F 10 -- true 2>/dev/null | head -c 8 | grep -q PERFILE2 && bid="--buildid-mmap"
if ! perf record -o - $bid -e cpu-clock -F 199 --call-graph fp -p $spin -- sleep 3 >"$WORK/rec.pipe" 2>"$WORK/rec.err" ||
	[ "$(head -c 8 "$WORK/rec.pipe")" != PERFILE2 ]; then
	notok "aarch64 agent perf.data mode: perf record -o - of the workload failed: $(oneline "$WORK/rec.err")"
	exit 0
fi
server="$(cd "$BUILD" && pwd)/perflens-mcp"
WORK="$WORK" timeout 400 /usr/bin/python3 "$HERE/agent_aarch64_perfdata.py" "$server" "$AGENT" $spin "$WORK/rec.pipe"
