# test_agent_server.sh - the static device agent (perflens-agent) against a
# fake server (agent_peer.py), the second half of test_agent.sh: the size
# cut (lowered to 64 KB) and rounds mode over the link; --listen out of
# descriptors (accept EMFILE backs off and goes on); --server: reconnect
# after a drop mid-chunk, backoff growth on failed auth, a server that
# stops reading, garbage and 4 GB headers.
# run.sh: no-asan: the static agent is not built with ASan (and its peer is Python)
# run.sh: slow
. tests/integration/agent_lib.sh
code=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
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
