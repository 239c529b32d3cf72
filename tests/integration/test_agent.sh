# test_agent.sh - the static device agent (perflens-agent) against a fake
# server (agent_peer.py: the seed's protocol and our extensions, Python's
# hmac/hashlib, the zstd command, readelf -n), with real perf on this
# kernel (cpu-clock: no PMU here).  Headless --output rounds analyze to the
# sample count of their text; --listen: pre-auth refusals, three wrong
# codes, the seed's token, hmac both ways, a continuous capture whose zstd
# chunks, metrics of every type, maps with build-ids and counters are
# checked; --require-proof.  test_agent_server.sh has the size cut, rounds
# over the link, EMFILE and --server (they run beside each other).
# run.sh: no-asan: the static agent is not built with ASan (and its peer is Python)
# run.sh: slow
. tests/integration/agent_lib.sh
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
