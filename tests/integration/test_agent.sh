# test_agent.sh - the static device agent (perflens-agent) against a fake
# server (agent_peer.py: the seed's protocol and our extensions, Python's
# hmac/hashlib, the zstd command, readelf -n), with real perf on this
# kernel (cpu-clock: no PMU here).  Headless --output rounds analyze to the
# sample count of their text; --listen: pre-auth refusals, three wrong
# codes, the seed's token, hmac both ways, a continuous capture whose zstd
# chunks, metrics of every type, maps with build-ids and counters are
# checked; --listen out of descriptors (accept EMFILE backs off and goes
# on); --server: reconnect after a drop mid-chunk, backoff growth on
# failed auth, a server that stops reading, garbage and 4 GB headers.
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

# --version, --help
v=$("$AGENT" --version)
case "$v" in "perflens-agent "*) ok "agent --version: $v" ;; *) notok "agent --version: $v" ;; esac
"$AGENT" --help > "$WORK/help"
if grep -q "NSS" "$WORK/help" && grep -q "/etc/hosts" "$WORK/help" && grep -q "operator" "$WORK/help"; then
	ok "agent --help says: no NSS (numeric addresses, /etc/hosts), updates are the operator's"
else
	notok "agent --help: $(oneline "$WORK/help")"
fi
if [ -n "${PERFLENS_TSAN:-}" ]; then
	skip "agent: statically linked: make test-tsan's agent is glibc's gcc -fsanitize=thread, dynamic"
else
	file -L "$AGENT" | grep -q "statically linked" && ok "agent: statically linked" ||
		notok "agent: not static: $(file "$AGENT")"
fi

# Headless: two rounds of raw text with a PERF_STAT section each.
if "$AGENT" --output "$WORK/out.txt" --perf "$(command -v perf)" --pid $spin --duration 2 --rounds 2 2>"$WORK/headless.err"; then
	ok "headless: --output exits 0"
else
	notok "headless: --output failed: $(oneline "$WORK/headless.err")"
fi
"$PERFLENS" analyze --input "$WORK/out.txt" --artifact-root "$WORK/art" > "$WORK/an.json" 2>"$WORK/err" ||
	notok "headless: perflens analyze: $(oneline "$WORK/err")"
python3 - "$WORK/out.txt" "$WORK/an.json" <<'PY'
import json, sys
sys.path.insert(0, "tests/integration")
from agent_peer import check, count_samples
text = open(sys.argv[1], errors="replace").read()
an = json.load(open(sys.argv[2]))
want = count_samples(text)
got = sum(e["samples"] for e in an["events"])
check("headless: two rounds, a PERF_STAT section each", text.count("### PERF_STAT ###") == 2, text.count("### PERF_STAT ###"))
check("headless: perflens analyze counts the text's %d samples" % want, got == want and want > 0, got)
check("headless: only cpu-clock recorded (the fallback: no PMU here)", [e["name"] for e in an["events"]] == ["cpu-clock"], an["events"])
check("headless: no malformed records", an["records"]["malformed"] == 0, an["records"])
check("headless: the workload's stack is there", "spin_inner" in text, text[:200])
PY
grep -q "falling back to cpu-clock" "$WORK/headless.err" && ok "headless: the probe says it fell back to cpu-clock" ||
	notok "headless: no fallback message: $(oneline "$WORK/headless.err")"

# --listen, the code generated: the fake server connects in.
"$AGENT" --listen --bind 127.0.0.1 --port 0 2>"$WORK/listen.err" &
agent_pid=$!
port="" code=""
for _ in $(seq 100); do
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$WORK/listen.err" 2>/dev/null)
	code=$(sed -n 's/^Pairing code: \([0-9a-f]*\)$/\1/p' "$WORK/listen.err" 2>/dev/null | head -1)
	[ -n "$port" ] && [ -n "$code" ] && break
	sleep 0.1
done
if [ -z "$port" ] || [ -z "$code" ]; then
	notok "listen: no port or pairing code in the log: $(oneline "$WORK/listen.err")"
else
	ok "listen: the generated 32-hex pairing code is printed once on stderr"
	AGENT_PID=$agent_pid python3 "$HERE/agent_peer.py" listen "$port" "$code" $spin "$WORK/bin/spin" "$PERFLENS" "$WORK"
	grep -q "$code" /proc/$agent_pid/cmdline && notok "listen: the code is in the agent's argv" ||
		ok "listen: a generated code is not in argv"
	stop_agent
	n=$(grep -c "$code" "$WORK/listen.err")
	p=$(grep -c "^Pairing code: $code\$" "$WORK/listen.err")
	[ "$n" -eq "$p" ] && ok "listen: the code appears only in 'Pairing code:' lines ($p)" ||
		notok "listen: the code leaked into $((n - p)) other log lines"
fi
stop_agent

# --require-proof: a server that sends the code in clear is refused.
code=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
PERFLENS_TOKEN=$code "$AGENT" --listen --require-proof --bind 127.0.0.1 --port 0 2>"$WORK/rp.err" &
agent_pid=$!
port=""
for _ in $(seq 100); do
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$WORK/rp.err" 2>/dev/null)
	[ -n "$port" ] && break
	sleep 0.1
done
python3 "$HERE/agent_peer.py" require_proof "$port" "$code"
grep -q "plaintext token was offered but --require-proof is set" "$WORK/rp.err" &&
	ok "require-proof: the log says why the plaintext token was refused" ||
	notok "require-proof: $(oneline "$WORK/rp.err")"
grep -q "Pairing code" "$WORK/rp.err" && notok "require-proof: a given code is printed" ||
	ok "require-proof: a code given by PERFLENS_TOKEN is never printed"
stop_agent

# The size cut (lowered to 64 KB here) and rounds mode over the link.
start_listen() { # LOG ENV...: a --listen agent with the code in PERFLENS_TOKEN; sets port
	log=$1
	shift
	env PERFLENS_TOKEN=$code "$@" "$AGENT" --listen --bind 127.0.0.1 --port 0 2>"$log" &
	agent_pid=$!
	port=""
	for _ in $(seq 100); do
		port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log" 2>/dev/null)
		[ -n "$port" ] && break
		sleep 0.1
	done
}
start_listen "$WORK/cut.err" PERFLENS_TEST_CHUNK_BYTES=65536
python3 "$HERE/agent_peer.py" cut "$port" "$code" $spin 65536
stop_agent
start_listen "$WORK/rounds.err" PERFLENS_TEST_ROUNDS=1
python3 "$HERE/agent_peer.py" rounds "$port" "$code" $spin
stop_agent

# --listen out of descriptors: its limit lowered below the next descriptor
# once it listens, accept() fails with EMFILE; it backs off and goes on.
if command -v prlimit >/dev/null 2>&1; then
	start_listen "$WORK/emfile.err"
	free_fd=0 # the lowest descriptor number it does not hold: accept() would get it
	while [ -e "/proc/$agent_pid/fd/$free_fd" ]; do free_fd=$((free_fd + 1)); done
	prlimit --pid "$agent_pid" --nofile="$free_fd:" 2>/dev/null || notok "emfile: prlimit --pid failed"
	python3 "$HERE/agent_peer.py" emfile "$port" "$code" "$agent_pid" "$WORK/emfile.err"
	stop_agent
else
	skip "listen, out of descriptors: prlimit is missing (util-linux)"
fi

# --server: the agent dials the fake, which drops it mid-chunk.
port=$(free_port)
code=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
PERFLENS_TOKEN=$code "$AGENT" --server 127.0.0.1:$port 2>"$WORK/server.err" &
agent_pid=$!
python3 "$HERE/agent_peer.py" server "$port" "$code" $spin "$WORK/bin/spin" "$PERFLENS" "$WORK"
if grep -q "$code" "$WORK/server.err"; then notok "server: the code appears in the log"; else ok "server: the code never appears in the log"; fi
stop_agent

# A server that stops reading: the send bound (3 s here) ends the link.
# (The agent dials "localhost": a name from /etc/hosts, read without NSS.)
port=$(free_port)
PERFLENS_SEND_TIMEOUT_MS=3000 PERFLENS_TOKEN=$code "$AGENT" --server localhost:$port 2>"$WORK/stall.err" &
agent_pid=$!
python3 "$HERE/agent_peer.py" stall "$port" "$code" $spin 3000
grep -q "the server stopped reading" "$WORK/stall.err" && ok "stall: the agent logs that the server stopped reading" ||
	notok "stall: no send-timeout line: $(tail -5 "$WORK/stall.err" | tr '\n' ' ')"
stop_agent

# Garbage before the hello and 4 GB headers.
port=$(free_port)
PERFLENS_TOKEN=$code "$AGENT" --server 127.0.0.1:$port 2>"$WORK/garbage.err" &
agent_pid=$!
python3 "$HERE/agent_peer.py" garbage "$port" "$code" $agent_pid
kill -0 $agent_pid 2>/dev/null && ok "garbage: the agent is still running" || notok "garbage: the agent died"
grep -q "over the cap of 65536" "$WORK/garbage.err" && ok "garbage: the log names the 64 KB pre-auth cap" ||
	notok "garbage: $(tail -5 "$WORK/garbage.err" | tr '\n' ' ')"
stop_agent
