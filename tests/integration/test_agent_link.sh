# test_agent_link.sh - the server's agent link against a Python agent
# (tests/integration/fake_agent.py: its own HMAC, zstd and sample count),
# driven through perflens-mcp as an agent would (agent_link.py says what
# is checked).  Needs the zstd command (the agent compresses with it).
# run.sh: slow
. tests/integration/lib.sh
need_shared "agent link"
if ! command -v zstd >/dev/null 2>&1; then
	skip "agent link: the zstd command is missing (apt-get install zstd)"
	exit 0
fi
zcat "$SHARED/peers/device-sessions/session-x86-baseline/chunk_000.txt.gz" > "$WORK/chunk.txt"
server="$(cd "$BUILD" && pwd)/perflens-mcp"
WORK="$WORK" timeout 400 /usr/bin/python3 tests/integration/agent_link.py "$server" "$WORK/chunk.txt"
